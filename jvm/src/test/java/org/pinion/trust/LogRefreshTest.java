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
    private static final byte[] ROOT_PAYLOAD = LogChain.ROOT_PAYLOAD;
    private static final byte[] ROOT = LogChain.ROOT;
    private static final byte[] ROOT_PLAIN = SignedChain.envelope(PayloadKind.ROOT,
            SignedChain.rootPayload(SignedChain.SCOPE, 1, 0, 2_592_000, new int[] {1}, new int[] {2}), 1);
    private static final byte[] M1_PAYLOAD = LogChain.M1_PAYLOAD;
    private static final byte[] M1 = LogChain.M1;

    private static byte[] goodProof(long cosignedAt) { return LogChain.proof(cosignedAt); }

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
        RefreshedState first = core.refresh(core.initialState(List.of()), T0, channel);
        assertEquals(first.error == null ? "" : first.error.getMessage(), RefreshedState.Outcome.UPDATED, first.outcome);
        ClientState persisted = first.state.persisted();
        assertNotNull(persisted.logCheckpoint);
        assertEquals(T0.seconds - 60, persisted.logQuorumTime);
        RefreshedState second = core.refresh(first.state, T0.plus(10), channel);
        assertEquals(RefreshedState.Outcome.UNCHANGED, second.outcome);
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
        RefreshedState missing = core.refresh(initial, T0, new Channel(Fetch.notFound()));
        assertEquals(RefreshedState.Outcome.REJECTED, missing.outcome);
        assertEquals("log-proof-missing", missing.error.log().code());
        assertFalse(missing.stateChanged);
        assertNull(missing.state.manifest);
        for (Fetch answer : new Fetch[] {Fetch.failed("HTTP 500"), Fetch.notModified()}) {
            RefreshedState result = core.refresh(initial, T0, new Channel(answer));
            assertEquals(RefreshedState.Outcome.NETWORK_FAILURE, result.outcome);
            assertEquals(ClientException.Kind.FETCH_FAILED, result.error.kind());
            assertTrue(result.error.getMessage(), result.error.getMessage().startsWith("manifest.proof: "));
            assertFalse(result.stateChanged);
            assertNull(result.state.manifest);
            assertEquals(0, result.events.stream().filter(e -> e.kind == ClientEvent.Kind.UPDATED).count());
        }
        Channel tooLarge = new Channel(Fetch.found(new byte[40 * 1024]));
        assertEquals("log-proof-too-large", core.refresh(initial, T0, tooLarge).error.log().code());
        Channel garbage = new Channel(Fetch.found("c2sp.org/tlog-proof@v1\nindex x\n".getBytes(StandardCharsets.US_ASCII)));
        assertEquals("log-malformed-proof", core.refresh(initial, T0, garbage).error.log().code());
    }

    @Test
    public void aStoredCheckpointThatNoLongerVerifiesIsDroppedAndTheManifestNarrows() throws Exception {
        TrustCore core = core(ROOT);
        RefreshedState first = core.refresh(core.initialState(List.of()), T0, new Channel(Fetch.found(goodProof(T0.seconds))));
        ClientState tampered = first.state.persisted();
        String note = new String(tampered.logCheckpoint, StandardCharsets.UTF_8);
        tampered.logCheckpoint = note.replace(LogTestKit.ORIGIN + "\n1\n", LogTestKit.ORIGIN + "\n2\n").getBytes(StandardCharsets.UTF_8);
        TrustCore.Restored restored = core.restore(tampered);
        assertEquals(1, restored.events.size());
        assertEquals(ClientEvent.Kind.STORE_DROPPED, restored.events.get(0).kind);
        assertEquals(-1, restored.state.logQuorumTime());
        assertFalse("no evidence of a recent view: fail closed", restored.state.snapshot(Baseline.EMPTY, 0).isManifestCurrent(T0));
        // The next refresh verifies a proof again and the manifest is current.
        RefreshedState again = core.refresh(restored.state, T0, new Channel(Fetch.found(goodProof(T0.seconds))));
        assertEquals(RefreshedState.Outcome.UNCHANGED, again.outcome);
        assertTrue(again.state.snapshot(Baseline.EMPTY, 0).isManifestCurrent(T0));
    }

    @Test
    public void aProofOfTheNextManifestIsRetriedOnceThenRefused() throws Exception {
        byte[] m2Payload = SignedChain.manifestPayload(SignedChain.SCOPE, 1, 2, null);
        byte[] m2 = SignedChain.envelope(PayloadKind.PINS, m2Payload, 2);
        byte[] rootSha = LogTestKit.sha256(ROOT_PAYLOAD);
        List<byte[]> entries = List.of(LogTestKit.head(0, 1, rootSha, 1, 1, LogTestKit.sha256(M1_PAYLOAD)),
                LogTestKit.head(1, 1, rootSha, 1, 2, LogTestKit.sha256(m2Payload)));
        String text = LogTestKit.checkpointText(LogTestKit.ORIGIN, 2, LogTestKit.mth(entries));
        byte[] proof2 = LogTestKit.proof(entries.get(1), 1, LogTestKit.path(1, entries), LogTestKit.note(text,
                LogTestKit.logSignatureLine(LogTestKit.ORIGIN, LogTestKit.LOG_SEED, text), LogTestKit.cosign(0, T0.seconds, text),
                LogTestKit.cosign(2, T0.seconds, text)));
        // Mid-publish: manifest.proof is already the new one, manifest.json still the old one on the first read.
        List<byte[]> manifests = new ArrayList<>(List.of(M1, m2));
        int[] proofFetches = {0};
        Fetch.Source midPublish = new Fetch.Source() {
            @Override
            public Fetch root(long version) { return Fetch.notFound(); }

            @Override
            public Fetch manifest(String ifNoneMatch) { return Fetch.found(manifests.size() > 1 ? manifests.remove(0) : manifests.get(0)); }

            @Override
            public Fetch proof() {
                proofFetches[0]++;
                return Fetch.found(proof2);
            }
        };
        TrustCore core = core(ROOT);
        RefreshedState result = core.refresh(core.initialState(List.of()), T0, midPublish);
        assertEquals(result.error == null ? "" : result.error.getMessage(), RefreshedState.Outcome.UPDATED, result.outcome);
        assertEquals(new ManifestOrder(1, 2), result.state.floor());
        assertEquals(2, proofFetches[0]);
        // A manifest that stays unlogged is refused after one retry, and the retry's events are reported once.
        Channel unlogged = new Channel(Fetch.found(proof2));
        RefreshedState refused = core.refresh(core.initialState(List.of()), T0, unlogged);
        assertEquals("log-manifest-not-logged", refused.error.log().code());
        assertEquals(2, unlogged.proofFetches);
        assertEquals(1, refused.events.stream().filter(e -> e.kind == ClientEvent.Kind.REJECTED).count());
        assertFalse(refused.stateChanged);
    }

    @Test
    public void aNotModifiedAnswerToAClientWithoutAManifestIsRefusedByTheLog() throws Exception {
        TrustCore core = core(ROOT);
        int[] proofs = {0};
        Fetch.Source source = new Fetch.Source() {
            @Override
            public Fetch root(long version) { return Fetch.notFound(); }

            @Override
            public Fetch manifest(String ifNoneMatch) { return Fetch.notModified(); }

            @Override
            public Fetch proof() {
                proofs[0]++;
                return Fetch.found(goodProof(T0.seconds));
            }
        };
        RefreshedState result = core.refresh(core.initialState(List.of()), T0, source);
        assertEquals(RefreshedState.Outcome.REJECTED, result.outcome);
        assertEquals("log-manifest-not-logged", result.error.log().code());
        assertEquals("retried once", 2, proofs[0]);
        assertFalse(result.stateChanged);
    }

    @Test
    public void withoutALogNoProofIsFetched() throws Exception {
        TrustCore core = core(ROOT_PLAIN);
        Channel channel = new Channel(Fetch.failed("must not be asked"));
        RefreshedState result = core.refresh(core.initialState(List.of()), T0, channel);
        assertEquals(RefreshedState.Outcome.UPDATED, result.outcome);
        assertEquals(0, channel.proofFetches);
        assertNull(result.state.persisted().logCheckpoint);
        assertNull(result.state.logFreshness(T0));
    }

    @Test
    public void badLogCheckpointMembersMakeAStateCopyCountAsLost() throws Exception {
        TrustCore core = core(ROOT);
        RefreshedState first = core.refresh(core.initialState(List.of()), T0, new Channel(Fetch.found(goodProof(T0.seconds))));
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
