// The merge that takes M's parsed table over whole against the former name-by-name merge, on generated (B, M, R, forced).
package org.pinion.trust;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.Test;

public class MergeTakeOverTest {
    static final String[] NAMES = {"a.example", "b.example", "c.example", "d.example", "e.example", "f.example"};

    static String pinText(int n) {
        byte[] digest = new byte[32];
        digest[0] = (byte) n;
        digest[31] = (byte) (n * 7);
        return "sha256/" + Base64.getEncoder().encodeToString(digest);
    }

    /** Domains with distinct names from the pool, random flags (or absent), 1-4 distinct pins of 8. */
    static String domainsJson(Random random, int maxCount) {
        List<String> names = new ArrayList<>(List.of(NAMES));
        java.util.Collections.shuffle(names, random);
        int count = random.nextInt(maxCount + 1);
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < count; i++) {
            if (i > 0) b.append(", ");
            b.append("{\"name\": \"").append(names.get(i)).append('"');
            int sub = random.nextInt(3);
            if (sub < 2) b.append(", \"includeSubdomains\": ").append(sub == 1);
            int enforce = random.nextInt(3);
            if (enforce < 2) b.append(", \"enforce\": ").append(enforce == 1);
            List<Integer> pool = new ArrayList<>(List.of(0, 1, 2, 3, 4, 5, 6, 7));
            java.util.Collections.shuffle(pool, random);
            int pins = 1 + random.nextInt(4);
            b.append(", \"pins\": [");
            for (int k = 0; k < pins; k++) b.append(k > 0 ? ", " : "").append('"').append(pinText(pool.get(k))).append('"');
            b.append("]}");
        }
        return b.append("]").toString();
    }

    static byte[] utf8(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    // ---- The former merge (PolicySnapshot before it took M's table over): the same rule, written plainly ----

    static Map<String, PinnedDomain> referenceIndex(List<PinnedDomain> domains) {
        Map<String, PinnedDomain> map = new HashMap<>();
        for (PinnedDomain d : domains) {
            PinnedDomain existing = map.get(d.name);
            map.put(d.name, existing == null ? d : MergedPolicy.strictest(existing, d));
        }
        return map;
    }

    static MergedPolicy referenceMerge(Map<String, PinnedDomain> base, List<PinnedDomain> manifest, boolean manifestCurrent,
            Set<Pin> revoked, List<String> forced) {
        Map<String, PinnedDomain> byName = new HashMap<>();
        for (PinnedDomain m : manifest) byName.put(m.name, referenceEntry(base.get(m.name), m, manifestCurrent, revoked));
        for (Map.Entry<String, PinnedDomain> entry : base.entrySet()) {
            if (!byName.containsKey(entry.getKey())) {
                byName.put(entry.getKey(), referenceEntry(entry.getValue(), null, manifestCurrent, revoked));
            }
        }
        for (String name : forced) byName.put(name, new PinnedDomain(name, true, true, List.of()));
        return MergedPolicy.owning(byName);
    }

    static PinnedDomain referenceEntry(PinnedDomain b, PinnedDomain m, boolean manifestCurrent, Set<Pin> revoked) {
        boolean sub = (b != null && b.includeSubdomains) || (m != null && m.includeSubdomains);
        boolean enforce = (b != null && b.enforce) || (m != null && m.enforce);
        List<Pin> pins;
        if (m != null && manifestCurrent) {
            pins = m.pins;
        } else if (b != null && m != null) {
            Set<Pin> granted = new HashSet<>(m.pins);
            pins = new ArrayList<>();
            for (Pin pin : b.pins) {
                if (granted.contains(pin)) pins.add(pin);
            }
        } else if (b != null) {
            pins = b.pins;
        } else {
            pins = List.of();
        }
        List<Pin> kept = new ArrayList<>();
        for (Pin pin : pins) {
            if (!revoked.contains(pin)) kept.add(pin);
        }
        return new PinnedDomain(b != null ? b.name : m.name, sub, enforce, kept);
    }

    @Test
    public void takesOverTheManifestTableWithTheSameResultAsTheNameByNameMerge() throws FormatException {
        Random random = new Random(1202);
        int withManifest = 0;
        int overlapping = 0;
        for (int n = 0; n < 3000; n++) {
            Baseline baseline = Baseline.parse(utf8("{\"type\": \"pinion.baseline\", \"specVersion\": 1, \"domains\": "
                    + domainsJson(random, 3) + "}"), Limits.STANDARD);
            ManifestPayload manifest = null;
            if (random.nextInt(5) > 0) {
                manifest = ManifestPayload.parse(utf8("{\"type\": \"pinion.pins\", \"specVersion\": 1, \"scope\": \"com.example.app\","
                        + " \"rootVersion\": 1, \"version\": 1, \"issuedAt\": \"2026-06-01T00:00:00Z\","
                        + " \"expiresAt\": \"2026-06-30T00:00:00Z\", \"domains\": " + domainsJson(random, 6) + "}"),
                        Limits.STANDARD);
                withManifest++;
            }
            Set<Pin> revoked = new HashSet<>();
            int revokedCount = random.nextInt(3) == 0 ? 0 : random.nextInt(4);
            for (int k = 0; k < revokedCount; k++) revoked.add(Pin.parse(pinText(random.nextInt(8))));
            List<String> forced = new ArrayList<>();
            int forcedCount = random.nextInt(3);
            for (int k = 0; k < forcedCount; k++) forced.add(NAMES[random.nextInt(NAMES.length)]);
            boolean valid = random.nextBoolean();
            PolicySnapshot snapshot = new PolicySnapshot(baseline, manifest, valid, revoked, 0, forced, null);
            Map<String, PinnedDomain> base = referenceIndex(baseline.domains);
            List<PinnedDomain> m = manifest == null ? List.of() : manifest.domains;
            for (PinnedDomain d : m) if (base.containsKey(d.name)) overlapping++;
            assertEquals("expired merge, case " + n, referenceMerge(base, m, false, revoked, forced), snapshot.expired);
            MergedPolicy current = manifest != null && valid ? referenceMerge(base, m, true, revoked, forced) : snapshot.expired;
            assertEquals("current merge, case " + n, current, snapshot.current);
        }
        assertTrue(withManifest > 2000);
        assertTrue("names of B also in M must be generated: " + overlapping, overlapping > 1000);
    }

    @Test
    public void theTableTakenOverIsTheParsedDomainsAndADuplicateNameIsStillRefused() throws FormatException {
        String json = "{\"type\": \"pinion.pins\", \"specVersion\": 1, \"scope\": \"com.example.app\", \"rootVersion\": 1,"
                + " \"version\": 1, \"issuedAt\": \"2026-06-01T00:00:00Z\", \"expiresAt\": \"2026-06-30T00:00:00Z\", \"domains\": ["
                + "{\"name\": \"a.example\", \"pins\": [\"" + pinText(1) + "\"]}, {\"name\": \"b.example\", \"pins\": [\"" + pinText(2)
                + "\"]}]}";
        ManifestPayload manifest = ManifestPayload.parse(utf8(json), Limits.STANDARD);
        assertEquals(2, manifest.byName().size());
        for (PinnedDomain d : manifest.domains) assertSame(d, manifest.byName().get(d.name));
        PolicySnapshot snapshot = new PolicySnapshot(Baseline.EMPTY, manifest, true, Set.of(), 0, List.of(), null);
        assertSame("an entry M gives as it is is shared", manifest.domains.get(0), snapshot.current.entry("a.example"));
        String duplicate = json.replace("b.example", "a.example");
        try {
            ManifestPayload.parse(utf8(duplicate), Limits.STANDARD);
            fail("a duplicate domain was accepted");
        } catch (FormatException e) {
            assertEquals(FormatRule.DUPLICATE_DOMAIN, e.rule());
            assertEquals("domains[1].name", e.path());
        }
    }
}
