// X509 trust manager that runs normal validation first, then checks pins on the PKIX-verified chain (DESIGN.md §8).
package org.pinion.tls;

import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import javax.net.ssl.SSLSession;
import javax.net.ssl.X509TrustManager;
import org.pinion.trust.PinEvaluation;

/**
 * Wraps the platform {@link X509TrustManager}: (1) the platform's own validation, (2) the host name
 * (RFC 6125, {@link HostNames}), (3) the pins of the effective policy on the chain PKIX
 * {@code CertPathBuilder} verifies from the served certificates to the platform's anchors (never the
 * chain as sent). The verified chain's SPKI digests are stored in the TLS session
 * ({@link #SESSION_KEY}) so that {@link PinionOkHttp}'s interceptor re-checks them on every request
 * over a reused connection. The host comes from the handshake session (SNI host), or from the
 * caller of {@link #checkServerTrusted(X509Certificate[], String, String)}; without one the
 * connection is refused.
 */
public final class PinionTrustManager extends HostAwareTrustManager {
    /** SSLSession value: the {@code List<byte[]>} of verified SPKI digests, leaf first. */
    public static final String SESSION_KEY = "org.pinion.verified-spki";

    /**
     * @param platform the platform trust manager (system store or the app's CA file)
     * @param policy the effective policy and failure sink; null checks X.509 and host name only
     */
    public PinionTrustManager(X509TrustManager platform, PolicySource policy) {
        super(platform, policy, null);
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
        super(platform, null, publisherPins);
    }

    private PinionTrustManager(X509TrustManager platform, PolicySource policy, DebugProxyOverride override) {
        super(platform, policy, null, override);
    }

    /**
     * UNSAFE: a trust manager whose pins a debugging proxy's CA may bypass, for debug builds only.
     * It checks as {@link #PinionTrustManager(X509TrustManager, PolicySource)} does, except that a
     * chain the platform verified, ending in a CA that {@code override} names, on a domain it
     * covers, passes in spite of the pins ({@link DebugProxyOverride}); each such use is sent to
     * {@link PolicySource#onEvent} and logged at WARNING, and so is the creation of this trust
     * manager. The proxy's CA must already be trusted by {@code platform} (for example through the
     * CA file); the override adds no anchor. Never ship it in a release: the JVM cannot tell a
     * debug build, so keeping this call out of production code is the caller's duty.
     *
     * @param platform the platform trust manager, trusting the proxy's CA
     * @param policy the effective policy, failure sink and event sink
     * @param override the proxy CAs and the domains whose pins they bypass
     * @return the trust manager
     * @throws IllegalArgumentException a null argument
     */
    public static PinionTrustManager unsafeAllowDebugProxy(X509TrustManager platform, PolicySource policy, DebugProxyOverride override) {
        requireDebugProxyArguments(platform, policy, override);
        return new PinionTrustManager(platform, policy, override);
    }

    /**
     * The host-aware check with the host name the caller gives, in the shape of Android's
     * {@code X509TrustManagerExtensions.checkServerTrusted} (which looks this method up by reflection
     * on the wrapped trust manager): the platform's X.509 check, the host name (RFC 6125), then the
     * pins on the chain PKIX verifies. No session is at hand, so the verified digests are not stored
     * and failure reports carry port -1.
     *
     * @param chain the chain the server sent, leaf first
     * @param authType the key exchange algorithm (for example {@code "ECDHE_ECDSA"})
     * @param host the host name connected to
     * @return the verified chain, leaf first, ending with the trust anchor's certificate (unmodifiable)
     * @throws CertificateException a null or empty chain, authType or host, a chain the platform refuses,
     *     a name mismatch, or a {@link PinningException}
     */
    public List<X509Certificate> checkServerTrusted(X509Certificate[] chain, String authType, String host) throws CertificateException {
        return checkServerTrustedForHost(chain, authType, host);
    }

    @Override
    List<X509Certificate> platformVerifiedChain(X509Certificate[] chain, String authType, String host) throws CertificateException {
        platform.checkServerTrusted(chain, authType);
        return VerifiedChain.build(chain, platform.getAcceptedIssuers(), new Date());
    }

    /**
     * The pin half of every Pinion trust manager, run on a chain the platform has verified: the
     * publisher pins when {@code fixedPins} is not empty, else the policy's pins for {@code host};
     * failures go to the policy's sink unless {@code debugProxy} bypasses them; the verified digests
     * are stored in {@code session} when there is one.
     *
     * @throws CertificateException no publisher pin on the chain, or a {@link PinningException}
     */
    static void checkPins(String host, X509Certificate[] chain, List<X509Certificate> verified, int port,
            List<org.pinion.trust.Pin> fixedPins, PolicySource policy, SSLSession session, DebugProxyOverride debugProxy)
            throws CertificateException {
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
            if (debugProxy != null && debugProxy.apply(host, digests, evaluation, policy)) {
                if (session != null) session.putValue(SESSION_KEY, new DigestList(digests));
                return;
            }
            if (evaluation.verdict == PinEvaluation.Verdict.REJECTED || evaluation.verdict == PinEvaluation.Verdict.REPORT_ONLY) {
                policy.onPinFailure(evaluation, port, Arrays.asList(chain), verified);
            }
            if (evaluation.verdict == PinEvaluation.Verdict.REJECTED) {
                throw new PinningException(evaluation, digests);
            }
        }
        if (session != null) session.putValue(SESSION_KEY, new DigestList(digests));
    }

    /** The verified digests as stored in a session (immutable). */
    public static final class DigestList {
        /** SPKI SHA-256 digests, leaf first. */
        public final List<byte[]> digests;

        DigestList(List<byte[]> digests) { this.digests = java.util.Collections.unmodifiableList(new java.util.ArrayList<>(digests)); }
    }
}
