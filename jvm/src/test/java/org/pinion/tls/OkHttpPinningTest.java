// OkHttp with Pinion against real `openssl s_server` on 127.0.0.1 with certificates made in the test (DESIGN.md §8).
package org.pinion.tls;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.X509TrustManager;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.pinion.crypto.Sha256;
import org.pinion.trust.MergedPolicy;
import org.pinion.trust.Pin;
import org.pinion.trust.PinEvaluation;
import org.pinion.trust.PinnedDomain;

public class OkHttpPinningTest {
    static TestPki pki;
    static X509TrustManager platform;

    @BeforeClass
    public static void makeCertificates() throws Exception {
        pki = new TestPki(Files.createTempDirectory("pinion-pki"));
        platform = TrustManagers.platform(pki.path("root.pem"));
    }

    @AfterClass
    public static void removeCertificates() throws IOException {
        try (var walk = Files.walk(pki.dir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    static Pin pinOf(String cert) throws Exception {
        return Pin.ofDigest(Sha256.digest(pki.cert(cert).getPublicKey().getEncoded()));
    }

    /** A policy that the test can change between requests. */
    static final class MutablePolicy implements PolicySource {
        volatile MergedPolicy policy;
        final List<PinEvaluation> failures = new CopyOnWriteArrayList<>();
        final List<org.pinion.trust.ClientEvent> events = new CopyOnWriteArrayList<>();

        MutablePolicy(PinnedDomain... domains) { policy = new MergedPolicy(List.of(domains)); }

        @Override
        public MergedPolicy currentPolicy() { return policy; }

        @Override
        public void onPinFailure(PinEvaluation evaluation, int port, List<X509Certificate> served, List<X509Certificate> verified) {
            failures.add(evaluation);
        }

        @Override
        public void onEvent(org.pinion.trust.ClientEvent event) { events.add(event); }
    }

    static OkHttpClient client(MutablePolicy policy) {
        OkHttpClient.Builder builder = new OkHttpClient.Builder().connectTimeout(10, TimeUnit.SECONDS).readTimeout(10, TimeUnit.SECONDS)
                .retryOnConnectionFailure(false).dns(host -> List.of(InetAddress.getByName("127.0.0.1")));
        PinionOkHttp.install(builder, platform, policy);
        return builder.build();
    }

    static int get(OkHttpClient client, String host, int port) throws IOException {
        try (Response response = client.newCall(new Request.Builder().url("https://" + host + ":" + port + "/").build()).execute()) {
            return response.code();
        }
    }

    static void refused(OkHttpClient client, String host, int port, String why) {
        try {
            get(client, host, port);
            fail("connection to " + host + " was not refused: " + why);
        } catch (IOException e) {
            assertTrue(why + ": " + e, e.toString().length() > 0);
        }
    }

    static PinnedDomain entry(String name, boolean sub, boolean enforce, Pin... pins) {
        return new PinnedDomain(name, sub, enforce, List.of(pins));
    }

    @Test
    public void pinnedLeafAndPinnedIntermediateAreTrusted() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "leaf.pem", "leaf.key", "chain.pem")) {
            assertEquals(200, get(client(new MutablePolicy(entry("api.example.test", false, true, pinOf("leaf")))), "api.example.test", server.port));
            assertEquals(200, get(client(new MutablePolicy(entry("api.example.test", false, true, pinOf("int")))), "api.example.test", server.port));
            assertEquals(200, get(client(new MutablePolicy(entry("api.example.test", false, true, pinOf("root")))), "api.example.test", server.port));
        }
    }

