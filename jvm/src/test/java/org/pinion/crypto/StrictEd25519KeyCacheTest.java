// The verifier's cache of checked public keys changes no verdict: cold, warm and evicted, on the vectors and hostile keys.
package org.pinion.crypto;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bouncycastle.math.ec.rfc8032.Ed25519;
import org.junit.Test;
import org.pinion.trust.JsonLimits;
import org.pinion.trust.JsonValue;
import org.pinion.trust.StrictJsonParser;

public class StrictEd25519KeyCacheTest {
    /** One vector: signature, message, public key, libsodium's verdict. */
    static final class Case {
        final byte[] sig;
        final byte[] msg;
        final byte[] pk;
        final boolean valid;
        final String name;

        Case(String name, byte[] sig, byte[] msg, byte[] pk, boolean valid) {
            this.name = name;
            this.sig = sig;
            this.msg = msg;
            this.pk = pk;
            this.valid = valid;
        }
    }

    static List<Case> vectors() throws Exception {
        Map<String, Boolean> expected = StrictEd25519Test.verdicts();
        List<Case> cases = new ArrayList<>();
        JsonValue file = StrictJsonParser.parse(StrictEd25519Test.resource("ed25519_test.json"),
                new JsonLimits(1 << 20, 16, 1000, Map.of()));
        for (JsonValue group : file.get("testGroups").elements()) {
            byte[] pk = StrictEd25519Test.hex(group.get("publicKey").get("pk").text());
            for (JsonValue test : group.get("tests").elements()) {
                String id = test.get("tcId").text();
                cases.add(new Case("wycheproof " + id, StrictEd25519Test.hex(test.get("sig").text()),
                        StrictEd25519Test.hex(test.get("msg").text()), pk, expected.get("wycheproof " + id)));
            }
        }
        String[] lines = new String(StrictEd25519Test.resource("speccheck_cases.txt"), StandardCharsets.UTF_8).trim().split("\n");
        for (int i = 0; i < lines.length; i++) {
            String[] parts = lines[i].trim().split(" ");
            cases.add(new Case("speccheck " + i, StrictEd25519Test.hex(parts[2]), StrictEd25519Test.hex(parts[0]),
                    StrictEd25519Test.hex(parts[1]), expected.get("speccheck " + i)));
        }
        return cases;
    }

    @Test
    public void verdictsAreTheSameColdWarmAndInEveryOrder() throws Exception {
        List<Case> cases = vectors();
        assertEquals(163, cases.size());
        StrictEd25519 verifier = new StrictEd25519();
        for (int round = 0; round < 3; round++) {
            for (Case c : cases) assertEquals(c.name + " round " + round, c.valid, verifier.isValidSignature(c.sig, c.msg, c.pk));
            java.util.Collections.reverse(cases);
        }
        // Warmed with every key that passes (each valid case), then the refused cases alone, cold and warm.
        StrictEd25519 fresh = new StrictEd25519();
        for (Case c : cases) {
            if (!c.valid) assertFalse(c.name, fresh.isValidSignature(c.sig, c.msg, c.pk));
        }
        for (Case c : cases) assertEquals(c.name, c.valid, fresh.isValidSignature(c.sig, c.msg, c.pk));
    }

    @Test
    public void aRefusedKeyIsNeverRemembered() throws Exception {
        // speccheck cases with a small-order A: refused every time, and the cache does not grow.
        StrictEd25519 verifier = new StrictEd25519();
        for (Case c : vectors()) {
            if (!c.name.startsWith("speccheck") || c.valid) continue;
            int before = verifier.checkedKeyCount();
            boolean canonicalPoint = Ed25519Points.isCanonical(c.pk) && Ed25519Points.decode(c.pk) != null
                    && !Ed25519Points.hasSmallOrder(Ed25519Points.decode(c.pk));
            for (int k = 0; k < 3; k++) assertFalse(c.name, verifier.isValidSignature(c.sig, c.msg, c.pk));
            if (!canonicalPoint) assertEquals(c.name, before, verifier.checkedKeyCount());
        }
        byte[] identity = new byte[32];
        identity[0] = 1; // the neutral point (0, 1): small order
        byte[] sig = new byte[64];
        for (int k = 0; k < 3; k++) assertFalse(verifier.isValidSignature(sig, new byte[0], identity));
    }

    @Test
    public void aRememberedKeyStillRefusesBadSignaturesAndTheCacheStaysBounded() {
        StrictEd25519 verifier = new StrictEd25519();
        byte[] msg = "pinion".getBytes(StandardCharsets.US_ASCII);
        List<byte[]> keys = new ArrayList<>();
        List<byte[]> sigs = new ArrayList<>();
        for (int n = 0; n < 3 * StrictEd25519.CHECKED_KEYS_MAX; n++) {
            byte[] seed = new byte[32];
            seed[0] = (byte) n;
            seed[1] = (byte) (n >> 8);
            byte[] pk = new byte[32];
            Ed25519.generatePublicKey(seed, 0, pk, 0);
            byte[] sig = new byte[64];
            Ed25519.sign(seed, 0, msg, 0, msg.length, sig, 0);
            keys.add(pk);
            sigs.add(sig);
        }
        for (int round = 0; round < 2; round++) {
            for (int n = 0; n < keys.size(); n++) {
                byte[] pk = keys.get(n);
                byte[] sig = sigs.get(n);
                assertTrue(verifier.isValidSignature(sig, msg, pk));
                assertTrue(verifier.checkedKeyCount() <= StrictEd25519.CHECKED_KEYS_MAX);
                byte[] flipped = sig.clone();
                flipped[n % 32] ^= 1; // R changed
                assertFalse(verifier.isValidSignature(flipped, msg, pk));
                byte[] sHigh = sig.clone();
                sHigh[63] |= (byte) 0xF0; // S >= L
                assertFalse(verifier.isValidSignature(sHigh, msg, pk));
                assertFalse(verifier.isValidSignature(sig, "pinioN".getBytes(StandardCharsets.US_ASCII), pk));
                assertFalse("another key's signature", verifier.isValidSignature(sigs.get((n + 1) % keys.size()), msg, pk));
            }
        }
        // The cache keeps its own copy: changing the caller's array after a pass changes nothing.
        byte[] pk = keys.get(0).clone();
        assertTrue(verifier.isValidSignature(sigs.get(0), msg, pk));
        pk[5] ^= 0x40;
        assertFalse(verifier.isValidSignature(sigs.get(0), msg, pk));
        assertTrue(verifier.isValidSignature(sigs.get(0), msg, keys.get(0)));
    }
}
