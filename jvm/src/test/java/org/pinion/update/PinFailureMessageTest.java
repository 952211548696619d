// A pin refusal's message names the verified chain's pins and the entry's pins, as OkHttp's CertificatePinner does.
package org.pinion.update;

import static org.junit.Assert.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.Test;
import org.pinion.tls.PinningException;
import org.pinion.trust.MergedPolicy;
import org.pinion.trust.Pin;
import org.pinion.trust.PinEvaluation;
import org.pinion.trust.PinnedDomain;

public class PinFailureMessageTest {
    private static byte[] digest(int fill) {
        byte[] d = new byte[32];
        Arrays.fill(d, (byte) fill);
        return d;
    }

    @Test
    public void theMessageListsTheChainsPinsThenTheEntrysPins() throws Exception {
        Pin pinned1 = Pin.ofDigest(digest(1));
        Pin pinned2 = Pin.ofDigest(digest(2));
        MergedPolicy policy = new MergedPolicy(Collections.singletonList(
                new PinnedDomain("example.test", true, true, Arrays.asList(pinned1, pinned2))));
        List<byte[]> chain = new ArrayList<>(Arrays.asList(digest(7), digest(8)));
        PinEvaluation evaluation = PinEvaluation.evaluate("api.example.test", chain, policy);
        assertEquals(PinEvaluation.Verdict.REJECTED, evaluation.verdict);
        String message = new PinningException(evaluation, chain).getMessage();
        assertEquals("pinning refused api.example.test: " + evaluation.reason.text + " (entry example.test)\n"
                + "  Verified chain (leaf first):\n"
                + "    " + Pin.ofDigest(digest(7)) + "\n"
                + "    " + Pin.ofDigest(digest(8)) + "\n"
                + "  Pinned for example.test:\n"
                + "    " + pinned1 + "\n"
                + "    " + pinned2, message);
    }

    @Test
    public void anEmptyChainAndAnEntryWithoutPinsSaySo() throws Exception {
        MergedPolicy policy = new MergedPolicy(Collections.singletonList(
                new PinnedDomain("example.test", false, true, Collections.<Pin>emptyList())));
        List<byte[]> chain = Collections.emptyList();
        PinEvaluation evaluation = PinEvaluation.evaluate("example.test", chain, policy);
        String message = new PinningException(evaluation, chain).getMessage();
        assertEquals("pinning refused example.test: " + evaluation.reason.text + " (entry example.test)\n"
                + "  Verified chain (leaf first):\n    (none)\n  Pinned for example.test:\n    (none)", message);
    }
}
