// The pin manifest: which SPKI pins each domain accepts, versioned and expiring (DESIGN.md §5).
package org.pinion.trust;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
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
    /**
     * {@link #domains} by name (the table the parse checked names for duplicates with, kept): the
     * merge takes it over whole instead of building it again. Never changed after the parse.
     */
    private final Map<String, PinnedDomain> byName;

    private ManifestPayload(String scope, long rootVersion, long version, Timestamp issuedAt, Timestamp expiresAt,
            List<PinnedDomain> domains, Map<String, PinnedDomain> byName, List<Pin> revokedPins) {
        this.scope = scope;
        this.rootVersion = rootVersion;
        this.version = version;
        this.issuedAt = issuedAt;
        this.expiresAt = expiresAt;
        this.domains = Collections.unmodifiableList(domains);
        // Kept as the parse made it (an unmodifiable view would wrap every entry the merge copies);
        // only this package sees it, through byName(), and only reads it.
        this.byName = byName;
        this.revokedPins = Collections.unmodifiableList(revokedPins);
    }

    /** @return {@code expiresAt - issuedAt} in seconds */
    public long lifetime() { return expiresAt.seconds - issuedAt.seconds; }

    /** @return the domains by name, one entry per element of {@link #domains}: read it, never change it */
    Map<String, PinnedDomain> byName() { return byName; }

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
        Map<String, PinnedDomain> byName = new HashMap<>(Math.max(16, domainValues.size() * 2));
        List<PinnedDomain> domains = parseDomains(domainValues, "domains", limits, byName);
        List<JsonValue> revokedValues = reader.optionalArray("revokedPins", Integer.MAX_VALUE);
        List<Pin> revoked = parsePins(revokedValues == null ? Collections.emptyList() : revokedValues, reader, "revokedPins");
        reader.finish();
        return new ManifestPayload(scope, rootVersion, version, issuedAt, expiresAt, domains, byName, revoked);
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
        return parseDomains(values, arrayPath, limits, new HashMap<>(Math.max(16, values.size() * 2)));
    }

    /**
     * {@link #parseDomains(List, String, Limits)} filling {@code byName} (empty on entry), the table
     * the names are checked for duplicates with, with every entry.
     */
    private static List<PinnedDomain> parseDomains(List<JsonValue> values, String arrayPath, Limits limits,
            Map<String, PinnedDomain> byName) throws FormatException {
        List<PinnedDomain> domains = new ArrayList<>(values.size());
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
            PinnedDomain domain = PinnedDomain.owning(name, includeSubdomains, enforce, pins);
            if (byName.putIfAbsent(name, domain) != null) {
                throw new FormatException(reader.childPath("name"), FormatRule.DUPLICATE_DOMAIN, "duplicate domain " + name);
            }
            domains.add(domain);
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
