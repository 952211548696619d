// The fail-closed merge (DESIGN.md §7), mirroring Tests/PinionTrustTests/MergeTests.swift.
package org.pinion.trust;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.pinion.trust.Fixtures.at;
import static org.pinion.trust.Fixtures.pin;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.Test;

public class MergeTest {
    static final Timestamp BEFORE = at("2026-06-15T00:00:00Z");
    static final Timestamp AFTER = at("2026-07-01T00:00:00Z");

    static Baseline baseline(String domains) throws FormatException {
        return Baseline.parse(("{\"type\":\"pinion.baseline\",\"specVersion\":1,\"domains\":[" + domains + "]}").getBytes(StandardCharsets.UTF_8),
                Limits.STANDARD);
    }

    static String entry(String name, boolean sub, boolean enforce, int... pins) {
        StringBuilder p = new StringBuilder();
        for (int i = 0; i < pins.length; i++) p.append(i == 0 ? "" : ",").append('"').append(pin(pins[i])).append('"');
        return "{\"name\":\"" + name + "\",\"includeSubdomains\":" + sub + ",\"enforce\":" + enforce + ",\"pins\":[" + p + "]}";
    }

    static ManifestPayload manifest(String domains, String revoked) throws FormatException {
        String text = "{\"type\":\"pinion.pins\",\"specVersion\":1,\"scope\":\"com.example.app\",\"rootVersion\":1,\"version\":1,"
                + "\"issuedAt\":\"2026-06-01T00:00:00Z\",\"expiresAt\":\"2026-07-01T00:00:00Z\",\"domains\":[" + domains + "],\"revokedPins\":["
                + revoked + "]}";
        return ManifestPayload.parse(text.getBytes(StandardCharsets.UTF_8), Limits.STANDARD);
    }

    static PolicySnapshot snap(Baseline b, ManifestPayload m, boolean valid, Set<Pin> revoked, long grace) {
        return new PolicySnapshot(b, m, valid, revoked, grace, List.of(), null);
    }

    @Test
    public void currentManifestReplacesBaselinePinsAndKeepsOthers() throws Exception {
        Baseline b = baseline(entry("api.example.com", false, true, 1, 2) + "," + entry("other.example.com", false, true, 5));
        ManifestPayload m = manifest(entry("api.example.com", false, true, 3, 4), "");
        MergedPolicy current = snap(b, m, true, Set.of(), 0).policy(BEFORE);
        assertEquals(List.of(pin(3), pin(4)), current.entry("api.example.com").pins);
        assertEquals(List.of(pin(5)), current.entry("other.example.com").pins);
    }

    @Test
    public void revokedPinsNeverCountEvenInTheBaselineOrReappearingInTheManifest() throws Exception {
        Baseline b = baseline(entry("api.example.com", false, true, 1, 2) + "," + entry("other.example.com", false, true, 2));
        ManifestPayload m = manifest(entry("api.example.com", false, true, 2, 3), "");
        MergedPolicy current = snap(b, m, true, Set.of(pin(2)), 0).policy(BEFORE);
        assertEquals(List.of(pin(3)), current.entry("api.example.com").pins);
        assertTrue(current.entry("other.example.com").pins.isEmpty());
        assertEquals(PinEvaluation.Reason.NO_USABLE_PIN,
                PinEvaluation.evaluate("other.example.com", List.of(pin(2).digest()), current).reason);
    }

    @Test
    public void expiredManifestOnlyTakesTrustAway() throws Exception {
        Baseline b = baseline(entry("api.example.com", false, true, 1, 2) + "," + entry("base.example.com", false, true, 5));
        ManifestPayload m = manifest(entry("api.example.com", false, true, 2, 3) + "," + entry("new.example.com", false, true, 6), "");
        PolicySnapshot s = snap(b, m, true, Set.of(), 0);
        MergedPolicy expired = s.policy(AFTER);
        assertEquals("B ∩ M", List.of(pin(2)), expired.entry("api.example.com").pins);
        assertEquals("B only", List.of(pin(5)), expired.entry("base.example.com").pins);
        assertTrue("M only: no pins", expired.entry("new.example.com").pins.isEmpty());
        assertTrue(expired.entry("new.example.com").enforce);
        assertEquals(PinEvaluation.Verdict.REJECTED, PinEvaluation.evaluate("new.example.com", List.of(pin(6).digest()), expired).verdict);
    }

    @Test
    public void manifestExpiresExactlyAtExpiresAtAndStaleGraceExtendsByExactlyThatMuch() throws Exception {
        ManifestPayload m = manifest(entry("api.example.com", false, true, 3), "");
        PolicySnapshot none = snap(Baseline.EMPTY, m, true, Set.of(), 0);
        assertTrue(none.isManifestCurrent(AFTER.plus(-1)));
        assertFalse(none.isManifestCurrent(AFTER));
        PolicySnapshot grace = snap(Baseline.EMPTY, m, true, Set.of(), 3600);
        assertTrue(grace.isManifestCurrent(AFTER.plus(3599)));
        assertFalse(grace.isManifestCurrent(AFTER.plus(3600)));
        assertFalse(snap(Baseline.EMPTY, m, true, Set.of(), -50).isManifestCurrent(AFTER));
        assertFalse("invalid M gets no grace", snap(Baseline.EMPTY, m, false, Set.of(), 3600).isManifestCurrent(BEFORE));
        PolicySnapshot rootEnds = new PolicySnapshot(Baseline.EMPTY, m, true, Set.of(), 3600, List.of(), at("2026-06-20T00:00:00Z"));
        assertFalse("the newest root's expiry ends M", rootEnds.isManifestCurrent(at("2026-06-20T00:00:00Z")));
    }

