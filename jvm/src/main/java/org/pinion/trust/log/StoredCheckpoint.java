// The verified checkpoint a client keeps in its crash-safe state: the cosigned note's bytes and its t_q.
package org.pinion.trust.log;

import org.pinion.trust.CryptoProvider;

/** A verified checkpoint as persisted. Immutable. */
public final class StoredCheckpoint {
    /** The verified checkpoint. */
    public final Checkpoint checkpoint;
    private final byte[] note;
    /** t_q of that note (never above the time it was verified at), POSIX seconds. */
    public final long quorumTime;

    StoredCheckpoint(Checkpoint checkpoint, byte[] note, long quorumTime) {
        this.checkpoint = checkpoint;
        this.note = note.clone();
        this.quorumTime = quorumTime;
    }

    /** @return a copy of the cosigned note's bytes (evidence) */
    public byte[] note() { return note.clone(); }

    /**
     * Restores a persisted checkpoint, re-verifying its log signature against the newest root's log (so one
     * of an old origin or key is not restored).
     *
     * @param note the stored note bytes
     * @param quorumTime the stored t_q, POSIX seconds
     * @param policy the newest root's log member
     * @param crypto Ed25519 and SHA-256
     * @return the checkpoint
     * @throws LogException when the note does not parse, is for another origin or lacks a valid log signature
     */
    public static StoredCheckpoint restore(byte[] note, long quorumTime, LogPolicy policy, CryptoProvider crypto) throws LogException {
        SignedNote parsed;
        try {
            parsed = SignedNote.parse(note);
        } catch (NoteException e) {
            throw new LogException(LogException.Reason.MALFORMED_CHECKPOINT, "the stored checkpoint: " + e.getMessage());
        }
        Checkpoint checkpoint = Checkpoint.parse(parsed.text, crypto);
        LogVerification.checkLogSignature(parsed, checkpoint, policy, crypto);
        return new StoredCheckpoint(checkpoint, note, quorumTime);
    }
}
