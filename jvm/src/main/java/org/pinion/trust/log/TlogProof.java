// C2SP tlog-proof@v1 (manifest.proof): extra, index, inclusion proof and the cosigned checkpoint, read with limits.
package org.pinion.trust.log;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.pinion.trust.Codec;

/** A parsed tlog-proof@v1. Immutable. */
public final class TlogProof {
    /** The first line. */
    public static final String HEADER = "c2sp.org/tlog-proof@v1";
    /** Largest proof file read by default, in bytes (32 KiB). */
    public static final int DEFAULT_MAX_BYTES = 32 * 1024;
    /** Most inclusion proof lines (63: a tree of 2^63 leaves). */
    public static final int DEFAULT_MAX_PROOF_LINES = 63;

    private final byte[] extra;
    /** The entry's zero-based index. */
    public final long index;
    /** The inclusion proof, 32-byte hashes from the leaf's sibling up. */
    public final List<byte[]> inclusionProof;
    /** The cosigned checkpoint note, verbatim. */
    public final SignedNote checkpointNote;

    private TlogProof(byte[] extra, long index, List<byte[]> proof, SignedNote note) {
        this.extra = extra;
        this.index = index;
        this.inclusionProof = Collections.unmodifiableList(proof);
        this.checkpointNote = note;
    }

    /** @return a copy of the {@code extra} bytes (Pinion: the head record), or null when absent */
    public byte[] extra() { return extra == null ? null : extra.clone(); }

    /** @param bytes the file @return it parsed with the default limits @throws LogException as {@link #parse(byte[], int, int, int)} */
    public static TlogProof parse(byte[] bytes) throws LogException {
        return parse(bytes, DEFAULT_MAX_BYTES, DEFAULT_MAX_PROOF_LINES, SignedNote.DEFAULT_MAX_SIGNATURES);
    }

    /**
     * Parses a proof, checking its size before anything else and the line counts while reading.
     *
     * @param bytes the file
     * @param maxBytes largest file
     * @param maxProofLines most inclusion proof lines
     * @param maxSignatures most signature lines of the checkpoint note
     * @return the proof
     * @throws LogException PROOF_TOO_LARGE over maxBytes; MALFORMED_PROOF for any other rule (the note's included)
     */
    public static TlogProof parse(byte[] bytes, int maxBytes, int maxProofLines, int maxSignatures) throws LogException {
        if (bytes.length > maxBytes) throw new LogException(LogException.Reason.PROOF_TOO_LARGE, "the proof is larger than " + maxBytes + " bytes");
        int[] offset = {0};
        if (!nextLine(bytes, offset).equals(HEADER)) throw malformed("the first line is not " + HEADER);
        String line = nextLine(bytes, offset);
        byte[] extra = null;
        if (line.startsWith("extra ")) {
            extra = Codec.decodeBase64Canonical(line.substring(6));
            if (extra == null) throw malformed("extra is not canonical base64");
            line = nextLine(bytes, offset);
        }
        if (!line.startsWith("index ")) throw malformed("no index line");
        String digits = line.substring(6);
        long index = Merkle.parseDecimal(digits, 19);
        if (index < 0) throw malformed("invalid index '" + digits + "'");
        List<byte[]> proof = new ArrayList<>();
        while (true) {
            String hashLine = nextLine(bytes, offset);
            if (hashLine.isEmpty()) break;
            if (proof.size() >= maxProofLines) throw malformed("the proof has more than " + maxProofLines + " inclusion proof lines");
            byte[] hash = Codec.decodeBase64Canonical(hashLine);
            if (hash == null || hash.length != 32) throw malformed("proof line " + (proof.size() + 1) + " is not a base64 SHA-256 hash");
            proof.add(hash);
        }
        SignedNote note;
        try {
            note = SignedNote.parse(Arrays.copyOfRange(bytes, offset[0], bytes.length), SignedNote.DEFAULT_MAX_BYTES, maxSignatures);
        } catch (NoteException e) {
            throw malformed("the proof's checkpoint: " + e.getMessage());
        }
        return new TlogProof(extra, index, proof, note);
    }

    private static String nextLine(byte[] bytes, int[] offset) throws LogException {
        int end = -1;
        for (int i = offset[0]; i < bytes.length; i++) {
            if (bytes[i] == 0x0A) {
                end = i;
                break;
            }
        }
        if (end < 0) throw malformed("missing the checkpoint");
        String line;
        try {
            line = SignedNote.decodeUtf8(Arrays.copyOfRange(bytes, offset[0], end));
        } catch (NoteException e) {
            throw malformed("not UTF-8");
        }
        offset[0] = end + 1;
        return line;
    }

    private static LogException malformed(String reason) {
        return new LogException(LogException.Reason.MALFORMED_PROOF, "manifest.proof: malformed tlog-proof: " + reason);
    }

    /** @return the file's canonical bytes (for tests and tools) */
    public byte[] bytes() {
        StringBuilder text = new StringBuilder(HEADER).append('\n');
        if (extra != null) text.append("extra ").append(Codec.base64(extra)).append('\n');
        text.append("index ").append(index).append('\n');
        for (byte[] hash : inclusionProof) text.append(Codec.base64(hash)).append('\n');
        text.append('\n');
        byte[] head = text.toString().getBytes(StandardCharsets.UTF_8);
        byte[] note = checkpointNote.bytes();
        byte[] out = Arrays.copyOf(head, head.length + note.length);
        System.arraycopy(note, 0, out, head.length, note.length);
        return out;
    }
}
