// Evidence of a split view: two checkpoints of one size with different root hashes, both signed by the log key.
package org.pinion.trust.log;

/** Both checkpoint notes of an equivocation, kept to be reported loudly (docs/DESIGN.md §12 step 5). */
public final class Equivocation {
    /** The checkpoint the client had verified before. */
    public final Checkpoint stored;
    private final byte[] storedNote;
    /** The conflicting checkpoint just received. */
    public final Checkpoint received;
    private final byte[] receivedNote;

    Equivocation(Checkpoint stored, byte[] storedNote, Checkpoint received, byte[] receivedNote) {
        this.stored = stored;
        this.storedNote = storedNote.clone();
        this.received = received;
        this.receivedNote = receivedNote.clone();
    }

    /** @return a copy of the stored checkpoint's signed note bytes */
    public byte[] storedNote() { return storedNote.clone(); }

    /** @return a copy of the received checkpoint's signed note bytes */
    public byte[] receivedNote() { return receivedNote.clone(); }
}
