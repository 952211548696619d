// Size and count limits on untrusted documents, with the defaults of DESIGN.md §5.
package org.pinion.trust;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

/** Limits on untrusted documents; defaults follow DESIGN.md §5 and are configurable. */
public final class Limits {
    /** The specVersion this build reads. */
    public static final long SPEC_VERSION = 1;
    /** Largest integer in any document: 2^53 - 1. */
    public static final long MAX_INTEGER = 9_007_199_254_740_991L;
    /** The defaults: 8 MiB envelope (as the Swift SDK and DESIGN.md §5), 10,000 domains, 64 pins per domain, 32 signatures, depth 16. */
    public static final Limits STANDARD = new Limits(8 * 1024 * 1024, 10_000, 64, 32, 16);

    /** Largest envelope, in bytes. */
    public final int maxEnvelopeBytes;
    /** Most domains in one manifest. */
    public final int maxDomains;
    /** Most pins in one domain entry. */
    public final int maxPinsPerDomain;
    /** Most signatures in one envelope. */
    public final int maxSignatures;
    /** Deepest JSON nesting. */
    public final int maxDepth;

    /**
     * @param maxEnvelopeBytes largest envelope in bytes
     * @param maxDomains most domains per manifest
     * @param maxPinsPerDomain most pins per domain
     * @param maxSignatures most signatures per envelope
     * @param maxDepth deepest JSON nesting
     */
    public Limits(int maxEnvelopeBytes, int maxDomains, int maxPinsPerDomain, int maxSignatures, int maxDepth) {
        this.maxEnvelopeBytes = maxEnvelopeBytes;
        this.maxDomains = maxDomains;
        this.maxPinsPerDomain = maxPinsPerDomain;
        this.maxSignatures = maxSignatures;
        this.maxDepth = maxDepth;
    }

    /** @return the parser limits: over-long lists are refused while they are read */
    public JsonLimits json() {
        return new JsonLimits(maxEnvelopeBytes, maxDepth, Math.max(maxDomains, Math.max(maxPinsPerDomain, maxSignatures)),
                namedListLimits());
    }

    private Map<String, Integer> namedListLimits() {
        Map<String, Integer> limits = new HashMap<>();
        limits.put("signatures", maxSignatures);
        limits.put("pins", maxPinsPerDomain);
        limits.put("domains", maxDomains);
        return Collections.unmodifiableMap(limits);
    }

    /** @param bytes new envelope limit @return a copy with that envelope limit */
    public Limits withMaxEnvelopeBytes(int bytes) {
        return new Limits(bytes, maxDomains, maxPinsPerDomain, maxSignatures, maxDepth);
    }
}
