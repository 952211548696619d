// The baseline pin set B compiled into an app (DESIGN.md §7), and its strict file format.
package org.pinion.trust;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The baseline: {@code {"type": "pinion.baseline", "specVersion": 1, "domains": [...]}} whose
 * domain entries follow the manifest's rules exactly (same parser, same paths and errors).
 */
public final class Baseline {
    /** The document type. */
    public static final String DOCUMENT_TYPE = "pinion.baseline";
    /** A baseline pinning nothing. */
    public static final Baseline EMPTY = new Baseline(Collections.emptyList());

    /** The domains in file order, unique names. */
    public final List<PinnedDomain> domains;

    private Baseline(List<PinnedDomain> domains) { this.domains = Collections.unmodifiableList(new ArrayList<>(domains)); }

    /**
     * @param bytes the file (UTF-8 JSON)
     * @param limits size, depth, domain and pin limits
     * @return the baseline
     * @throws FormatException JSON and limit errors, {@code type}/{@code specVersion}/{@code domains}
     *     rules, unknown members, and every manifest domain rule at {@code domains[i]...}
     */
    public static Baseline parse(byte[] bytes, Limits limits) throws FormatException {
        SchemaReader reader = new SchemaReader(StrictJsonParser.parse(bytes, limits.json()), "");
        reader.documentHeader(DOCUMENT_TYPE);
        List<JsonValue> values = reader.array("domains", limits.maxDomains);
        reader.finish();
        return new Baseline(ManifestPayload.parseDomains(values, "domains", limits));
    }
}
