// The JVM verifier gives libsodium's verdicts on Wycheproof, ed25519-speccheck and edge points.
package org.pinion.crypto;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.bouncycastle.math.ec.rfc8032.Ed25519;
import org.junit.Test;
import org.pinion.trust.JsonLimits;
import org.pinion.trust.JsonValue;
import org.pinion.trust.StrictJsonParser;

public class StrictEd25519Test {
    static byte[] resource(String name) throws IOException {
        try (InputStream in = StrictEd25519Test.class.getResourceAsStream("/vectors/" + name)) {
            if (in == null) throw new IOException("missing resource " + name);
            return in.readAllBytes();
        }
    }

    static byte[] hex(String text) {
        byte[] out = new byte[text.length() / 2];
        for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
        return out;
    }

    static Map<String, Boolean> verdicts() throws IOException {
        Map<String, Boolean> map = new HashMap<>();
        for (String line : new String(resource("libsodium-verdicts.txt"), StandardCharsets.UTF_8).split("\n")) {
            if (line.startsWith("#") || line.isBlank()) continue;
            String[] parts = line.split(" ");
            map.put(parts[0] + " " + parts[1], parts[2].equals("V"));
        }
        return map;
    }

    @Test
    public void wycheproofVerdictsEqualLibsodiumForAll151Cases() throws Exception {
        Map<String, Boolean> expected = verdicts();
        JsonValue file = StrictJsonParser.parse(resource("ed25519_test.json"), new JsonLimits(1 << 20, 16, 1000, Map.of()));
        int count = 0;
        for (JsonValue group : file.get("testGroups").elements()) {
            byte[] pk = hex(group.get("publicKey").get("pk").text());
            for (JsonValue test : group.get("tests").elements()) {
                String id = test.get("tcId").text();
                boolean verdict = StrictEd25519.INSTANCE.isValidSignature(hex(test.get("sig").text()), hex(test.get("msg").text()), pk);
                assertEquals("tcId " + id + " " + test.get("comment").text(), expected.get("wycheproof " + id), verdict);
                count++;
            }
        }
        assertEquals(151, count);
    }

    @Test
    public void speccheckVerdictsEqualLibsodiumWhereBouncyCastleAloneDiffers() throws Exception {
        Map<String, Boolean> expected = verdicts();
        String[] lines = new String(resource("speccheck_cases.txt"), StandardCharsets.UTF_8).trim().split("\n");
        assertEquals(12, lines.length);
        int bouncyCastleDisagreements = 0;
        for (int i = 0; i < lines.length; i++) {
            String[] parts = lines[i].trim().split(" ");
            byte[] msg = hex(parts[0]);
            byte[] pk = hex(parts[1]);
            byte[] sig = hex(parts[2]);
            boolean ours = StrictEd25519.INSTANCE.isValidSignature(sig, msg, pk);
            assertEquals("speccheck case " + i, expected.get("speccheck " + i), ours);
            if (Ed25519.verify(sig, 0, pk, 0, msg, 0, msg.length) != ours) bouncyCastleDisagreements++;
        }
        // Cases 0-2 (small-order A or R) are what the pre-check exists for.
        assertEquals(3, bouncyCastleDisagreements);
    }

    @Test
    public void keyUsabilityEqualsLibsodiumIsValidPoint() throws Exception {
        int count = 0;
        for (Map.Entry<String, Boolean> entry : verdicts().entrySet()) {
            if (!entry.getKey().startsWith("point ")) continue;
            byte[] pk = hex(entry.getKey().substring(6));
            assertEquals(entry.getKey(), entry.getValue(), StrictEd25519.INSTANCE.isUsablePublicKey(pk));
            count++;
        }
        assertTrue(count >= 15);
    }

    @Test
    public void wrongLengthsAndNullsAreRefusedNotRead() {
        byte[] pk = hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
        byte[] sig = hex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
        assertTrue(StrictEd25519.INSTANCE.isValidSignature(sig, new byte[0], pk));
        assertFalse(StrictEd25519.INSTANCE.isValidSignature(java.util.Arrays.copyOf(sig, 63), new byte[0], pk));
        assertFalse(StrictEd25519.INSTANCE.isValidSignature(java.util.Arrays.copyOf(sig, 65), new byte[0], pk));
        assertFalse(StrictEd25519.INSTANCE.isValidSignature(sig, new byte[0], java.util.Arrays.copyOf(pk, 31)));
        assertFalse(StrictEd25519.INSTANCE.isValidSignature(sig, new byte[0], java.util.Arrays.copyOf(pk, 33)));
        assertFalse(StrictEd25519.INSTANCE.isValidSignature(null, new byte[0], pk));
        assertFalse(StrictEd25519.INSTANCE.isValidSignature(sig, new byte[] {0}, pk));
        assertFalse(StrictEd25519.INSTANCE.isUsablePublicKey(new byte[31]));
        assertFalse(StrictEd25519.INSTANCE.isUsablePublicKey(null));
    }

    @Test
    public void sIncreasedByLIsRefusedAlthoughTheEquationStillHolds() {
        byte[] pk = hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
        byte[] sig = hex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
        java.math.BigInteger s = new java.math.BigInteger(1, reverse(java.util.Arrays.copyOfRange(sig, 32, 64)));
        byte[] sPlusL = reverse(toFixed(s.add(Ed25519Points.L)));
        byte[] malleable = sig.clone();
        System.arraycopy(sPlusL, 0, malleable, 32, 32);
        assertFalse(StrictEd25519.INSTANCE.isValidSignature(malleable, new byte[0], pk));
    }

    @Test
    public void sha256MatchesFips180Examples() {
        assertEquals("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                org.pinion.trust.Codec.hex(StrictEd25519.INSTANCE.sha256("abc".getBytes(StandardCharsets.US_ASCII))));
        assertEquals("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                org.pinion.trust.Codec.hex(StrictEd25519.INSTANCE.sha256(new byte[0])));
    }

    static byte[] reverse(byte[] b) {
        byte[] out = new byte[b.length];
        for (int i = 0; i < b.length; i++) out[i] = b[b.length - 1 - i];
        return out;
    }

    static byte[] toFixed(java.math.BigInteger value) {
        byte[] raw = value.toByteArray();
        byte[] out = new byte[32];
        int n = Math.min(raw.length, 32);
        System.arraycopy(raw, raw.length - n, out, 32 - n, n);
        return out;
    }

}
