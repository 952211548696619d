// The root document: which keys hold the root and pins roles, at what threshold (DESIGN.md §4).
package org.pinion.trust;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.pinion.trust.log.LogPolicy;
import org.pinion.trust.log.NoteException;
import org.pinion.trust.log.NoteVerifierKey;

/** A parsed, checked root payload ({@code type: pinion.root}). */
public final class RootPayload {
    /** The document type string. */
    public static final String DOCUMENT_TYPE = "pinion.root";

    /** A role: the key ids allowed to sign for it and how many distinct ones must. */
    public static final class Role {
        /** Key ids in document order, unique, each listed in {@code keys}. */
        public final List<String> keyIds;
        /** 1 ... keyIds.size(). */
        public final int threshold;

        Role(List<String> keyIds, int threshold) {
            this.keyIds = Collections.unmodifiableList(new ArrayList<>(keyIds));
            this.threshold = threshold;
        }

        /** @param other a role @return same key ids (as a set) and threshold */
        public boolean sameAs(Role other) {
            return threshold == other.threshold && new HashSet<>(keyIds).equals(new HashSet<>(other.keyIds));
        }
    }

    /** The scope. */
    public final String scope;
    /** The version, 1 ... 2^53-1. */
    public final long version;
    /** Issue time. */
    public final Timestamp issuedAt;
    /** Expiry; only the newest root's is enforced. */
    public final Timestamp expiresAt;
    /** Cap on manifests' {@code expiresAt - issuedAt}, in seconds. */
    public final long maxManifestLifetime;
    /** Oldest root version whose manifests are valid under this root (1 ... version; absent = version). */
    public final long pinsRoleSince;
    /** Raw 32-byte public keys by key id. */
    private final Map<String, byte[]> keys;
    /** The root role. */
    public final Role rootRole;
    /** The pins role. */
    public final Role pinsRole;
    /** The transparency log the root requires (docs/DESIGN.md §12), or null when it has none. */
    public final LogPolicy log;

    private RootPayload(String scope, long version, Timestamp issuedAt, Timestamp expiresAt, long maxManifestLifetime,
            long pinsRoleSince, Map<String, byte[]> keys, Role rootRole, Role pinsRole, LogPolicy log) {
        this.scope = scope;
        this.version = version;
        this.issuedAt = issuedAt;
        this.expiresAt = expiresAt;
        this.maxManifestLifetime = maxManifestLifetime;
        this.pinsRoleSince = pinsRoleSince;
        this.keys = keys;
        this.rootRole = rootRole;
        this.pinsRole = pinsRole;
        this.log = log;
    }

    /** @param keyId a key id @return a copy of its raw public key, or null when not listed */
    public byte[] publicKey(String keyId) {
        byte[] key = keys.get(keyId);
        return key == null ? null : key.clone();
    }

    /**
     * Parses and checks a root payload: strict JSON, every member, key ids equal to the SHA-256 of
     * their keys, usable Ed25519 points, roles naming listed keys once, thresholds 1...n, and
     * {@code pinsRoleSince} in 1...version.
     *
     * @param bytes the payload bytes
     * @param limits parser limits
     * @param crypto SHA-256 and the Ed25519 point checks
     * @return the payload
     * @throws FormatException naming the member and rule
     */
    public static RootPayload parse(byte[] bytes, Limits limits, CryptoProvider crypto) throws FormatException {
        SchemaReader reader = new SchemaReader(StrictJsonParser.parse(bytes, limits.json()), "");
        reader.documentHeader(DOCUMENT_TYPE);
        String scope = reader.string("scope");
        try {
            Names.validateScope(scope);
        } catch (FormatException e) {
            throw e.at("scope");
        }
        long version = reader.integer("version");
        Timestamp issuedAt = reader.time("issuedAt");
        Timestamp expiresAt = reader.time("expiresAt");
        if (!expiresAt.after(issuedAt)) {
            throw reader.error("expiresAt", FormatRule.EXPIRES_NOT_AFTER_ISSUED, "expiresAt is not after issuedAt");
        }
        long maxLifetime = reader.integer("maxManifestLifetime");
        long pinsRoleSince = version;
        if (reader.object.get("pinsRoleSince") != null) {
            pinsRoleSince = reader.integer("pinsRoleSince");
            if (pinsRoleSince > version) {
                throw reader.error("pinsRoleSince", FormatRule.INVALID_PINS_ROLE_SINCE,
                        "pinsRoleSince " + pinsRoleSince + " is above the root's version " + version);
            }
        } else {
            reader.optional("pinsRoleSince");
        }
        SchemaReader keysReader = new SchemaReader(reader.required("keys"), "keys");
        Map<String, byte[]> keys = new LinkedHashMap<>();
        for (JsonValue.Member member : keysReader.object.members()) {
            if (member.name.startsWith("x-")) continue;
            String keyPath = keysReader.childPath(member.name);
            try {
                Names.validateKeyId(member.name);
            } catch (FormatException e) {
                throw e.at(keyPath);
            }
            SchemaReader keyReader = new SchemaReader(member.value, keyPath);
            String type = keyReader.string("type");
            if (!type.equals("ed25519")) {
                throw keyReader.error("type", FormatRule.INVALID_PUBLIC_KEY, "invalid public key: type \"" + type + "\" is not ed25519");
            }
            byte[] raw = Codec.decodeBase64Canonical(keyReader.string("public"));
            if (raw == null) throw keyReader.error("public", FormatRule.INVALID_BASE64, "not canonical padded base64");
            if (raw.length != 32) {
                throw keyReader.error("public", FormatRule.INVALID_PUBLIC_KEY, "invalid public key: not 32 bytes (got " + raw.length + ")");
            }
            if (!crypto.isUsablePublicKey(raw)) {
                throw keyReader.error("public", FormatRule.INVALID_PUBLIC_KEY,
                        "invalid public key: not a usable Ed25519 point (small-order or non-canonical)");
            }
            keyReader.finish();
            String actual = Codec.hex(crypto.sha256(raw));
            if (!actual.equals(member.name)) {
                throw new FormatException(keyPath, FormatRule.KEY_ID_MISMATCH,
                        "key listed as " + member.name + " has key id " + actual + " (SHA-256 of its public key)");
            }
            keysReader.optional(member.name);
            keys.put(member.name, raw);
        }
        keysReader.finish();
        if (keys.isEmpty()) throw reader.error("keys", FormatRule.EMPTY, "must not be empty");
        SchemaReader rolesReader = new SchemaReader(reader.required("roles"), "roles");
        Role rootRole = parseRole(rolesReader.required("root"), "roles.root", keys.keySet());
        Role pinsRole = parseRole(rolesReader.required("pins"), "roles.pins", keys.keySet());
        rolesReader.finish();
        JsonValue logValue = reader.optional("log");
        LogPolicy log = logValue == null ? null : parseLog(logValue, reader.childPath("log"), crypto);
        reader.finish();
        return new RootPayload(scope, version, issuedAt, expiresAt, maxLifetime, pinsRoleSince,
                Collections.unmodifiableMap(keys), rootRole, pinsRole, log);
    }

