// Pin evaluation of one connection after X.509 validation (DESIGN.md §8 steps 2-4, RFC 7469 §2.6).
package org.pinion.trust;

import java.util.List;

/** The verdict on one connection's verified chain. */
public final class PinEvaluation {
    /** The verdict of a pin check. */
    public enum Verdict {
        /** A certificate on the verified chain has a pinned key. */
        TRUSTED,
        /** No entry matches the host: X.509 alone decides. */
        NOT_PINNED,
        /** Failed on an enforced host: close before sending a byte. */
        REJECTED,
        /** Failed, but every matching entry is report-only: go on, report. */
        REPORT_ONLY
    }

    /** Why a pinned host failed. */
    public enum Reason {
        /** The verified chain is empty or missing. */
        NO_VERIFIED_CHAIN("no verified certificate chain"),
        /** The entry has no pins left. */
        NO_USABLE_PIN("no usable pin for this domain"),
        /** No certificate on the verified chain has a pinned key. */
        NO_MATCHING_PIN("no key in the verified chain matches a pin");

        /** The reason in words. */
        public final String text;

        Reason(String text) { this.text = text; }
    }

    /** The verdict. */
    public final Verdict verdict;
    /** The matching pin for TRUSTED, else null. */
    public final Pin pin;
    /** The reason for REJECTED/REPORT_ONLY, else null. */
    public final Reason reason;
    /** The normalised host, or null for NOT_PINNED. */
    public final String host;
    /** The entry the pins came from (RFC 7469 noted-hostname), or null. */
    public final PinnedDomain entry;

    private PinEvaluation(Verdict verdict, Pin pin, Reason reason, String host, PinnedDomain entry) {
        this.verdict = verdict;
        this.pin = pin;
        this.reason = reason;
        this.host = host;
        this.entry = entry;
    }

    /** @return whether the connection may go on (not REJECTED) */
    public boolean allowed() { return verdict != Verdict.REJECTED; }

    /**
     * Checks a connection that passed X.509 validation.
     *
     * @param host the host connected to (any case, optionally one trailing dot)
     * @param verifiedChain SHA-256 of the DER SubjectPublicKeyInfo of every certificate of the VERIFIED
     *     chain (leaf first), never the chain the peer sent
     * @param policy the effective policy at the connection's time
     * @return NOT_PINNED, TRUSTED, or a failure (checked: no usable pin, no verified chain, no match)
     *     as REJECTED when any matching entry enforces, else REPORT_ONLY
     */
    public static PinEvaluation evaluate(String host, List<byte[]> verifiedChain, MergedPolicy policy) {
        MergedPolicy.HostPolicy match = policy.hostPolicy(host);
        if (match == null) return new PinEvaluation(Verdict.NOT_PINNED, null, null, null, null);
        List<Pin> pins = match.entry.pins;
        Reason reason;
        if (pins.isEmpty()) {
            reason = Reason.NO_USABLE_PIN;
        } else if (verifiedChain == null || verifiedChain.isEmpty()) {
            reason = Reason.NO_VERIFIED_CHAIN;
        } else {
            for (byte[] digest : verifiedChain) {
                for (Pin pin : pins) {
                    if (pin.matches(digest)) return new PinEvaluation(Verdict.TRUSTED, pin, null, match.host, match.entry);
                }
            }
            reason = Reason.NO_MATCHING_PIN;
        }
        return new PinEvaluation(match.enforce ? Verdict.REJECTED : Verdict.REPORT_ONLY, null, reason, match.host, match.entry);
    }
}