    @Test
    public void anUnpinnedKeyFromTheSameCaIsRefusedAndReported() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "leaf2.pem", "leaf2.key", "chain.pem")) {
            MutablePolicy policy = new MutablePolicy(entry("api.example.test", false, true, pinOf("leaf")));
            refused(client(policy), "api.example.test", server.port, "leaf2 is not pinned");
            assertEquals(PinEvaluation.Reason.NO_MATCHING_PIN, policy.failures.get(0).reason);
        }
    }

    @Test
    public void anAppendedOffPathPinnedCertificateNeverCounts() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "leaf2.pem", "leaf2.key", "chain-with-stray.pem")) {
            MutablePolicy policy = new MutablePolicy(entry("api.example.test", false, true, pinOf("stray")));
            refused(client(policy), "api.example.test", server.port, "the stray certificate is not on the verified path");
            assertEquals(1, policy.failures.size());
        }
    }

    @Test
    public void anExpiredCertificateAndAHostnameMismatchFailX509EvenWhenPinned() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "expired.pem", "expired.key", "chain.pem")) {
            MutablePolicy policy = new MutablePolicy(entry("api.example.test", false, true, pinOf("expired"), pinOf("int")));
            refused(client(policy), "api.example.test", server.port, "expired");
            assertTrue("X.509 fails before pins are looked at", policy.failures.isEmpty());
        }
        try (OpenSslServer server = new OpenSslServer(pki, "leaf.pem", "leaf.key", "chain.pem")) {
            MutablePolicy policy = new MutablePolicy(entry("other.example.test", false, true, pinOf("leaf")));
            refused(client(policy), "other.example.test", server.port, "the certificate does not name other.example.test");
        }
    }

    @Test
    public void includeSubdomainsCoversLabelBoundariesOnly() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "leaf.pem", "leaf.key", "chain.pem")) {
            MutablePolicy policy = new MutablePolicy(entry("api.example.test", true, true, pinOf("leaf2")));
            OkHttpClient client = client(policy);
            refused(client, "sub.api.example.test", server.port, "a subdomain of an includeSubdomains entry is pinned");
            assertEquals("notapi.example.test is not a subdomain", 200, get(client, "notapi.example.test", server.port));
            MutablePolicy exact = new MutablePolicy(entry("api.example.test", false, true, pinOf("leaf2")));
            assertEquals("without includeSubdomains the subdomain is not pinned", 200, get(client(exact), "sub.api.example.test", server.port));
        }
    }

    @Test
    public void reportOnlyGoesOnAndReports() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "leaf.pem", "leaf.key", "chain.pem")) {
            MutablePolicy policy = new MutablePolicy(entry("report.example.test", false, false, pinOf("leaf2")));
            assertEquals(200, get(client(policy), "report.example.test", server.port));
            assertEquals(PinEvaluation.Verdict.REPORT_ONLY, policy.failures.get(0).verdict);
        }
    }

    @Test
    public void aRevokedPinIsRefusedOnTheVeryNextRequestOverTheSameClient() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "leaf.pem", "leaf.key", "chain.pem")) {
            MutablePolicy policy = new MutablePolicy(entry("api.example.test", false, true, pinOf("leaf"), pinOf("leaf2")));
            OkHttpClient client = client(policy);
            assertEquals(200, get(client, "api.example.test", server.port));
            policy.policy = new MergedPolicy(List.of(entry("api.example.test", false, true, pinOf("leaf2"))));
            refused(client, "api.example.test", server.port, "leaf was revoked");
        }
    }

    @Test
    public void aPooledConnectionIsRecheckedBeforeTheNextRequest() throws Exception {
        try (KeepAliveServer server = new KeepAliveServer(pki)) {
            MutablePolicy policy = new MutablePolicy(entry("api.example.test", false, true, pinOf("leaf"), pinOf("leaf2")));
            OkHttpClient client = client(policy);
            assertEquals(200, get(client, "api.example.test", server.port()));
            assertEquals(200, get(client, "api.example.test", server.port()));
            assertEquals("the second request reused the pooled connection", 1, server.handshakes());
            policy.policy = new MergedPolicy(List.of(entry("api.example.test", false, true, pinOf("leaf2"))));
            refused(client, "api.example.test", server.port(), "leaf was revoked while the connection was pooled");
            assertEquals("refused before a request was written", 2, server.requests());
        }
    }

    @Test
    public void httpsUrlConnectionWithTheFreshContextFactoryIsPinnedToo() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "leaf.pem", "leaf.key", "chain.pem")) {
            for (boolean pinned : new boolean[] {true, false}) {
                MutablePolicy policy = new MutablePolicy(entry("api.example.test", false, true, pinOf(pinned ? "leaf" : "leaf2")));
                PinionTrustManager tm = new PinionTrustManager(platform, policy);
                javax.net.ssl.HttpsURLConnection c = (javax.net.ssl.HttpsURLConnection) new java.net.URL("https://api.example.test:" + server.port + "/")
                        .openConnection(java.net.Proxy.NO_PROXY);
                // api.example.test resolves to 127.0.0.1 through src/test/resources/hosts (jdk.net.hosts.file, pom.xml).
                c.setSSLSocketFactory(PinionOkHttp.freshContextSocketFactory(tm));
                c.setRequestProperty("Connection", "close");
                try {
                    assertEquals(200, c.getResponseCode());
                    assertTrue("the leaf pin is accepted", pinned);
                } catch (IOException e) {
                    assertFalse("refused only when leaf2 is pinned: " + e, pinned);
                } finally {
                    c.disconnect();
                }
                assertEquals(pinned ? 0 : 1, policy.failures.size());
            }
        }
    }

    @Test
    public void theTwoArgumentCheckWithoutAHostIsRefused() throws Exception {
        PinionTrustManager tm = new PinionTrustManager(platform, new MutablePolicy());
        try {
            tm.checkServerTrusted(new X509Certificate[] {pki.cert("leaf"), pki.cert("int")}, "ECDHE_ECDSA");
            fail("checked without a host");
        } catch (java.security.cert.CertificateException e) {
            assertTrue(e.getMessage().contains("host"));
        }
    }

}
