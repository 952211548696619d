// The effective pin policy: one entry per domain, with host matching on label boundaries (DESIGN.md §8).
package org.pinion.trust;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** Entries by exact name; an enforced entry with no pins refuses every connection. Immutable. */
public final class MergedPolicy {
    /** A policy that pins nothing. */
    public static final MergedPolicy EMPTY = new MergedPolicy(Collections.emptyList());

    private final Map<String, PinnedDomain> entries;

    /** What the policy demands of one host: the longest match's pins and the OR of all matches' enforce. */
    public static final class HostPolicy {
        /** The normalised host. */
        public final String host;
        /** The longest matching entry. */
        public final PinnedDomain entry;
        /** OR of enforce over every matching entry. */
        public final boolean enforce;

        HostPolicy(String host, PinnedDomain entry, boolean enforce) {
            this.host = host;
            this.entry = entry;
            this.enforce = enforce;
        }
    }

    /** @param domains entries; two of one name are combined fail-closed (flags ORed, pins intersected) */
    public MergedPolicy(List<PinnedDomain> domains) {
        entries = new HashMap<>(Math.max(16, domains.size() * 2));
        for (PinnedDomain d : domains) {
            PinnedDomain existing = entries.get(d.name);
            entries.put(d.name, existing == null ? d : strictest(existing, d));
        }
    }

    private MergedPolicy(Map<String, PinnedDomain> byName) { entries = byName; }

    /**
     * @param byName entries keyed by their own name, a map no one else holds or changes
     * @return the policy over that map, not copied
     */
    static MergedPolicy owning(Map<String, PinnedDomain> byName) { return new MergedPolicy(byName); }

    static PinnedDomain strictest(PinnedDomain a, PinnedDomain b) {
        Set<Pin> other = new HashSet<>(b.pins);
        List<Pin> pins = new ArrayList<>();
        for (Pin pin : a.pins) {
            if (other.contains(pin)) pins.add(pin);
        }
        return new PinnedDomain(a.name, a.includeSubdomains || b.includeSubdomains, a.enforce || b.enforce, pins);
    }

    /** @param name exact name @return the entry, or null */
    public PinnedDomain entry(String name) { return entries.get(name); }

    /** @return all entries sorted by name */
    public List<PinnedDomain> domains() {
        List<PinnedDomain> list = new ArrayList<>(entries.values());
        list.sort((x, y) -> x.name.compareTo(y.name));
        return list;
    }

    /**
     * Normalises a host (DESIGN.md §8 step 2): ASCII lowercased, one trailing dot removed.
     *
     * @param host the host (no port or brackets)
     * @return the name, or null when it cannot be pinned by name: empty, an IPv6 literal, or an IPv4
     *     literal (last label all digits or {@code 0x} hex)
     */
    public static String normalizedHost(String host) {
        String name = host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
        if (name.isEmpty()) return null;
        StringBuilder lower = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            lower.append(c >= 'A' && c <= 'Z' ? (char) (c + 0x20) : c);
        }
        name = lower.toString();
        if (name.startsWith("[") || name.indexOf(':') >= 0) return null;
        String last = name.substring(name.lastIndexOf('.') + 1);
        if (Names.looksNumeric(last.toLowerCase(Locale.ROOT))) return null;
        return name;
    }

    /**
     * The entries matching {@code host}: the exact entry and every parent entry with
     * includeSubdomains, on label boundaries only.
     *
     * @param host the host
     * @return the longest match and the ORed enforce flag, or null when not pinned
     */
    public HostPolicy hostPolicy(String host) {
        String name = normalizedHost(host);
        if (name == null) return null;
        PinnedDomain longest = entries.get(name);
        boolean enforce = longest != null && longest.enforce;
        for (int dot = name.indexOf('.'); dot >= 0; dot = name.indexOf('.', dot + 1)) {
            PinnedDomain parent = entries.get(name.substring(dot + 1));
            if (parent == null || !parent.includeSubdomains) continue;
            if (longest == null) longest = parent;
            enforce = enforce || parent.enforce;
        }
        return longest == null ? null : new HostPolicy(name, longest, enforce);
    }

    @Override
    public boolean equals(Object other) { return other instanceof MergedPolicy && ((MergedPolicy) other).entries.equals(entries); }

    @Override
    public int hashCode() { return entries.hashCode(); }
}
