// LogVerification: each check of docs/DESIGN.md §12 in order, its reason code, the stored checkpoint, t_q and freshness.
package org.pinion.trust.log;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.pinion.trust.log.LogTestKit.CRYPTO;
import static org.pinion.trust.log.LogTestKit.ORIGIN;
import static org.pinion.trust.log.LogTestKit.SCOPE;
import static org.pinion.trust.log.LogTestKit.cosign;
import static org.pinion.trust.log.LogTestKit.utf8;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.Test;

public class LogVerificationTest {
    private static final long T = 1_800_000_000L;
    private static final LogPolicy POLICY = LogTestKit.policy(2, 3600, 7200);
    private static final byte[] ROOT_SHA = LogTestKit.sha256(utf8("root 1 payload"));
    private static final byte[] M1_SHA = LogTestKit.sha256(utf8("manifest 1 payload"));
    private static final byte[] M2_SHA = LogTestKit.sha256(utf8("manifest 2 payload"));
    private static final List<byte[]> ENTRIES = List.of(LogTestKit.head(0, 1, ROOT_SHA, 1, 1, M1_SHA), LogTestKit.head(1, 1, ROOT_SHA, 1, 2, M2_SHA));

    private static String text(List<byte[]> entries, int size) {
        return LogTestKit.checkpointText(ORIGIN, size, LogTestKit.mth(entries.subList(0, size)));
    }

    private static String logSig(String text) { return LogTestKit.logSignatureLine(ORIGIN, LogTestKit.LOG_SEED, text); }

    /** The proof of entry {@code index} in the first {@code size} entries, with a log signature and these lines after it. */
    private static byte[] proof(List<byte[]> entries, int index, int size, String... cosignatures) {
        String text = text(entries, size);
        String[] lines = new String[cosignatures.length + 1];
        lines[0] = logSig(text);
        System.arraycopy(cosignatures, 0, lines, 1, cosignatures.length);
        return LogTestKit.proof(entries.get(index), index, LogTestKit.path(index, entries.subList(0, size)), LogTestKit.note(text, lines));
    }

    private static byte[] goodProof() {
        String text = text(ENTRIES, 2);
        return proof(ENTRIES, 1, 2, cosign(0, T - 100, text), cosign(1, T - 50, text));
    }

    private static LogVerification.Verified verify(byte[] proof, StoredCheckpoint stored, long now) throws LogException {
        return LogVerification.verify(proof, POLICY, SCOPE, 1, 2, M2_SHA, 1, ROOT_SHA, stored, now, CRYPTO);
    }

    private interface Check {
        void run() throws LogException;
    }

    private static LogException refusal(Check check) {
        try {
            check.run();
        } catch (LogException e) {
            return e;
        }
        fail("accepted");
        return null;
    }

    private static LogException.Reason reason(byte[] proof) { return refusal(() -> verify(proof, null, T)).reason(); }

    @Test
    public void aGoodProofIsAcceptedWithTqTheQthNewestTime() throws Exception {
        LogVerification.Verified verified = verify(goodProof(), null, T);
        assertEquals(List.of("w2.example", "w1.example"), verified.witnesses);
        assertEquals(T - 100, verified.stored.quorumTime);
        assertEquals(2, verified.stored.checkpoint.size);
        assertEquals(1, verified.head.sequence);
        assertEquals(LogFreshness.State.FRESH, verified.freshness.state);
        assertEquals(100, verified.freshness.age);
        assertFalse(verified.quorumTimeInFuture);
        assertTrue(verified.futureCosignatures.isEmpty());
        // The stored note is the proof's note verbatim and restores under the same log.
        StoredCheckpoint restored = StoredCheckpoint.restore(verified.stored.note(), verified.stored.quorumTime, POLICY, CRYPTO);
        assertTrue(restored.checkpoint.sameRoot(verified.stored.checkpoint));
        // Not the same log (another key): the stored checkpoint is not restored.
        LogPolicy otherKey = new LogPolicy(ORIGIN, LogTestKit.key(ORIGIN, 1, 40), POLICY.witnesses, 2, 3600, 7200);
        assertEquals(LogException.Reason.SIGNATURE_MISSING,
                refusal(() -> StoredCheckpoint.restore(verified.stored.note(), T, otherKey, CRYPTO)).reason());
        assertEquals(LogException.Reason.MALFORMED_CHECKPOINT, refusal(() -> StoredCheckpoint.restore(utf8("junk"), T, POLICY, CRYPTO)).reason());
    }

