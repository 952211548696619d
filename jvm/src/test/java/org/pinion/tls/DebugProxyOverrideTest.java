// The debug proxy override over real TLS (openssl s_server): only chains ending in the named proxy CA, only listed domains, every use reported.
package org.pinion.tls;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import android.content.Context;
import android.content.pm.ApplicationInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import okhttp3.OkHttpClient;
import org.junit.After;
import org.junit.AfterClass;
import org.junit.Before;
import org.junit.BeforeClass;
import org.junit.Test;
import org.pinion.crypto.Sha256;
import org.pinion.tls.OkHttpPinningTest.MutablePolicy;
import org.pinion.trust.ClientEvent;
import org.pinion.trust.MergedPolicy;
import org.pinion.trust.Pin;
import org.pinion.trust.PinEvaluation;
import org.pinion.trust.PinnedDomain;

public class DebugProxyOverrideTest {
    static TestPki pki;
    /** Trusts the test root (the real chain), the proxy CA and another CA, as a debug device with both installed would. */
    static X509TrustManager platform;

    @BeforeClass
    public static void makeCertificates() throws Exception {
        pki = new TestPki(Files.createTempDirectory("pinion-debug-proxy"));
        pki.addCaWithLeaf("proxyca", "proxyleaf");
        pki.addCaWithLeaf("mdmca", "mdmleaf");
        Files.write(pki.path("roots.pem"), (Files.readString(pki.path("root.pem")) + Files.readString(pki.path("proxyca.pem"))
                + Files.readString(pki.path("mdmca.pem"))).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        platform = TrustManagers.platform(pki.path("roots.pem"));
    }

    @AfterClass
    public static void removeCertificates() throws IOException {
        try (var walk = Files.walk(pki.dir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** The WARNING lines the override writes, captured for each test. */
    final List<LogRecord> logged = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) { logged.add(record); }

        @Override
        public void flush() { }

        @Override
        public void close() { }
    };

    @Before
    public void captureLog() { Logger.getLogger(DebugProxyOverride.LOGGER_NAME).addHandler(capture); }

    @After
    public void releaseLog() { Logger.getLogger(DebugProxyOverride.LOGGER_NAME).removeHandler(capture); }

    static Pin pinOf(String cert) throws Exception { return Pin.ofDigest(Sha256.digest(pki.cert(cert).getPublicKey().getEncoded())); }

    /** api.example.test and report.example.test, both pinned to the real leaf. */
    static MutablePolicy policy(boolean enforce) throws Exception {
        return new MutablePolicy(OkHttpPinningTest.entry("api.example.test", true, enforce, pinOf("leaf")),
                OkHttpPinningTest.entry("report.example.test", false, true, pinOf("leaf")));
    }

    static DebugProxyOverride proxyForApi() throws Exception {
        return DebugProxyOverride.builder().proxyCaCertificate(pki.cert("proxyca")).domains("api.example.test").build();
    }

    static void handshake(X509TrustManager tm, String host, int port) throws Exception {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, new TrustManager[] {tm}, null);
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(host, port)) {
            socket.startHandshake();
        }
    }

    static String refused(X509TrustManager tm, String host, int port) throws Exception {
        try {
            handshake(tm, host, port);
        } catch (SSLException e) {
            return e.getMessage() + " / " + e.getCause();
        }
        fail("handshake to " + host + " was not refused");
        return null;
    }

    List<String> warnings() {
        List<String> lines = new ArrayList<>();
        for (LogRecord record : logged) {
            if (record.getLevel() == Level.WARNING && record.getMessage().contains("pins bypassed")) lines.add(record.getMessage());
        }
        return lines;
    }

    static Context app(int flags) {
        ApplicationInfo info = new ApplicationInfo();
        info.flags = flags;
        return new Context() {
            @Override
            public ApplicationInfo getApplicationInfo() { return info; }
        };
    }

    static void assertRefusedSaying(Runnable call, Class<? extends RuntimeException> type, String words) {
        try {
            call.run();
            fail("accepted; expected " + type.getSimpleName() + " saying " + words);
        } catch (RuntimeException e) {
            assertEquals(e.toString(), type, e.getClass());
            assertTrue(e.getMessage(), e.getMessage().contains(words));
        }
    }

