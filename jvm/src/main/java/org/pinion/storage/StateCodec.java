// The client state record as strict JSON followed by its own SHA-256 line, so a torn or flipped copy is refused.
package org.pinion.storage;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.pinion.crypto.Sha256;
import org.pinion.trust.ClientState;
import org.pinion.trust.Codec;
import org.pinion.trust.FormatException;
import org.pinion.trust.FormatRule;
import org.pinion.trust.JsonLimits;
import org.pinion.trust.JsonValue;
import org.pinion.trust.JsonWriter;
import org.pinion.trust.Limits;
import org.pinion.trust.ManifestOrder;
import org.pinion.trust.Names;
import org.pinion.trust.Pin;
import org.pinion.trust.StrictJsonParser;
import org.pinion.trust.Timestamp;

/**
 * One copy of the state record:
 *
 * <pre>
 * {"type": "pinion.jvm-client-state", "formatVersion": 1, "scope": ..., "acceptedRoots": [b64...],
 *  "manifest": b64 | null, "floor": {"rootVersion", "version"} | null, "floorPayloadSHA256": hex | null,
 *  "lastKnownTime": time | null, "revokedPins": [...], "revokedSince": n, "manifestDomainNames": [...],
 *  "manifestETag": text | null, "logCheckpoint": {"note": b64, "quorumTime": n} (only when one is stored)}
 * sha256 &lt;64 lowercase hex of every byte before this line&gt;
 * </pre>
 *
 * The checksum is not a security measure (envelopes are re-verified at start-up); it makes a
 * torn, truncated or bit-flipped copy count as lost (DESIGN.md §6).
 */
public final class StateCodec {
    /** The document type of a copy. */
    public static final String DOCUMENT_TYPE = "pinion.jvm-client-state";
    /** The format version written and read. */
    public static final long FORMAT_VERSION = 1;
    /** Largest copy read, in bytes (64 MiB). */
    public static final int MAX_STATE_BYTES = 64 * 1024 * 1024;
    private static final int TRAILER = "sha256 ".length() + 64 + 1;

    private StateCodec() {}

