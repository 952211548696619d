// The trust core's log step: manifest.proof fetched every refresh, refusals leave the state unchanged, the checkpoint persists.
package org.pinion.trust;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;
import org.pinion.storage.StateCodec;
import org.pinion.trust.log.LogTestKit;

public class LogRefreshTest {
    private static final Timestamp T0 = new Timestamp(1_781_049_600L); // 2026-06-10T00:00:00Z
    private static final byte[] ROOT_PAYLOAD = rootWithLog();
    private static final byte[] ROOT = SignedChain.envelope(PayloadKind.ROOT, ROOT_PAYLOAD, 1);
    private static final byte[] ROOT_PLAIN = SignedChain.envelope(PayloadKind.ROOT,
            SignedChain.rootPayload(SignedChain.SCOPE, 1, 0, 2_592_000, new int[] {1}, new int[] {2}), 1);
    private static final byte[] M1_PAYLOAD = SignedChain.manifestPayload(SignedChain.SCOPE, 1, 1, null);
    private static final byte[] M1 = SignedChain.envelope(PayloadKind.PINS, M1_PAYLOAD, 2);

    private static byte[] rootWithLog() {
        String payload = new String(SignedChain.rootPayload(SignedChain.SCOPE, 1, 0, 2_592_000, new int[] {1}, new int[] {2}),
                StandardCharsets.UTF_8);
        StringBuilder witnesses = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            if (i > 0) witnesses.append(',');
            witnesses.append("{\"key\":\"").append(LogTestKit.verifierKey(LogTestKit.WITNESS_NAMES[i], 4, LogTestKit.WITNESS_SEEDS[i]))
                    .append("\",\"url\":\"https://").append(LogTestKit.WITNESS_NAMES[i]).append("\"}");
        }
        String log = "{\"origin\":\"" + LogTestKit.ORIGIN + "\",\"key\":\"" + LogTestKit.verifierKey(LogTestKit.ORIGIN, 1, LogTestKit.LOG_SEED)
                + "\",\"witnesses\":[" + witnesses + "],\"quorum\":2,\"maxCheckpointAge\":3600,\"checkpointGrace\":7200}";
        int end = payload.lastIndexOf('}');
        return (payload.substring(0, end) + ",\"log\":" + log + payload.substring(end)).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] goodProof(long cosignedAt) {
        byte[] head = LogTestKit.head(0, 1, LogTestKit.sha256(ROOT_PAYLOAD), 1, 1, LogTestKit.sha256(M1_PAYLOAD));
        String text = LogTestKit.checkpointText(LogTestKit.ORIGIN, 1, LogTestKit.mth(List.of(head)));
        byte[] note = LogTestKit.note(text, LogTestKit.logSignatureLine(LogTestKit.ORIGIN, LogTestKit.LOG_SEED, text),
                LogTestKit.cosign(0, cosignedAt, text), LogTestKit.cosign(1, cosignedAt, text));
        return LogTestKit.proof(head, 0, List.of(), note);
    }

    /** Serves root 1 only, manifest M1 (304 when the ETag matches) and a proof answer, counting proof fetches. */
    private static final class Channel implements Fetch.Source {
        Fetch proof;
        int proofFetches;

        Channel(Fetch proof) { this.proof = proof; }

        @Override
        public Fetch root(long version) { return Fetch.notFound(); }

        @Override
        public Fetch manifest(String ifNoneMatch) {
            return "\"m1\"".equals(ifNoneMatch) ? Fetch.notModified() : Fetch.found(M1, "\"m1\"", -1);
        }

        @Override
        public Fetch proof() {
            proofFetches++;
            return proof;
        }
    }

    private static TrustCore core(byte[] root) throws ClientException {
        return new TrustCore(SignedChain.SCOPE, root, Fixtures.CRYPTO, Limits.STANDARD);
    }

    @Test
    public void theProofIsFetchedEveryRefreshAndStoredInTheState() throws Exception {
        TrustCore core = core(ROOT);
        Channel channel = new Channel(Fetch.found(goodProof(T0.seconds - 60)));
        RefreshResult first = core.refresh(core.initialState(List.of()), T0, channel);
        assertEquals(first.error == null ? "" : first.error.getMessage(), RefreshResult.Outcome.UPDATED, first.outcome);
        ClientState persisted = first.state.persisted();
        assertNotNull(persisted.logCheckpoint);
        assertEquals(T0.seconds - 60, persisted.logQuorumTime);
        RefreshResult second = core.refresh(first.state, T0.plus(10), channel);
        assertEquals(RefreshResult.Outcome.UNCHANGED, second.outcome);
        assertEquals("fetched after the 304 too", 2, channel.proofFetches);
        // The checkpoint round-trips through a state copy and survives start-up.
        ClientState decoded = StateCodec.decode(StateCodec.encode(second.state.persisted()), Limits.STANDARD);
        assertEquals(second.state.persisted(), decoded);
        TrustCore.Restored restored = core.restore(decoded);
        assertTrue(restored.events.toString(), restored.events.isEmpty());
        assertEquals(T0.seconds - 60, restored.state.logQuorumTime());
        assertTrue(restored.state.snapshot(Baseline.EMPTY, 0).isManifestCurrent(T0.plus(3600 + 7200 - 60)));
        assertFalse(restored.state.snapshot(Baseline.EMPTY, 0).isManifestCurrent(T0.plus(3600 + 7200 - 59)));
    }

    @Test
    public void aProofThatCannotBeFetchedRefusesWithTheStateUnchanged() throws Exception {
        TrustCore core = core(ROOT);
        TrustedState initial = core.initialState(List.of());
        for (Fetch answer : new Fetch[] {Fetch.notFound(), Fetch.failed("HTTP 500"), Fetch.notModified()}) {
            Channel channel = new Channel(answer);
            RefreshResult result = core.refresh(initial, T0, channel);
            assertEquals(RefreshResult.Outcome.REJECTED, result.outcome);
            assertEquals("log-proof-missing", result.error.log().code());
            assertFalse(result.stateChanged);
            assertNull(result.state.manifest);
        }
        Channel tooLarge = new Channel(Fetch.found(new byte[40 * 1024]));
        assertEquals("log-proof-too-large", core.refresh(initial, T0, tooLarge).error.log().code());
        Channel garbage = new Channel(Fetch.found("c2sp.org/tlog-proof@v1\nindex x\n".getBytes(StandardCharsets.US_ASCII)));
        assertEquals("log-malformed-proof", core.refresh(initial, T0, garbage).error.log().code());
    }

    @Test
    public void aStoredCheckpointThatNoLongerVerifiesIsDroppedAndTheManifestNarrows() throws Exception {
        TrustCore core = core(ROOT);
        RefreshResult first = core.refresh(core.initialState(List.of()), T0, new Channel(Fetch.found(goodProof(T0.seconds))));
        ClientState tampered = first.state.persisted();
        String note = new String(tampered.logCheckpoint, StandardCharsets.UTF_8);
        tampered.logCheckpoint = note.replace(LogTestKit.ORIGIN + "\n1\n", LogTestKit.ORIGIN + "\n2\n").getBytes(StandardCharsets.UTF_8);
        TrustCore.Restored restored = core.restore(tampered);
        assertEquals(1, restored.events.size());
        assertEquals(ClientEvent.Kind.STORE_DROPPED, restored.events.get(0).kind);
        assertEquals(-1, restored.state.logQuorumTime());
        assertFalse("no evidence of a recent view: fail closed", restored.state.snapshot(Baseline.EMPTY, 0).isManifestCurrent(T0));
        // The next refresh verifies a proof again and the manifest is current.
        RefreshResult again = core.refresh(restored.state, T0, new Channel(Fetch.found(goodProof(T0.seconds))));
        assertEquals(RefreshResult.Outcome.UNCHANGED, again.outcome);
        assertTrue(again.state.snapshot(Baseline.EMPTY, 0).isManifestCurrent(T0));
    }

    @Test
    public void withoutALogNoProofIsFetched() throws Exception {
        TrustCore core = core(ROOT_PLAIN);
        Channel channel = new Channel(Fetch.failed("must not be asked"));
        RefreshResult result = core.refresh(core.initialState(List.of()), T0, channel);
        assertEquals(RefreshResult.Outcome.UPDATED, result.outcome);
        assertEquals(0, channel.proofFetches);
        assertNull(result.state.persisted().logCheckpoint);
        assertNull(result.state.logFreshness(T0));
    }

    @Test
    public void badLogCheckpointMembersMakeAStateCopyCountAsLost() throws Exception {
        TrustCore core = core(ROOT);
        RefreshResult first = core.refresh(core.initialState(List.of()), T0, new Channel(Fetch.found(goodProof(T0.seconds))));
        String good = new String(StateCodec.encode(first.state.persisted()), StandardCharsets.UTF_8);
        // JsonWriter's layout: one member per line, "name": value.
        String body = good.substring(0, good.lastIndexOf("sha256 ")).replaceAll("\": ", "\":");
        List<String> variants = new ArrayList<>();
        variants.add(body.replaceFirst("\"quorumTime\":[0-9]+", "\"quorumTime\":-1"));
        variants.add(body.replaceFirst("\"quorumTime\":[0-9]+", "\"quorumTime\":1.5"));
        variants.add(body.replaceFirst("\"quorumTime\":[0-9]+", "\"quorumTime\":9007199254740992"));
        variants.add(body.replaceFirst("\"note\":\"", "\"note\":\"!"));
        variants.add(body.replaceFirst("\"note\":\"[^\"]*\"", "\"note\":\"\""));
        variants.add(body.replaceFirst("\"quorumTime\":", "\"extra\":1,\"quorumTime\":"));
        variants.add(body.replaceFirst("\"logCheckpoint\":\\{", "\"logCheckpoint\":[{").replaceFirst("(\"quorumTime\":[0-9]+\\s*)\\}", "$1}]"));
        for (String variant : variants) {
            assertFalse(variant.equals(body));
            byte[] bytes = variant.replaceAll("\":", "\": ").getBytes(StandardCharsets.UTF_8);
            byte[] copy = LogTestKit.concat(bytes, ("sha256 " + Codec.hex(Fixtures.CRYPTO.sha256(bytes)) + "\n").getBytes(StandardCharsets.US_ASCII));
            try {
                StateCodec.decode(copy, Limits.STANDARD);
                fail("decoded " + variant);
            } catch (FormatException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("logCheckpoint"));
            }
        }
    }
}
