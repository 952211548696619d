// Typed errors of the trust rules: format, signatures, thresholds, rotation, root range and expiry.
package org.pinion.trust;

/** Why a root or manifest is not trusted; {@link #kind()} for matching, the message for people. */
public final class TrustException extends Exception {
    private static final long serialVersionUID = 1L;

    /** The rule broken, as the Swift {@code TrustError} cases. */
    public enum Kind {
        /** The envelope or payload broke the strict format ({@link #format()} has it). */
        FORMAT,
        /** The envelope holds the other kind of document. */
        WRONG_PAYLOAD_KIND,
        /** Fewer than threshold distinct keys of the role verified. */
        THRESHOLD_NOT_MET,
        /** The document's scope is not the root's. */
        SCOPE_MISMATCH,
        /** A root that is not exactly newest + 1. */
        ROOT_NOT_NEXT,
        /** A manifest whose rootVersion is outside newest.pinsRoleSince ... newest.version. */
        ROOT_VERSION_MISMATCH,
        /** A rotation whose pinsRoleSince breaks DESIGN.md §4 (lowered, or kept while the pins role changed). */
        PINS_ROLE_SINCE_INVALID,
        /** {@code expiresAt - issuedAt} over the newest root's cap. */
        LIFETIME_EXCEEDS_CAP,
        /** The newest root has expired. */
        ROOT_EXPIRED,
        /** The manifest has expired. */
        MANIFEST_EXPIRED
    }

    private final Kind kind;
    private final transient FormatException format;

    /** @param kind the rule @param message the message naming the values */
    public TrustException(Kind kind, String message) {
        super(TerminalText.escape(message));
        this.kind = kind;
        this.format = null;
    }

    /** @param format the format error */
    public TrustException(FormatException format) {
        super(format.getMessage());
        this.kind = Kind.FORMAT;
        this.format = format;
    }

    /** @return the rule broken */
    public Kind kind() { return kind; }

    /** @return the format error for {@link Kind#FORMAT}, else null */
    public FormatException format() { return format; }
}
