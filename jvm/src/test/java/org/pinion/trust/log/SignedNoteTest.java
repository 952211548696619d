// Note verifier keys and signed notes: the C2SP rules, an independent cosignature vector, and refusals of bad values.
package org.pinion.trust.log;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.pinion.trust.log.LogTestKit.CRYPTO;
import static org.pinion.trust.log.LogTestKit.utf8;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.Test;
import org.pinion.trust.Codec;

public class SignedNoteTest {
    private static final String TEXT = "example.test/log\n3\n" + Codec.base64(new byte[32]) + "\n";

    private static NoteException.Kind keyRefusal(String text) {
        try {
            NoteVerifierKey.parse(text, CRYPTO);
        } catch (NoteException e) {
            return e.kind();
        }
        fail("accepted verifier key " + text);
        return null;
    }

    @Test
    public void verifierKeyRoundTripsAndHasTheSpecKeyId() throws Exception {
        String text = LogTestKit.verifierKey("w1.example", 4, 11);
        NoteVerifierKey key = NoteVerifierKey.parse(text, CRYPTO);
        assertEquals(text, key.text());
        assertEquals("w1.example", key.name);
        assertEquals(4, key.type);
        assertArrayEquals(LogTestKit.publicKey(11), key.publicKey());
        assertEquals(Long.parseLong(Codec.hex(LogTestKit.keyIdBytes("w1.example", 4, LogTestKit.publicKey(11))), 16), key.keyId);
    }

    @Test
    public void malformedVerifierKeysAreRefused() {
        String good = LogTestKit.verifierKey("log.example", 1, 10);
        String[] parts = good.split("\\+", 3);
        byte[] material = Codec.decodeBase64Canonical(parts[2]);
        assertEquals(NoteException.Kind.MALFORMED_VERIFIER_KEY, keyRefusal(parts[0] + "+" + parts[1]));
        assertEquals(NoteException.Kind.MALFORMED_VERIFIER_KEY, keyRefusal(parts[0] + "+" + parts[1].toUpperCase() + "+" + parts[2]));
        assertEquals(NoteException.Kind.MALFORMED_VERIFIER_KEY, keyRefusal(parts[0] + "+" + parts[1].substring(1) + "+" + parts[2]));
        assertEquals(NoteException.Kind.MALFORMED_VERIFIER_KEY, keyRefusal(parts[0] + "+00000000+" + parts[2]));
        assertEquals(NoteException.Kind.MALFORMED_VERIFIER_KEY, keyRefusal(parts[0] + "+" + parts[1] + "+" + parts[2] + "A"));
        assertEquals(NoteException.Kind.MALFORMED_VERIFIER_KEY, keyRefusal(parts[0] + "+" + parts[1] + "+"));
        assertEquals(NoteException.Kind.INVALID_KEY_NAME, keyRefusal("+" + parts[1] + "+" + parts[2]));
        assertEquals(NoteException.Kind.INVALID_KEY_NAME, keyRefusal("a\u00a0b+" + parts[1] + "+" + parts[2]));
        byte[] type2 = material.clone();
        type2[0] = 2;
        assertEquals(NoteException.Kind.UNSUPPORTED_KEY_TYPE, keyRefusal(parts[0] + "+" + parts[1] + "+" + Codec.base64(type2)));
        byte[] short31 = java.util.Arrays.copyOf(material, 32);
        assertEquals(NoteException.Kind.MALFORMED_VERIFIER_KEY, keyRefusal(parts[0] + "+" + parts[1] + "+" + Codec.base64(short31)));
    }

    @Test
    public void keyNamesRefuseWhiteSpaceAndPlus() {
        for (String name : new String[] {"", "a b", "a+b", "a\tb", "a\u2028b", "a\u3000b", "a\u0085b"}) {
            try {
                NoteVerifierKey.validateName(name);
                fail("accepted key name " + name);
            } catch (NoteException e) {
                assertEquals(NoteException.Kind.INVALID_KEY_NAME, e.kind());
            }
        }
    }

    @Test
    public void theIndependentCosignatureVectorVerifies() throws Exception {
        byte[] bytes;
        try (InputStream in = SignedNoteTest.class.getResourceAsStream("/log/cosignature-vector.txt")) {
            bytes = in.readAllBytes();
        }
        String all = new String(bytes, StandardCharsets.UTF_8);
        int newline = all.indexOf('\n');
        NoteVerifierKey witness = NoteVerifierKey.parse(all.substring(0, newline), CRYPTO);
        byte[] noteBytes = utf8(all.substring(newline + 1));
        SignedNote note = SignedNote.parse(noteBytes);
        List<SignedNote.Verified> verified = note.verify(List.of(witness), CRYPTO);
        assertEquals(1, verified.size());
        assertEquals(1679315147L, verified.get(0).timestamp);
        // Other checkpoint text under the same signature is refused, not ignored: the key name and ID match.
        byte[] changed = utf8(all.substring(newline + 1).replace("20852163", "20852164"));
        try {
            SignedNote.parse(changed).verify(List.of(witness), CRYPTO);
            fail("a changed cosignature verified");
        } catch (NoteException e) {
            assertEquals(NoteException.Kind.BAD_SIGNATURE, e.kind());
        }
    }

