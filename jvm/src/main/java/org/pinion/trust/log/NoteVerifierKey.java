// C2SP signed-note verifier keys: name, type 0x01 or 0x04, Ed25519 public key, key ID, and the name+keyhash+base64 string.
package org.pinion.trust.log;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.pinion.trust.Codec;
import org.pinion.trust.CryptoProvider;

/**
 * A note verifier key (C2SP signed-note, tlog-cosignature): key name, signature type, 32-byte
 * Ed25519 public key, and its key ID {@code SHA-256(name || 0x0A || type || key)[:4]}. Immutable.
 */
public final class NoteVerifierKey {
    /** Note key type 0x01: Ed25519 over the note text (the log key). */
    public static final int TYPE_ED25519 = 0x01;
    /** Note key type 0x04: timestamped tlog-cosignature/v1 (witness keys). */
    public static final int TYPE_COSIGNATURE_V1 = 0x04;

    /** The key name (a log's is its origin, a witness's is the witness name). */
    public final String name;
    /** {@link #TYPE_ED25519} or {@link #TYPE_COSIGNATURE_V1}. */
    public final int type;
    private final byte[] publicKey;
    /** The 4-byte key ID as an unsigned big-endian value. */
    public final long keyId;

    /**
     * @param name a key name (non-empty, no Unicode white space, no {@code +})
     * @param type 0x01 or 0x04
     * @param publicKey the 32-byte Ed25519 public key
     * @param crypto SHA-256, for the key ID
     * @throws NoteException INVALID_KEY_NAME, UNSUPPORTED_KEY_TYPE, or MALFORMED_VERIFIER_KEY for a key not 32 bytes
     */
    public NoteVerifierKey(String name, int type, byte[] publicKey, CryptoProvider crypto) throws NoteException {
        validateName(name);
        if (type != TYPE_ED25519 && type != TYPE_COSIGNATURE_V1) {
            throw new NoteException(NoteException.Kind.UNSUPPORTED_KEY_TYPE, "unsupported note key type 0x" + Codec.hex(new byte[] {(byte) type}));
        }
        if (publicKey.length != 32) throw new NoteException(NoteException.Kind.MALFORMED_VERIFIER_KEY, "malformed verifier key: an Ed25519 key is 32 bytes");
        this.name = name;
        this.type = type;
        this.publicKey = publicKey.clone();
        this.keyId = keyId(name, type, publicKey, crypto);
    }

    /**
     * Parses {@code <name>+<8 lowercase hex key ID>+<base64(type || public key)>} and refuses a key ID
     * that is not the one its name, type and key give.
     *
     * @param text the verifier key string
     * @param crypto SHA-256
     * @return the key
     * @throws NoteException MALFORMED_VERIFIER_KEY, INVALID_KEY_NAME, UNSUPPORTED_KEY_TYPE
     */
    public static NoteVerifierKey parse(String text, CryptoProvider crypto) throws NoteException {
        // The name holds no '+' and the key hash is hex, but base64 may hold '+': split twice only.
        int first = text.indexOf('+');
        int second = first < 0 ? -1 : text.indexOf('+', first + 1);
        if (second < 0) throw malformed("expected name+keyhash+key");
        String name = text.substring(0, first);
        String hash = text.substring(first + 1, second);
        byte[] id = hash.length() == 8 ? Codec.decodeHexLowercase(hash) : null;
        if (id == null) throw malformed("the key hash is not 8 lowercase hex digits");
        byte[] material = Codec.decodeBase64Canonical(text.substring(second + 1));
        if (material == null || material.length == 0) throw malformed("the key is not canonical base64");
        int type = material[0] & 0xff;
        if (type != TYPE_ED25519 && type != TYPE_COSIGNATURE_V1) {
            throw new NoteException(NoteException.Kind.UNSUPPORTED_KEY_TYPE, "unsupported note key type 0x" + Codec.hex(new byte[] {material[0]}));
        }
        NoteVerifierKey key = new NoteVerifierKey(name, type, Arrays.copyOfRange(material, 1, material.length), crypto);
        if (key.keyId != bigEndian(id)) throw malformed("the key hash does not match the name and key");
        return key;
    }

    private static NoteException malformed(String reason) {
        return new NoteException(NoteException.Kind.MALFORMED_VERIFIER_KEY, "malformed verifier key: " + reason);
    }

    /** @return a copy of the raw 32-byte public key */
    public byte[] publicKey() { return publicKey.clone(); }

    /** @return the verifier key string {@code name+keyhash+base64(type || key)} */
    public String text() {
        byte[] material = new byte[33];
        material[0] = (byte) type;
        System.arraycopy(publicKey, 0, material, 1, 32);
        return name + "+" + Codec.hex(bigEndian(keyId)) + "+" + Codec.base64(material);
    }

    /**
     * @param name a candidate key name
     * @throws NoteException INVALID_KEY_NAME when empty or holding {@code +} or Unicode white space
     */
    public static void validateName(String name) throws NoteException {
        boolean bad = name.isEmpty() || name.indexOf('+') >= 0 || name.codePoints().anyMatch(NoteVerifierKey::isWhiteSpace);
        if (bad) throw new NoteException(NoteException.Kind.INVALID_KEY_NAME, "invalid key name '" + name + "' (empty, or holds a space or '+')");
    }

    /** Unicode White_Space (Swift's {@code isWhitespace}): 0x09-0x0D, 0x85 and the Zs, Zl, Zp characters. */
    private static boolean isWhiteSpace(int cp) {
        return (cp >= 0x09 && cp <= 0x0D) || cp == 0x85 || Character.isSpaceChar(cp);
    }

    /**
     * @param name key name @param type type byte @param key public key @param crypto SHA-256
     * @return SHA-256(name || 0x0A || type || key)[:4] as an unsigned big-endian value
     */
    public static long keyId(String name, int type, byte[] key, CryptoProvider crypto) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        byte[] input = new byte[n.length + 2 + key.length];
        System.arraycopy(n, 0, input, 0, n.length);
        input[n.length] = 0x0A;
        input[n.length + 1] = (byte) type;
        System.arraycopy(key, 0, input, n.length + 2, key.length);
        return bigEndian(Arrays.copyOf(crypto.sha256(input), 4));
    }

    static long bigEndian(byte[] four) {
        long value = 0;
        for (byte b : four) value = (value << 8) | (b & 0xff);
        return value;
    }

    static byte[] bigEndian(long keyId) {
        return new byte[] {(byte) (keyId >>> 24), (byte) (keyId >>> 16), (byte) (keyId >>> 8), (byte) keyId};
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof NoteVerifierKey)) return false;
        NoteVerifierKey o = (NoteVerifierKey) other;
        return name.equals(o.name) && type == o.type && Arrays.equals(publicKey, o.publicKey);
    }

    @Override
    public int hashCode() { return name.hashCode() * 31 + Arrays.hashCode(publicKey); }

    @Override
    public String toString() { return text(); }
}