    @Test
    public void aChainEndingInTheNamedProxyCaBypassesTheListedDomainsPinsWithAnEventAndAWarning() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "proxyleaf.pem", "proxyleaf.key", null)) {
            MutablePolicy policy = policy(true);
            handshake(PinionTrustManager.unsafeAllowDebugProxy(platform, policy, proxyForApi()), "api.example.test", server.port);
            assertEquals("no pin failure is reported for a bypassed connection", 0, policy.failures.size());
            assertEquals(1, policy.events.size());
            ClientEvent event = policy.events.get(0);
            assertEquals(ClientEvent.Kind.DEBUG_PROXY_BYPASS, event.kind);
            assertEquals("api.example.test", event.host);
            assertTrue(event.toString(), event.toString().contains(pinOf("proxyca").toString()));
            assertEquals(Arrays.asList(event.toString()), warnings());
        }
    }

    @Test
    public void creatingATrustManagerWithTheOverrideIsLoggedAtWarning() throws Exception {
        PinionTrustManager.unsafeAllowDebugProxy(platform, policy(true), proxyForApi());
        assertEquals(1, logged.size());
        assertEquals(Level.WARNING, logged.get(0).getLevel());
        assertTrue(logged.get(0).getMessage(), logged.get(0).getMessage().contains("UNSAFE debug proxy override enabled"));
    }

    @Test
    public void withoutTheOverrideTheProxyChainIsRefusedWhenEnforcedAndReportedWhenReportOnly() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "proxyleaf.pem", "proxyleaf.key", null)) {
            MutablePolicy enforced = policy(true);
            String why = refused(new PinionTrustManager(platform, enforced), "api.example.test", server.port);
            assertTrue(why, why.contains("PinningException"));
            assertEquals(PinEvaluation.Verdict.REJECTED, enforced.failures.get(0).verdict);
            MutablePolicy reportOnly = policy(false);
            handshake(new PinionTrustManager(platform, reportOnly), "api.example.test", server.port);
            assertEquals(PinEvaluation.Verdict.REPORT_ONLY, reportOnly.failures.get(0).verdict);
            assertEquals(0, enforced.events.size() + reportOnly.events.size());
            assertEquals(0, warnings().size());
        }
    }

    @Test
    public void aChainThroughAnotherTrustedCaKeepsThePinsVerdict() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "mdmleaf.pem", "mdmleaf.key", null)) {
            MutablePolicy policy = policy(true);
            String why = refused(PinionTrustManager.unsafeAllowDebugProxy(platform, policy, proxyForApi()), "api.example.test", server.port);
            assertTrue(why, why.contains("PinningException"));
            assertEquals(1, policy.failures.size());
            assertEquals(0, policy.events.size());
            assertEquals(0, warnings().size());
        }
    }

    @Test
    public void thePinnedDomainsRealChainStillGoesThroughThePins() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "leaf.pem", "leaf.key", "chain.pem")) {
            MutablePolicy wrongPins = new MutablePolicy(OkHttpPinningTest.entry("api.example.test", false, true, pinOf("leaf2")));
            String why = refused(PinionTrustManager.unsafeAllowDebugProxy(platform, wrongPins, proxyForApi()), "api.example.test", server.port);
            assertTrue(why, why.contains("PinningException"));
            assertEquals(1, wrongPins.failures.size());
            MutablePolicy rightPins = policy(true);
            handshake(PinionTrustManager.unsafeAllowDebugProxy(platform, rightPins, proxyForApi()), "api.example.test", server.port);
            assertEquals(0, rightPins.failures.size());
            assertEquals(0, wrongPins.events.size() + rightPins.events.size());
        }
    }

    @Test
    public void aDomainTheOverrideDoesNotListKeepsItsPins() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "proxyleaf.pem", "proxyleaf.key", null)) {
            MutablePolicy policy = policy(true);
            String why = refused(PinionTrustManager.unsafeAllowDebugProxy(platform, policy, proxyForApi()), "report.example.test", server.port);
            assertTrue(why, why.contains("PinningException"));
            assertEquals(0, policy.events.size());
        }
    }

    @Test
    public void aListedDomainCoversItsSubdomains() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "proxyleaf.pem", "proxyleaf.key", null)) {
            MutablePolicy policy = policy(true);
            handshake(PinionTrustManager.unsafeAllowDebugProxy(platform, policy, proxyForApi()), "sub.api.example.test", server.port);
            assertEquals("sub.api.example.test", policy.events.get(0).host);
        }
    }

    @Test
    public void allDomainsCoversEveryPinnedDomain() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "proxyleaf.pem", "proxyleaf.key", null)) {
            MutablePolicy policy = policy(true);
            DebugProxyOverride all = DebugProxyOverride.builder().proxyCaCertificate(pki.cert("proxyca")).allDomains().build();
            handshake(PinionTrustManager.unsafeAllowDebugProxy(platform, policy, all), "report.example.test", server.port);
            assertEquals(1, policy.events.size());
            assertEquals(0, policy.failures.size());
        }
    }

    @Test
    public void aCaNamedByItsSpkiPinActsAsItsCertificate() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "proxyleaf.pem", "proxyleaf.key", null)) {
            MutablePolicy policy = policy(true);
            DebugProxyOverride byPin = DebugProxyOverride.builder().proxyCaPin(pinOf("proxyca").toString()).domains("api.example.test").build();
            handshake(PinionTrustManager.unsafeAllowDebugProxy(platform, policy, byPin), "api.example.test", server.port);
            assertEquals(1, policy.events.size());
            DebugProxyOverride otherPin = DebugProxyOverride.builder().proxyCaPin(pinOf("mdmca").toString()).domains("api.example.test").build();
            refused(PinionTrustManager.unsafeAllowDebugProxy(platform, policy, otherPin), "api.example.test", server.port);
        }
    }

    @Test
    public void aReportOnlyDomainThroughTheProxyIsBypassedWithoutAReport() throws Exception {
        try (OpenSslServer server = new OpenSslServer(pki, "proxyleaf.pem", "proxyleaf.key", null)) {
            MutablePolicy policy = policy(false);
            handshake(PinionTrustManager.unsafeAllowDebugProxy(platform, policy, proxyForApi()), "api.example.test", server.port);
            assertEquals(0, policy.failures.size());
            assertEquals(1, policy.events.size());
        }
    }

    @Test
    public void okHttpPassesTheHandshakeAndTheRequestRecheckThroughTheProxy() throws Exception {
        try (OpenSslServer proxy = new OpenSslServer(pki, "proxyleaf.pem", "proxyleaf.key", null);
                OpenSslServer other = new OpenSslServer(pki, "mdmleaf.pem", "mdmleaf.key", null)) {
            MutablePolicy policy = policy(true);
            OkHttpClient.Builder builder = new OkHttpClient.Builder().retryOnConnectionFailure(false)
                    .dns(host -> java.util.Collections.singletonList(java.net.InetAddress.getByName("127.0.0.1")));
            PinionOkHttp.install(builder, PinionTrustManager.unsafeAllowDebugProxy(platform, policy, proxyForApi()));
            OkHttpClient client = builder.build();
            assertEquals(200, OkHttpPinningTest.get(client, "api.example.test", proxy.port));
            assertEquals("the handshake and the request's re-check each report their use", 2, policy.events.size());
            OkHttpPinningTest.refused(client, "api.example.test", other.port, "another CA's chain is not the proxy's");
            OkHttpPinningTest.refused(client, "report.example.test", proxy.port, "report.example.test is not listed");
        }
    }

    @Test
    public void androidRefusesTheOverrideUnlessTheAppIsDebuggable() throws Exception {
        DebugProxyOverride override = proxyForApi();
        MutablePolicy policy = policy(true);
        for (int flags : new int[] {0, 1, ~ApplicationInfo.FLAG_DEBUGGABLE}) {
            assertRefusedSaying(() -> PinionAndroidTrustManager.unsafeAllowDebugProxy(app(flags), platform, policy, override),
                    IllegalStateException.class, "the app is not debuggable");
        }
        assertRefusedSaying(() -> PinionAndroidTrustManager.unsafeAllowDebugProxy(null, platform, policy, override),
                IllegalArgumentException.class, "context is null");
        assertRefusedSaying(() -> PinionAndroidTrustManager.unsafeAllowDebugProxy(app(ApplicationInfo.FLAG_DEBUGGABLE), platform, policy, null),
                IllegalArgumentException.class, "override is null");
        assertEquals("nothing was enabled", 0, logged.size());
    }

    @Test
    public void androidInADebuggableAppBypassesOnlyTheNamedProxyCa() throws Exception {
        try (OpenSslServer proxy = new OpenSslServer(pki, "proxyleaf.pem", "proxyleaf.key", null);
                OpenSslServer other = new OpenSslServer(pki, "mdmleaf.pem", "mdmleaf.key", null)) {
            MutablePolicy policy = policy(true);
            PinionAndroidTrustManager tm = PinionAndroidTrustManager.unsafeAllowDebugProxy(app(ApplicationInfo.FLAG_DEBUGGABLE | 1), platform,
                    policy, proxyForApi());
            handshake(tm, "api.example.test", proxy.port);
            assertEquals(1, policy.events.size());
            refused(tm, "api.example.test", other.port);
            refused(tm, "report.example.test", proxy.port);
            assertEquals(1, policy.events.size());
            assertEquals(1, warnings().size());
        }
    }

    @Test
    public void theDecisionNeedsTheNamedCaAsTheVerifiedChainsAnchor() throws Exception {
        DebugProxyOverride override = proxyForApi();
        MergedPolicy pinned = new MergedPolicy(Arrays.asList(new PinnedDomain("api.example.test", false, true, Arrays.asList(pinOf("leaf")))));
        byte[] proxyCa = pinOf("proxyca").digest();
        byte[] other = pinOf("mdmleaf").digest();
        byte[] otherCa = pinOf("mdmca").digest();
        List<byte[]> endsInProxy = Arrays.asList(other, proxyCa);
        List<byte[]> proxyInTheMiddle = Arrays.asList(other, proxyCa, otherCa);
        assertTrue(override.decide("api.example.test", endsInProxy, PinEvaluation.evaluate("api.example.test", endsInProxy, pinned)) != null);
        assertNull(override.decide("api.example.test", proxyInTheMiddle,
                PinEvaluation.evaluate("api.example.test", proxyInTheMiddle, pinned)));
        assertNull("no verified chain", override.decide("api.example.test", new ArrayList<>(),
                PinEvaluation.evaluate("api.example.test", new ArrayList<>(), pinned)));
        List<byte[]> trusted = Arrays.asList(pinOf("leaf").digest(), proxyCa);
        assertNull("a verdict the pins allow is not a use", override.decide("api.example.test", trusted,
                PinEvaluation.evaluate("api.example.test", trusted, pinned)));
        assertNull("an unpinned host is not a use", override.decide("other.example.test", endsInProxy,
                PinEvaluation.evaluate("other.example.test", endsInProxy, pinned)));
    }

    @Test
    public void coverageIsOnLabelBoundaries() throws Exception {
        DebugProxyOverride override = DebugProxyOverride.builder().proxyCaPin(pinOf("proxyca").toString())
                .domains("API.Example.Test.").build();
        assertEquals(Arrays.asList("api.example.test"), override.domains());
        assertTrue(override.covers("api.example.test"));
        assertTrue(override.covers("a.b.api.example.test."));
        assertTrue(!override.covers("notapi.example.test"));
        assertTrue(!override.covers("example.test"));
        assertTrue(!override.covers("127.0.0.1"));
        assertTrue(!override.covers(null));
    }

    @Test
    public void hostileValuesAreRefusedByName() throws Exception {
        X509Certificate leaf = pki.cert("proxyleaf");
        assertRefusedSaying(() -> DebugProxyOverride.builder().proxyCaCertificate(leaf), IllegalArgumentException.class,
                "is not a CA certificate");
        assertRefusedSaying(() -> DebugProxyOverride.builder().proxyCaCertificate(null), IllegalArgumentException.class, "certificate is null");
        for (String pin : new String[] {"", "sha256/", "sha256/AAAA", "sha1/" + pinOf("proxyca").toString().substring(7), "proxyca.pem"}) {
            assertRefusedSaying(() -> DebugProxyOverride.builder().proxyCaPin(pin), IllegalArgumentException.class,
                    "is not sha256/<base64 of 32 bytes>");
        }
        assertRefusedSaying(() -> DebugProxyOverride.builder().proxyCaPin(null), IllegalArgumentException.class, "pin is null");
        for (String domain : new String[] {"", ".", "127.0.0.1", "[::1]", "*.example.test", "exa mple.test", "-bad.example.test"}) {
            assertRefusedSaying(() -> DebugProxyOverride.builder().domains(domain), IllegalArgumentException.class, "is not a host name");
        }
        assertRefusedSaying(() -> DebugProxyOverride.builder().domains((String) null), IllegalArgumentException.class,
                "domain null is not a host name");
        assertRefusedSaying(() -> DebugProxyOverride.builder().domains((String[]) null), IllegalArgumentException.class, "domain list is null");
        assertRefusedSaying(() -> DebugProxyOverride.builder().domains("api.example.test").build(), IllegalArgumentException.class,
                "names no proxy CA");
        X509Certificate ca = pki.cert("proxyca");
        assertRefusedSaying(() -> DebugProxyOverride.builder().proxyCaCertificate(ca).domains().build(), IllegalArgumentException.class,
                "lists no domain");
        assertRefusedSaying(() -> DebugProxyOverride.builder().proxyCaCertificate(ca).domains("api.example.test").allDomains().build(),
                IllegalArgumentException.class, "choose one");
        MutablePolicy policy = policy(true);
        assertRefusedSaying(() -> PinionTrustManager.unsafeAllowDebugProxy(platform, policy, null), IllegalArgumentException.class,
                "override is null");
        assertRefusedSaying(() -> PinionTrustManager.unsafeAllowDebugProxy(platform, null, null), IllegalArgumentException.class,
                "policy is null");
    }
}
