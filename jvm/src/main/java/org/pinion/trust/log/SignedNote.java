// C2SP signed notes: strict parsing with limits, and verification by key name + key ID (Ed25519 and tlog-cosignature/v1).
package org.pinion.trust.log;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.pinion.trust.Codec;
import org.pinion.trust.CryptoProvider;

/** A signed note (C2SP signed-note): text ending in a newline, a blank line, signature lines. Immutable. */
public final class SignedNote {
    /** Largest note read by default, in bytes (16 KiB). */
    public static final int DEFAULT_MAX_BYTES = 16 * 1024;
    /** Most signature lines read by default (32). */
    public static final int DEFAULT_MAX_SIGNATURES = 32;
    private static final String SIGNATURE_PREFIX = "\u2014 ";

    /** One signature line: {@code — <key name> base64(key ID || signature)}. */
    public static final class Signature {
        /** The signing key's name. */
        public final String keyName;
        /** The 4-byte key ID, unsigned big-endian. */
        public final long keyId;
        private final byte[] signature;

        Signature(String keyName, long keyId, byte[] signature) {
            this.keyName = keyName;
            this.keyId = keyId;
            this.signature = signature.clone();
        }

        /** @return a copy of the signature bytes after the key ID (64 for Ed25519, 72 for a cosignature) */
        public byte[] signature() { return signature.clone(); }
    }

    /** A signature that verified, with the cosignature timestamp when it is one. */
    public static final class Verified {
        /** The key that verified it. */
        public final NoteVerifierKey key;
        /** POSIX seconds of a cosignature/v1 (0 ... 2^63-1), or -1 for an Ed25519 (0x01) signature. */
        public final long timestamp;

        Verified(NoteVerifierKey key, long timestamp) {
            this.key = key;
            this.timestamp = timestamp;
        }
    }

    /** The note text, with its final newline (the bytes a 0x01 key signs). */
    public final String text;
    /** The signature lines, in note order, unverified. */
    public final List<Signature> signatures;
    private final byte[] bytes;

    private SignedNote(String text, List<Signature> signatures, byte[] bytes) {
        this.text = text;
        this.signatures = Collections.unmodifiableList(signatures);
        this.bytes = bytes;
    }

    /** @return a copy of the note's exact bytes as read */
    public byte[] bytes() { return bytes.clone(); }

