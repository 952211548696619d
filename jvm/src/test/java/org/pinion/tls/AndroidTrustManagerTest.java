// PinionAndroidTrustManager on the JVM, its X509TrustManagerExtensions stub backed by PKIX, over openssl s_server handshakes.
package org.pinion.tls;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.pinion.tls.OkHttpPinningTest.MutablePolicy;
import org.pinion.trust.PinEvaluation;

public class AndroidTrustManagerTest {
    @BeforeClass
    public static void makeCertificates() throws Exception { OkHttpPinningTest.makeCertificates(); }

    @AfterClass
    public static void removeCertificates() throws IOException { OkHttpPinningTest.removeCertificates(); }

    /** Runs one TLS handshake to {@code host} (resolved to 127.0.0.1 by the test hosts file). */
    static void handshake(PinionAndroidTrustManager tm, String host, int port) throws Exception {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, new TrustManager[] {tm}, null);
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(host, port)) {
            socket.startHandshake();
        }
    }

    static String refused(PinionAndroidTrustManager tm, String host, int port) throws Exception {
        try {
            handshake(tm, host, port);
        } catch (SSLException e) {
            return String.valueOf(e.getMessage()) + " / " + e.getCause();
        }
        fail("handshake to " + host + " was not refused");
        return null;
    }

    static PinionAndroidTrustManager manager(MutablePolicy policy) {
        return new PinionAndroidTrustManager(OkHttpPinningTest.platform, policy);
    }

    @Test
    public void pinnedChainIsTrusted() throws Exception {
        try (OpenSslServer server = new OpenSslServer(OkHttpPinningTest.pki, "leaf.pem", "leaf.key", "chain.pem")) {
            MutablePolicy policy = new MutablePolicy(OkHttpPinningTest.entry("api.example.test", false, true, OkHttpPinningTest.pinOf("int")));
            handshake(manager(policy), "api.example.test", server.port);
            assertEquals(0, policy.failures.size());
        }
    }

    @Test
    public void unpinnedChainIsRefusedAndReported() throws Exception {
        try (OpenSslServer server = new OpenSslServer(OkHttpPinningTest.pki, "leaf.pem", "leaf.key", "chain.pem")) {
            MutablePolicy policy = new MutablePolicy(OkHttpPinningTest.entry("api.example.test", false, true, OkHttpPinningTest.pinOf("leaf2")));
            String why = refused(manager(policy), "api.example.test", server.port);
            assertTrue(why, why.contains("PinningException"));
            assertEquals(1, policy.failures.size());
            assertEquals(PinEvaluation.Verdict.REJECTED, policy.failures.get(0).verdict);
        }
    }

    @Test
    public void pinnedCertificateAppendedOffTheVerifiedPathDoesNotCount() throws Exception {
        try (OpenSslServer server = new OpenSslServer(OkHttpPinningTest.pki, "leaf.pem", "leaf.key", "chain-with-stray.pem")) {
            MutablePolicy policy = new MutablePolicy(OkHttpPinningTest.entry("api.example.test", false, true, OkHttpPinningTest.pinOf("stray")));
            String why = refused(manager(policy), "api.example.test", server.port);
            assertTrue(why, why.contains("PinningException"));
        }
    }

    @Test
    public void wrongHostNameIsRefusedEvenWhenPinned() throws Exception {
        try (OpenSslServer server = new OpenSslServer(OkHttpPinningTest.pki, "leaf.pem", "leaf.key", "chain.pem")) {
            MutablePolicy policy = new MutablePolicy(OkHttpPinningTest.entry("other.example.test", false, true, OkHttpPinningTest.pinOf("int")));
            String why = refused(manager(policy), "other.example.test", server.port);
            assertTrue(why, why.contains("not valid for other.example.test"));
        }
    }

    @Test
    public void chainThePlatformRefusesIsRefused() throws Exception {
        try (OpenSslServer server = new OpenSslServer(OkHttpPinningTest.pki, "expired.pem", "expired.key", "chain.pem")) {
            MutablePolicy policy = new MutablePolicy(OkHttpPinningTest.entry("api.example.test", false, true, OkHttpPinningTest.pinOf("int")));
            refused(manager(policy), "api.example.test", server.port);
            assertEquals("the pin check never ran", 0, policy.failures.size());
        }
    }

    @Test
    public void rotationMidSessionAppliesToTheNextHandshake() throws Exception {
        try (OpenSslServer server = new OpenSslServer(OkHttpPinningTest.pki, "leaf.pem", "leaf.key", "chain.pem")) {
            MutablePolicy policy = new MutablePolicy(OkHttpPinningTest.entry("api.example.test", false, true, OkHttpPinningTest.pinOf("leaf")));
            PinionAndroidTrustManager tm = manager(policy);
            handshake(tm, "api.example.test", server.port);
            policy.policy = new org.pinion.trust.MergedPolicy(java.util.Arrays.asList(
                    OkHttpPinningTest.entry("api.example.test", false, true, OkHttpPinningTest.pinOf("leaf2"))));
            refused(tm, "api.example.test", server.port);
        }
    }

    @Test
    public void callWithoutAHostIsRefusedSayingWhy() throws Exception {
        PinionAndroidTrustManager tm = manager(new MutablePolicy());
        X509Certificate[] chain = {OkHttpPinningTest.pki.cert("leaf"), OkHttpPinningTest.pki.cert("int")};
        for (int form = 0; form < 3; form++) {
            try {
                if (form == 0) tm.checkServerTrusted(chain, "ECDHE_ECDSA");
                if (form == 1) tm.checkServerTrusted(chain, "ECDHE_ECDSA", (java.net.Socket) null);
                if (form == 2) tm.checkServerTrusted(chain, "ECDHE_ECDSA", (javax.net.ssl.SSLEngine) null);
                fail("form " + form + " accepted a call without a host");
            } catch (CertificateException e) {
                assertTrue(e.getMessage(), e.getMessage().startsWith("no host name for the pin check"));
            }
        }
    }

    @Test
    public void okHttpThroughThePublicInstallRechecksAPooledConnection() throws Exception {
        try (KeepAliveServer server = new KeepAliveServer(OkHttpPinningTest.pki)) {
            MutablePolicy policy = new MutablePolicy(OkHttpPinningTest.entry("api.example.test", false, true,
                    OkHttpPinningTest.pinOf("leaf"), OkHttpPinningTest.pinOf("leaf2")));
            okhttp3.OkHttpClient.Builder builder = new okhttp3.OkHttpClient.Builder().retryOnConnectionFailure(false)
                    .dns(host -> java.util.Collections.singletonList(java.net.InetAddress.getByName("127.0.0.1")));
            PinionOkHttp.Installed installed = PinionOkHttp.install(builder, manager(policy));
            assertTrue(installed.trustManager instanceof PinionAndroidTrustManager);
            okhttp3.OkHttpClient client = builder.build();
            assertEquals(200, OkHttpPinningTest.get(client, "api.example.test", server.port()));
            assertEquals(200, OkHttpPinningTest.get(client, "api.example.test", server.port()));
            assertEquals("the second request reused the pooled connection", 1, server.handshakes());
            policy.policy = new org.pinion.trust.MergedPolicy(java.util.Arrays.asList(
                    OkHttpPinningTest.entry("api.example.test", false, true, OkHttpPinningTest.pinOf("leaf2"))));
            OkHttpPinningTest.refused(client, "api.example.test", server.port(), "leaf was revoked while the connection was pooled");
            assertEquals("refused before a request was written", 2, server.requests());
        }
    }
}