    @Test
    public void theLogSignatureIsCheckedFirst() {
        String text = text(ENTRIES, 2);
        byte[] unsigned = LogTestKit.proof(ENTRIES.get(1), 1, LogTestKit.path(1, ENTRIES), LogTestKit.note(text, cosign(0, T, text)));
        assertEquals(LogException.Reason.SIGNATURE_MISSING, reason(unsigned));
        String forged = LogTestKit.logSignatureLine(ORIGIN, LogTestKit.LOG_SEED, text(ENTRIES, 1));
        // A bad log signature beats the missing quorum.
        byte[] bad = LogTestKit.proof(ENTRIES.get(1), 1, LogTestKit.path(1, ENTRIES), LogTestKit.note(text, forged));
        assertEquals(LogException.Reason.SIGNATURE_INVALID, reason(bad));
        String otherOrigin = LogTestKit.checkpointText("other.test/log", 2, LogTestKit.mth(ENTRIES));
        byte[] wrongOrigin = LogTestKit.proof(ENTRIES.get(1), 1, LogTestKit.path(1, ENTRIES),
                LogTestKit.note(otherOrigin, LogTestKit.logSignatureLine("other.test/log", LogTestKit.LOG_SEED, otherOrigin)));
        assertEquals(LogException.Reason.WRONG_ORIGIN, reason(wrongOrigin));
        byte[] malformedCheckpoint = LogTestKit.proof(ENTRIES.get(1), 1, List.of(), LogTestKit.note("o\nx\ny\n", logSig("o\nx\ny\n")));
        assertEquals(LogException.Reason.MALFORMED_CHECKPOINT, reason(malformedCheckpoint));
        assertEquals(LogException.Reason.MALFORMED_PROOF, reason(utf8("c2sp.org/tlog-proof@v1\n")));
    }

    @Test
    public void theQuorumCountsDistinctListedWitnessesAndABadListedCosignatureRefuses() {
        String text = text(ENTRIES, 2);
        assertEquals(LogException.Reason.QUORUM_NOT_MET, reason(proof(ENTRIES, 1, 2, cosign(0, T, text))));
        assertEquals(LogException.Reason.QUORUM_NOT_MET, reason(proof(ENTRIES, 1, 2, cosign(0, T, text), cosign(0, T - 1, text))));
        assertEquals(LogException.Reason.QUORUM_NOT_MET, reason(proof(ENTRIES, 1, 2, cosign(0, T, text), cosign(3, T, text))));
        // w2's cosignature over another checkpoint: its name and key ID match, so the proof is refused.
        String other = text(ENTRIES, 1);
        LogException e = refusal(() -> verify(proof(ENTRIES, 1, 2, cosign(0, T, text), cosign(1, T, other), cosign(2, T, text)), null, T));
        assertEquals(LogException.Reason.COSIGNATURE_INVALID, e.reason());
        assertEquals("log-cosignature-invalid", e.code());
        assertTrue(e.getMessage().contains("w2.example"));
        // A witness key used as the log key's name does not count either.
        String asLog = LogTestKit.logSignatureLine("w1.example", 11, text);
        assertEquals(LogException.Reason.QUORUM_NOT_MET, reason(proof(ENTRIES, 1, 2, asLog, cosign(1, T, text))));
        // Quorum failure comes before a stale index.
        assertEquals(LogException.Reason.QUORUM_NOT_MET, reason(proof(ENTRIES, 0, 2, cosign(0, T, text))));
    }

    @Test
    public void onlyTheLastEntryWithItsHeadIncludedCounts() {
        String text = text(ENTRIES, 2);
        String[] cos = {cosign(0, T, text), cosign(1, T, text)};
        assertEquals(LogException.Reason.NOT_LAST_ENTRY, reason(proof(ENTRIES, 0, 2, cos)));
        String note = new String(LogTestKit.note(text, logSig(text), cos[0], cos[1]), java.nio.charset.StandardCharsets.UTF_8);
        List<byte[]> path = LogTestKit.path(1, ENTRIES);
        assertEquals(LogException.Reason.HEAD_MISSING, reason(LogTestKit.proof(null, 1, path, utf8(note))));
        assertEquals(LogException.Reason.MALFORMED_HEAD, reason(LogTestKit.proof(utf8("pinion.head/v1\n"), 1, path, utf8(note))));
        byte[] otherHead = LogTestKit.head(1, 1, ROOT_SHA, 1, 2, M1_SHA);
        assertEquals(LogException.Reason.INCLUSION_FAILED, reason(LogTestKit.proof(otherHead, 1, path, utf8(note))));
        assertEquals(LogException.Reason.INCLUSION_FAILED, reason(LogTestKit.proof(ENTRIES.get(1), 1, List.of(), utf8(note))));
        String empty = LogTestKit.checkpointText(ORIGIN, 0, LogTestKit.sha256());
        assertEquals(LogException.Reason.NOT_LAST_ENTRY, reason(LogTestKit.proof(ENTRIES.get(0), 0, List.of(),
                LogTestKit.note(empty, logSig(empty), cosign(0, T, empty), cosign(1, T, empty)))));
    }