    /** @param state the state @return the copy's bytes: JSON, then the checksum line */
    public static byte[] encode(ClientState state) {
        List<JsonValue.Member> m = new ArrayList<>();
        m.add(member("type", JsonValue.string(DOCUMENT_TYPE)));
        m.add(member("formatVersion", JsonValue.number(FORMAT_VERSION)));
        m.add(member("scope", JsonValue.string(state.scope)));
        List<JsonValue> roots = new ArrayList<>();
        for (byte[] root : state.acceptedRoots) roots.add(JsonValue.string(Codec.base64(root)));
        m.add(member("acceptedRoots", JsonValue.array(roots)));
        m.add(member("manifest", state.manifest == null ? JsonValue.NULL : JsonValue.string(Codec.base64(state.manifest))));
        m.add(member("floor", state.floor == null ? JsonValue.NULL : JsonValue.object(Arrays.asList(
                member("rootVersion", JsonValue.number(state.floor.rootVersion)), member("version", JsonValue.number(state.floor.version))))));
        m.add(member("floorPayloadSHA256", state.floorPayloadSha256 == null ? JsonValue.NULL : JsonValue.string(Codec.hex(state.floorPayloadSha256))));
        m.add(member("lastKnownTime", state.lastKnownTime == null ? JsonValue.NULL : JsonValue.string(state.lastKnownTime.toString())));
        List<JsonValue> pins = new ArrayList<>();
        for (Pin pin : state.revokedPins) pins.add(JsonValue.string(pin.toString()));
        m.add(member("revokedPins", JsonValue.array(pins)));
        m.add(member("revokedSince", JsonValue.number(state.revokedSince)));
        List<JsonValue> names = new ArrayList<>();
        for (String name : state.manifestDomainNames) names.add(JsonValue.string(name));
        m.add(member("manifestDomainNames", JsonValue.array(names)));
        m.add(member("manifestETag", state.manifestETag == null ? JsonValue.NULL : JsonValue.string(state.manifestETag)));
        // Written only when there is one, so a state without a log encodes as format version 1 always did.
        if (state.logCheckpoint != null) {
            m.add(member("logCheckpoint", JsonValue.object(Arrays.asList(member("note", JsonValue.string(Codec.base64(state.logCheckpoint))),
                    member("quorumTime", JsonValue.number(state.logQuorumTime))))));
        }
        byte[] body = JsonWriter.write(JsonValue.object(m));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] trailer = ("sha256 " + Codec.hex(Sha256.digest(body)) + "\n").getBytes(StandardCharsets.US_ASCII);
        out.write(body, 0, body.length);
        out.write(trailer, 0, trailer.length);
        return out.toByteArray();
    }

    private static JsonValue.Member member(String name, JsonValue value) { return new JsonValue.Member(name, value); }

    /**
     * @param bytes a copy
     * @param limits envelope and domain limits
     * @return the state
     * @throws FormatException when the copy is over its size, lacks or fails its checksum, or breaks
     *     any rule of the format (all of which make the copy count as lost)
     */
    public static ClientState decode(byte[] bytes, Limits limits) throws FormatException {
        if (bytes.length > MAX_STATE_BYTES) {
            throw new FormatException("", FormatRule.TOO_LARGE, bytes.length + " bytes is over the limit of " + MAX_STATE_BYTES + " bytes");
        }
        byte[] body = checkedBody(bytes);
        return decodeBody(body, limits);
    }

    /** The JSON body of a copy whose checksum line matches. */
    static byte[] checkedBody(byte[] bytes) throws FormatException {
        if (bytes.length < TRAILER) throw new FormatException("", FormatRule.SYNTAX, "no checksum line (truncated)");
        byte[] body = Arrays.copyOfRange(bytes, 0, bytes.length - TRAILER);
        String trailer = new String(bytes, bytes.length - TRAILER, TRAILER, StandardCharsets.ISO_8859_1);
        if (!trailer.equals("sha256 " + Codec.hex(Sha256.digest(body)) + "\n")) {
            throw new FormatException("", FormatRule.SYNTAX, "the content does not match its SHA-256 line (corrupt copy)");
        }
        return body;
    }

    /**
     * The domain names of a copy, read without its checksum: kept when a copy is lost, so that they stay
     * enforced (enforcing too much until the next refresh is safer than unpinning one).
     *
     * @param bytes a copy, possibly damaged
     * @return the names it still yields, possibly none
     */
    public static List<String> salvageDomainNames(byte[] bytes) {
        List<String> names = new ArrayList<>();
        for (int cut : new int[] {bytes.length - TRAILER, bytes.length}) {
            if (cut <= 0) continue;
            try {
                JsonValue value = StrictJsonParser.parse(Arrays.copyOf(bytes, cut), new JsonLimits(MAX_STATE_BYTES, 8, 1 << 20, Collections.emptyMap()));
                JsonValue list = value.get("manifestDomainNames");
                if (list == null) continue;
                for (JsonValue v : list.elements()) {
                    if (v.kind() != JsonValue.Kind.STRING) continue;
                    try {
                        Names.validateHostName(v.text());
                        if (!names.contains(v.text())) names.add(v.text());
                    } catch (FormatException e) {
                        continue;
                    }
                }
                return names;
            } catch (FormatException e) {
                continue;
            }
        }
        return names;
    }

    private static ClientState decodeBody(byte[] body, Limits limits) throws FormatException {
        JsonValue root = StrictJsonParser.parse(body, new JsonLimits(MAX_STATE_BYTES, 8, 1 << 20, Collections.emptyMap()));
        if (root.kind() != JsonValue.Kind.OBJECT) throw new FormatException("", FormatRule.WRONG_TYPE, "expected an object");
        Set<String> known = new HashSet<>(Arrays.asList("type", "formatVersion", "scope", "acceptedRoots", "manifest", "floor", "floorPayloadSHA256",
                "lastKnownTime", "revokedPins", "revokedSince", "manifestDomainNames", "manifestETag", "logCheckpoint"));
        for (JsonValue.Member member : root.members()) {
            if (!known.contains(member.name)) {
                throw new FormatException("", FormatRule.UNKNOWN_MEMBER, "unknown member \"" + member.name + "\"");
            }
        }
        if (!DOCUMENT_TYPE.equals(text(root, "type", false))) throw new FormatException("type", FormatRule.WRONG_DOCUMENT_TYPE, "not a " + DOCUMENT_TYPE);
        long format = integer(require(root, "formatVersion"), "formatVersion");
        if (format != FORMAT_VERSION) {
            throw new FormatException("formatVersion", FormatRule.UNSUPPORTED_SPEC_VERSION, "formatVersion " + format + " is not supported");
        }
        String scope = text(root, "scope", false);
        try {
            Names.validateScope(scope);
        } catch (FormatException e) {
            throw e.at("scope");
        }
        ClientState state = new ClientState(scope);
        List<JsonValue> roots = array(root, "acceptedRoots");
        for (int i = 0; i < roots.size(); i++) state.acceptedRoots.add(envelope(roots.get(i), "acceptedRoots[" + i + "]", limits));
        JsonValue manifest = require(root, "manifest");
        state.manifest = manifest.kind() == JsonValue.Kind.NULL ? null : envelope(manifest, "manifest", limits);
        JsonValue floor = require(root, "floor");
        if (floor.kind() != JsonValue.Kind.NULL) {
            state.floor = new ManifestOrder(integer(require(floor, "rootVersion"), "floor.rootVersion"), integer(require(floor, "version"), "floor.version"));
        }
        String hash = text(root, "floorPayloadSHA256", true);
        if (hash != null) {
            state.floorPayloadSha256 = Codec.decodeHexLowercase(hash);
            if (state.floorPayloadSha256 == null || state.floorPayloadSha256.length != 32) {
                throw new FormatException("floorPayloadSHA256", FormatRule.INVALID_PREVIOUS_HASH, "not 64 lowercase hex characters");
            }
        }
        String time = text(root, "lastKnownTime", true);
        if (time != null) {
            try {
                state.lastKnownTime = Timestamp.parse(time);
            } catch (FormatException e) {
                throw e.at("lastKnownTime");
            }
        }
        List<JsonValue> pins = array(root, "revokedPins");
        for (int i = 0; i < pins.size(); i++) {
            try {
                Pin pin = Pin.parse(pins.get(i).kind() == JsonValue.Kind.STRING ? pins.get(i).text() : "");
                if (state.revokedPins.contains(pin)) throw new FormatException("", FormatRule.DUPLICATE_PIN, "duplicate pin " + pin);
                state.revokedPins.add(pin);
            } catch (FormatException e) {
                throw e.at("revokedPins[" + i + "]");
            }
        }
        state.revokedSince = integer(require(root, "revokedSince"), "revokedSince");
        List<JsonValue> names = array(root, "manifestDomainNames");
        if (names.size() > limits.maxDomains) throw new FormatException("manifestDomainNames", FormatRule.TOO_MANY_ELEMENTS, "too many names");
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i).kind() == JsonValue.Kind.STRING ? names.get(i).text() : "";
            try {
                Names.validateHostName(name);
            } catch (FormatException e) {
                throw e.at("manifestDomainNames[" + i + "]");
            }
            if (state.manifestDomainNames.contains(name)) throw new FormatException("manifestDomainNames[" + i + "]", FormatRule.DUPLICATE_DOMAIN, "duplicate domain " + name);
            state.manifestDomainNames.add(name);
        }
        state.manifestETag = text(root, "manifestETag", true);
        if (state.manifestETag != null && (state.manifestETag.length() > 4096 || state.manifestETag.chars().anyMatch(c -> c < 0x20 || c == 0x7f))) {
            throw new FormatException("manifestETag", FormatRule.WRONG_TYPE, "an ETag without control characters");
        }
        // Absent in copies written before the log existed: no checkpoint.
        JsonValue checkpoint = root.get("logCheckpoint");
        if (checkpoint != null && checkpoint.kind() != JsonValue.Kind.NULL) {
            if (checkpoint.kind() != JsonValue.Kind.OBJECT || checkpoint.members().size() != 2) {
                throw new FormatException("logCheckpoint", FormatRule.WRONG_TYPE, "expected {\"note\", \"quorumTime\"} or null");
            }
            byte[] bytes = note(require(checkpoint, "note"), "logCheckpoint.note");
            JsonValue quorumTime = require(checkpoint, "quorumTime");
            if (quorumTime.kind() != JsonValue.Kind.NUMBER || !quorumTime.text().matches("0|[1-9][0-9]{0,15}")
                    || Long.parseLong(quorumTime.text()) > Limits.MAX_INTEGER) {
                throw new FormatException("logCheckpoint.quorumTime", FormatRule.INTEGER_OUT_OF_RANGE, "integer out of range 0..." + Limits.MAX_INTEGER);
            }
            state.logCheckpoint = bytes;
            state.logQuorumTime = Long.parseLong(quorumTime.text());
        }
        return state;
    }

    /** A signed note's bytes as stored: canonical base64 of 1 ... 65,536 bytes. */
    private static byte[] note(JsonValue value, String path) throws FormatException {
        byte[] bytes = value.kind() == JsonValue.Kind.STRING ? Codec.decodeBase64Canonical(value.text()) : null;
        if (bytes == null || bytes.length == 0 || bytes.length > 64 * 1024) {
            throw new FormatException(path, FormatRule.INVALID_BASE64, "not canonical base64 of 1 ... 65536 bytes");
        }
        return bytes;
    }

    private static JsonValue require(JsonValue object, String name) throws FormatException {
        JsonValue value = object.get(name);
        if (value == null) throw new FormatException("", FormatRule.MISSING_MEMBER, "required member \"" + name + "\" is missing");
        return value;
    }

    private static String text(JsonValue object, String name, boolean nullable) throws FormatException {
        JsonValue value = require(object, name);
        if (nullable && value.kind() == JsonValue.Kind.NULL) return null;
        if (value.kind() != JsonValue.Kind.STRING) throw new FormatException(name, FormatRule.WRONG_TYPE, "expected a string");
        return value.text();
    }

    private static List<JsonValue> array(JsonValue object, String name) throws FormatException {
        JsonValue value = require(object, name);
        if (value.kind() != JsonValue.Kind.ARRAY) throw new FormatException(name, FormatRule.WRONG_TYPE, "expected an array");
        return value.elements();
    }

    private static long integer(JsonValue value, String path) throws FormatException {
        if (value.kind() != JsonValue.Kind.NUMBER || !value.text().matches("[1-9][0-9]{0,15}")) {
            throw new FormatException(path, FormatRule.INTEGER_OUT_OF_RANGE, "integer out of range 1..." + Limits.MAX_INTEGER);
        }
        long n = Long.parseLong(value.text());
        if (n > Limits.MAX_INTEGER) throw new FormatException(path, FormatRule.INTEGER_OUT_OF_RANGE, "integer out of range 1..." + Limits.MAX_INTEGER);
        return n;
    }

    private static byte[] envelope(JsonValue value, String path, Limits limits) throws FormatException {
        byte[] bytes = value.kind() == JsonValue.Kind.STRING ? Codec.decodeBase64Canonical(value.text()) : null;
        if (bytes == null || bytes.length == 0 || bytes.length > limits.maxEnvelopeBytes) {
            throw new FormatException(path, FormatRule.INVALID_BASE64, "not canonical base64 of 1 ... " + limits.maxEnvelopeBytes + " bytes");
        }
        return bytes;
    }
}
