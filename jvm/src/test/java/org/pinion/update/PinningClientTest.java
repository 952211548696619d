// PinningClient end to end over HTTPS: persisted refresh, restart, revocation on pooled OkHttp connections, update-channel trust, storage faults.
package org.pinion.update;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.pinion.crypto.Sha256;
import org.pinion.tls.StaticHttpsServer;
import org.pinion.tls.TestPki;
import org.pinion.trust.ClientEvent;
import org.pinion.trust.ClientException;
import org.pinion.trust.ManifestOrder;
import org.pinion.trust.PayloadKind;
import org.pinion.trust.Pin;
import org.pinion.trust.RefreshedState;
import org.pinion.trust.SignedChain;
import org.pinion.trust.Timestamp;

public class PinningClientTest {
    static final String S = SignedChain.SCOPE;
    static final long NOW = 1_780_000_000L; // 2026-05-28T20:26:40Z, inside the test manifests' lifetime
    static Path work;
    static TestPki pki;
    static byte[] root1;

    @BeforeClass
    public static void setUp() throws Exception {
        setUpOnce();
    }

    /** Makes the shared PKI and root once per JVM (also for PinningClientSeamTest). */
    static synchronized void setUpOnce() throws Exception {
        if (work != null && Files.isDirectory(work)) return;
        work = Files.createTempDirectory("pinion-client");
        pki = new TestPki(Files.createDirectories(work.resolve("pki")));
        root1 = SignedChain.envelope(PayloadKind.ROOT, SignedChain.rootPayload(S, 1, 0, 2_592_000, new int[] {1}, new int[] {2}), 1);
    }

