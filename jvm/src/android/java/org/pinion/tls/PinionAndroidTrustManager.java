// Android trust manager: the platform's verified chain (X.509 and Network Security Config), host name, then pins.
package org.pinion.tls;

import android.net.http.X509TrustManagerExtensions;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * The trust manager for Android apps. At each handshake it takes the host name from the socket's or
 * engine's handshake session, asks the platform for the verified chain with
 * {@code X509TrustManagerExtensions.checkServerTrusted(chain, authType, host)} (X.509 and the app's
 * Network Security Config, the host-aware form a {@code <domain-config>} demands), checks the host
 * name itself ({@link HostNames}, RFC 6125: the platform call checks none), then the pins on that
 * verified chain (DESIGN.md §8), sending failures to the {@link PolicySource}. A call without a host
 * (the two-argument form, or a socket or engine with no handshake session) is refused with a
 * {@link CertificateException} saying so.
 *
 * <p>Compiled against a stub of {@code X509TrustManagerExtensions} and tested on the JVM with that
 * stub backed by PKIX; it has not been run on an Android device or emulator.
 */
public final class PinionAndroidTrustManager extends X509ExtendedTrustManager implements PinCheckingTrustManager {
    private final X509TrustManager platform;
    private final X509TrustManagerExtensions extensions;
    private final PolicySource policy;

    /**
     * @param platform the platform's default trust manager (from {@code TrustManagerFactory} with a
     *     null key store), whose verdicts include the app's Network Security Config
     * @param policy the effective policy and the pin-failure sink; not null
     */
    public PinionAndroidTrustManager(X509TrustManager platform, PolicySource policy) {
        if (platform == null || policy == null) throw new IllegalArgumentException("platform trust manager and policy are required");
        this.platform = platform;
        this.extensions = new X509TrustManagerExtensions(platform);
        this.policy = policy;
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
        throw new CertificateException("no host name for the pin check: the two-argument checkServerTrusted carries none "
                + "(connect through an SSLSocket or SSLEngine created with the peer host)");
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
        if (host == null || host.isEmpty()) {
            throw new CertificateException("no host name for the pin check: the handshake session names no peer host");
        }
        List<X509Certificate> verified = extensions.checkServerTrusted(chain, authType, host);
        if (verified == null || verified.isEmpty()) throw new CertificateException("the platform returned no verified chain for " + host);
        if (!HostNames.matches(host, chain[0])) throw new CertificateException("the certificate is not valid for " + host);
        PinionTrustManager.checkPins(host, chain, verified, port, null, policy, session);
    }
}
