// Installs Pinion's pin checks into an OkHttpClient.Builder: trust manager, per-connection SSLContext, request-time re-check.
package org.pinion.tls;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.util.Collections;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.X509TrustManager;
import okhttp3.Connection;
import okhttp3.ConnectionPool;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.pinion.trust.PinEvaluation;

/**
 * {@link #install} makes an OkHttp client check pins (DESIGN.md §8): every TLS connection gets a
 * fresh {@link SSLContext} (so no TLS session is ever resumed without a verified chain), the
 * {@link PinionTrustManager} refuses during the handshake, and a network interceptor re-evaluates
 * the stored verified chain against the policy of that moment before each request is written, so a
 * pooled connection whose pin was revoked is refused on the very next request. When trust is removed
 * the caller also evicts the pool ({@link Installed#evictConnections()}).
 */
public final class PinionOkHttp {
    private PinionOkHttp() {}

    /** What {@link #install} set up. */
    public static final class Installed {
        /** The trust manager in use. */
        public final PinCheckingTrustManager trustManager;
        /** The connection pool the builder was given. */
        public final ConnectionPool pool;

        Installed(PinCheckingTrustManager trustManager, ConnectionPool pool) {
            this.trustManager = trustManager;
            this.pool = pool;
        }

        /** Closes every idle pooled connection (call when the policy removes trust). */
        public void evictConnections() { pool.evictAll(); }
    }

    /**
     * @param builder the app's OkHttp builder (its own SSL socket factory, pool and interceptors are replaced/added)
     * @param platform the platform trust manager (system store or a CA file)
     * @param policy the client's policy source
     * @return the pieces, for eviction
     */
    public static Installed install(OkHttpClient.Builder builder, X509TrustManager platform, PolicySource policy) {
        return install(builder, new PinionTrustManager(platform, policy));
    }

    /**
     * Installs any Pinion trust manager (the JVM's or Android's): a fresh {@link SSLContext} per
     * connection, a new connection pool, and the request-time re-check against its policy.
     *
     * @param builder the app's OkHttp builder (its SSL socket factory and pool are replaced, an interceptor added)
     * @param trustManager the trust manager; its {@link PinCheckingTrustManager#policySource()} must not be null
     * @return the pieces, for eviction
     * @throws IllegalArgumentException the trust manager checks no policy
     */
    public static Installed install(OkHttpClient.Builder builder, PinCheckingTrustManager trustManager) {
        PolicySource policy = trustManager.policySource();
        if (policy == null) throw new IllegalArgumentException("the trust manager checks no policy (an update-channel trust manager?)");
        ConnectionPool pool = new ConnectionPool();
        builder.sslSocketFactory(new FreshContextSocketFactory(trustManager), trustManager);
        builder.connectionPool(pool);
        builder.addNetworkInterceptor(new RecheckInterceptor(policy,
                trustManager instanceof HostAwareTrustManager ? ((HostAwareTrustManager) trustManager).debugProxy : null));
        return new Installed(trustManager, pool);
    }

    /**
     * Sets up the update channel's client: X.509, host name and the publisher pins only, on every
     * connection (fresh SSLContext), never the manifest's pins.
     *
     * @param builder the update channel's builder
     * @param platform the platform trust manager
     * @param publisherPins the app's publisher pins (empty: X.509 only)
     */
    public static void installUpdateChannel(OkHttpClient.Builder builder, X509TrustManager platform, List<org.pinion.trust.Pin> publisherPins) {
        PinionTrustManager trustManager = new PinionTrustManager(platform, publisherPins);
        builder.sslSocketFactory(new FreshContextSocketFactory(trustManager), trustManager);
    }

    /**
     * A socket factory that makes every TLS socket from a new {@link SSLContext} with {@code trustManager}
     * (no session is ever resumed), for clients other than OkHttp such as {@code HttpsURLConnection}.
     *
     * @param trustManager the trust manager
     * @return the factory
     */
    public static SSLSocketFactory freshContextSocketFactory(PinCheckingTrustManager trustManager) {
        return new FreshContextSocketFactory(trustManager);
    }

    /**
     * Re-checks the connection's verified chain against the current policy before the request is
     * sent; the trust manager's debug proxy override, if any, applies here as at the handshake.
     */
    static final class RecheckInterceptor implements Interceptor {
        private final PolicySource policy;
        private final DebugProxyOverride debugProxy;

        RecheckInterceptor(PolicySource policy, DebugProxyOverride debugProxy) {
            this.policy = policy;
            this.debugProxy = debugProxy;
        }

        @Override
        public Response intercept(Chain chain) throws IOException {
            Connection connection = chain.connection();
            if (connection != null && connection.socket() instanceof SSLSocket) {
                SSLSession session = ((SSLSocket) connection.socket()).getSession();
                Object stored = session.getValue(PinionTrustManager.SESSION_KEY);
                String host = chain.request().url().host();
                List<byte[]> digests = stored instanceof PinionTrustManager.DigestList ? ((PinionTrustManager.DigestList) stored).digests : Collections.emptyList();
                PinEvaluation evaluation = PinEvaluation.evaluate(host, digests, policy.currentPolicy());
                if (evaluation.verdict == PinEvaluation.Verdict.REJECTED
                        && !(debugProxy != null && debugProxy.apply(host, digests, evaluation, policy))) {
                    connection.socket().close();
                    throw new IOException(new PinningException(evaluation, digests).getMessage());
                }
            }
            return chain.proceed(chain.request());
        }
    }

    /** Creates each TLS socket from a new SSLContext: nothing is ever resumed across connections. */
    static final class FreshContextSocketFactory extends SSLSocketFactory {
        private final PinCheckingTrustManager trustManager;

        FreshContextSocketFactory(PinCheckingTrustManager trustManager) { this.trustManager = trustManager; }

        private SSLSocketFactory fresh() throws IOException {
            try {
                SSLContext context = SSLContext.getInstance("TLS");
                context.init(null, new javax.net.ssl.TrustManager[] {trustManager}, null);
                context.getClientSessionContext().setSessionCacheSize(1);
                return context.getSocketFactory();
            } catch (GeneralSecurityException e) {
                throw new IOException("TLS is not available: " + e.getMessage(), e);
            }
        }

        private static SSLSocketFactory defaults() {
            try {
                return SSLContext.getDefault().getSocketFactory();
            } catch (GeneralSecurityException e) {
                return (SSLSocketFactory) SSLSocketFactory.getDefault();
            }
        }

        @Override
        public String[] getDefaultCipherSuites() { return defaults().getDefaultCipherSuites(); }

        @Override
        public String[] getSupportedCipherSuites() { return defaults().getSupportedCipherSuites(); }

        @Override
        public Socket createSocket(Socket s, String host, int port, boolean autoClose) throws IOException {
            return fresh().createSocket(s, host, port, autoClose);
        }

        @Override
        public Socket createSocket(String host, int port) throws IOException { return fresh().createSocket(host, port); }

        @Override
        public Socket createSocket(String host, int port, InetAddress local, int localPort) throws IOException {
            return fresh().createSocket(host, port, local, localPort);
        }

        @Override
        public Socket createSocket(InetAddress host, int port) throws IOException { return fresh().createSocket(host, port); }

        @Override
        public Socket createSocket(InetAddress address, int port, InetAddress local, int localPort) throws IOException {
            return fresh().createSocket(address, port, local, localPort);
        }
    }
}