    private static LogException.Reason headReason(byte[] head, long rootVersion, byte[] rootSha) {
        List<byte[]> entries = new ArrayList<>(ENTRIES.subList(0, 1));
        entries.add(head);
        String text = text(entries, 2);
        byte[] proof = proof(entries, 1, 2, cosign(0, T, text), cosign(1, T, text));
        return refusal(() -> LogVerification.verify(proof, POLICY, SCOPE, 1, 2, M2_SHA, rootVersion, rootSha, null, T, CRYPTO)).reason();
    }

    @Test
    public void theHeadMustNameTheServedManifestAndTheNewestRoot() throws Exception {
        assertEquals(LogException.Reason.SEQUENCE_MISMATCH, headReason(LogTestKit.head(0, 1, ROOT_SHA, 1, 2, M2_SHA), 1, ROOT_SHA));
        byte[] otherScope = new String(LogTestKit.head(1, 1, ROOT_SHA, 1, 2, M2_SHA), java.nio.charset.StandardCharsets.US_ASCII)
                .replace(SCOPE, "other.scope").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        assertEquals(LogException.Reason.SCOPE_MISMATCH, headReason(otherScope, 1, ROOT_SHA));
        byte[] root2Sha = LogTestKit.sha256(utf8("root 2 payload"));
        assertEquals(LogException.Reason.ROOT_LOGGED_NOT_SERVED, headReason(LogTestKit.head(1, 2, root2Sha, 1, 2, M2_SHA), 1, ROOT_SHA));
        assertEquals(LogException.Reason.ROOT_MISMATCH, headReason(LogTestKit.head(1, 1, ROOT_SHA, 1, 2, M2_SHA), 2, root2Sha));
        assertEquals(LogException.Reason.ROOT_MISMATCH, headReason(LogTestKit.head(1, 1, root2Sha, 1, 2, M2_SHA), 1, ROOT_SHA));
        assertEquals(LogException.Reason.MANIFEST_NOT_LOGGED, headReason(LogTestKit.head(1, 1, ROOT_SHA, 1, 2, M1_SHA), 1, ROOT_SHA));
        assertEquals(LogException.Reason.MANIFEST_NOT_LOGGED, headReason(LogTestKit.head(1, 1, ROOT_SHA, 1, 3, M2_SHA), 1, ROOT_SHA));
        assertEquals("log-root-logged-not-served", LogException.Reason.ROOT_LOGGED_NOT_SERVED.code());
    }

    @Test
    public void theCheckpointNeverShrinksAndOneSizeWithTwoHashesIsEquivocation() throws Exception {
        StoredCheckpoint atTwo = verify(goodProof(), null, T).stored;
        String text1 = text(ENTRIES, 1);
        byte[] smaller = proof(ENTRIES, 0, 1, cosign(0, T, text1), cosign(1, T, text1));
        LogException shrank = refusal(() -> LogVerification.verify(smaller, POLICY, SCOPE, 1, 1, M1_SHA, 1, ROOT_SHA, atTwo, T, CRYPTO));
        assertEquals(LogException.Reason.CHECKPOINT_SHRANK, shrank.reason());
        List<byte[]> fork = List.of(ENTRIES.get(0), LogTestKit.head(1, 1, ROOT_SHA, 1, 3, M1_SHA));
        String forkText = text(fork, 2);
        byte[] forked = proof(fork, 1, 2, cosign(0, T, forkText), cosign(2, T, forkText));
        LogException split = refusal(() -> LogVerification.verify(forked, POLICY, SCOPE, 1, 3, M1_SHA, 1, ROOT_SHA, atTwo, T, CRYPTO));
        assertEquals(LogException.Reason.EQUIVOCATION, split.reason());
        Equivocation evidence = split.equivocation();
        assertNotNull(evidence);
        assertArrayEquals(atTwo.note(), evidence.storedNote());
        assertEquals(2, evidence.received.size);
        assertFalse(evidence.stored.sameRoot(evidence.received));
        assertTrue(new String(evidence.receivedNote(), java.nio.charset.StandardCharsets.UTF_8).startsWith(forkText));
        // A stored checkpoint of another origin is not compared; the same checkpoint again is accepted.
        LogPolicy otherOrigin = new LogPolicy("another.test/log", LogTestKit.key("another.test/log", 1, LogTestKit.LOG_SEED),
                POLICY.witnesses, 2, 3600, 7200);
        String otherText = LogTestKit.checkpointText("another.test/log", 5, LogTestKit.sha256(utf8("x")));
        byte[] otherNote = LogTestKit.note(otherText, LogTestKit.logSignatureLine("another.test/log", LogTestKit.LOG_SEED, otherText));
        StoredCheckpoint foreign = StoredCheckpoint.restore(otherNote, T, otherOrigin, CRYPTO);
        assertEquals(2, verify(goodProof(), foreign, T).stored.checkpoint.size);
        assertEquals(2, verify(goodProof(), atTwo, T + 10).stored.checkpoint.size);
    }

