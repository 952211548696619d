// Compile-time and JVM-test stand-in for Android's X509TrustManagerExtensions; never packaged.
package android.net.http;

import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.X509TrustManager;
import org.pinion.tls.VerifiedChain;

/**
 * The two members of {@code android.net.http.X509TrustManagerExtensions} (API 17) that Pinion
 * calls, with the platform's contract played by the JVM's PKIX: the wrapped trust manager's X.509
 * check, then the chain {@code CertPathBuilder} verifies to its anchors. On a device the platform's
 * class (X.509 plus the app's Network Security Config) is used instead; jvm/build keeps this file
 * out of every jar and AAR. It checks no host name, as the platform's does not.
 */
public class X509TrustManagerExtensions {
    private final X509TrustManager platform;

    /** @param tm the platform trust manager */
    public X509TrustManagerExtensions(X509TrustManager tm) { this.platform = tm; }

    /**
     * @param chain the chain the server sent, leaf first
     * @param authType the key exchange algorithm
     * @param host the host connected to (unused by the platform's X.509 check)
     * @return the verified chain, leaf first, ending in a trust anchor
     * @throws CertificateException the platform refuses the chain
     */
    public List<X509Certificate> checkServerTrusted(X509Certificate[] chain, String authType, String host) throws CertificateException {
        platform.checkServerTrusted(chain, authType);
        return VerifiedChain.build(chain, platform.getAcceptedIssuers(), new java.util.Date());
    }
}
