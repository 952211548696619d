// Why a C2SP signed note, a note verifier key or a note signature was refused (the Swift NoteError cases).
package org.pinion.trust.log;

import org.pinion.trust.TerminalText;

/** A refused note, verifier key or signature line; {@link #kind()} for matching. */
public final class NoteException extends Exception {
    private static final long serialVersionUID = 1L;

    /** The rule broken, as the Swift {@code NoteError} cases. */
    public enum Kind {
        /** More bytes than the limit. */
        TOO_LARGE,
        /** Not valid UTF-8. */
        NOT_UTF8,
        /** An ASCII control character other than newline. */
        CONTROL_CHARACTER,
        /** No blank line followed by signature lines, or text not ending in a newline. */
        MALFORMED_NOTE,
        /** A signature line that is not {@code — <name> <base64>}. */
        MALFORMED_SIGNATURE_LINE,
        /** More signature lines than the limit. */
        TOO_MANY_SIGNATURES,
        /** A key name that is empty or holds white space or {@code +}. */
        INVALID_KEY_NAME,
        /** A verifier key string that is not {@code name+hex8+base64(type||key)}. */
        MALFORMED_VERIFIER_KEY,
        /** A verifier key type other than 0x01 and 0x04. */
        UNSUPPORTED_KEY_TYPE,
        /** A signature by a known key (name and key ID match) that does not verify. */
        BAD_SIGNATURE
    }

    private final Kind kind;

    /** @param kind the rule @param message the values, in words */
    public NoteException(Kind kind, String message) {
        super(TerminalText.escape(message));
        this.kind = kind;
    }

    /** @return the rule broken */
    public Kind kind() { return kind; }
}
