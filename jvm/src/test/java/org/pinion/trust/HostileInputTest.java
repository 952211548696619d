// Seeded random damage to real envelopes and state copies: every one gives a typed refusal, never an unchecked exception.
package org.pinion.trust;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import java.util.List;
import java.util.Random;
import org.junit.Test;
import org.pinion.storage.StateCodec;

public class HostileInputTest {
    static final String SPECIAL = "{}[]\",:\\0u-e.";

    static byte[] mutate(byte[] good, Random random) {
        byte[] bad = good.clone();
        int edits = 1 + random.nextInt(4);
        for (int i = 0; i < edits; i++) {
            int at = random.nextInt(bad.length);
            switch (random.nextInt(3)) {
                case 0: bad[at] ^= (byte) (1 << random.nextInt(8)); break;
                case 1: bad[at] = (byte) SPECIAL.charAt(random.nextInt(SPECIAL.length())); break;
                default: bad = java.util.Arrays.copyOf(bad, Math.max(0, at)); break;
            }
            if (bad.length == 0) break;
        }
        return bad;
    }

    @Test
    public void damagedManifestsAndRootsAreRefusedWithTypedErrors() throws Exception {
        TrustCore core = Fixtures.core();
        TrustedState start = core.initialState(List.of());
        Random random = new Random(7469);
        int refused = 0;
        for (String name : List.of("manifest-1.json", "root-2-new-keys.json")) {
            byte[] good = Fixtures.bytes(name);
            for (int i = 0; i < 400; i++) {
                byte[] bad = mutate(good, random);
                Fixtures.Channel channel = new Fixtures.Channel();
                if (name.startsWith("root")) {
                    channel.roots.put(2L, Fetch.found(bad));
                } else {
                    channel.manifest = Fetch.found(bad);
                }
                RefreshedState result = core.refresh(start, Fixtures.at("2026-06-02T00:00:00Z"), channel);
                if (result.outcome == RefreshedState.Outcome.REJECTED) {
                    refused++;
                    assertFalse(result.stateChanged);
                    assertTrue(result.error.getMessage().length() > 0);
                } else {
                    // A damage that leaves the document valid (for example inside an x- member) is accepted.
                    assertNotEquals(RefreshedState.Outcome.NETWORK_FAILURE, result.outcome);
                }
            }
        }
        assertTrue("almost every damaged document is refused: " + refused, refused > 700);
    }

    @Test
    public void damagedStateCopiesAreRefusedWithTypedErrors() throws Exception {
        TrustCore core = Fixtures.core();
        ClientState state = core.refresh(core.initialState(List.of()), Fixtures.at("2026-06-02T00:00:00Z"),
                new Fixtures.Channel().serveManifest("manifest-1.json")).state.persisted();
        byte[] good = StateCodec.encode(state);
        Random random = new Random(6962);
        int refused = 0;
        int damaged = 0;
        for (int i = 0; i < 500; i++) {
            byte[] bad = mutate(good, random);
            if (java.util.Arrays.equals(bad, good)) continue;
            damaged++;
            try {
                StateCodec.decode(bad, Limits.STANDARD);
            } catch (FormatException e) {
                refused++;
            }
            StateCodec.salvageDomainNames(bad);
        }
        assertTrue(damaged > 450);
        assertEquals("the checksum refuses every damaged copy", damaged, refused);
    }

    @Test
    public void deepAndWideHostileJsonIsBoundedByTheLimits() {
        byte[] deep = ("[".repeat(100_000)).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        try {
            StrictJsonParser.parse(deep, Limits.STANDARD.json());
            org.junit.Assert.fail("100,000 levels accepted");
        } catch (FormatException e) {
            assertEquals(FormatRule.NESTING_TOO_DEEP, e.rule());
        }
        StringBuilder wide = new StringBuilder("[");
        for (int i = 0; i < 20_000; i++) wide.append(i == 0 ? "" : ",").append('1');
        try {
            StrictJsonParser.parse(wide.append(']').toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII), Limits.STANDARD.json());
            org.junit.Assert.fail("20,000 elements accepted");
        } catch (FormatException e) {
            assertEquals(FormatRule.TOO_MANY_ELEMENTS, e.rule());
        }
    }
}
