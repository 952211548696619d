// The update channel's fetcher against servers that close connections: one retry on a new connection, never after a TLS failure.
package org.pinion.update;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.pinion.tls.TestPki;
import org.pinion.tls.TrustManagers;
import org.pinion.trust.Pin;
import org.pinion.trust.PollToken;
import org.pinion.trust.UpdateAnswer;
import org.pinion.trust.UpdateFetchError;
import org.pinion.trust.UpdateRequest;

public class StaleConnectionRetryTest {
    static Path work;
    static TestPki pki;
    static final byte[] BODY = "signed file".getBytes(StandardCharsets.UTF_8);

    @BeforeClass
    public static void setUp() throws Exception {
        work = Files.createTempDirectory("pinion-retry");
        pki = new TestPki(Files.createDirectories(work.resolve("pki")));
    }

    @AfterClass
    public static void tearDown() throws IOException {
        try (java.util.stream.Stream<Path> walk = Files.walk(work)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    static OkHttpUpdateFetcher fetcher(TestPublisher server, String caFile, java.util.List<Pin> pins) throws Exception {
        OkHttpClient client = OkHttpUpdateFetcher.clientBuilder(10, TrustManagers.platform(pki.path(caFile)), pins).build();
        return new OkHttpUpdateFetcher(client, HttpUrl.parse("https://127.0.0.1:" + server.port() + "/"), "s.test");
    }

    static TestPublisher publisher(TestPublisher.Mode mode) throws Exception {
        return new TestPublisher(pki, mode, request -> new UpdateAnswer(200, "\"e\"", BODY, -1));
    }

    @Test
    public void aServerThatClosesAfterEveryResponseUnannouncedIsReadOnANewConnection() throws Exception {
        try (TestPublisher server = publisher(TestPublisher.Mode.CLOSE_SILENTLY)) {
            OkHttpUpdateFetcher fetcher = fetcher(server, "root.pem", Collections.<Pin>emptyList());
            for (int i = 1; i <= 4; i++) {
                UpdateAnswer answer = fetcher.fetch(UpdateRequest.root(i, 1024));
                assertEquals(200, answer.status);
                assertArrayEquals(BODY, answer.body());
            }
            assertEquals(4, server.requests.size());
            assertEquals(4, server.connections());
        }
    }

    @Test
    public void aKeepAliveServerThatDropsIdleConnectionsIsReadOnANewConnection() throws Exception {
        try (TestPublisher server = publisher(TestPublisher.Mode.KEEP_ALIVE)) {
            OkHttpUpdateFetcher fetcher = fetcher(server, "root.pem", Collections.<Pin>emptyList());
            assertEquals(200, fetcher.fetch(UpdateRequest.root(2, 1024)).status);
            assertEquals(200, fetcher.fetch(UpdateRequest.manifest(null, PollToken.of(0, null, org.pinion.crypto.StrictEd25519.INSTANCE), 1024)).status);
            assertEquals("one kept-alive connection", 1, server.connections());
            server.dropIdleConnections();
            assertEquals(200, fetcher.fetch(UpdateRequest.proof(1024)).status);
            assertEquals(2, server.connections());
            assertEquals("/v1/s.test/manifest.json?have=0&base=0000000000000000", server.requests.get(1).target);
        }
    }

    @Test
    public void aCertificateFailureIsNeverRetried() throws Exception {
        try (TestPublisher server = publisher(TestPublisher.Mode.CLOSE_SILENTLY)) {
            OkHttpUpdateFetcher fetcher = fetcher(server, "stray.pem", Collections.<Pin>emptyList());
            try {
                fetcher.fetch(UpdateRequest.root(2, 1024));
                fail("an untrusted publisher certificate was accepted");
            } catch (UpdateFetchError e) {
                assertEquals(UpdateFetchError.Kind.NETWORK, e.kind);
                assertTrue(e.getMessage(), e.getMessage().contains("SSL"));
            }
            assertEquals("one handshake, no retry", 1, server.connections());
            assertEquals(0, server.requests.size());
        }
    }

    @Test
    public void publisherPinsNotMetAreNeverRetried() throws Exception {
        try (TestPublisher server = publisher(TestPublisher.Mode.CLOSE_SILENTLY)) {
            Pin stray = Pin.ofDigest(org.pinion.crypto.Sha256.digest(pki.cert("stray").getPublicKey().getEncoded()));
            OkHttpUpdateFetcher fetcher = fetcher(server, "root.pem", Collections.singletonList(stray));
            try {
                fetcher.fetch(UpdateRequest.root(2, 1024));
                fail("a publisher without its pinned key was accepted");
            } catch (UpdateFetchError e) {
                // The trust manager raises a plain CertificateException (no type to tell a refusal by): a network failure.
                assertEquals(e.getMessage(), UpdateFetchError.Kind.NETWORK, e.kind);
                assertTrue(e.getMessage(), e.getMessage().contains("no publisher pin"));
            }
            assertEquals("one handshake, no retry", 1, server.connections());
        }
    }

    @Test
    public void onlyFailuresAStaleConnectionCanExplainAreRetried() {
        assertTrue(OkHttpUpdateFetcher.retryable(new IOException("unexpected end of stream on Connection{...}")));
        assertTrue(OkHttpUpdateFetcher.retryable(new java.net.SocketException("Connection reset")));
        assertTrue(OkHttpUpdateFetcher.retryable(new javax.net.ssl.SSLException("Connection reset", new java.net.SocketException("Connection reset"))));
        assertTrue(!OkHttpUpdateFetcher.retryable(new javax.net.ssl.SSLHandshakeException("PKIX path building failed")));
        assertTrue(!OkHttpUpdateFetcher.retryable(new javax.net.ssl.SSLPeerUnverifiedException("Hostname not verified")));
        assertTrue(!OkHttpUpdateFetcher.retryable(new javax.net.ssl.SSLProtocolException("bad record")));
        assertTrue(!OkHttpUpdateFetcher.retryable(new javax.net.ssl.SSLException("bad MAC")));
        IOException wrapped = new IOException(new java.security.cert.CertificateException("no publisher pin"));
        assertTrue(!OkHttpUpdateFetcher.retryable(wrapped));
        assertTrue(!OkHttpUpdateFetcher.retryable(new java.net.SocketTimeoutException("timeout")));
        assertTrue(!OkHttpUpdateFetcher.retryable(new java.io.InterruptedIOException("timeout")));
    }

    @Test
    public void aBodyOverTheLimitIsRefusedAsTooLarge() throws Exception {
        try (TestPublisher server = publisher(TestPublisher.Mode.KEEP_ALIVE)) {
            OkHttpUpdateFetcher fetcher = fetcher(server, "root.pem", Collections.<Pin>emptyList());
            try {
                fetcher.fetch(UpdateRequest.root(2, BODY.length - 1));
                fail("a body over the limit was read");
            } catch (UpdateFetchError e) {
                assertEquals(UpdateFetchError.Kind.TOO_LARGE, e.kind);
            }
            assertEquals(BODY.length, fetcher.fetch(UpdateRequest.root(2, BODY.length)).body().length);
        }
    }
}
