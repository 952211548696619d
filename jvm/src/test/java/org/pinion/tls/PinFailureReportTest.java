// RFC 7469 §3 report fields and the 24-hour throttle, mirroring the Swift EvaluationTests' report cases.
package org.pinion.tls;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;
import org.pinion.trust.FormatException;
import org.pinion.trust.JsonValue;
import org.pinion.trust.Limits;
import org.pinion.trust.MergedPolicy;
import org.pinion.trust.Pin;
import org.pinion.trust.PinEvaluation;
import org.pinion.trust.PinnedDomain;
import org.pinion.trust.StrictJsonParser;
import org.pinion.trust.Timestamp;

public class PinFailureReportTest {
    static PinEvaluation failure(String host) throws FormatException {
        MergedPolicy policy = new MergedPolicy(List.of(new PinnedDomain("example.test", true, true, List.of(Pin.ofDigest(new byte[32])))));
        return PinEvaluation.evaluate(host, List.of(new byte[32 - 1]), policy);
    }

    @Test
    public void reportHasTheFieldsOfRfc7469InOrder() throws Exception {
        PinFailureReport report = new PinFailureReport(failure("API.example.test."), 443, Timestamp.parse("2026-06-02T00:00:00Z"), List.of(), List.of(),
                Timestamp.parse("2026-07-01T00:00:00Z"));
        JsonValue doc = StrictJsonParser.parse(report.jsonBytes(), Limits.STANDARD.json());
        List<String> names = new ArrayList<>();
        for (JsonValue.Member m : doc.members()) names.add(m.name);
        assertEquals(List.of("date-time", "hostname", "port", "effective-expiration-date", "include-subdomains", "noted-hostname",
                "served-certificate-chain", "validated-certificate-chain", "known-pins"), names);
        assertEquals("api.example.test", doc.get("hostname").text());
        assertEquals("example.test", doc.get("noted-hostname").text());
        assertTrue(doc.get("include-subdomains").flag());
        assertEquals("pin-sha256=\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"", doc.get("known-pins").elements().get(0).text());
        PinFailureReport noExpiry = new PinFailureReport(failure("example.test"), 443, Timestamp.parse("2026-06-02T00:00:00Z"), List.of(), List.of(), null);
        // Baseline pins never expire: the member is left out (RFC 7469 §3 defines it as a date).
        assertEquals(null, StrictJsonParser.parse(noExpiry.jsonBytes(), Limits.STANDARD.json()).get("effective-expiration-date"));
    }

    @Test
    public void pemWrapsBase64At64Characters() {
        String pem = PinFailureReport.pem(new byte[100]);
        String[] lines = pem.split("\n");
        assertEquals("-----BEGIN CERTIFICATE-----", lines[0]);
        assertEquals(64, lines[1].length());
        assertEquals(64, lines[2].length());
        assertEquals("136 base64 characters: 64 + 64 + 8", 8, lines[3].length());
        assertEquals("-----END CERTIFICATE-----", lines[4]);
        assertFalse(pem.endsWith("\n"));
        assertTrue(pem.getBytes(StandardCharsets.US_ASCII).length > 0);
    }

    @Test
    public void identicalReportsAreSentOncePer24HoursAndMemoryIsBounded() throws Exception {
        ReportThrottle throttle = new ReportThrottle(2);
        Timestamp t = Timestamp.parse("2026-06-02T00:00:00Z");
        PinFailureReport a = new PinFailureReport(failure("a.example.test"), 443, t, List.of(), List.of(), null);
        PinFailureReport aLater = new PinFailureReport(failure("a.example.test"), 443, t.plus(3600), List.of(), List.of(), null);
        assertTrue(throttle.shouldSend(a, t));
        assertFalse("same report an hour later", throttle.shouldSend(aLater, t.plus(3600)));
        assertTrue("a day later", throttle.shouldSend(aLater, t.plus(86_400)));
        assertTrue("another host", throttle.shouldSend(new PinFailureReport(failure("b.example.test"), 443, t, List.of(), List.of(), null), t.plus(86_400)));
        assertTrue("another port", throttle.shouldSend(new PinFailureReport(failure("b.example.test"), 8443, t, List.of(), List.of(), null), t.plus(86_400)));
        assertEquals(2, throttle.size());
        assertTrue("a clock stepped back does not silence reports forever", throttle.shouldSend(a, t.plus(-10)));
    }
}
