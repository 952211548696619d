// The DSSE payload types Pinion signs (DESIGN.md §3).
package org.pinion.trust;

/** A DSSE {@code payloadType} Pinion knows. */
public enum PayloadKind {
    /** A root document (DESIGN.md §4). */
    ROOT("application/vnd.pinion.root+json"),
    /** A pin manifest (DESIGN.md §5). */
    PINS("application/vnd.pinion.pins+json");

    /** The payloadType string. */
    public final String mediaType;

    PayloadKind(String mediaType) { this.mediaType = mediaType; }

    /** @param text a payloadType @return the kind, or null when unknown */
    public static PayloadKind of(String text) {
        for (PayloadKind kind : values()) {
            if (kind.mediaType.equals(text)) return kind;
        }
        return null;
    }
}
