// Compile-time and JVM-test stand-in for Android's X509TrustManagerExtensions; never packaged.
package android.net.http;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.X509TrustManager;
import org.pinion.tls.VerifiedChain;

/**
 * The members of {@code android.net.http.X509TrustManagerExtensions} (API 17) that Pinion and OkHttp
 * call, with the platform's dispatch: a wrapped trust manager that declares a public
 * {@code List<X509Certificate> checkServerTrusted(X509Certificate[], String, String)} is called
 * through that method by reflection, as the platform does for any trust manager other than its own
 * (a failed reflective call becomes a {@link CertificateException}); any other trust manager plays
 * the platform's own, with the JVM's PKIX: its X.509 check, then the chain {@code CertPathBuilder}
 * verifies to its anchors. On a device the platform's class (X.509 plus the app's Network Security
 * Config) is used instead; jvm/build keeps this file out of every jar and AAR. It checks no host
 * name, as the platform's does not.
 */
public class X509TrustManagerExtensions {
    private final X509TrustManager trustManager;
    private final Method hostAware;

    /** @param tm the trust manager to wrap: the platform's, or one with the host-aware method */
    public X509TrustManagerExtensions(X509TrustManager tm) {
        this.trustManager = tm;
        Method found;
        try {
            found = tm.getClass().getMethod("checkServerTrusted", X509Certificate[].class, String.class, String.class);
        } catch (NoSuchMethodException e) {
            found = null;
        }
        this.hostAware = found;
    }

    /**
     * @param chain the chain the server sent, leaf first
     * @param authType the key exchange algorithm
     * @param host the host connected to (unused by the platform's X.509 check)
     * @return the verified chain, leaf first, ending in a trust anchor
     * @throws CertificateException the trust manager refuses the chain
     */
    @SuppressWarnings("unchecked")
    public List<X509Certificate> checkServerTrusted(X509Certificate[] chain, String authType, String host) throws CertificateException {
        if (hostAware == null) {
            trustManager.checkServerTrusted(chain, authType);
            return VerifiedChain.build(chain, trustManager.getAcceptedIssuers(), new java.util.Date());
        }
        try {
            return (List<X509Certificate>) hostAware.invoke(trustManager, chain, authType, host);
        } catch (IllegalAccessException e) {
            throw new CertificateException("Failed to call checkServerTrusted", e);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof CertificateException) throw (CertificateException) e.getCause();
            if (e.getCause() instanceof RuntimeException) throw (RuntimeException) e.getCause();
            throw new CertificateException("checkServerTrusted failed", e.getCause());
        }
    }
}
