// One domain entry of a baseline, manifest or merged policy: name, flags and pins.
package org.pinion.trust;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** A domain's pin set: lowercase A-label name, includeSubdomains, enforce (false = report-only), pins. */
public final class PinnedDomain {
    /** The host name. */
    public final String name;
    /** Whether the entry covers every subdomain. */
    public final boolean includeSubdomains;
    /** False: report-only. */
    public final boolean enforce;
    /** The pins; may be empty in a merged policy (then every connection is refused). */
    public final List<Pin> pins;

    /**
     * @param name host name
     * @param includeSubdomains covers subdomains
     * @param enforce refuse on failure (false: report only)
     * @param pins accepted pins
     */
    public PinnedDomain(String name, boolean includeSubdomains, boolean enforce, List<Pin> pins) {
        this(Collections.unmodifiableList(new ArrayList<>(pins)), name, includeSubdomains, enforce);
    }

    private PinnedDomain(List<Pin> unmodifiablePins, String name, boolean includeSubdomains, boolean enforce) {
        this.name = name;
        this.includeSubdomains = includeSubdomains;
        this.enforce = enforce;
        this.pins = unmodifiablePins;
    }

    /**
     * The entry over {@code pins} without copying it: for the parser and the merge, which pass a
     * list they made and no one else holds or changes.
     *
     * @param name host name
     * @param includeSubdomains covers subdomains
     * @param enforce refuse on failure (false: report only)
     * @param pins accepted pins, never changed after this call
     * @return the entry
     */
    static PinnedDomain owning(String name, boolean includeSubdomains, boolean enforce, List<Pin> pins) {
        return new PinnedDomain(Collections.unmodifiableList(pins), name, includeSubdomains, enforce);
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof PinnedDomain)) return false;
        PinnedDomain o = (PinnedDomain) other;
        return name.equals(o.name) && includeSubdomains == o.includeSubdomains && enforce == o.enforce && pins.equals(o.pins);
    }

    @Override
    public int hashCode() { return name.hashCode() * 31 + pins.hashCode(); }
}
