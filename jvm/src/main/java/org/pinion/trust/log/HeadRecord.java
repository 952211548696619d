// The head record (docs/DESIGN.md §12, docs/TRANSPARENCY.md): the one log entry a publish step appends, parsed canonically.
package org.pinion.trust.log;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.pinion.trust.Codec;
import org.pinion.trust.FormatException;
import org.pinion.trust.Limits;
import org.pinion.trust.Names;

/**
 * The state of a scope after one publish step. Its bytes are exactly five lines, each ending in one
 * newline, printable ASCII only:
 *
 * <pre>
 * pinion.head/v1
 * scope &lt;scope&gt;
 * sequence &lt;n&gt;
 * root &lt;version&gt; &lt;payload SHA-256, 64 lowercase hex&gt;
 * manifest &lt;rootVersion&gt; &lt;version&gt; &lt;payload SHA-256, 64 lowercase hex&gt;
 * </pre>
 *
 * Numbers are decimal without leading zeroes, at most 2^53 - 1; versions start at 1. Immutable.
 */
public final class HeadRecord {
    /** The first line. */
    public static final String TAG = "pinion.head/v1";
    /** Largest head record, in bytes. */
    public static final int MAX_BYTES = 512;

    /** The scope the step published. */
    public final String scope;
    /** The step's zero-based position in index.json, and the entry's log index. */
    public final long sequence;
    /** The newest root's version. */
    public final long rootVersion;
    private final byte[] rootPayloadSha256;
    /** The latest manifest's rootVersion. */
    public final long manifestRootVersion;
    /** The latest manifest's version. */
    public final long manifestVersion;
    private final byte[] manifestPayloadSha256;

    private HeadRecord(String scope, long sequence, long rootVersion, byte[] rootHash, long manifestRootVersion,
            long manifestVersion, byte[] manifestHash) {
        this.scope = scope;
        this.sequence = sequence;
        this.rootVersion = rootVersion;
        this.rootPayloadSha256 = rootHash;
        this.manifestRootVersion = manifestRootVersion;
        this.manifestVersion = manifestVersion;
        this.manifestPayloadSha256 = manifestHash;
    }

    /** @return a copy of SHA-256 of the newest root's payload */
    public byte[] rootPayloadSha256() { return rootPayloadSha256.clone(); }

    /** @return a copy of SHA-256 of the latest manifest's payload */
    public byte[] manifestPayloadSha256() { return manifestPayloadSha256.clone(); }

    /** @return the record's exact bytes */
    public byte[] bytes() {
        String text = TAG + "\nscope " + scope + "\nsequence " + sequence + "\nroot " + rootVersion + " " + Codec.hex(rootPayloadSha256)
                + "\nmanifest " + manifestRootVersion + " " + manifestVersion + " " + Codec.hex(manifestPayloadSha256) + "\n";
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Parses a head record: it must be byte for byte what {@link #bytes()} gives.
     *
     * @param bytes the entry
     * @return the record
     * @throws LogException MALFORMED_HEAD naming the rule
     */
    public static HeadRecord parse(byte[] bytes) throws LogException {
        if (bytes.length > MAX_BYTES) throw malformed("a head record is at most " + MAX_BYTES + " bytes");
        for (byte b : bytes) {
            if (!(b >= 0x20 && b <= 0x7e) && b != 0x0A) throw malformed("malformed head record: only printable ASCII and newlines");
        }
        String text = new String(bytes, StandardCharsets.US_ASCII);
        if (!text.endsWith("\n")) throw malformed("malformed head record: does not end in a newline");
        String[] lines = text.substring(0, text.length() - 1).split("\n", -1);
        if (lines.length != 5 || !lines[0].equals(TAG)) throw malformed("malformed head record: expected five lines starting " + TAG);
        String scope = field(lines[1], "scope", 1)[0];
        long sequence = number(field(lines[2], "sequence", 1)[0]);
        String[] root = field(lines[3], "root", 2);
        String[] manifest = field(lines[4], "manifest", 3);
        long rootVersion = number(root[0]);
        byte[] rootHash = hash(root[1]);
        long manifestRootVersion = number(manifest[0]);
        long manifestVersion = number(manifest[1]);
        byte[] manifestHash = hash(manifest[2]);
        try {
            Names.validateScope(scope);
        } catch (FormatException e) {
            throw malformed("malformed head record: scope: " + e.getMessage());
        }
        if (sequence > Limits.MAX_INTEGER) throw malformed("malformed head record: sequence out of range");
        for (long version : new long[] {rootVersion, manifestRootVersion, manifestVersion}) {
            if (version < 1 || version > Limits.MAX_INTEGER) throw malformed("malformed head record: version " + version + " out of range");
        }
        if (manifestRootVersion > rootVersion) {
            throw malformed("malformed head record: the manifest's rootVersion is above the newest root's version");
        }
        HeadRecord record = new HeadRecord(scope, sequence, rootVersion, rootHash, manifestRootVersion, manifestVersion, manifestHash);
        if (!Arrays.equals(record.bytes(), bytes)) throw malformed("malformed head record: not in canonical form");
        return record;
    }

    private static String[] field(String line, String name, int count) throws LogException {
        String[] parts = line.split(" ", -1);
        if (parts.length != count + 1 || !parts[0].equals(name)) throw malformed("malformed head record: expected '" + name + "' line");
        return Arrays.copyOfRange(parts, 1, parts.length);
    }

    private static long number(String text) throws LogException {
        long value = Merkle.parseDecimal(text, 16);
        if (value < 0) throw malformed("malformed head record: '" + text + "' is not a decimal without leading zeroes");
        return value;
    }

    private static byte[] hash(String text) throws LogException {
        byte[] bytes = text.length() == 64 ? Codec.decodeHexLowercase(text) : null;
        if (bytes == null) throw malformed("malformed head record: '" + text + "' is not 64 lowercase hex digits");
        return bytes;
    }

    private static LogException malformed(String message) {
        return new LogException(LogException.Reason.MALFORMED_HEAD, message);
    }
}
