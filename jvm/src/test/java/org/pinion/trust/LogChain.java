// Test-side documents with a transparency log: a root with a log member, manifest 1 and its manifest.proof (fixed seeds).
package org.pinion.trust;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.pinion.trust.log.LogTestKit;

/** Root 1 of SignedChain.SCOPE with a log (3 witnesses, quorum 2, maxCheckpointAge 1 h, grace 2 h), manifest 1, proofs. */
public final class LogChain {
    public static final byte[] ROOT_PAYLOAD = rootWithLog();
    public static final byte[] ROOT = SignedChain.envelope(PayloadKind.ROOT, ROOT_PAYLOAD, 1);
    public static final byte[] M1_PAYLOAD = SignedChain.manifestPayload(SignedChain.SCOPE, 1, 1, null);
    public static final byte[] M1 = SignedChain.envelope(PayloadKind.PINS, M1_PAYLOAD, 2);

    private LogChain() {}

    private static byte[] rootWithLog() {
        String payload = new String(SignedChain.rootPayload(SignedChain.SCOPE, 1, 0, 2_592_000, new int[] {1}, new int[] {2}),
                StandardCharsets.UTF_8);
        StringBuilder witnesses = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            if (i > 0) witnesses.append(',');
            witnesses.append("{\"key\":\"").append(LogTestKit.verifierKey(LogTestKit.WITNESS_NAMES[i], 4, LogTestKit.WITNESS_SEEDS[i]))
                    .append("\",\"url\":\"https://").append(LogTestKit.WITNESS_NAMES[i]).append("\"}");
        }
        String log = "{\"origin\":\"" + LogTestKit.ORIGIN + "\",\"key\":\"" + LogTestKit.verifierKey(LogTestKit.ORIGIN, 1, LogTestKit.LOG_SEED)
                + "\",\"witnesses\":[" + witnesses + "],\"quorum\":2,\"maxCheckpointAge\":3600,\"checkpointGrace\":7200}";
        int end = payload.lastIndexOf('}');
        return (payload.substring(0, end) + ",\"log\":" + log + payload.substring(end)).getBytes(StandardCharsets.UTF_8);
    }

    /** @param cosignedAt both witnesses' time, POSIX seconds @return manifest.proof of M1 as the only entry */
    public static byte[] proof(long cosignedAt) {
        byte[] head = LogTestKit.head(0, 1, LogTestKit.sha256(ROOT_PAYLOAD), 1, 1, LogTestKit.sha256(M1_PAYLOAD));
        String text = LogTestKit.checkpointText(LogTestKit.ORIGIN, 1, LogTestKit.mth(List.of(head)));
        byte[] note = LogTestKit.note(text, LogTestKit.logSignatureLine(LogTestKit.ORIGIN, LogTestKit.LOG_SEED, text),
                LogTestKit.cosign(0, cosignedAt, text), LogTestKit.cosign(1, cosignedAt, text));
        return LogTestKit.proof(head, 0, List.of(), note);
    }
}
