// What the TLS layer asks the client for: the effective policy now, and where to send pin failures.
package org.pinion.tls;

import java.security.cert.X509Certificate;
import java.util.List;
import org.pinion.trust.ClientEvent;
import org.pinion.trust.MergedPolicy;
import org.pinion.trust.PinEvaluation;

/** The effective policy at the moment of a connection, and the pin-failure sink. */
public interface PolicySource {
    /** @return the policy at the effective time now ({@code max(wall clock, lastKnownTime)}, expiry applied) */
    MergedPolicy currentPolicy();

    /**
     * Called for every pin failure, enforced or report-only (RFC 7469 §3 fields are in the arguments).
     *
     * @param evaluation the failed evaluation (REJECTED or REPORT_ONLY)
     * @param port the port connected to, or -1 when unknown
     * @param served the chain the server sent
     * @param verified the chain PKIX validation built (empty when none)
     */
    void onPinFailure(PinEvaluation evaluation, int port, List<X509Certificate> served, List<X509Certificate> verified);

    /**
     * Called for what the TLS layer observes beyond pin failures: a {@code DEBUG_PROXY_BYPASS} on
     * every connection or request whose pins a {@link DebugProxyOverride} bypassed. The default
     * ignores it (the use is still logged at WARNING).
     *
     * @param event the event
     */
    default void onEvent(ClientEvent event) { }
}
