// The client's check of manifest.proof (docs/DESIGN.md §12), in order, as a pure function of bytes, identities, state and time.
package org.pinion.trust.log;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.pinion.trust.Codec;
import org.pinion.trust.CryptoProvider;

/** Verifies manifest.proof as the Swift {@code LogVerification.verify} does: the first failing check is the reason. */
public final class LogVerification {
    private LogVerification() {}

    /** What a verified proof established. Immutable. */
    public static final class Verified {
        /** The checkpoint to store (replacing the old one); its quorumTime is min(t_q, now). */
        public final StoredCheckpoint stored;
        /** The head record the proof carried. */
        public final HeadRecord head;
        /** Names of the witnesses whose valid cosignatures counted, newest first. */
        public final List<String> witnesses;
        /** Witnesses whose cosignature time is more than 5 minutes ahead of now. */
        public final List<String> futureCosignatures;
        /** Whether t_q itself is more than 5 minutes ahead of now (reported, age 0, stored as now). */
        public final boolean quorumTimeInFuture;
        /** Freshness at now. */
        public final LogFreshness freshness;

        Verified(StoredCheckpoint stored, HeadRecord head, List<String> witnesses, List<String> future, boolean inFuture,
                LogFreshness freshness) {
            this.stored = stored;
            this.head = head;
            this.witnesses = Collections.unmodifiableList(witnesses);
            this.futureCosignatures = Collections.unmodifiableList(future);
            this.quorumTimeInFuture = inFuture;
            this.freshness = freshness;
        }
    }

    private static final class Cosigned {
        final String name;
        final long time;

        Cosigned(String name, long time) {
            this.name = name;
            this.time = time;
        }
    }