    @Test
    public void aFutureTqIsReportedCountsAsAgeZeroAndIsStoredAsNow() throws Exception {
        String text = text(ENTRIES, 2);
        byte[] future = proof(ENTRIES, 1, 2, cosign(0, T + 1000, text), cosign(1, T + 301, text), cosign(2, T + 300, text));
        LogVerification.Verified verified = verify(future, null, T);
        assertTrue(verified.quorumTimeInFuture);
        assertEquals(List.of("w1.example", "w2.example"), verified.futureCosignatures);
        assertEquals(T, verified.stored.quorumTime);
        assertEquals(0, verified.freshness.age);
        byte[] skew = proof(ENTRIES, 1, 2, cosign(0, T + 300, text), cosign(2, T + 300, text));
        LogVerification.Verified withinSkew = verify(skew, null, T);
        assertFalse(withinSkew.quorumTimeInFuture);
        assertEquals(T, withinSkew.stored.quorumTime);
    }

    @Test
    public void aFutureTqDoesNotKeepTheSameTreeFreshForEver() throws Exception {
        String text = text(ENTRIES, 2);
        long farFuture = T + 9L * 365 * 86400;
        byte[] future = proof(ENTRIES, 1, 2, cosign(0, farFuture, text), cosign(1, farFuture, text));
        LogVerification.Verified first = verify(future, null, T);
        assertEquals(T, first.stored.quorumTime);
        assertEquals(0, first.freshness.age);
        // Two hours later (maxCheckpointAge 3600 s), the same proof: aged from the first sight.
        LogVerification.Verified again = verify(future, first.stored, T + 7200);
        assertTrue(again.quorumTimeInFuture);
        assertEquals(T, again.stored.quorumTime);
        assertEquals(LogFreshness.State.STALE, again.freshness.state);
        assertEquals(7200, again.freshness.age);
        assertEquals(LogFreshness.State.EXPIRED, verify(future, again.stored, T + 3600 + 7200 + 1).freshness.state);
    }

    @Test
    public void freshnessBoundaries() {
        assertEquals(LogFreshness.State.FRESH, LogFreshness.evaluate(T, T + 3600, POLICY).state);
        assertEquals(LogFreshness.State.STALE, LogFreshness.evaluate(T, T + 3601, POLICY).state);
        assertEquals(LogFreshness.State.STALE, LogFreshness.evaluate(T, T + 3600 + 7200, POLICY).state);
        assertEquals(LogFreshness.State.EXPIRED, LogFreshness.evaluate(T, T + 3600 + 7201, POLICY).state);
        assertEquals(T + 3600 + 7201, LogFreshness.expiresAt(T, POLICY));
        assertEquals(0, LogFreshness.evaluate(T + 50, T, POLICY).age);
        LogPolicy off = LogTestKit.policy(2, 0, 7200);
        assertEquals(LogFreshness.State.UNCHECKED, LogFreshness.evaluate(0, T, off).state);
        assertEquals(Long.MAX_VALUE, LogFreshness.expiresAt(0, off));
        assertTrue(Arrays.asList(LogException.Reason.values()).stream().allMatch(r -> r.code().matches("log-[a-z]+(-[a-z]+)*")));
    }
}
