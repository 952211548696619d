// The size limit both SDKs share (docs/DESIGN.md §5: envelope 8 MiB), checked on documents built in memory.
package org.pinion.conformance;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.fail;

import java.nio.file.Files;
import java.util.Arrays;
import org.junit.Test;
import org.pinion.trust.FormatException;
import org.pinion.trust.FormatRule;
import org.pinion.trust.Limits;
import org.pinion.trust.ManifestPayload;

public class SharedLimitsTest {
    private static byte[] padded(int size) throws Exception {
        byte[] valid = Files.readAllBytes(java.nio.file.Paths.get("").toAbsolutePath()
                .resolve("../conformance/parser/valid.json").normalize());
        byte[] out = Arrays.copyOf(valid, size);
        Arrays.fill(out, valid.length, size, (byte) ' ');
        return out;
    }

    /** A 5 MiB payload (whitespace after the value is allowed) is within the 8 MiB limit, as in the Swift SDK. */
    @Test
    public void fiveMebibytesAreWithinTheLimit() throws Exception {
        assertEquals(8 * 1024 * 1024, Limits.STANDARD.maxEnvelopeBytes);
        ManifestPayload.parse(padded(5 * 1024 * 1024), Limits.STANDARD);
    }

    /** One byte over 8 MiB is refused as too large before parsing. */
    @Test
    public void oneByteOverTheLimitIsRefused() throws Exception {
        try {
            ManifestPayload.parse(padded(8 * 1024 * 1024 + 1), Limits.STANDARD);
            fail("accepted a payload over the limit");
        } catch (FormatException e) {
            assertEquals(FormatRule.TOO_LARGE, e.rule());
        }
    }
}
