// Byte, depth and element limits that the strict parser enforces while it reads.
package org.pinion.trust;

import java.util.Map;

/** Limits checked while parsing (never after), as the Swift {@code JSONLimits}. */
public final class JsonLimits {
    /** Largest accepted input, in bytes. */
    public final int maxBytes;
    /** Deepest nesting of arrays and objects (the top-level value is depth 1). */
    public final int maxDepth;
    /** Most elements in one array and most members in one object. */
    public final int maxElements;
    /** Tighter element limits for arrays held by a member of the given name. */
    public final Map<String, Integer> maxElementsByMember;

    /**
     * @param maxBytes largest input in bytes
     * @param maxDepth deepest nesting
     * @param maxElements most elements per array or members per object
     * @param maxElementsByMember per-member-name array limits (e.g. {@code signatures: 32})
     */
    public JsonLimits(int maxBytes, int maxDepth, int maxElements, Map<String, Integer> maxElementsByMember) {
        this.maxBytes = maxBytes;
        this.maxDepth = maxDepth;
        this.maxElements = maxElements;
        this.maxElementsByMember = java.util.Collections.unmodifiableMap(new java.util.HashMap<>(maxElementsByMember));
    }
}
