// Checkpoints, head records, tlog-proof@v1 files and RFC 9162 inclusion proofs: vectors, all indexes, and refusals.
package org.pinion.trust.log;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.fail;
import static org.pinion.trust.log.LogTestKit.CRYPTO;
import static org.pinion.trust.log.LogTestKit.utf8;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.Test;
import org.pinion.trust.Codec;

public class ProofFormatTest {
    private static final byte[] H11 = filled(0x11);
    private static final byte[] H22 = filled(0x22);

    private static byte[] filled(int b) {
        byte[] out = new byte[32];
        Arrays.fill(out, (byte) b);
        return out;
    }

    private interface Parse {
        void run() throws LogException;
    }

    private static LogException.Reason refusal(Parse parse) {
        return refusal("", parse);
    }

    private static LogException.Reason refusal(String what, Parse parse) {
        try {
            parse.run();
        } catch (LogException e) {
            return e.reason();
        }
        fail("accepted " + what);
        return null;
    }

    @Test
    public void theHeadRecordVectorOfTransparencyMd() throws Exception {
        byte[] bytes = utf8("pinion.head/v1\nscope example\nsequence 2\nroot 1 " + Codec.hex(H11) + "\nmanifest 1 3 " + Codec.hex(H22) + "\n");
        assertEquals(190, bytes.length);
        assertEquals("1757710807aafd406886015c6cd07b6b471dea97f94e50537d3966a6cdb704b8", Codec.hex(Merkle.leafHash(bytes, CRYPTO)));
        HeadRecord head = HeadRecord.parse(bytes);
        assertEquals("example", head.scope);
        assertEquals(2, head.sequence);
        assertEquals(1, head.rootVersion);
        assertArrayEquals(H11, head.rootPayloadSha256());
        assertEquals(1, head.manifestRootVersion);
        assertEquals(3, head.manifestVersion);
        assertArrayEquals(H22, head.manifestPayloadSha256());
        assertArrayEquals(bytes, head.bytes());
    }

    @Test
    public void nonCanonicalHeadRecordsAreRefused() {
        String good = "pinion.head/v1\nscope example\nsequence 2\nroot 1 " + Codec.hex(H11) + "\nmanifest 1 3 " + Codec.hex(H22) + "\n";
        String[] bad = {
            good.substring(0, good.length() - 1), good + "\n", good.replace("pinion.head/v1", "pinion.head/v2"),
            good.replace("sequence 2", "sequence 02"), good.replace("sequence 2", "sequence  2"), good.replace("sequence 2", "sequence -2"),
            good.replace("root 1 ", "root 0 "), good.replace("manifest 1 3", "manifest 2 3"), good.replace("scope example", "scope Example"),
            good.replace("scope example", "scope"), good.replace(Codec.hex(H11), Codec.hex(filled(0xab)).toUpperCase()),
            good.replace(Codec.hex(H11), Codec.hex(H11).substring(2)), good.replace("\n", "\r\n"), good.replace("example", "ex\u00e9mple"),
            good.replace("sequence 2", "sequence 9007199254740992"), good.replace("manifest 1 3", "manifest 1 99999999999999999"),
            good.replace("root 1", "rooot 1"), good.replace("scope example\n", ""),
        };
        for (String text : bad) assertEquals(text, LogException.Reason.MALFORMED_HEAD, refusal(text, () -> HeadRecord.parse(utf8(text))));
        byte[] large = new byte[513];
        Arrays.fill(large, (byte) 'a');
        assertEquals(LogException.Reason.MALFORMED_HEAD, refusal(() -> HeadRecord.parse(large)));
    }

    @Test
    public void checkpointsParseStrictly() throws Exception {
        String root = Codec.base64(H11);
        Checkpoint checkpoint = Checkpoint.parse("o.example/log\n7\n" + root + "\nextension line\n", CRYPTO);
        assertEquals("o.example/log", checkpoint.origin);
        assertEquals(7, checkpoint.size);
        assertArrayEquals(H11, checkpoint.rootHash());
        assertEquals(List.of("extension line"), checkpoint.extensions);
        String empty = Codec.base64(LogTestKit.sha256());
        assertEquals(0, Checkpoint.parse("o\n0\n" + empty + "\n", CRYPTO).size);
        assertEquals(Long.MAX_VALUE, Checkpoint.parse("o\n9223372036854775807\n" + root + "\n", CRYPTO).size);
        String[] bad = {
            "o\n7\n" + root, "o\n7\n", "\n7\n" + root + "\n", "o\n07\n" + root + "\n", "o\n-7\n" + root + "\n", "o\n+7\n" + root + "\n",
            "o\n9223372036854775808\n" + root + "\n", "o\n7\n" + root.replace("=", "") + "\n", "o\n7\n" + Codec.base64(new byte[31]) + "\n",
            "o\n0\n" + root + "\n", "o\n7\n" + root + "\n\n", "o\n\u0667\n" + root + "\n", "o\n 7\n" + root + "\n",
        };
        for (String text : bad) assertEquals(text, LogException.Reason.MALFORMED_CHECKPOINT, refusal(() -> Checkpoint.parse(text, CRYPTO)));
    }

