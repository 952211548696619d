// The pin manifest: which SPKI pins each domain accepts, versioned and expiring (DESIGN.md §5).
package org.pinion.trust;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** A parsed, checked manifest payload ({@code type: pinion.pins}). */
public final class ManifestPayload {
    /** The document type string. */
    public static final String DOCUMENT_TYPE = "pinion.pins";

    /** The scope. */
    public final String scope;
    /** Version of the root it was signed under. */
    public final long rootVersion;
    /** The manifest version. */
    public final long version;
    /** Issue time. */
    public final Timestamp issuedAt;
    /** Expiry. */
    public final Timestamp expiresAt;
    /** The domains in document order, unique names. */
    public final List<PinnedDomain> domains;
    /** Pins revoked by this version. */
    public final List<Pin> revokedPins;

    private ManifestPayload(String scope, long rootVersion, long version, Timestamp issuedAt, Timestamp expiresAt,
            List<PinnedDomain> domains, List<Pin> revokedPins) {
        this.scope = scope;
        this.rootVersion = rootVersion;
        this.version = version;
        this.issuedAt = issuedAt;
        this.expiresAt = expiresAt;
        this.domains = Collections.unmodifiableList(domains);
        this.revokedPins = Collections.unmodifiableList(revokedPins);
    }

    /** @return {@code expiresAt - issuedAt} in seconds */
    public long lifetime() { return expiresAt.seconds - issuedAt.seconds; }

    /** @return the (rootVersion, version) order */
    public ManifestOrder order() { return new ManifestOrder(rootVersion, version); }

    /**
     * Parses and checks a manifest payload.
     *
     * @param bytes the payload bytes
     * @param limits parser, domain and pin limits
     * @return the payload
     * @throws FormatException naming the member (e.g. {@code domains[3].pins[1]}) and rule
     */
    public static ManifestPayload parse(byte[] bytes, Limits limits) throws FormatException {
        SchemaReader reader = new SchemaReader(StrictJsonParser.parse(bytes, limits.json()), "");
        reader.documentHeader(DOCUMENT_TYPE);
        String scope = reader.string("scope");
        try {
            Names.validateScope(scope);
        } catch (FormatException e) {
            throw e.at("scope");
        }
        long rootVersion = reader.integer("rootVersion");
        long version = reader.integer("version");
        Timestamp issuedAt = reader.time("issuedAt");
        Timestamp expiresAt = reader.time("expiresAt");
        if (!expiresAt.after(issuedAt)) {
            throw reader.error("expiresAt", FormatRule.EXPIRES_NOT_AFTER_ISSUED, "expiresAt is not after issuedAt");
        }
        String previous = reader.optionalString("previous");
        if (previous != null) {
            byte[] hash = previous.startsWith("sha256:") ? Codec.decodeHexLowercase(previous.substring(7)) : null;
            if (hash == null || hash.length != 32) {
                throw reader.error("previous", FormatRule.INVALID_PREVIOUS_HASH,
                        "\"" + previous + "\" is not sha256: plus 64 lowercase hex characters");
            }
        }
        List<JsonValue> domainValues = reader.array("domains", limits.maxDomains);
        List<PinnedDomain> domains = parseDomains(domainValues, "domains", limits);
        List<JsonValue> revokedValues = reader.optionalArray("revokedPins", Integer.MAX_VALUE);
        List<Pin> revoked = parsePins(revokedValues == null ? List.of() : revokedValues, reader, "revokedPins");
        reader.finish();
        return new ManifestPayload(scope, rootVersion, version, issuedAt, expiresAt, domains, revoked);
    }

    /**
     * The domain entries of a manifest (also used by the baseline so the two never drift).
     *
     * @param values the array elements
     * @param arrayPath path of the array, e.g. {@code domains}
     * @param limits pin limits
     * @return the entries
     * @throws FormatException naming {@code domains[i]...} and the rule
     */
    static List<PinnedDomain> parseDomains(List<JsonValue> values, String arrayPath, Limits limits) throws FormatException {
        List<PinnedDomain> domains = new ArrayList<>(values.size());
        Set<String> names = new HashSet<>(Math.max(16, values.size() * 2));
        for (int i = 0; i < values.size(); i++) {
            SchemaReader reader = new SchemaReader(values.get(i), arrayPath, i);
            String name = reader.string("name");
            try {
                Names.validateHostName(name);
            } catch (FormatException e) {
                throw e.at(reader.childPath("name"));
            }
            boolean includeSubdomains = reader.bool("includeSubdomains", false);
            boolean enforce = reader.bool("enforce", true);
            List<JsonValue> pinValues = reader.array("pins", limits.maxPinsPerDomain);
            if (pinValues.isEmpty()) throw reader.error("pins", FormatRule.EMPTY, "must not be empty");
            List<Pin> pins = parsePins(pinValues, reader, "pins");
            reader.finish();
            if (!names.add(name)) {
                throw new FormatException(reader.childPath("name"), FormatRule.DUPLICATE_DOMAIN, "duplicate domain " + name);
            }
            domains.add(PinnedDomain.owning(name, includeSubdomains, enforce, pins));
        }
        return domains;
    }

    /** Pin lists up to this length are checked for duplicates by a scan (no set); longer ones by a set. */
    static final int LINEAR_DUPLICATE_SCAN_PINS = 16;

    /**
     * @param values the array's elements
     * @param owner the reader of the object holding the array (for error paths only)
     * @param name the array's member name
     * @return the pins, a list no one else holds
     */
    private static List<Pin> parsePins(List<JsonValue> values, SchemaReader owner, String name) throws FormatException {
        int count = values.size();
        List<Pin> pins = new ArrayList<>(count);
        Set<Pin> seen = count > LINEAR_DUPLICATE_SCAN_PINS ? new HashSet<>(count * 2) : null;
        for (int i = 0; i < count; i++) {
            JsonValue value = values.get(i);
            if (value.kind() != JsonValue.Kind.STRING) {
                throw new FormatException(owner.elementPath(name, i), FormatRule.WRONG_TYPE, "expected a pin string");
            }
            Pin pin;
            try {
                pin = Pin.parse(value.text());
            } catch (FormatException e) {
                throw e.at(owner.elementPath(name, i));
            }
            boolean duplicate = seen != null ? !seen.add(pin) : pins.contains(pin);
            if (duplicate) {
                throw new FormatException(owner.elementPath(name, i), FormatRule.DUPLICATE_PIN, "duplicate pin " + value.text());
            }
            pins.add(pin);
        }
        return pins;
    }
}
