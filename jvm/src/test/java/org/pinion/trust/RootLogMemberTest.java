// The root member `log` (docs/DESIGN.md §12) parsed as the Swift SDK parses it: every refusal with its path and rule.
package org.pinion.trust;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.charset.StandardCharsets;
import org.junit.Test;
import org.pinion.trust.log.LogPolicy;
import org.pinion.trust.log.NoteException;
import org.pinion.trust.log.NoteVerifierKey;

public class RootLogMemberTest {
    private static final String ORIGIN = "example.test/log";

    private static String vkey(String name, int type, int seed) {
        try {
            return new NoteVerifierKey(name, type, SignedChain.publicKey(seed), Fixtures.CRYPTO).text();
        } catch (NoteException e) {
            throw new AssertionError(e);
        }
    }

    private static final String LOG_KEY = vkey(ORIGIN, 1, 30);
    private static final String W1 = "{\"key\":\"" + vkey("w1.example", 4, 31) + "\",\"url\":\"https://w1.example/w\"}";
    private static final String W2 = "{\"key\":\"" + vkey("w2.example", 4, 32) + "\",\"url\":\"https://w2.example:8443\"}";

    private static String log(String origin, String key, String witnesses, String quorum, String rest) {
        return "{\"origin\":\"" + origin + "\",\"key\":\"" + key + "\",\"witnesses\":[" + witnesses + "],\"quorum\":" + quorum
                + ",\"maxCheckpointAge\":86400" + rest + "}";
    }

    private static RootPayload parse(String logJson) throws FormatException {
        String payload = new String(SignedChain.rootPayload(SignedChain.SCOPE, 1, 0, 7776000, new int[] {1}, new int[] {2}),
                StandardCharsets.UTF_8);
        int end = payload.lastIndexOf('}');
        String withLog = payload.substring(0, end) + ",\"log\":" + logJson + payload.substring(end);
        return RootPayload.parse(withLog.getBytes(StandardCharsets.UTF_8), Limits.STANDARD, Fixtures.CRYPTO);
    }

    private static FormatException refusal(String logJson) {
        try {
            parse(logJson);
        } catch (FormatException e) {
            return e;
        }
        fail("accepted log member " + logJson);
        return null;
    }

    @Test
    public void aValidLogMemberParses() throws Exception {
        RootPayload root = parse(log(ORIGIN, LOG_KEY, W1 + "," + W2, "2", ",\"checkpointGrace\":3600"));
        LogPolicy log = root.log;
        assertEquals(ORIGIN, log.origin);
        assertEquals(LOG_KEY, log.logKey.text());
        assertEquals(2, log.witnesses.size());
        assertEquals("w2.example", log.witnesses.get(1).name());
        assertEquals("https://w2.example:8443", log.witnesses.get(1).url);
        assertEquals(2, log.quorum);
        assertEquals(86400, log.maxCheckpointAge);
        assertEquals(3600, log.checkpointGrace);
        assertEquals(LogPolicy.DEFAULT_GRACE, parse(log(ORIGIN, LOG_KEY, W1, "1", "")).log.checkpointGrace);
        assertEquals(0, parse(log(ORIGIN, LOG_KEY, W1, "1", ",\"x-note\":1")).log.witnesses.size() - 1);
        String payload = new String(SignedChain.rootPayload(SignedChain.SCOPE, 1, 0, 7776000, new int[] {1}, new int[] {2}), StandardCharsets.UTF_8);
        assertNull(RootPayload.parse(payload.getBytes(StandardCharsets.UTF_8), Limits.STANDARD, Fixtures.CRYPTO).log);
    }

