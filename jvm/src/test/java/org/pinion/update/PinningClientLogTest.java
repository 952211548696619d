// PinningClient under a root with a log, over HTTPS: freshness at every connection, staleCheckpoint once, narrowing, restart.
package org.pinion.update;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.pinion.tls.StaticHttpsServer;
import org.pinion.tls.TestPki;
import org.pinion.trust.ClientEvent;
import org.pinion.trust.LogChain;
import org.pinion.trust.MergedPolicy;
import org.pinion.trust.RefreshedState;
import org.pinion.trust.SignedChain;
import org.pinion.trust.log.LogFreshness;
import org.pinion.trust.log.LogTestKit;

public class PinningClientLogTest {
    private static final long T0 = 1_781_049_600L; // 2026-06-10T00:00:00Z, inside manifest 1's lifetime
    private static final long TQ = T0 - 60;
    private static Path work;
    private static TestPki pki;

    @BeforeClass
    public static void setUp() throws Exception {
        work = Files.createTempDirectory("pinion-client-log");
        pki = new TestPki(Files.createDirectories(work.resolve("pki")));
    }

    @AfterClass
    public static void tearDown() throws IOException {
        try (var walk = Files.walk(work)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static long count(List<ClientEvent> events, ClientEvent.Kind kind) {
        return events.stream().filter(e -> e.kind == kind).count();
    }

    /** manifest.proof of M1 as entry 1 of a size-2 tree whose entry 0 is {@code first}. */
    private static byte[] proofAtSize2(byte[] first) {
        byte[] head = LogTestKit.head(1, 1, LogTestKit.sha256(LogChain.ROOT_PAYLOAD), 1, 1, LogTestKit.sha256(LogChain.M1_PAYLOAD));
        List<byte[]> entries = List.of(first, head);
        String text = LogTestKit.checkpointText(LogTestKit.ORIGIN, 2, LogTestKit.mth(entries));
        byte[] note = LogTestKit.note(text, LogTestKit.logSignatureLine(LogTestKit.ORIGIN, LogTestKit.LOG_SEED, text),
                LogTestKit.cosign(0, T0 - 5, text), LogTestKit.cosign(2, T0 - 5, text));
        return LogTestKit.proof(head, 1, LogTestKit.path(1, entries), note);
    }

    @Test
    public void aSplitViewIsRefusedAndItsEvidenceKeptInTheSideFile() throws Exception {
        Path tree = Files.createTempDirectory(work, "tree");
        Path scope = Files.createDirectories(tree.resolve("v1/" + SignedChain.SCOPE + "/root"));
        Files.write(scope.resolve("1.json"), LogChain.ROOT);
        Files.write(scope.getParent().resolve("manifest.json"), LogChain.M1);
        byte[] rootSha = LogTestKit.sha256(LogChain.ROOT_PAYLOAD);
        byte[] one = proofAtSize2(LogTestKit.head(0, 1, rootSha, 1, 1, LogTestKit.sha256(LogChain.M1_PAYLOAD)));
        byte[] other = proofAtSize2(LogTestKit.head(0, 1, rootSha, 1, 1, LogTestKit.sha256("another payload".getBytes(java.nio.charset.StandardCharsets.UTF_8))));
        Files.write(scope.getParent().resolve("manifest.proof"), one);
        try (StaticHttpsServer server = new StaticHttpsServer(pki, tree)) {
            ClientConfiguration config = new ClientConfiguration();
            config.scope = SignedChain.SCOPE;
            config.baseUrl = "https://127.0.0.1:" + server.port() + "/";
            config.embeddedRoot = LogChain.ROOT;
            config.stateDirectory = work.resolve("state-split");
            config.caFile = pki.path("root.pem");
            config.clock = () -> T0;
            config.timeoutSeconds = 10;
            List<ClientEvent> events = new CopyOnWriteArrayList<>();
            PinningClient client = new PinningClient(config, events::add, null);
            assertEquals(RefreshedState.Outcome.UPDATED, client.refresh().outcome);
            assertTrue(client.logEquivocationEvidence() == null);
            Files.write(scope.getParent().resolve("manifest.proof"), other);
            PinningClient.Report split = client.refresh();
            assertEquals(RefreshedState.Outcome.REJECTED, split.outcome);
            assertEquals("log-equivocation", split.error.log().code());
            assertFalse("the state is unchanged", split.result.stateChanged);
            ClientEvent event = events.stream().filter(e -> e.kind == ClientEvent.Kind.EQUIVOCATION).findFirst().orElseThrow();
            assertTrue(event.toString().contains("EQUIVOCATION of the transparency log"));
            byte[][] evidence = client.logEquivocationEvidence();
            assertEquals(2, evidence.length);
            assertTrue(java.util.Arrays.equals(event.logEvidence.storedNote(), evidence[0]));
            assertTrue(java.util.Arrays.equals(event.logEvidence.receivedNote(), evidence[1]));
            // A later split view does not replace the first evidence; a restart still has it.
            Files.write(scope.getParent().resolve("manifest.proof"), proofAtSize2(LogTestKit.head(0, 1, rootSha, 1, 1, rootSha)));
            assertEquals("log-equivocation", client.refresh().error.log().code());
            assertTrue(java.util.Arrays.equals(evidence[1], new PinningClient(config, null, null).logEquivocationEvidence()[1]));
        }
    }

    @Test
    public void freshnessIsEvaluatedAtEveryConnection() throws Exception {
        Path tree = Files.createTempDirectory(work, "tree");
        Path scope = Files.createDirectories(tree.resolve("v1/" + SignedChain.SCOPE + "/root"));
        Files.write(scope.resolve("1.json"), LogChain.ROOT);
        Files.write(scope.getParent().resolve("manifest.json"), LogChain.M1);
        Files.write(scope.getParent().resolve("manifest.proof"), LogChain.proof(TQ));
        AtomicLong clock = new AtomicLong(T0);
        try (StaticHttpsServer server = new StaticHttpsServer(pki, tree)) {
            ClientConfiguration config = new ClientConfiguration();
            config.scope = SignedChain.SCOPE;
            config.baseUrl = "https://127.0.0.1:" + server.port() + "/";
            config.embeddedRoot = LogChain.ROOT;
            config.stateDirectory = work.resolve("state");
            config.caFile = pki.path("root.pem");
            config.clock = clock::get;
            config.timeoutSeconds = 10;
            List<ClientEvent> events = new CopyOnWriteArrayList<>();
            PinningClient client = new PinningClient(config, events::add, null);
            PinningClient.Report report = client.refresh();
            assertEquals(report.error == null ? "" : report.error.getMessage(), RefreshedState.Outcome.UPDATED, report.outcome);
            MergedPolicy fresh = client.currentPolicy();
            assertEquals(1, fresh.hostPolicy("api.example.com").entry.pins.size());
            assertEquals(LogFreshness.State.FRESH, client.logFreshness().state);
            assertEquals(0, count(events, ClientEvent.Kind.STALE_CHECKPOINT));

            clock.set(TQ + 3601);
            assertEquals(fresh, client.currentPolicy());
            client.currentPolicy();
            assertEquals("reported once per verified state", 1, count(events, ClientEvent.Kind.STALE_CHECKPOINT));
            assertEquals(LogFreshness.State.STALE, client.logFreshness().state);
            assertTrue(client.isManifestCurrent());

            clock.set(TQ + 3600 + 7200 + 1);
            assertFalse(client.isManifestCurrent());
            assertTrue("narrowed: the manifest-only domain keeps no pins", client.currentPolicy().hostPolicy("api.example.com").entry.pins.isEmpty());

            // A restart loads the checkpoint from the state copies: still expired, not reset by the restart.
            PinningClient restarted = new PinningClient(config, events::add, null);
            assertEquals(LogFreshness.State.EXPIRED, restarted.logFreshness().state);
            assertFalse(restarted.isManifestCurrent());
            // A re-cosigned proof restores the manifest; the next refresh stores it.
            Files.write(scope.getParent().resolve("manifest.proof"), LogChain.proof(clock.get() - 10));
            assertEquals(RefreshedState.Outcome.UNCHANGED, restarted.refresh().outcome);
            assertTrue(restarted.isManifestCurrent());
            assertEquals(LogFreshness.State.FRESH, restarted.logFreshness().state);
            assertTrue(server.requests.toString(), server.requests.stream().filter(r -> r.contains("/manifest.proof ")).count() >= 2);
        }
    }
}
