// The overloads every Pinion trust manager shares: where the host name comes from, and refusals without one.
package org.pinion.tls;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;
import org.pinion.trust.Pin;

/**
 * The part of {@link PinionTrustManager} and {@code PinionAndroidTrustManager} that does not depend
 * on where the verified chain comes from. Every server check takes a host name: from the socket's or
 * engine's handshake session, or from the caller of the host-aware form
 * {@code checkServerTrusted(chain, authType, host)} (the form Android's {@code X509TrustManagerExtensions}
 * and Conscrypt look up by reflection, which each public subclass declares itself so that the lookup
 * finds it on the public class). Then, in this order: the platform's verified chain
 * ({@link #platformVerifiedChain}), the host name on the served leaf ({@link HostNames}, RFC 6125),
 * the pins on the verified chain (DESIGN.md §8). A call without a host name (the two-argument form,
 * a socket or engine with no handshake session, a null or empty host) is refused with a
 * {@link CertificateException} whose message starts "no host name for the pin check". Client
 * certificates are never accepted.
 */
abstract class HostAwareTrustManager extends X509ExtendedTrustManager implements PinCheckingTrustManager {
    /** The platform trust manager this one wraps. */
    final X509TrustManager platform;
    private final PolicySource policy;
    private final List<Pin> fixedPins;
    /** The UNSAFE debug proxy override, or null (always null for the update channel's fixed pins). */
    final DebugProxyOverride debugProxy;

    HostAwareTrustManager(X509TrustManager platform, PolicySource policy, List<Pin> fixedPins) {
        this(platform, policy, fixedPins, null);
    }

    HostAwareTrustManager(X509TrustManager platform, PolicySource policy, List<Pin> fixedPins, DebugProxyOverride debugProxy) {
        this.platform = platform;
        this.policy = policy;
        this.fixedPins = fixedPins == null ? null : Collections.unmodifiableList(new ArrayList<>(fixedPins));
        this.debugProxy = debugProxy;
    }

    /**
     * Checks the arguments of an {@code unsafeAllowDebugProxy} factory and logs at WARNING that the
     * override is on.
     *
     * @throws IllegalArgumentException a null argument
     */
    static void requireDebugProxyArguments(X509TrustManager platform, PolicySource policy, DebugProxyOverride override) {
        if (platform == null) throw new IllegalArgumentException("the platform trust manager is null");
        if (policy == null) throw new IllegalArgumentException("the policy is null");
        if (override == null) throw new IllegalArgumentException("the debug proxy override is null (build one, or use the constructor)");
        DebugProxyOverride.LOG.warning("Pinion UNSAFE debug proxy override enabled: " + override
                + "; connections through these CAs skip their pins");
    }

    /**
     * The platform's X.509 verdict on {@code chain} and the path it verified.
     *
     * @param chain the chain the server sent, leaf first, not empty and without null elements
     * @param authType the key exchange algorithm, not empty
     * @param host the host name connected to, not empty
     * @return the verified chain, leaf first, ending in a trust anchor
     * @throws CertificateException the platform refuses the chain
     */
    abstract List<X509Certificate> platformVerifiedChain(X509Certificate[] chain, String authType, String host)
            throws CertificateException;

    @Override
    public final void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        throw new CertificateException("Pinion's trust manager does not authenticate clients");
    }

    @Override
    public final void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        checkClientTrusted(chain, authType);
    }

    @Override
    public final void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        checkClientTrusted(chain, authType);
    }

    /**
     * Always refuses: this form carries no host name, and pins are per host.
     *
     * @throws CertificateException always, saying that there is no host name
     */
    @Override
    public final void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        throw new CertificateException("no host name for the pin check: the two-argument checkServerTrusted carries none "
                + "(connect through an SSLSocket or SSLEngine created with the peer host, or call "
                + "checkServerTrusted(chain, authType, host))");
    }

    @Override
    public final void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        SSLSession session = socket instanceof SSLSocket ? ((SSLSocket) socket).getHandshakeSession() : null;
        check(chain, authType, session == null ? null : session.getPeerHost(), true, session, socket == null ? -1 : socket.getPort());
    }

    @Override
    public final void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        SSLSession session = engine == null ? null : engine.getHandshakeSession();
        check(chain, authType, session == null ? null : session.getPeerHost(), true, session, engine == null ? -1 : engine.getPeerPort());
    }

    /**
     * The body of the public host-aware form: the same checks as a handshake, with the host the
     * caller names, no session to store the verified digests in, and port -1 in failure reports.
     */
    final List<X509Certificate> checkServerTrustedForHost(X509Certificate[] chain, String authType, String host)
            throws CertificateException {
        return check(chain, authType, host, false, null, -1);
    }

    @Override
    public final X509Certificate[] getAcceptedIssuers() { return platform.getAcceptedIssuers(); }

    @Override
    public final PolicySource policySource() { return policy; }

    private List<X509Certificate> check(X509Certificate[] chain, String authType, String host, boolean hostFromSession,
            SSLSession session, int port) throws CertificateException {
        if (chain == null || chain.length == 0) throw new CertificateException("the server sent no certificate");
        for (X509Certificate certificate : chain) {
            if (certificate == null) throw new CertificateException("the certificate chain has a null element");
        }
        if (authType == null || authType.isEmpty()) throw new CertificateException("no key exchange algorithm (authType) given");
        if (host == null || host.isEmpty()) {
            throw new CertificateException("no host name for the pin check: "
                    + (hostFromSession ? "the handshake session names no peer host" : "the caller gave none"));
        }
        List<X509Certificate> verified = platformVerifiedChain(chain, authType, host);
        if (verified == null || verified.isEmpty()) throw new CertificateException("the platform returned no verified chain for " + host);
        if (!HostNames.matches(host, chain[0])) throw new CertificateException("the certificate is not valid for " + host);
        PinionTrustManager.checkPins(host, chain, verified, port, fixedPins, policy, session, debugProxy);
        return Collections.unmodifiableList(new ArrayList<>(verified));
    }
}