    @Test
    public void inclusionProofsVerifyForEveryIndexOfSmallTreesAndRefuseChanges() throws Exception {
        List<byte[]> entries = new ArrayList<>();
        for (int size = 1; size <= 33; size++) {
            entries.add(utf8("entry " + size));
            byte[] root = LogTestKit.mth(entries);
            for (int index = 0; index < size; index++) {
                List<byte[]> path = LogTestKit.path(index, entries);
                byte[] leaf = LogTestKit.leaf(entries.get(index));
                Merkle.verifyInclusion(leaf, index, size, path, root, CRYPTO);
                final int i = index;
                final int n = size;
                assertEquals(LogException.Reason.INCLUSION_FAILED,
                        refusal(() -> Merkle.verifyInclusion(LogTestKit.leaf(utf8("other")), i, n, path, root, CRYPTO)));
                if (size > 1) {
                    int other = (index + 1) % size;
                    assertEquals(LogException.Reason.INCLUSION_FAILED, refusal(() -> Merkle.verifyInclusion(leaf, other, n, path, root, CRYPTO)));
                    List<byte[]> shorter = path.subList(0, path.size() - 1);
                    assertEquals(LogException.Reason.INCLUSION_FAILED, refusal(() -> Merkle.verifyInclusion(leaf, i, n, shorter, root, CRYPTO)));
                    List<byte[]> changed = new ArrayList<>(path);
                    byte[] first = changed.get(0).clone();
                    first[0] ^= 1;
                    changed.set(0, first);
                    assertEquals(LogException.Reason.INCLUSION_FAILED, refusal(() -> Merkle.verifyInclusion(leaf, i, n, changed, root, CRYPTO)));
                }
                List<byte[]> longer = new ArrayList<>(path);
                longer.add(H11);
                assertEquals(LogException.Reason.INCLUSION_FAILED, refusal(() -> Merkle.verifyInclusion(leaf, i, n, longer, root, CRYPTO)));
            }
            final int n = size;
            assertEquals(LogException.Reason.INCLUSION_FAILED,
                    refusal(() -> Merkle.verifyInclusion(H11, n, n, List.of(), root, CRYPTO)));
            assertEquals(LogException.Reason.INCLUSION_FAILED, refusal(() -> Merkle.verifyInclusion(H11, -1, n, List.of(), root, CRYPTO)));
        }
        assertEquals(LogException.Reason.INCLUSION_FAILED,
                refusal(() -> Merkle.verifyInclusion(new byte[31], 0, 1, List.of(), new byte[31], CRYPTO)));
    }

    private static byte[] sampleProof(String extraLine, String indexLine, List<String> hashLines, String note) {
        StringBuilder out = new StringBuilder("c2sp.org/tlog-proof@v1\n");
        if (extraLine != null) out.append(extraLine).append('\n');
        out.append(indexLine).append('\n');
        for (String h : hashLines) out.append(h).append('\n');
        return utf8(out.append('\n').append(note).toString());
    }

    @Test
    public void tlogProofsParseWithLimits() throws Exception {
        String text = "o\n2\n" + Codec.base64(H11) + "\n";
        String note = text + "\n" + LogTestKit.logSignatureLine("o", 10, text);
        String hash = Codec.base64(H22);
        TlogProof proof = TlogProof.parse(sampleProof("extra " + Codec.base64(utf8("head")), "index 1", List.of(hash), note));
        assertArrayEquals(utf8("head"), proof.extra());
        assertEquals(1, proof.index);
        assertEquals(1, proof.inclusionProof.size());
        assertEquals(text, proof.checkpointNote.text);
        assertArrayEquals(sampleProof("extra " + Codec.base64(utf8("head")), "index 1", List.of(hash), note), proof.bytes());
        assertNull(TlogProof.parse(sampleProof(null, "index 0", List.of(), note)).extra());
        List<String> lines63 = new ArrayList<>();
        for (int i = 0; i < 63; i++) lines63.add(hash);
        assertEquals(63, TlogProof.parse(sampleProof(null, "index 1", lines63, note)).inclusionProof.size());
        List<String> lines64 = new ArrayList<>(lines63);
        lines64.add(hash);
        byte[][] malformed = {
            sampleProof(null, "index 1", lines64, note),
            utf8("c2sp.org/tlog-proof@v2\nindex 1\n\n" + note), utf8("c2sp.org/tlog-proof@v1\nindex 1\n"),
            sampleProof("extra aGVhZA", "index 1", List.of(), note), sampleProof(null, "index 01", List.of(), note),
            sampleProof(null, "index -1", List.of(), note), sampleProof(null, "index ", List.of(), note),
            sampleProof(null, "index 9223372036854775808", List.of(), note), sampleProof(null, "Index 1", List.of(), note),
            sampleProof("index 1", "extra aGVhZA==", List.of(), note), sampleProof(null, "index 1", List.of(Codec.base64(new byte[31])), note),
            sampleProof(null, "index 1", List.of(hash + " "), note), sampleProof(null, "index 1", List.of(), text + "\n"),
            sampleProof(null, "index 1", List.of(), note.replace("\u2014", "-")), LogTestKit.concat(utf8("c2sp.org/tlog-proof@v1\nindex \u00ff"),
                    new byte[] {(byte) 0xff}, utf8("\n\n" + note)),
        };
        for (byte[] bytes : malformed) {
            assertEquals(new String(bytes, java.nio.charset.StandardCharsets.UTF_8), LogException.Reason.MALFORMED_PROOF,
                    refusal(() -> TlogProof.parse(bytes)));
        }
        byte[] big = new byte[32 * 1024 + 1];
        assertEquals(LogException.Reason.PROOF_TOO_LARGE, refusal(() -> TlogProof.parse(big)));
        StringBuilder many = new StringBuilder(text).append('\n');
        for (int i = 0; i < 33; i++) many.append(LogTestKit.logSignatureLine("o", 10, text));
        assertEquals(LogException.Reason.MALFORMED_PROOF, refusal(() -> TlogProof.parse(sampleProof(null, "index 1", List.of(), many.toString()))));
    }
}
