// The typed refusal of a connection whose verified chain fails the pins of an enforced domain.
package org.pinion.tls;

import java.security.cert.CertificateException;
import java.util.List;
import org.pinion.trust.Codec;
import org.pinion.trust.Pin;
import org.pinion.trust.PinEvaluation;

/** A pin refusal: {@link #evaluation} says which host, entry and reason; the message lists the chain's and the entry's pins. */
public final class PinningException extends CertificateException {
    private static final long serialVersionUID = 1L;
    /** The failed evaluation (REJECTED). */
    public final transient PinEvaluation evaluation;

    /** @param evaluation the failed evaluation */
    public PinningException(PinEvaluation evaluation) {
        this(evaluation, null);
    }

    /**
     * The message names the verified chain's pins and the entry's pins, as OkHttp's
     * {@code CertificatePinner} failure does, so a wrong pin can be fixed from the log alone:
     * <pre>
     * pinning refused api.example.test: no pin of the entry matches the verified chain (entry example.test)
     *   Verified chain (leaf first):
     *     sha256/...
     *   Pinned for example.test:
     *     sha256/...
     * </pre>
     *
     * @param evaluation the failed evaluation
     * @param chainDigests SHA-256 digests of the verified chain's SPKIs, leaf first, or null when unknown
     */
    public PinningException(PinEvaluation evaluation, List<byte[]> chainDigests) {
        super(message(evaluation, chainDigests));
        this.evaluation = evaluation;
    }

    private static String message(PinEvaluation evaluation, List<byte[]> chainDigests) {
        StringBuilder text = new StringBuilder("pinning refused ").append(evaluation.host).append(": ").append(evaluation.reason.text);
        if (evaluation.entry != null) text.append(" (entry ").append(evaluation.entry.name).append(')');
        if (chainDigests != null) {
            text.append("\n  Verified chain (leaf first):");
            if (chainDigests.isEmpty()) text.append("\n    (none)");
            for (byte[] digest : chainDigests) text.append("\n    sha256/").append(Codec.base64(digest));
        }
        if (evaluation.entry != null) {
            text.append("\n  Pinned for ").append(evaluation.entry.name).append(':');
            if (evaluation.entry.pins.isEmpty()) text.append("\n    (none)");
            for (Pin pin : evaluation.entry.pins) text.append("\n    ").append(pin);
        }
        return text.toString();
    }
}
