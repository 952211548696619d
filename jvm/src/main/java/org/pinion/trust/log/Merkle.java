// RFC 9162 §2.1 Merkle tree hashing and inclusion proof verification (the same as RFC 6962), as Merkle.swift.
package org.pinion.trust.log;

import java.util.List;
import org.pinion.trust.CryptoProvider;

/** Leaf and node hashes and the inclusion proof check of RFC 9162 §2.1.3.2. */
public final class Merkle {
    private Merkle() {}

    /** @param entry the entry bytes @param crypto SHA-256 @return SHA-256(0x00 || entry) */
    public static byte[] leafHash(byte[] entry, CryptoProvider crypto) {
        byte[] input = new byte[entry.length + 1];
        System.arraycopy(entry, 0, input, 1, entry.length);
        return crypto.sha256(input);
    }

    /** @param left 32 bytes @param right 32 bytes @param crypto SHA-256 @return SHA-256(0x01 || left || right) */
    public static byte[] nodeHash(byte[] left, byte[] right, CryptoProvider crypto) {
        byte[] input = new byte[1 + left.length + right.length];
        input[0] = 0x01;
        System.arraycopy(left, 0, input, 1, left.length);
        System.arraycopy(right, 0, input, 1 + left.length, right.length);
        return crypto.sha256(input);
    }

    /**
     * Verifies that the leaf with {@code leafHash} is at {@code index} in the tree of {@code size}
     * leaves with root {@code root} (RFC 9162 §2.1.3.2).
     *
     * @param leafHash the leaf's hash, 32 bytes
     * @param index zero-based, below size
     * @param size the tree size
     * @param proof sibling hashes from the leaf up, 32 bytes each
     * @param root the expected root hash
     * @param crypto SHA-256
     * @throws LogException INCLUSION_FAILED for an index out of range, a hash not 32 bytes, a proof of the
     *     wrong length or another root
     */
    public static void verifyInclusion(byte[] leafHash, long index, long size, List<byte[]> proof, byte[] root,
            CryptoProvider crypto) throws LogException {
        if (index < 0 || Long.compareUnsigned(index, size) >= 0) throw failed("index " + index + " is not below the tree size " + size);
        if (leafHash.length != 32 || root.length != 32) throw failed("a hash is not 32 bytes");
        for (byte[] hash : proof) {
            if (hash.length != 32) throw failed("a proof hash is not 32 bytes");
        }
        long fn = index;
        long sn = size - 1;
        byte[] r = leafHash;
        for (byte[] p : proof) {
            if (sn == 0) throw failed("the inclusion proof is too long");
            if ((fn & 1) == 1 || fn == sn) {
                r = nodeHash(p, r, crypto);
                if ((fn & 1) == 0) {
                    while ((fn & 1) == 0 && fn != 0) {
                        fn >>>= 1;
                        sn >>>= 1;
                    }
                }
            } else {
                r = nodeHash(r, p, crypto);
            }
            fn >>>= 1;
            sn >>>= 1;
        }
        if (sn != 0) throw failed("the inclusion proof is too short");
        if (!java.util.Arrays.equals(r, root)) throw failed("the inclusion proof leads to another root hash");
    }

    private static LogException failed(String message) {
        return new LogException(LogException.Reason.INCLUSION_FAILED, "the head record is not in the log: " + message);
    }

    /**
     * @param text candidate decimal
     * @param maxDigits most digits
     * @return its value when 1 ... maxDigits ASCII digits without leading zero and at most 2^63-1, else -1
     */
    static long parseDecimal(String text, int maxDigits) {
        if (text.isEmpty() || text.length() > maxDigits || (text.length() > 1 && text.charAt(0) == '0')) return -1;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') return -1;
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
