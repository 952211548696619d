// C2SP tlog-checkpoint note text: origin, tree size, base64 root hash, optional extension lines, parsed strictly.
package org.pinion.trust.log;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.pinion.trust.Codec;
import org.pinion.trust.CryptoProvider;

/** A checkpoint: the log's origin, its tree size and RFC 9162 root hash. Immutable. */
public final class Checkpoint {
    /** The origin line: the log's identity. */
    public final String origin;
    /** The tree size, in leaves, 0 ... 2^63-1. */
    public final long size;
    private final byte[] rootHash;
    /** Opaque non-empty extension lines (Pinion writes none). */
    public final List<String> extensions;

    private Checkpoint(String origin, long size, byte[] rootHash, List<String> extensions) {
        this.origin = origin;
        this.size = size;
        this.rootHash = rootHash;
        this.extensions = Collections.unmodifiableList(extensions);
    }

    /** @return a copy of the 32-byte root hash */
    public byte[] rootHash() { return rootHash.clone(); }

    /** @param other a checkpoint @return whether both have the same root hash */
    public boolean sameRoot(Checkpoint other) { return Arrays.equals(rootHash, other.rootHash); }

    /**
     * Parses a checkpoint's note text: at least three non-empty lines ending in newlines, a decimal size
     * without leading zeroes below 2^63, canonical base64 of 32 bytes, and for size 0 the empty tree's hash.
     *
     * @param text the note text
     * @param crypto SHA-256 (the empty tree's hash)
     * @return the checkpoint
     * @throws LogException MALFORMED_CHECKPOINT naming the line
     */
    public static Checkpoint parse(String text, CryptoProvider crypto) throws LogException {
        if (!text.endsWith("\n")) throw malformed("malformed checkpoint: does not end in a newline");
        List<String> lines = new ArrayList<>(Arrays.asList(text.split("\n", -1)));
        lines.remove(lines.size() - 1);
        if (lines.size() < 3) throw malformed("malformed checkpoint: fewer than three lines");
        for (String line : lines) {
            if (line.isEmpty()) throw malformed("malformed checkpoint: an empty line");
        }
        String sizeLine = lines.get(1);
        long size = Merkle.parseDecimal(sizeLine, 19);
        if (size < 0) throw malformed("invalid checkpoint tree size '" + sizeLine + "'");
        byte[] root = Codec.decodeBase64Canonical(lines.get(2));
        if (root == null || root.length != 32) throw malformed("invalid checkpoint root hash '" + lines.get(2) + "'");
        if (size == 0 && !Arrays.equals(root, crypto.sha256(new byte[0]))) {
            throw malformed("a checkpoint of size 0 must carry the empty tree's hash");
        }
        return new Checkpoint(lines.get(0), size, root, new ArrayList<>(lines.subList(3, lines.size())));
    }

    private static LogException malformed(String message) {
        return new LogException(LogException.Reason.MALFORMED_CHECKPOINT, message);
    }

    @Override
    public String toString() { return origin + " size " + size + " root " + Codec.base64(rootHash); }
}
