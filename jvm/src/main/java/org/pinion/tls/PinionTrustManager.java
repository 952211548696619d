// X509 trust manager that runs normal validation first, then checks pins on the PKIX-verified chain (DESIGN.md §8).
package org.pinion.tls;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;
import org.pinion.trust.PinEvaluation;

/**
 * Wraps the platform {@link X509TrustManager}: (1) the platform's own validation, (2) the host name
 * (RFC 6125, {@link HostNames}), (3) the pins of the effective policy on the chain PKIX
 * {@code CertPathBuilder} verifies from the served certificates to the platform's anchors (never the
 * chain as sent). The verified chain's SPKI digests are stored in the TLS session
 * ({@link #SESSION_KEY}) so that {@link PinionOkHttp}'s interceptor re-checks them on every request
 * over a reused connection. The host comes from the handshake session (SNI host); without one the
 * connection is refused.
 */
public final class PinionTrustManager extends X509ExtendedTrustManager implements PinCheckingTrustManager {
    /** SSLSession value: the {@code List<byte[]>} of verified SPKI digests, leaf first. */
    public static final String SESSION_KEY = "org.pinion.verified-spki";

    private final X509TrustManager platform;
    private final PolicySource policy;
    private final List<org.pinion.trust.Pin> fixedPins;

    /**
     * @param platform the platform trust manager (system store or the app's CA file)
     * @param policy the effective policy and failure sink; null checks X.509 and host name only
     */
    public PinionTrustManager(X509TrustManager platform, PolicySource policy) {
        this.platform = platform;
        this.policy = policy;
        this.fixedPins = null;
    }

    /**
     * The update channel's trust manager: X.509 and host name, then (when {@code publisherPins} is not
     * empty) at least one of those pins on the verified chain, whatever the host (an IP literal
     * included); manifest pins never apply (DESIGN.md §6).
     *
     * @param platform the platform trust manager
     * @param publisherPins the app's publisher pins, possibly empty
     */
    public PinionTrustManager(X509TrustManager platform, List<org.pinion.trust.Pin> publisherPins) {
        this.platform = platform;
        this.policy = null;
        this.fixedPins = java.util.Collections.unmodifiableList(new java.util.ArrayList<>(publisherPins));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        throw new CertificateException("Pinion's trust manager does not authenticate clients");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        checkClientTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        checkClientTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        throw new CertificateException("no host name for the pin check (use an SSLSocket with a peer host)");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        SSLSession session = socket instanceof SSLSocket ? ((SSLSocket) socket).getHandshakeSession() : null;
        check(chain, authType, session, socket == null ? -1 : socket.getPort());
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        check(chain, authType, engine == null ? null : engine.getHandshakeSession(), engine == null ? -1 : engine.getPeerPort());
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() { return platform.getAcceptedIssuers(); }

    @Override
    public PolicySource policySource() { return policy; }

    private void check(X509Certificate[] chain, String authType, SSLSession session, int port) throws CertificateException {
        if (chain == null || chain.length == 0) throw new CertificateException("the server sent no certificate");
        String host = session == null ? null : session.getPeerHost();
        if (host == null || host.isEmpty()) throw new CertificateException("no host name for the pin check");
        platform.checkServerTrusted(chain, authType);
        if (!HostNames.matches(host, chain[0])) {
            throw new CertificateException("the certificate is not valid for " + host);
        }
        List<X509Certificate> verified = VerifiedChain.build(chain, platform.getAcceptedIssuers(), new Date());
        checkPins(host, chain, verified, port, fixedPins, policy, session);
    }

    /**
     * The pin half of every Pinion trust manager, run on a chain the platform has verified: the
     * publisher pins when {@code fixedPins} is not empty, else the policy's pins for {@code host};
     * failures go to the policy's sink; the verified digests are stored in {@code session}.
     *
     * @throws CertificateException no publisher pin on the chain, or a {@link PinningException}
     */
    static void checkPins(String host, X509Certificate[] chain, List<X509Certificate> verified, int port,
            List<org.pinion.trust.Pin> fixedPins, PolicySource policy, SSLSession session) throws CertificateException {
        List<byte[]> digests = VerifiedChain.spkiDigests(verified);
        if (fixedPins != null && !fixedPins.isEmpty()) {
            boolean found = false;
            for (byte[] digest : digests) {
                for (org.pinion.trust.Pin pin : fixedPins) found = found || pin.matches(digest);
            }
            if (!found) throw new CertificateException("no publisher pin in the verified chain of " + host);
        }
        if (policy != null) {
            PinEvaluation evaluation = PinEvaluation.evaluate(host, digests, policy.currentPolicy());
            if (evaluation.verdict == PinEvaluation.Verdict.REJECTED || evaluation.verdict == PinEvaluation.Verdict.REPORT_ONLY) {
                policy.onPinFailure(evaluation, port, Arrays.asList(chain), verified);
            }
            if (evaluation.verdict == PinEvaluation.Verdict.REJECTED) {
                throw new PinningException(evaluation, digests);
            }
        }
        session.putValue(SESSION_KEY, new DigestList(digests));
    }

    /** The verified digests as stored in a session (immutable). */
    public static final class DigestList {
        /** SPKI SHA-256 digests, leaf first. */
        public final List<byte[]> digests;

        DigestList(List<byte[]> digests) { this.digests = java.util.Collections.unmodifiableList(new java.util.ArrayList<>(digests)); }
    }
}
