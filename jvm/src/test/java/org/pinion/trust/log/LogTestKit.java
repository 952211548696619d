// Test-side log builder: Ed25519 note keys from fixed seeds (BouncyCastle), RFC 9162 trees computed here, notes and proofs.
package org.pinion.trust.log;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.bouncycastle.math.ec.rfc8032.Ed25519;
import org.pinion.crypto.StrictEd25519;
import org.pinion.trust.Codec;
import org.pinion.trust.CryptoProvider;

/** Builds logs, checkpoints, cosignatures and tlog-proof files for the log tests, independently of Merkle.java. */
public final class LogTestKit {
    public static final CryptoProvider CRYPTO = StrictEd25519.INSTANCE;
    public static final String ORIGIN = "example.test/log";
    public static final String SCOPE = "org.pinion.test";
    public static final int LOG_SEED = 10;
    public static final String[] WITNESS_NAMES = {"w1.example", "w2.example", "w3.example", "w4.example"};
    public static final int[] WITNESS_SEEDS = {11, 12, 13, 14};

    private LogTestKit() {}

    static byte[] seed(int n) {
        byte[] seed = new byte[32];
        Arrays.fill(seed, (byte) n);
        return seed;
    }

    public static byte[] publicKey(int n) {
        byte[] pk = new byte[32];
        Ed25519.generatePublicKey(seed(n), 0, pk, 0);
        return pk;
    }

    public static byte[] sign(int n, byte[] message) {
        byte[] sig = new byte[64];
        Ed25519.sign(seed(n), 0, message, 0, message.length, sig, 0);
        return sig;
    }

    public static byte[] sha256(byte[]... parts) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            for (byte[] part : parts) digest.update(part);
            return digest.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    public static byte[] keyIdBytes(String name, int type, byte[] key) {
        return Arrays.copyOf(sha256(name.getBytes(StandardCharsets.UTF_8), new byte[] {0x0A, (byte) type}, key), 4);
    }

    public static String verifierKey(String name, int type, int seed) {
        byte[] material = new byte[33];
        material[0] = (byte) type;
        System.arraycopy(publicKey(seed), 0, material, 1, 32);
        return name + "+" + Codec.hex(keyIdBytes(name, type, publicKey(seed))) + "+" + Codec.base64(material);
    }

    public static NoteVerifierKey key(String name, int type, int seed) {
        try {
            return NoteVerifierKey.parse(verifierKey(name, type, seed), CRYPTO);
        } catch (NoteException e) {
            throw new AssertionError(e);
        }
    }

    /** A policy: log key LOG_SEED, witnesses w1-w3 (seeds 11-13), the given quorum and ages. */
    public static LogPolicy policy(int quorum, long maxAge, long grace) {
        List<LogPolicy.Witness> witnesses = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            witnesses.add(new LogPolicy.Witness(key(WITNESS_NAMES[i], 4, WITNESS_SEEDS[i]), "https://" + WITNESS_NAMES[i] + "/w"));
        }
        return new LogPolicy(ORIGIN, key(ORIGIN, 1, LOG_SEED), witnesses, quorum, maxAge, grace);
    }

    // ---- RFC 9162 trees, computed recursively from the definition ----

    public static byte[] leaf(byte[] entry) { return sha256(new byte[] {0}, entry); }

    public static byte[] mth(List<byte[]> entries) {
        if (entries.isEmpty()) return sha256();
        if (entries.size() == 1) return leaf(entries.get(0));
        int k = 1;
        while (k * 2 < entries.size()) k *= 2;
        return sha256(new byte[] {1}, mth(entries.subList(0, k)), mth(entries.subList(k, entries.size())));
    }

    public static List<byte[]> path(int m, List<byte[]> entries) {
        List<byte[]> out = new ArrayList<>();
        if (entries.size() <= 1) return out;
        int k = 1;
        while (k * 2 < entries.size()) k *= 2;
        if (m < k) {
            out.addAll(path(m, entries.subList(0, k)));
            out.add(mth(entries.subList(k, entries.size())));
        } else {
            out.addAll(path(m - k, entries.subList(k, entries.size())));
            out.add(mth(entries.subList(0, k)));
        }
        return out;
    }

    // ---- Notes ----

    public static String checkpointText(String origin, long size, byte[] root) { return origin + "\n" + size + "\n" + Codec.base64(root) + "\n"; }

    public static String logSignatureLine(String name, int seed, String text) {
        byte[] raw = concat(keyIdBytes(name, 1, publicKey(seed)), sign(seed, text.getBytes(StandardCharsets.UTF_8)));
        return "\u2014 " + name + " " + Codec.base64(raw) + "\n";
    }

    public static String cosignatureLine(String name, int seed, long time, String text) {
        byte[] stamp = java.nio.ByteBuffer.allocate(8).putLong(time).array();
        byte[] message = ("cosignature/v1\ntime " + Long.toUnsignedString(time) + "\n" + text).getBytes(StandardCharsets.UTF_8);
        byte[] raw = concat(keyIdBytes(name, 4, publicKey(seed)), stamp, sign(seed, message));
        return "\u2014 " + name + " " + Codec.base64(raw) + "\n";
    }

    /** A witness cosignature line by w{index+1}. */
    public static String cosign(int index, long time, String text) { return cosignatureLine(WITNESS_NAMES[index], WITNESS_SEEDS[index], time, text); }

    public static byte[] note(String text, String... lines) {
        StringBuilder out = new StringBuilder(text).append('\n');
        for (String line : lines) out.append(line);
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }

    public static byte[] proof(byte[] extra, long index, List<byte[]> path, byte[] note) {
        StringBuilder out = new StringBuilder("c2sp.org/tlog-proof@v1\n");
        if (extra != null) out.append("extra ").append(Codec.base64(extra)).append('\n');
        out.append("index ").append(index).append('\n');
        for (byte[] hash : path) out.append(Codec.base64(hash)).append('\n');
        out.append('\n');
        return concat(out.toString().getBytes(StandardCharsets.UTF_8), note);
    }

    public static byte[] head(long sequence, long rootVersion, byte[] rootSha, long manifestRootVersion, long manifestVersion, byte[] manifestSha) {
        return ("pinion.head/v1\nscope " + SCOPE + "\nsequence " + sequence + "\nroot " + rootVersion + " " + Codec.hex(rootSha)
                + "\nmanifest " + manifestRootVersion + " " + manifestVersion + " " + Codec.hex(manifestSha) + "\n")
                .getBytes(StandardCharsets.US_ASCII);
    }

    public static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) n += p.length;
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    public static byte[] utf8(String text) { return text.getBytes(StandardCharsets.UTF_8); }
}