    @AfterClass
    public static void tearDown() throws IOException {
        try (var walk = Files.walk(work)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    static Pin pinOf(String cert) throws Exception { return Pin.ofDigest(Sha256.digest(pki.cert(cert).getPublicKey().getEncoded())); }

    static byte[] manifest(long version, List<Pin> pins, List<Pin> revoked, String extraDomain) {
        StringBuilder p = new StringBuilder();
        for (Pin pin : pins) p.append(p.length() == 0 ? "" : ",").append('"').append(pin).append('"');
        StringBuilder r = new StringBuilder();
        for (Pin pin : revoked) r.append(r.length() == 0 ? "" : ",").append('"').append(pin).append('"');
        String text = "{\"type\":\"pinion.pins\",\"specVersion\":1,\"scope\":\"" + S + "\",\"rootVersion\":1,\"version\":" + version
                + ",\"issuedAt\":\"2026-05-20T00:00:00Z\",\"expiresAt\":\"2026-06-15T00:00:00Z\",\"domains\":[{\"name\":\"api.example.test\",\"pins\":[" + p
                + "]}" + (extraDomain == null ? "" : "," + extraDomain) + "],\"revokedPins\":[" + r + "]}";
        return SignedChain.envelope(PayloadKind.PINS, text.getBytes(StandardCharsets.UTF_8), 2);
    }

    static Path tree(byte[] manifest) throws IOException {
        Path tree = Files.createTempDirectory(work, "tree");
        Path scope = Files.createDirectories(tree.resolve("v1/" + S + "/root"));
        Files.write(scope.resolve("1.json"), root1);
        Files.write(scope.getParent().resolve("manifest.json"), manifest);
        return tree;
    }

    static ClientConfiguration config(int port, Path state) {
        ClientConfiguration c = new ClientConfiguration();
        c.scope = S;
        c.baseUrl = "https://127.0.0.1:" + port + "/";
        c.embeddedRoot = root1;
        c.stateDirectory = state;
        c.caFile = pki.path("root.pem");
        c.clock = () -> NOW;
        c.timeoutSeconds = 10;
        return c;
    }

    static int get(OkHttpClient http, int port) throws IOException {
        try (Response response = http.newCall(new Request.Builder().url("https://api.example.test:" + port + "/v1/" + S + "/root/1.json").build()).execute()) {
            return response.code();
        }
    }

    @Test
    public void refreshPersistsARestartLoadsItAndARevocationClosesPooledConnections() throws Exception {
        Path tree = tree(manifest(1, List.of(pinOf("leaf"), pinOf("leaf2")), List.of(), null));
        try (StaticHttpsServer server = new StaticHttpsServer(pki, tree)) {
            Path state = work.resolve("state-1");
            List<ClientEvent> events = new ArrayList<>();
            PinningClient client = new PinningClient(config(server.port(), state), events::add, null);
            assertEquals(RefreshedState.Outcome.UPDATED, client.refresh().outcome);
            assertTrue(Files.exists(state.resolve("state-a")) && Files.exists(state.resolve("state-b")));
            OkHttpClient http = client.pinnedOkHttp(new OkHttpClient.Builder().connectTimeout(10, TimeUnit.SECONDS)
                    .dns(h -> List.of(InetAddress.getByName("127.0.0.1"))));
            assertEquals(200, get(http, server.port()));
            assertEquals(1, http.connectionPool().connectionCount());

            PinningClient restarted = new PinningClient(config(server.port(), state), null, null);
            assertEquals(new ManifestOrder(1, 1), restarted.trustedState().floor());
            assertTrue(restarted.isManifestCurrent());

            Files.write(tree.resolve("v1/" + S + "/manifest.json"), manifest(2, List.of(pinOf("leaf2")), List.of(pinOf("leaf")), null));
            assertEquals(RefreshedState.Outcome.UPDATED, client.refresh().outcome);
            assertEquals("trust removed: the pool was evicted", 0, http.connectionPool().connectionCount());
            try {
                get(http, server.port());
                fail("the revoked leaf was accepted");
            } catch (IOException e) {
                assertTrue(e.toString(), e.toString().contains("pin") || e.getCause() != null);
            }
            RefreshedState.Outcome again = client.refresh().outcome;
            assertEquals(RefreshedState.Outcome.UNCHANGED, again);
            assertTrue("the conditional GET sent the stored ETag", server.requests.stream().anyMatch(r -> r.contains("If-None-Match: \"")));
        }
    }

    @Test
    public void manifestPinsNeverApplyToTheUpdateChannelButPublisherPinsDo() throws Exception {
        Path tree = tree(manifest(1, List.of(Pin.ofDigest(new byte[32])), List.of(), null));
        try (StaticHttpsServer server = new StaticHttpsServer(pki, tree)) {
            PinningClient client = new PinningClient(config(server.port(), work.resolve("state-2")), null, null);
            // The accepted manifest pins the publisher's own host (api.example.test) with junk.
            assertEquals(RefreshedState.Outcome.UPDATED, client.refresh().outcome);
            assertEquals(RefreshedState.Outcome.UNCHANGED, client.refresh().outcome);
            ClientConfiguration byName = config(server.port(), work.resolve("state-2b"));
            byName.baseUrl = "https://api.example.test:" + server.port() + "/";
            byName.publisherConnectTo = "127.0.0.1";
            PinningClient named = new PinningClient(byName, null, null);
            assertEquals(RefreshedState.Outcome.UPDATED, named.refresh().outcome);
            assertEquals(RefreshedState.Outcome.UNCHANGED, named.refresh().outcome);
            ClientConfiguration pinned = config(server.port(), work.resolve("state-3"));
            pinned.publisherPins = List.of(pinOf("leaf2"));
            PinningClient wrong = new PinningClient(pinned, null, null);
            PinningClient.Report report = wrong.refresh();
            assertEquals(RefreshedState.Outcome.NETWORK_FAILURE, report.outcome);
            assertTrue(report.error.getMessage(), report.error.getMessage().contains("no publisher pin"));
            ClientConfiguration right = config(server.port(), work.resolve("state-4"));
            right.publisherPins = List.of(pinOf("int"));
            assertEquals(RefreshedState.Outcome.UPDATED, new PinningClient(right, null, null).refresh().outcome);
        }
    }

    @Test
    public void aFailedSaveKeepsThePreviousPolicyAndAnUnreadableStoreSkipsTheRefresh() throws Exception {
        Path tree = tree(manifest(1, List.of(pinOf("leaf")), List.of(), null));
        try (StaticHttpsServer server = new StaticHttpsServer(pki, tree)) {
            Path state = work.resolve("state-5");
            PinningClient client = new PinningClient(config(server.port(), state), null, null);
            Files.createDirectories(state.resolve(".state-a-blocker"));
            Files.createDirectories(state.resolve("state-a").resolve("occupied"));
            PinningClient.Report report = client.refresh();
            assertEquals(RefreshedState.Outcome.NETWORK_FAILURE, report.outcome);
            assertEquals(ClientException.Kind.STORAGE, report.error.kind());
            assertTrue("no policy from an unsaved manifest", client.currentPolicy().domains().isEmpty());
        }
    }

    @Test
    public void anUnreadableStateIsReportedAtStartAndEveryRefreshIsSkippedWithNothingDropped() throws Exception {
        Path tree = tree(manifest(1, List.of(pinOf("leaf")), List.of(), null));
        try (StaticHttpsServer server = new StaticHttpsServer(pki, tree)) {
            Path state = work.resolve("state-10");
            assertEquals(RefreshedState.Outcome.UPDATED, new PinningClient(config(server.port(), state), null, null).refresh().outcome);
            byte[] copyB = Files.readAllBytes(state.resolve("state-b"));
            Files.delete(state.resolve("state-a"));
            Files.createDirectory(state.resolve("state-a"));
            List<ClientEvent> events = new ArrayList<>();
            PinningClient client = new PinningClient(config(server.port(), state), events::add, null);
            assertTrue(events.toString(), events.stream().anyMatch(e -> e.kind == ClientEvent.Kind.STORAGE_UNAVAILABLE));
            int requestsBefore = server.requests.size();
            PinningClient.Report report = client.refresh();
            assertEquals(RefreshedState.Outcome.NETWORK_FAILURE, report.outcome);
            assertEquals(ClientException.Kind.STORAGE, report.error.kind());
            assertEquals("the refresh was skipped: no request", requestsBefore, server.requests.size());
            assertTrue(java.util.Arrays.equals(copyB, Files.readAllBytes(state.resolve("state-b"))));
        }
    }

    @Test
    public void twoClientsSharingADirectoryBuildOnEachOthersFloor() throws Exception {
        Path tree = tree(manifest(5, List.of(pinOf("leaf")), List.of(), null));
        try (StaticHttpsServer server = new StaticHttpsServer(pki, tree)) {
            Path state = work.resolve("state-6");
            PinningClient first = new PinningClient(config(server.port(), state), null, null);
            PinningClient second = new PinningClient(config(server.port(), state), null, null);
            assertEquals(RefreshedState.Outcome.UPDATED, first.refresh().outcome);
            Files.write(tree.resolve("v1/" + S + "/manifest.json"), manifest(4, List.of(pinOf("leaf")), List.of(), null));
            PinningClient.Report report = second.refresh();
            assertEquals("the second client loaded the first one's floor", RefreshedState.Outcome.REJECTED, report.outcome);
            assertEquals(ClientException.Kind.ROLLBACK, report.error.kind());
        }
    }

    @Test
    public void pinFailuresAreReportedToTheReportUriOncePerDay() throws Exception {
        Path tree = tree(manifest(1, List.of(pinOf("leaf2")), List.of(), null));
        try (StaticHttpsServer server = new StaticHttpsServer(pki, tree)) {
            ClientConfiguration c = config(server.port(), work.resolve("state-8"));
            c.reportUri = "https://127.0.0.1:" + server.port() + "/reports";
            List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
            PinningClient client = new PinningClient(c, null, (e, port, served, verified) -> seen.add(e.host + ":" + port));
            assertEquals(RefreshedState.Outcome.UPDATED, client.refresh().outcome);
            OkHttpClient http = client.pinnedOkHttp(new OkHttpClient.Builder().dns(h -> List.of(InetAddress.getByName("127.0.0.1"))));
            for (int i = 0; i < 2; i++) {
                try {
                    get(http, server.port());
                    fail("leaf is not pinned");
                } catch (IOException e) {
                    assertTrue(e.toString().length() > 0);
                }
            }
            assertEquals(2, seen.size());
            http.dispatcher().executorService().shutdown();
            okhttp3.Dispatcher reports = client.updateClient().dispatcher();
            for (int i = 0; i < 600 && (server.posts.isEmpty() || reports.runningCallsCount() + reports.queuedCallsCount() > 0); i++) {
                Thread.sleep(50);
            }
            assertEquals("every report call has finished", 0, reports.runningCallsCount() + reports.queuedCallsCount());
            assertEquals("identical reports within a day are sent once", 1, server.posts.size());
            assertTrue(server.posts.get(0).contains("\"noted-hostname\": \"api.example.test\""));
        }
    }

    @Test
    public void stopCancelsARefreshStuckOnAPublisherThatNeverAnswers() throws Exception {
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 8, InetAddress.getByName("127.0.0.1"))) {
            List<java.net.Socket> held = new java.util.concurrent.CopyOnWriteArrayList<>();
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) held.add(silent.accept());
                } catch (IOException e) {
                    return;
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            ClientConfiguration c = config(silent.getLocalPort(), work.resolve("state-9"));
            c.timeoutSeconds = 300;
            List<ClientEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
            PinningClient client = new PinningClient(c, events::add, null);
            Updater updater = client.makeUpdater(UpdateSchedule.DEFAULT);
            updater.start();
            for (int i = 0; i < 200 && held.isEmpty(); i++) Thread.sleep(50);
            assertFalse("the refresh connected and is waiting", held.isEmpty());
            long start = System.nanoTime();
            updater.stop();
            // The cancelled call ends the refresh as a network failure, long before the 300 s timeout.
            for (int i = 0; i < 200 && events.stream().noneMatch(e -> e.kind == ClientEvent.Kind.NETWORK_FAILURE); i++) Thread.sleep(50);
            assertTrue(events.toString(), events.stream().anyMatch(e -> e.kind == ClientEvent.Kind.NETWORK_FAILURE));
            assertTrue(System.nanoTime() - start < java.util.concurrent.TimeUnit.SECONDS.toNanos(60));
            assertTrue("nothing was stored", !Files.exists(work.resolve("state-9").resolve("state-a")));
            for (java.net.Socket s : held) s.close();
        }
    }

    @Test
    public void updaterRefreshesAtStartAndStopCancels() throws Exception {
        Path tree = tree(manifest(1, List.of(pinOf("leaf")), List.of(), null));
        try (StaticHttpsServer server = new StaticHttpsServer(pki, tree)) {
            java.util.concurrent.CountDownLatch updated = new java.util.concurrent.CountDownLatch(1);
            PinningClient client = new PinningClient(config(server.port(), work.resolve("state-7")), e -> {
                if (e.kind == ClientEvent.Kind.UPDATED) updated.countDown();
            }, null);
            Updater updater = client.makeUpdater(UpdateSchedule.DEFAULT);
            updater.start();
            assertTrue("the first refresh runs at start", updated.await(30, TimeUnit.SECONDS));
            updater.stop();
            assertEquals(0, updater.consecutiveFailures());
            assertFalse(client.currentPolicy().domains().isEmpty());
            assertEquals(new Timestamp(NOW), client.trustedState().lastKnownTime());
        }
    }
}