    /**
     * @param proofBytes manifest.proof as fetched
     * @param policy the newest root's log member
     * @param scope the served manifest's scope
     * @param manifestRootVersion the served manifest's rootVersion
     * @param manifestVersion the served manifest's version
     * @param manifestPayloadSha256 SHA-256 of the served manifest's payload
     * @param rootVersion the client's newest root's version
     * @param rootPayloadSha256 SHA-256 of its payload
     * @param stored the checkpoint kept from the last refresh, or null (one of another origin is not compared)
     * @param now the client's time, POSIX seconds
     * @param crypto strict Ed25519 and SHA-256
     * @return what the proof established
     * @throws LogException naming the first check that failed
     */
    public static Verified verify(byte[] proofBytes, LogPolicy policy, String scope, long manifestRootVersion, long manifestVersion,
            byte[] manifestPayloadSha256, long rootVersion, byte[] rootPayloadSha256, StoredCheckpoint stored, long now,
            CryptoProvider crypto) throws LogException {
        TlogProof proof = TlogProof.parse(proofBytes);
        SignedNote note = proof.checkpointNote;
        Checkpoint checkpoint = Checkpoint.parse(note.text, crypto);

        // 1. The log signature (and the origin).
        checkLogSignature(note, checkpoint, policy, crypto);

        // 2. A quorum of cosignatures by distinct listed witness keys.
        List<Cosigned> cosigned = new ArrayList<>();
        for (LogPolicy.Witness witness : policy.witnesses) {
            List<SignedNote.Verified> valid;
            try {
                valid = note.verify(Collections.singletonList(witness.key), crypto);
            } catch (NoteException e) {
                throw new LogException(LogException.Reason.COSIGNATURE_INVALID, "witness " + witness.name() + "'s cosignature does not verify");
            }
            if (!valid.isEmpty() && valid.get(0).timestamp >= 0) cosigned.add(new Cosigned(witness.name(), valid.get(0).timestamp));
        }
        if (cosigned.size() < policy.quorum) {
            throw new LogException(LogException.Reason.QUORUM_NOT_MET,
                    cosigned.size() + " valid witness cosignatures, the root requires " + policy.quorum);
        }
        cosigned.sort((a, b) -> Long.compare(b.time, a.time));
        long quorumTime = cosigned.get(policy.quorum - 1).time;

        // 3. The inclusion of the last entry.
        if (checkpoint.size <= 0 || proof.index != checkpoint.size - 1) {
            throw new LogException(LogException.Reason.NOT_LAST_ENTRY, "the proof is for entry " + proof.index
                    + ", not the last entry of the log of size " + checkpoint.size + " (stale proof)");
        }
        byte[] extra = proof.extra();
        if (extra == null) throw new LogException(LogException.Reason.HEAD_MISSING, "the proof carries no head record");
        HeadRecord head = HeadRecord.parse(extra);
        Merkle.verifyInclusion(Merkle.leafHash(extra, crypto), proof.index, checkpoint.size, proof.inclusionProof,
                checkpoint.rootHash(), crypto);

        // 4. The head names the served manifest and the client's newest root.
        if (head.sequence != proof.index) {
            throw new LogException(LogException.Reason.SEQUENCE_MISMATCH,
                    "the head record's sequence " + head.sequence + " is not its log index " + proof.index);
        }
        if (!head.scope.equals(scope)) throw new LogException(LogException.Reason.SCOPE_MISMATCH, "the head record is for scope " + head.scope);
        if (head.rootVersion > rootVersion) {
            throw new LogException(LogException.Reason.ROOT_LOGGED_NOT_SERVED, "root " + head.rootVersion + " is logged but not served");
        }
        if (head.rootVersion != rootVersion || !Arrays.equals(head.rootPayloadSha256(), rootPayloadSha256)) {
            throw new LogException(LogException.Reason.ROOT_MISMATCH, "the log names root " + head.rootVersion
                    + ", the newest root here is " + rootVersion + " (another payload or stale proof)");
        }
        if (head.manifestRootVersion != manifestRootVersion || head.manifestVersion != manifestVersion
                || !Arrays.equals(head.manifestPayloadSha256(), manifestPayloadSha256)) {
            String detail = head.manifestVersion == manifestVersion
                    ? " is not the one the log holds as version " + head.manifestVersion
                            + " (another payload: a manifest left out of the log)"
                    : " is not the logged head (version " + head.manifestVersion + ")";
            throw new LogException(LogException.Reason.MANIFEST_NOT_LOGGED,
                    "the served manifest version " + manifestVersion + detail);
        }

        // 5. Not smaller than the stored checkpoint; the same size with another hash is equivocation.
        if (stored != null && stored.checkpoint.origin.equals(checkpoint.origin)) {
            if (checkpoint.size < stored.checkpoint.size) {
                throw new LogException(LogException.Reason.CHECKPOINT_SHRANK, "the log checkpoint shrank from "
                        + stored.checkpoint.size + " to " + checkpoint.size + " entries");
            }
            if (checkpoint.size == stored.checkpoint.size && !checkpoint.sameRoot(stored.checkpoint)) {
                throw new LogException(LogException.Reason.EQUIVOCATION, "EQUIVOCATION: the log signed two different trees of size "
                        + checkpoint.size + " (" + Codec.base64(stored.checkpoint.rootHash()) + " and " + Codec.base64(checkpoint.rootHash()) + ")",
                        new Equivocation(stored.checkpoint, stored.note(), checkpoint, note.bytes()));
            }
        }

        // 6. Freshness from t_q.
        long skewLimit = now + LogFreshness.ALLOWED_FUTURE_SKEW;
        List<String> names = new ArrayList<>();
        List<String> future = new ArrayList<>();
        for (Cosigned c : cosigned) {
            names.add(c.name);
            if (c.time > skewLimit) future.add(c.name);
        }
        // A t_q ahead of now is stored as now once: for the same tree the stored t_q stays, so
        // future-dated cosignatures cannot keep a frozen view fresh (as the Swift SDK).
        long effectiveQuorumTime = quorumTime;
        if (quorumTime > now && stored != null && stored.checkpoint.origin.equals(checkpoint.origin)
                && stored.checkpoint.size == checkpoint.size && stored.checkpoint.sameRoot(checkpoint)) {
            effectiveQuorumTime = Math.min(stored.quorumTime, now);
        }
        return new Verified(new StoredCheckpoint(checkpoint, note.bytes(), Math.min(effectiveQuorumTime, now)), head,
                names, future, quorumTime > skewLimit, LogFreshness.evaluate(effectiveQuorumTime, now, policy));
    }

    /** Step 1: the checkpoint is for the policy's origin and carries a valid signature by the log key. */
    static void checkLogSignature(SignedNote note, Checkpoint checkpoint, LogPolicy policy, CryptoProvider crypto) throws LogException {
        if (!checkpoint.origin.equals(policy.origin)) {
            throw new LogException(LogException.Reason.WRONG_ORIGIN, "the checkpoint is for another log (" + checkpoint.origin + ")");
        }
        List<SignedNote.Verified> valid;
        try {
            valid = note.verify(Collections.singletonList(policy.logKey), crypto);
        } catch (NoteException e) {
            throw new LogException(LogException.Reason.SIGNATURE_INVALID, "the log key's signature on the checkpoint does not verify");
        }
        if (valid.isEmpty()) throw new LogException(LogException.Reason.SIGNATURE_MISSING, "the checkpoint is not signed by the log key");
    }
}
