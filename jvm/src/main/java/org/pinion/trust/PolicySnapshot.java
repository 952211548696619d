// The fail-closed merge of baseline B, last manifest M and revoked set R (DESIGN.md §7).
package org.pinion.trust;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Both merges of DESIGN.md §7 for one (B, M, R), and the instant from which the expired one applies;
 * expiry is then one comparison per connection.
 */
public final class PolicySnapshot {
    /** The merge while M is current. */
    public final MergedPolicy current;
    /** The merge once M is expired or not valid (M only takes trust away). */
    public final MergedPolicy expired;
    /** M counts as current strictly before this instant; null when never. */
    public final Timestamp manifestCurrentUntil;
    /** M's expiresAt (valid or not), or null without M. */
    public final Timestamp manifestExpiresAt;

    /**
     * @param baseline B
     * @param manifest M, or null
     * @param manifestValid M verifies under the newest root
     * @param revoked R
     * @param staleGrace seconds M counts as current after expiry (negative = 0)
     * @param forcedDomains names of a lost manifest: enforced, subdomains included, no pins
     * @param rootExpiresAt the newest root's expiry (M stops counting as current then), or null
     */
    public PolicySnapshot(Baseline baseline, ManifestPayload manifest, boolean manifestValid, Set<Pin> revoked,
            long staleGrace, List<String> forcedDomains, Timestamp rootExpiresAt) {
        Map<String, PinnedDomain> base = index(baseline.domains);
        // A parsed manifest's names are unique (ManifestPayload.parse refuses a duplicate domain and is
        // the only way to make one), and the parse kept its table of them.
        List<PinnedDomain> fromManifest = manifest == null ? Collections.emptyList() : manifest.domains;
        Map<String, PinnedDomain> manifestByName = manifest == null ? Collections.emptyMap() : manifest.byName();
        this.expired = merge(base, fromManifest, manifestByName, false, revoked, forcedDomains);
        if (manifest != null && manifestValid) {
            this.current = merge(base, fromManifest, manifestByName, true, revoked, forcedDomains);
            Timestamp graceEnd = manifest.expiresAt.plus(Math.max(0, staleGrace));
            this.manifestCurrentUntil = rootExpiresAt != null && rootExpiresAt.compareTo(graceEnd) < 0 ? rootExpiresAt : graceEnd;
        } else {
            this.current = expired;
            this.manifestCurrentUntil = null;
        }
        this.manifestExpiresAt = manifest == null ? null : manifest.expiresAt;
    }

    /** @param now effective time @return whether M counts as current ({@code now < expiresAt + staleGrace}) */
    public boolean isManifestCurrent(Timestamp now) {
        return manifestCurrentUntil != null && now.compareTo(manifestCurrentUntil) < 0;
    }

    /** @param now effective time of the connection @return the policy to evaluate it against */
    public MergedPolicy policy(Timestamp now) { return isManifestCurrent(now) ? current : expired; }

    private static Map<String, PinnedDomain> index(List<PinnedDomain> domains) {
        Map<String, PinnedDomain> map = new HashMap<>(Math.max(16, domains.size() * 2));
        for (PinnedDomain d : domains) {
            PinnedDomain existing = map.get(d.name);
            map.put(d.name, existing == null ? d : MergedPolicy.strictest(existing, d));
        }
        return map;
    }

    /**
     * One merge. The entries go into a map by name, so their order does not matter and the names
     * are not sorted: every name of M as M alone gives it, then every name of B (over M's entry of
     * that name: B's and M's combined), then the forced names. While M is current and R is empty,
     * M alone gives every entry as it is, so M's table is taken over whole (copied, not rebuilt
     * entry by entry) and only B's and the forced names are looked up and inserted.
     */
    private static MergedPolicy merge(Map<String, PinnedDomain> base, List<PinnedDomain> manifest,
            Map<String, PinnedDomain> manifestByName, boolean manifestCurrent, Set<Pin> revoked, List<String> forced) {
        int capacity = Math.max(16, (base.size() + manifest.size() + forced.size()) * 2);
        Map<String, PinnedDomain> byName;
        if (manifestCurrent && revoked.isEmpty()) {
            // entry(null, m, true, {}) is m itself: same flags, M's pins, none revoked.
            byName = new HashMap<>(capacity);
            byName.putAll(manifestByName);
        } else {
            byName = new HashMap<>(capacity);
            for (PinnedDomain m : manifest) byName.put(m.name, entry(null, m, manifestCurrent, revoked));
        }
        for (Map.Entry<String, PinnedDomain> entry : base.entrySet()) {
            byName.put(entry.getKey(), entry(entry.getValue(), manifestByName.get(entry.getKey()), manifestCurrent, revoked));
        }
        for (String name : forced) byName.put(name, new PinnedDomain(name, true, true, Collections.emptyList()));
        return MergedPolicy.owning(byName);
    }

    /**
     * The merged entry of one name (DESIGN.md §7): M's pins while M is current, else B's pins that M
     * also grants (B's alone without M, none without B), minus R; flags ORed. When that equals B's or
     * M's entry as it is (same flags, no pin removed), that immutable entry is returned, not a copy.
     */
    private static PinnedDomain entry(PinnedDomain b, PinnedDomain m, boolean manifestCurrent, Set<Pin> revoked) {
        boolean sub = (b != null && b.includeSubdomains) || (m != null && m.includeSubdomains);
        boolean enforce = (b != null && b.enforce) || (m != null && m.enforce);
        PinnedDomain source;
        List<Pin> pins;
        if (m != null && manifestCurrent) {
            source = m;
            pins = m.pins;
        } else if (b != null && m != null) {
            source = null;
            Set<Pin> granted = new HashSet<>(m.pins);
            pins = new ArrayList<>();
            for (Pin pin : b.pins) {
                if (granted.contains(pin)) pins.add(pin);
            }
        } else if (b != null) {
            source = b;
            pins = b.pins;
        } else {
            return PinnedDomain.owning(m.name, sub, enforce, new ArrayList<>());
        }
        boolean anyRevoked = false;
        if (!revoked.isEmpty()) {
            for (Pin pin : pins) {
                if (revoked.contains(pin)) {
                    anyRevoked = true;
                    break;
                }
            }
        }
        if (source != null && !anyRevoked && source.includeSubdomains == sub && source.enforce == enforce) return source;
        List<Pin> kept = new ArrayList<>(pins.size());
        for (Pin pin : pins) {
            if (!anyRevoked || !revoked.contains(pin)) kept.add(pin);
        }
        return PinnedDomain.owning(source != null ? source.name : b.name, sub, enforce, kept);
    }
}
