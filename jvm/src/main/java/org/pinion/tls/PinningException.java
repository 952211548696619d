// The typed refusal of a connection whose verified chain fails the pins of an enforced domain.
package org.pinion.tls;

import java.security.cert.CertificateException;
import org.pinion.trust.PinEvaluation;

/** A pin refusal: {@link #evaluation} says which host, entry and reason. */
public final class PinningException extends CertificateException {
    private static final long serialVersionUID = 1L;
    /** The failed evaluation (REJECTED). */
    public final transient PinEvaluation evaluation;

    /** @param evaluation the failed evaluation */
    public PinningException(PinEvaluation evaluation) {
        super("pinning refused " + evaluation.host + ": " + evaluation.reason.text + " (entry " + evaluation.entry.name + ")");
        this.evaluation = evaluation;
    }
}