    /**
     * Parses a note strictly: the size and signature-count limits, valid UTF-8, no control characters but
     * newline, the text ending at the last blank line, every signature line well formed with at least
     * 4 + 1 bytes after base64 decoding.
     *
     * @param bytes the note
     * @param maxBytes largest note
     * @param maxSignatures most signature lines
     * @return the note
     * @throws NoteException TOO_LARGE, CONTROL_CHARACTER, NOT_UTF8, MALFORMED_NOTE, TOO_MANY_SIGNATURES,
     *     MALFORMED_SIGNATURE_LINE
     */
    public static SignedNote parse(byte[] bytes, int maxBytes, int maxSignatures) throws NoteException {
        if (bytes.length > maxBytes) throw new NoteException(NoteException.Kind.TOO_LARGE, "the note is larger than " + maxBytes + " bytes");
        for (byte b : bytes) {
            if (b >= 0 && b < 0x20 && b != 0x0A) {
                throw new NoteException(NoteException.Kind.CONTROL_CHARACTER, "the note holds a control character other than newline");
            }
        }
        decodeUtf8(bytes);
        int n = bytes.length;
        if (n == 0 || bytes[n - 1] != 0x0A) throw malformed("does not end in a newline");
        int separator = -1;
        for (int i = n - 2; i >= 0; i--) {
            if (bytes[i] == 0x0A && bytes[i + 1] == 0x0A) {
                separator = i;
                break;
            }
        }
        if (separator < 0) throw malformed("no blank line before the signatures");
        if (separator == 0) throw malformed("empty text");
        String text = new String(bytes, 0, separator + 1, StandardCharsets.UTF_8);
        String block = new String(bytes, separator + 2, n - separator - 2, StandardCharsets.UTF_8);
        List<String> lines = new ArrayList<>(Arrays.asList(block.split("\n", -1)));
        lines.remove(lines.size() - 1);
        if (lines.isEmpty()) throw malformed("no signature lines");
        if (lines.size() > maxSignatures) {
            throw new NoteException(NoteException.Kind.TOO_MANY_SIGNATURES, "the note has more than " + maxSignatures + " signature lines");
        }
        List<Signature> signatures = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) signatures.add(parseSignatureLine(lines.get(i), i + 1));
        return new SignedNote(text, signatures, bytes.clone());
    }

    /** @param bytes the note @return it parsed with the default limits @throws NoteException as {@link #parse(byte[], int, int)} */
    public static SignedNote parse(byte[] bytes) throws NoteException {
        return parse(bytes, DEFAULT_MAX_BYTES, DEFAULT_MAX_SIGNATURES);
    }

    private static NoteException malformed(String reason) {
        return new NoteException(NoteException.Kind.MALFORMED_NOTE, "malformed note: " + reason);
    }

    static String decodeUtf8(byte[] bytes) throws NoteException {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new NoteException(NoteException.Kind.NOT_UTF8, "the note is not valid UTF-8");
        }
    }

    private static Signature parseSignatureLine(String line, int number) throws NoteException {
        NoteException bad = new NoteException(NoteException.Kind.MALFORMED_SIGNATURE_LINE,
                "signature line " + number + " is not '\u2014 <name> <base64>'");
        if (!line.startsWith(SIGNATURE_PREFIX)) throw bad;
        String[] parts = line.substring(SIGNATURE_PREFIX.length()).split(" ", -1);
        if (parts.length != 2) throw bad;
        try {
            NoteVerifierKey.validateName(parts[0]);
        } catch (NoteException e) {
            throw bad;
        }
        byte[] raw = Codec.decodeBase64Canonical(parts[1]);
        if (raw == null || raw.length < 5) throw bad;
        return new Signature(parts[0], NoteVerifierKey.bigEndian(Arrays.copyOf(raw, 4)), Arrays.copyOfRange(raw, 4, raw.length));
    }

    /**
     * Verifies the signatures by the given keys, ignoring signatures by other keys. A signature whose key
     * name and key ID both match a given key must verify, or the whole note is refused (C2SP signed-note).
     * A key's repeated signatures are reported once (the first).
     *
     * @param keys the known keys
     * @param crypto strict Ed25519
     * @return the verified signatures in note order, one per key
     * @throws NoteException BAD_SIGNATURE naming the key
     */
    public List<Verified> verify(List<NoteVerifierKey> keys, CryptoProvider crypto) throws NoteException {
        List<Verified> verified = new ArrayList<>();
        for (Signature signature : signatures) {
            for (NoteVerifierKey key : keys) {
                if (!key.name.equals(signature.keyName) || key.keyId != signature.keyId) continue;
                Verified result = check(signature, key, crypto);
                boolean seen = false;
                for (Verified v : verified) seen |= v.key.equals(key);
                if (!seen) verified.add(result);
            }
        }
        return verified;
    }

    private Verified check(Signature signature, NoteVerifierKey key, CryptoProvider crypto) throws NoteException {
        NoteException bad = new NoteException(NoteException.Kind.BAD_SIGNATURE, "the signature by " + key.name + " does not verify");
        byte[] sig = signature.signature;
        if (key.type == NoteVerifierKey.TYPE_ED25519) {
            if (sig.length != 64 || !crypto.isValidSignature(sig, text.getBytes(StandardCharsets.UTF_8), key.publicKey())) throw bad;
            return new Verified(key, -1);
        }
        if (sig.length != 72) throw bad;
        long timestamp = 0;
        for (int i = 0; i < 8; i++) timestamp = (timestamp << 8) | (sig[i] & 0xff);
        // A set top bit is a time above 2^63 - 1: refused, as the Swift SDK does.
        if (timestamp < 0) throw bad;
        if (!crypto.isValidSignature(Arrays.copyOfRange(sig, 8, 72), cosignatureMessage(text, timestamp), key.publicKey())) throw bad;
        return new Verified(key, timestamp);
    }

    /**
     * @param text the cosigned note's text, with its final newline
     * @param timestamp POSIX seconds
     * @return the tlog-cosignature/v1 signed message {@code cosignature/v1\ntime <t>\n<text>}
     */
    public static byte[] cosignatureMessage(String text, long timestamp) {
        return ("cosignature/v1\ntime " + timestamp + "\n" + text).getBytes(StandardCharsets.UTF_8);
    }
}