    @Test
    public void logSignatureVerifiesAndOthersAreIgnored() throws Exception {
        NoteVerifierKey log = LogTestKit.key("example.test/log", 1, 10);
        byte[] bytes = LogTestKit.note(TEXT, LogTestKit.logSignatureLine("example.test/log", 10, TEXT),
                LogTestKit.logSignatureLine("other.example", 20, TEXT), LogTestKit.logSignatureLine("example.test/log", 10, TEXT));
        SignedNote note = SignedNote.parse(bytes);
        assertEquals(TEXT, note.text);
        assertEquals(3, note.signatures.size());
        assertArrayEquals(bytes, note.bytes());
        List<SignedNote.Verified> verified = note.verify(List.of(log), CRYPTO);
        assertEquals("a key's repeated signature counts once", 1, verified.size());
        assertEquals(-1, verified.get(0).timestamp);
        assertTrue(note.verify(List.of(LogTestKit.key("nobody.example", 1, 30)), CRYPTO).isEmpty());
        // The same key under another name does not match; a wrong signature under the right name and ID is refused.
        String forged = LogTestKit.logSignatureLine("example.test/log", 10, "example.test/log\n4\n" + Codec.base64(new byte[32]) + "\n");
        try {
            SignedNote.parse(LogTestKit.note(TEXT, forged)).verify(List.of(log), CRYPTO);
            fail("a signature over other text verified");
        } catch (NoteException e) {
            assertEquals(NoteException.Kind.BAD_SIGNATURE, e.kind());
        }
    }

    @Test
    public void aCosignatureTimeWithTheTopBitSetIsRefused() throws Exception {
        NoteVerifierKey witness = LogTestKit.key("w1.example", 4, 11);
        String line = LogTestKit.cosignatureLine("w1.example", 11, Long.MIN_VALUE + 5, TEXT);
        try {
            SignedNote.parse(LogTestKit.note(TEXT, line)).verify(List.of(witness), CRYPTO);
            fail("a time above 2^63 - 1 verified");
        } catch (NoteException e) {
            assertEquals(NoteException.Kind.BAD_SIGNATURE, e.kind());
        }
        String good = LogTestKit.cosignatureLine("w1.example", 11, 1_700_000_000L, TEXT);
        assertEquals(1_700_000_000L, SignedNote.parse(LogTestKit.note(TEXT, good)).verify(List.of(witness), CRYPTO).get(0).timestamp);
        // A 0x04 line checked as 0x01 (or the reverse) has the wrong length: refused when name and ID match.
        String shortLine = "\u2014 w1.example " + Codec.base64(LogTestKit.concat(LogTestKit.keyIdBytes("w1.example", 4, LogTestKit.publicKey(11)),
                new byte[64])) + "\n";
        try {
            SignedNote.parse(LogTestKit.note(TEXT, shortLine)).verify(List.of(witness), CRYPTO);
            fail("a 64-byte cosignature verified");
        } catch (NoteException e) {
            assertEquals(NoteException.Kind.BAD_SIGNATURE, e.kind());
        }
    }

    private static NoteException.Kind noteRefusal(byte[] bytes, int maxBytes, int maxSignatures) {
        try {
            SignedNote.parse(bytes, maxBytes, maxSignatures);
        } catch (NoteException e) {
            return e.kind();
        }
        fail("accepted note " + new String(bytes, StandardCharsets.UTF_8));
        return null;
    }

    private static NoteException.Kind noteRefusal(String text) { return noteRefusal(utf8(text), 16384, 32); }

    @Test
    public void malformedNotesAreRefused() {
        String sig = LogTestKit.logSignatureLine("example.test/log", 10, TEXT);
        assertEquals(NoteException.Kind.MALFORMED_NOTE, noteRefusal(TEXT + "\n" + sig.substring(0, sig.length() - 1)));
        assertEquals(NoteException.Kind.MALFORMED_NOTE, noteRefusal(TEXT + sig));
        assertEquals(NoteException.Kind.MALFORMED_NOTE, noteRefusal("\n" + sig));
        assertEquals(NoteException.Kind.MALFORMED_NOTE, noteRefusal(TEXT + "\n"));
        assertEquals(NoteException.Kind.MALFORMED_NOTE, noteRefusal(""));
        assertEquals(NoteException.Kind.CONTROL_CHARACTER, noteRefusal(TEXT.replace("3", "3\r") + "\n" + sig));
        assertEquals(NoteException.Kind.CONTROL_CHARACTER, noteRefusal(TEXT + "\n" + sig.replace(" ", "\t")));
        byte[] invalidUtf8 = LogTestKit.concat(utf8("x\n"), new byte[] {(byte) 0xC0, (byte) 0x80}, utf8("\n\n" + sig));
        assertEquals(NoteException.Kind.NOT_UTF8, noteRefusal(invalidUtf8, 16384, 32));
        assertEquals(NoteException.Kind.MALFORMED_SIGNATURE_LINE, noteRefusal(TEXT + "\n- example.test/log AAAAAAAA\n"));
        assertEquals(NoteException.Kind.MALFORMED_SIGNATURE_LINE, noteRefusal(TEXT + "\n\u2014 example.test/log  AAAAAAAA\n"));
        assertEquals(NoteException.Kind.MALFORMED_SIGNATURE_LINE, noteRefusal(TEXT + "\n\u2014 example.test/log AAAAAA==\n"));
        assertEquals(NoteException.Kind.MALFORMED_SIGNATURE_LINE, noteRefusal(TEXT + "\n\u2014 example.test/log AAAAAAA\n"));
        assertEquals(NoteException.Kind.MALFORMED_SIGNATURE_LINE, noteRefusal(TEXT + "\n\u2014 a+b AAAAAAAA\n"));
        assertEquals(NoteException.Kind.TOO_LARGE, noteRefusal(utf8(TEXT + "\n" + sig), 50, 32));
        assertEquals(NoteException.Kind.TOO_MANY_SIGNATURES, noteRefusal(utf8(TEXT + "\n" + sig + sig + sig), 16384, 2));
    }
}