    @Test
    public void enforceAndIncludeSubdomainsAreOredSoAManifestCannotWeakenTheBaseline() throws Exception {
        Baseline b = baseline(entry("api.example.com", false, true, 1, 2));
        ManifestPayload m = manifest(entry("api.example.com", true, false, 3), "");
        PinnedDomain merged = snap(b, m, true, Set.of(), 0).policy(BEFORE).entry("api.example.com");
        assertTrue(merged.enforce);
        assertTrue(merged.includeSubdomains);
        ManifestPayload drops = manifest(entry("x.example.com", false, true, 3), "");
        PinnedDomain kept = snap(b, drops, true, Set.of(), 0).policy(BEFORE).entry("api.example.com");
        assertEquals(List.of(pin(1), pin(2)), kept.pins);
        assertTrue(kept.enforce);
    }

    @Test
    public void forcedDomainsOfALostStoreAreRefusedWithTheirSubdomains() throws Exception {
        Baseline b = baseline(entry("api.example.com", false, true, 1, 2));
        PolicySnapshot s = new PolicySnapshot(b, null, false, Set.of(), 0, List.of("api.example.com", "lost.example.net"), null);
        MergedPolicy p = s.policy(BEFORE);
        assertEquals(PinEvaluation.Verdict.REJECTED, PinEvaluation.evaluate("api.example.com", List.of(pin(1).digest()), p).verdict);
        assertEquals(PinEvaluation.Verdict.REJECTED, PinEvaluation.evaluate("a.lost.example.net", List.of(pin(1).digest()), p).verdict);
    }

    @Test
    public void duplicateEntriesCombineFailClosed() {
        MergedPolicy p = new MergedPolicy(List.of(new PinnedDomain("a.example.com", false, false, List.of(pin(1), pin(2))),
                new PinnedDomain("a.example.com", true, true, List.of(pin(2), pin(3)))));
        PinnedDomain d = p.entry("a.example.com");
        assertEquals(List.of(pin(2)), d.pins);
        assertTrue(d.enforce && d.includeSubdomains);
    }

    @Test
    public void baselineFileRefusals() {
        String[][] cases = {
            {"{\"type\":\"pinion.baseline\",\"specVersion\":1,\"domains\":[],\"extra\":1}", "", "UNKNOWN_MEMBER"},
            {"{\"type\":\"pinion.baseline\",\"specVersion\":1,\"domains\":[" + entry("a.example.com", false, true, 1) + "," + entry("a.example.com", false, true, 2) + "]}", "domains[1].name", "DUPLICATE_DOMAIN"},
            {"{\"type\":\"pinion.baseline\",\"specVersion\":1,\"domains\":[{\"name\":\"A.example.com\",\"pins\":[\"" + pin(1) + "\"]}]}", "domains[0].name", "INVALID_HOST_NAME"},
            {"{\"type\":\"pinion.baseline\",\"specVersion\":1,\"domains\":[{\"name\":\"a.example.com\",\"pins\":[\"sha256/x\"]}]}", "domains[0].pins[0]", "INVALID_PIN"},
            {"{\"type\":\"pinion.baseline\",\"specVersion\":2,\"domains\":[]}", "specVersion", "UNSUPPORTED_SPEC_VERSION"},
            {"{\"type\":\"pinion.pins\",\"specVersion\":1,\"domains\":[]}", "type", "WRONG_DOCUMENT_TYPE"},
            {"{\"type\":\"pinion.baseline\",\"specVersion\":1}", "", "MISSING_MEMBER"},
            {"{\"type\":\"pinion.baseline\",\"specVersion\":1,\"domains\":{}}", "domains", "WRONG_TYPE"},
            {"{\"type\":\"pinion.baseline\",\"type\":\"pinion.baseline\",\"specVersion\":1,\"domains\":[]}", "", "DUPLICATE_KEY"},
            {"{\"type\":\"pinion.baseline\",\"specVersion\":1,\"domains\":[{\"name\":\"a.example.com\",\"pins\":[]}]}", "domains[0].pins", "EMPTY"},
        };
        for (String[] c : cases) {
            try {
                Baseline.parse(c[0].getBytes(StandardCharsets.UTF_8), Limits.STANDARD);
                fail(c[2] + " accepted");
            } catch (FormatException e) {
                assertEquals(c[2], c[1], e.path());
                assertEquals(c[2], FormatRule.valueOf(c[2]), e.rule());
            }
        }
    }

    @Test
    public void baselineFixtureParses() throws Exception {
        Baseline b = Baseline.parse(Fixtures.bytes("baseline.json"), Limits.STANDARD);
        assertEquals(2, b.domains.size());
        assertTrue(b.domains.get(1).includeSubdomains);
    }
}
