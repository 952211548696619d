// Typed refusals of a log proof (docs/DESIGN.md §12), one per reason code shared with the Swift SDK and conformance.
package org.pinion.trust.log;

import java.util.Locale;
import org.pinion.trust.TerminalText;

/**
 * Why manifest.proof (or a part of it) was refused. {@link #code()} is the contract's reason code:
 * {@code log-} plus the kebab-case name of the Swift {@code LogVerificationError} case, or
 * {@code log-proof-missing} and {@code log-proof-too-large}.
 */
public final class LogException extends Exception {
    private static final long serialVersionUID = 1L;

    /** The check that failed, in the order of docs/DESIGN.md §12. */
    public enum Reason {
        /** manifest.proof was not served (404) or could not be read. */
        PROOF_MISSING,
        /** manifest.proof is over its byte limit (32 KiB by default). */
        PROOF_TOO_LARGE,
        /** manifest.proof is not a well-formed tlog-proof@v1 within the limits. */
        MALFORMED_PROOF,
        /** The checkpoint text is not a well-formed tlog-checkpoint. */
        MALFORMED_CHECKPOINT,
        /** The checkpoint names another log origin. */
        WRONG_ORIGIN,
        /** 1. No signature by the log key. */
        SIGNATURE_MISSING,
        /** 1. The log key's signature does not verify. */
        SIGNATURE_INVALID,
        /** 2. A listed witness's cosignature does not verify. */
        COSIGNATURE_INVALID,
        /** 2. Fewer valid cosignatures by distinct listed witnesses than the quorum. */
        QUORUM_NOT_MET,
        /** 3. The proof is not for the last entry (a stale proof). */
        NOT_LAST_ENTRY,
        /** 3. No head record in the proof's {@code extra}. */
        HEAD_MISSING,
        /** 3. The head record is not canonical. */
        MALFORMED_HEAD,
        /** 3. The head record is not included at that index. */
        INCLUSION_FAILED,
        /** 4. The head's sequence is not its log index. */
        SEQUENCE_MISMATCH,
        /** 4. The head is for another scope. */
        SCOPE_MISMATCH,
        /** 4. The log names a root newer than the client's: "root N+1 is logged but not served". */
        ROOT_LOGGED_NOT_SERVED,
        /** 4. The log names another newest root (older, or another payload). */
        ROOT_MISMATCH,
        /** 4. The served manifest is not the logged head. */
        MANIFEST_NOT_LOGGED,
        /** 5. The checkpoint is smaller than the stored one. */
        CHECKPOINT_SHRANK,
        /** 5. Same size as the stored checkpoint, another root hash: {@link #equivocation()} has both. */
        EQUIVOCATION;

        /** @return the reason code, e.g. {@code log-quorum-not-met} */
        public String code() { return "log-" + name().toLowerCase(Locale.ROOT).replace('_', '-'); }
    }

    private final Reason reason;
    private final transient Equivocation equivocation;

    /** @param reason the failed check @param message the values, in words */
    public LogException(Reason reason, String message) {
        this(reason, message, null);
    }

    /** @param reason the failed check @param message the values, in words @param equivocation the evidence, or null */
    LogException(Reason reason, String message, Equivocation equivocation) {
        super(TerminalText.escape(message));
        this.reason = reason;
        this.equivocation = equivocation;
    }

    /** @return the failed check */
    public Reason reason() { return reason; }

    /** @return the reason code of docs/DESIGN.md §12 and conformance/README.md */
    public String code() { return reason.code(); }

    /** @return both checkpoint notes for {@link Reason#EQUIVOCATION}, else null */
    public Equivocation equivocation() { return equivocation; }
}