    /**
     * Parses the {@code log} member as the Swift SDK does: {@code origin}, {@code key} (a C2SP note
     * verifier key string, type 0x01), {@code witnesses} (at most {@link LogPolicy#MAX_WITNESSES} objects
     * of {@code key}, type 0x04, and {@code url}), {@code quorum} (1 ... 32, then 1 ... witnesses),
     * {@code maxCheckpointAge} and the optional {@code checkpointGrace} (seconds, 0 ... 2^53-1; default
     * {@link LogPolicy#DEFAULT_GRACE}); no other members.
     */
    private static LogPolicy parseLog(JsonValue value, String path, CryptoProvider crypto) throws FormatException {
        SchemaReader reader = new SchemaReader(value, path);
        String origin = reader.string("origin");
        String logKeyText = reader.string("key");
        NoteVerifierKey logKey;
        try {
            logKey = NoteVerifierKey.parse(logKeyText, crypto);
        } catch (NoteException e) {
            throw reader.error("key", FormatRule.INVALID_LOG, "invalid log: " + e.getMessage());
        }
        List<LogPolicy.Witness> witnesses = new ArrayList<>();
        List<JsonValue> elements = reader.array("witnesses", LogPolicy.MAX_WITNESSES);
        for (int i = 0; i < elements.size(); i++) {
            SchemaReader witnessReader = new SchemaReader(elements.get(i), reader.elementPath("witnesses", i));
            String keyText = witnessReader.string("key");
            NoteVerifierKey key;
            try {
                key = NoteVerifierKey.parse(keyText, crypto);
            } catch (NoteException e) {
                throw witnessReader.error("key", FormatRule.INVALID_LOG, "invalid log: " + e.getMessage());
            }
            String url = witnessReader.string("url");
            witnessReader.finish();
            witnesses.add(new LogPolicy.Witness(key, url));
        }
        long quorum = SchemaReader.integer(reader.required("quorum"), reader.childPath("quorum"), 1, LogPolicy.MAX_WITNESSES);
        long maxAge = SchemaReader.integer(reader.required("maxCheckpointAge"), reader.childPath("maxCheckpointAge"), 0, Limits.MAX_INTEGER);
        long grace = LogPolicy.DEFAULT_GRACE;
        JsonValue graceValue = reader.optional("checkpointGrace");
        if (graceValue != null) grace = SchemaReader.integer(graceValue, reader.childPath("checkpointGrace"), 0, Limits.MAX_INTEGER);
        reader.finish();
        try {
            return new LogPolicy(origin, logKey, witnesses, (int) quorum, maxAge, grace);
        } catch (IllegalArgumentException e) {
            throw new FormatException(path, FormatRule.INVALID_LOG, "invalid log: " + e.getMessage());
        }
    }

    private static Role parseRole(JsonValue value, String path, Set<String> listed) throws FormatException {
        SchemaReader reader = new SchemaReader(value, path);
        List<String> ids = new ArrayList<>();
        List<JsonValue> elements = reader.array("keyids", Integer.MAX_VALUE);
        for (int i = 0; i < elements.size(); i++) {
            String elementPath = reader.elementPath("keyids", i);
            JsonValue element = elements.get(i);
            if (element.kind() != JsonValue.Kind.STRING) throw new FormatException(elementPath, FormatRule.WRONG_TYPE, "expected a string");
            String id = element.text();
            try {
                Names.validateKeyId(id);
            } catch (FormatException e) {
                throw e.at(elementPath);
            }
            if (!listed.contains(id)) {
                throw new FormatException(elementPath, FormatRule.INVALID_ROLE_KEY, "invalid role key: " + id + " is not listed in keys");
            }
            if (ids.contains(id)) {
                throw new FormatException(elementPath, FormatRule.INVALID_ROLE_KEY, "invalid role key: " + id + " is listed twice");
            }
            ids.add(id);
        }
        if (ids.isEmpty()) throw reader.error("keyids", FormatRule.EMPTY, "must not be empty");
        long threshold = SchemaReader.integer(reader.required("threshold"), reader.childPath("threshold"), Long.MIN_VALUE, Long.MAX_VALUE);
        if (threshold < 1 || threshold > ids.size()) {
            throw reader.error("threshold", FormatRule.INVALID_THRESHOLD, "threshold " + threshold + " is outside 1..." + ids.size());
        }
        reader.finish();
        return new Role(ids, (int) threshold);
    }
}