    @Test
    public void everyRuleOfTheLogMemberRefuses() {
        String w1Again = "{\"key\":\"" + vkey("w1b.example", 4, 31) + "\",\"url\":\"https://w1b.example\"}";
        String sameName = "{\"key\":\"" + vkey("w1.example", 4, 33) + "\",\"url\":\"https://w3.example\"}";
        String logAsWitness = "{\"key\":\"" + vkey("w9.example", 4, 30) + "\",\"url\":\"https://w9.example\"}";
        String type1Witness = "{\"key\":\"" + vkey("w8.example", 1, 34) + "\",\"url\":\"https://w8.example\"}";
        String httpWitness = "{\"key\":\"" + vkey("w7.example", 4, 35) + "\",\"url\":\"http://w7.example\"}";
        String[][] invalidLog = {
            {log(ORIGIN, LOG_KEY, W1 + "," + w1Again, "1", ""), "log"},
            {log(ORIGIN, LOG_KEY, W1 + "," + sameName, "1", ""), "log"},
            {log(ORIGIN, LOG_KEY, W1 + "," + logAsWitness, "1", ""), "log"},
            {log(ORIGIN, LOG_KEY, type1Witness, "1", ""), "log"},
            {log(ORIGIN, vkey(ORIGIN, 4, 30), W1, "1", ""), "log"},
            {log(ORIGIN, LOG_KEY, httpWitness, "1", ""), "log"},
            {log(ORIGIN, LOG_KEY, W1, "2", ""), "log"},
            {log(ORIGIN, LOG_KEY, "", "1", ""), "log"},
            {log("", LOG_KEY, W1, "1", ""), "log"},
            {log("has space", LOG_KEY, W1, "1", ""), "log"},
            {log(ORIGIN, LOG_KEY.replace("+", "-"), W1, "1", ""), "log.key"},
            {log(ORIGIN, LOG_KEY, W1.replace("w1.example+", "w1.example+0"), "1", ""), "log.witnesses[0].key"},
        };
        for (String[] c : invalidLog) {
            FormatException e = refusal(c[0]);
            assertEquals(c[0], FormatRule.INVALID_LOG, e.rule());
            assertEquals(c[0], c[1], e.path());
        }
        assertEquals(FormatRule.INTEGER_OUT_OF_RANGE, refusal(log(ORIGIN, LOG_KEY, W1, "0", "")).rule());
        assertEquals(FormatRule.INTEGER_OUT_OF_RANGE, refusal(log(ORIGIN, LOG_KEY, W1, "33", "")).rule());
        assertEquals(FormatRule.INTEGER_OUT_OF_RANGE, refusal(log(ORIGIN, LOG_KEY, W1, "1", ",\"checkpointGrace\":-1")).rule());
        assertEquals(FormatRule.NOT_AN_INTEGER, refusal(log(ORIGIN, LOG_KEY, W1, "1.5", "")).rule());
        assertEquals(FormatRule.UNKNOWN_MEMBER, refusal(log(ORIGIN, LOG_KEY, W1, "1", ",\"witnessQuorum\":1")).rule());
        assertEquals(FormatRule.UNKNOWN_MEMBER, refusal(log(ORIGIN, LOG_KEY, W1.replace("}", ",\"name\":\"w\"}"), "1", "")).rule());
        assertEquals(FormatRule.MISSING_MEMBER, refusal("{\"origin\":\"" + ORIGIN + "\",\"key\":\"" + LOG_KEY + "\",\"witnesses\":[" + W1
                + "],\"quorum\":1}").rule());
        assertEquals(FormatRule.WRONG_TYPE, refusal(log(ORIGIN, LOG_KEY, "\"" + W1.replace("\"", "'") + "\"", "1", "")).rule());
        assertEquals(FormatRule.WRONG_TYPE, refusal("[]").rule());
        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 33; i++) {
            if (i > 0) many.append(',');
            many.append("{\"key\":\"").append(vkey("w" + i + ".example", 4, 40 + i)).append("\",\"url\":\"https://w.example\"}");
        }
        assertEquals(FormatRule.TOO_MANY_ELEMENTS, refusal(log(ORIGIN, LOG_KEY, many.toString(), "1", "")).rule());
    }

    @Test
    public void witnessUrlsAreHttpsHostPortPathOnly() {
        String[] good = {"https://w.example", "https://w.example/", "https://w.example:1/a/b", "https://10.0.0.1:65535", "https://[2001:db8::1]",
            "https://[2001:db8::1]:443/w", "https://W-1.Example"};
        String[] bad = {"http://w.example", "https://", "https://w.example:0", "https://w.example:65536", "https://w.example:08",
            "https://w.example:", "https://w.example:+1", "https://w.example?x", "https://w.example#x", "https://u@w.example",
            "https://w.example/a b", "https://w_1.example", "https://[2001:db8::1", "https://[]", "https://[g::1]", "https://[::1]:",
            "https://a:1:2", "https://w.exam\u00e9ple", "https://w.example\\x", "HTTPS://w.example", "https://w.example/" + "a".repeat(2040)};
        for (String url : good) assertTrue(url, LogPolicy.isWitnessUrl(url));
        for (String url : bad) assertTrue(url, !LogPolicy.isWitnessUrl(url));
    }
}
