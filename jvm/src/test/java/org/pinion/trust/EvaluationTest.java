// Host matching and pin evaluation (DESIGN.md §8), mirroring Tests/PinionTrustTests/EvaluationTests.swift.
package org.pinion.trust;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.pinion.trust.Fixtures.pin;

import java.util.List;
import org.junit.Test;

public class EvaluationTest {
    static final MergedPolicy POLICY = new MergedPolicy(List.of(
            new PinnedDomain("api.example.test", false, true, List.of(pin(1), pin(2))),
            new PinnedDomain("example.org", true, true, List.of(pin(3))),
            new PinnedDomain("report.example.org", false, false, List.of(pin(4))),
            new PinnedDomain("soft.example.net", true, false, List.of(pin(5))),
            new PinnedDomain("hard.soft.example.net", false, true, List.of(pin(6))),
            new PinnedDomain("empty.example.test", false, true, List.of())));

    static PinEvaluation.Verdict verdict(String host, Pin... chain) {
        List<byte[]> digests = new java.util.ArrayList<>();
        for (Pin p : chain) digests.add(p.digest());
        return PinEvaluation.evaluate(host, digests, POLICY).verdict;
    }

    @Test
    public void exactIncludeSubdomainsAndLabelBoundaries() {
        assertEquals(PinEvaluation.Verdict.TRUSTED, verdict("api.example.test", pin(1)));
        assertEquals(PinEvaluation.Verdict.NOT_PINNED, verdict("sub.api.example.test", pin(9)));
        assertEquals(PinEvaluation.Verdict.TRUSTED, verdict("a.b.example.org", pin(3)));
        for (String host : List.of("notapi.example.test", "api.example.test.evil.test", "xapi.example.test", "example.test", "badexample.org")) {
            assertEquals(host, PinEvaluation.Verdict.NOT_PINNED, verdict(host, pin(9)));
        }
    }

    @Test
    public void trailingDotAndUppercaseMatchAndLiteralsAreNotPinned() {
        assertEquals(PinEvaluation.Verdict.REJECTED, verdict("API.Example.Test.", pin(9)));
        for (String host : List.of("", ".", "127.0.0.1", "[::1]", "::1", "0x7f.0x1", "10.0.0.1.")) {
            assertNull(host, MergedPolicy.normalizedHost(host));
        }
        assertEquals("a.b.", MergedPolicy.normalizedHost("a.b.."));
    }

    @Test
    public void pinnedIntermediateTrustedUnpinnedChainAndEmptyChainRejected() {
        assertEquals(PinEvaluation.Verdict.TRUSTED, verdict("api.example.test", pin(9), pin(2)));
        assertEquals(PinEvaluation.Verdict.REJECTED, verdict("api.example.test", pin(8), pin(9)));
        PinEvaluation empty = PinEvaluation.evaluate("api.example.test", List.of(), POLICY);
        assertEquals(PinEvaluation.Reason.NO_VERIFIED_CHAIN, empty.reason);
        assertEquals(PinEvaluation.Verdict.REJECTED, PinEvaluation.evaluate("api.example.test", List.of(new byte[31]), POLICY).verdict);
    }

    @Test
    public void enforcedEntryWithoutPinsRefusesEveryConnection() {
        PinEvaluation e = PinEvaluation.evaluate("empty.example.test", List.of(pin(1).digest()), POLICY);
        assertEquals(PinEvaluation.Verdict.REJECTED, e.verdict);
        assertEquals(PinEvaluation.Reason.NO_USABLE_PIN, e.reason);
    }

    @Test
    public void reportOnlyAndEnforceIsTheOrOfAllMatches() {
        assertEquals(PinEvaluation.Verdict.REJECTED, verdict("report.example.org", pin(9)));
        assertEquals(PinEvaluation.Verdict.TRUSTED, verdict("report.example.org", pin(4)));
        assertEquals(PinEvaluation.Verdict.REPORT_ONLY, verdict("x.soft.example.net", pin(9)));
        assertEquals(PinEvaluation.Verdict.REJECTED, verdict("hard.soft.example.net", pin(5)));
        PinEvaluation longest = PinEvaluation.evaluate("report.example.org", List.of(pin(3).digest()), POLICY);
        assertEquals("pins come from the longest match", PinEvaluation.Verdict.REJECTED, longest.verdict);
        assertEquals("report.example.org", longest.entry.name);
    }
}
