// Android trust manager: the platform's verified chain (X.509 and Network Security Config), host name, then pins.
package org.pinion.tls;

import android.content.Context;
import android.content.pm.ApplicationInfo;
import android.net.http.X509TrustManagerExtensions;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.X509TrustManager;

/**
 * The trust manager for Android apps. At each handshake it takes the host name from the socket's or
 * engine's handshake session, asks the platform for the verified chain with
 * {@code X509TrustManagerExtensions.checkServerTrusted(chain, authType, host)} (X.509 and the app's
 * Network Security Config, the host-aware form a {@code <domain-config>} demands), checks the host
 * name itself ({@link HostNames}, RFC 6125: the platform call checks none), then the pins on that
 * verified chain (DESIGN.md §8), sending failures to the {@link PolicySource}. The public
 * three-argument {@link #checkServerTrusted(X509Certificate[], String, String)} runs the same checks
 * for a host the caller names. A call without a host (the two-argument form, a socket or engine
 * with no handshake session, a null or empty host) is refused with a {@link CertificateException}
 * saying so.
 *
 * <p>Compiled against a stub of {@code X509TrustManagerExtensions} and tested on the JVM with that
 * stub backed by PKIX; it has not been run on an Android device or emulator.
 */
public final class PinionAndroidTrustManager extends HostAwareTrustManager {
    private final X509TrustManagerExtensions extensions;

    /**
     * @param platform the platform's default trust manager (from {@code TrustManagerFactory} with a
     *     null key store), whose verdicts include the app's Network Security Config
     * @param policy the effective policy and the pin-failure sink; not null
     * @throws IllegalArgumentException a null argument, or a platform trust manager that
     *     {@code X509TrustManagerExtensions} does not accept
     */
    public PinionAndroidTrustManager(X509TrustManager platform, PolicySource policy) {
        super(requireNonNull(platform, policy), policy, null);
        this.extensions = new X509TrustManagerExtensions(platform);
    }

    private PinionAndroidTrustManager(X509TrustManager platform, PolicySource policy, DebugProxyOverride override) {
        super(platform, policy, null, override);
        this.extensions = new X509TrustManagerExtensions(platform);
    }

    /**
     * UNSAFE: a trust manager whose pins a debugging proxy's CA may bypass, refused unless the APP is
     * debuggable. It checks as {@link #PinionAndroidTrustManager(X509TrustManager, PolicySource)}
     * does, except that a chain the platform verified, ending in a CA that {@code override} names, on
     * a domain it covers, passes in spite of the pins ({@link DebugProxyOverride}); each such use is
     * sent to {@link PolicySource#onEvent} and logged at WARNING, and so is the creation of this
     * trust manager. The proxy's CA must already be trusted by the platform, typically through the
     * Network Security Config's {@code <debug-overrides>}; the override adds no anchor.
     *
     * <p>Debuggable means {@link ApplicationInfo#FLAG_DEBUGGABLE} in
     * {@code context.getApplicationInfo().flags}: the app's own manifest, which the debug build type
     * sets and a release build does not. The library's {@code BuildConfig.DEBUG} (always false in a
     * released AAR), {@code ro.debuggable} and {@code Build.TYPE} (the device's build, true on every
     * emulator and rooted device) are not consulted.
     *
     * @param context any context of the app (its application info is read)
     * @param platform the platform's default trust manager
     * @param policy the effective policy, failure sink and event sink
     * @param override the proxy CAs and the domains whose pins they bypass
     * @return the trust manager
     * @throws IllegalArgumentException a null argument, or a context without application info
     * @throws IllegalStateException the app is not debuggable
     */
    public static PinionAndroidTrustManager unsafeAllowDebugProxy(Context context, X509TrustManager platform, PolicySource policy,
            DebugProxyOverride override) {
        if (context == null) throw new IllegalArgumentException("the context is null");
        ApplicationInfo info = context.getApplicationInfo();
        if (info == null) throw new IllegalArgumentException("the context has no application info");
        if ((info.flags & ApplicationInfo.FLAG_DEBUGGABLE) == 0) {
            throw new IllegalStateException("the debug proxy override is refused: the app is not debuggable "
                    + "(ApplicationInfo.FLAG_DEBUGGABLE is not set; only a debug build type may use it)");
        }
        requireDebugProxyArguments(platform, policy, override);
        return new PinionAndroidTrustManager(platform, policy, override);
    }

    /**
     * The host-aware check that Android's {@code X509TrustManagerExtensions} and Conscrypt look up by
     * reflection on an app's trust manager (and that OkHttp's Android chain cleaner reaches through
     * {@code X509TrustManagerExtensions}): the platform's verified chain for {@code host}, the host
     * name (RFC 6125), then the pins on that chain. No session is at hand, so the verified digests are
     * not stored and failure reports carry port -1. The consumer R8 rules in the AAR keep this
     * method, which no app code calls by name.
     *
     * @param chain the chain the server sent, leaf first
     * @param authType the key exchange algorithm (for example {@code "ECDHE_ECDSA"})
     * @param host the host name connected to
     * @return the platform's verified chain, leaf first, ending in a trust anchor (unmodifiable), as
     *     the platform's own trust manager returns it
     * @throws CertificateException a null or empty chain, authType or host, a chain the platform refuses,
     *     a name mismatch, or a {@link PinningException}
     */
    public List<X509Certificate> checkServerTrusted(X509Certificate[] chain, String authType, String host) throws CertificateException {
        return checkServerTrustedForHost(chain, authType, host);
    }

    @Override
    List<X509Certificate> platformVerifiedChain(X509Certificate[] chain, String authType, String host) throws CertificateException {
        return extensions.checkServerTrusted(chain, authType, host);
    }

    private static X509TrustManager requireNonNull(X509TrustManager platform, PolicySource policy) {
        if (platform == null || policy == null) throw new IllegalArgumentException("platform trust manager and policy are required");
        return platform;
    }
}
