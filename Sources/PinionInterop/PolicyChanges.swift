// What a new manifest changes in the effective policy (docs/DESIGN.md §7) of each host name,
// against the manifest it replaces and the app's baselines: the pins a publish removes, and
// whether a server that still presents one would be refused.

import PinionCore
import PinionTrust

/// The effective policy of one host before and after a manifest replaces another, for one
/// baseline (or none).
public struct PolicyChange: Sendable, Equatable, CustomStringConvertible {
    /// The host name compared (an entry's name, or a host given to check).
    public var host: String
    /// The labels of the baselines under which the change is the same; empty when no
    /// baseline was given (an empty baseline was assumed).
    public var baselines: [String]
    /// The host's policy under the replaced manifest (or the baseline alone before the first
    /// manifest); nil when no entry covered it.
    public var before: HostPolicy?
    /// The host's policy under the new manifest; nil when no entry covers it any more.
    public var after: HostPolicy?
    /// Whether the new manifest names the host's entry itself; false when a dropped domain
    /// falls back to a baseline entry or to a parent entry with includeSubdomains.
    public var namedByManifest: Bool

    /// Pins accepted before and not after. Empty when the host is no longer pinned at all
    /// (every X.509-valid chain passes then).
    public var removed: [Pin] {
        guard let before, let after else { return [] }
        let kept = Set(after.entry.pins)
        return before.entry.pins.filter { !kept.contains($0) }
    }

    /// Pins accepted after and not before.
    public var added: [Pin] {
        guard let after else { return [] }
        let earlier = Set(before?.entry.pins ?? [])
        return after.entry.pins.filter { !earlier.contains($0) }
    }

    /// Whether the entry covering the host matches its subdomains, before or after: then
    /// probing the host itself says nothing about the servers of its subdomains.
    public var coversSubdomains: Bool {
        (before?.entry.includeSubdomains ?? false) || (after?.entry.includeSubdomains ?? false)
    }

    /// The removed pins on `verifiedChain` when the new policy refuses (or, report-only,
    /// reports) that chain and the old one accepted a pin of it: the server would be cut
    /// off by this change. Empty otherwise, including when the chain still matches a pin
    /// of the new policy (RFC 7469 §2.6: any pin on the verified chain passes).
    ///
    /// - Parameter verifiedChain: the pins of the X.509-verified path, leaf first.
    public func removedPinsStillPresented(_ verifiedChain: [Pin]) -> [Pin] {
        guard let after else { return [] }
        let accepted = Set(after.entry.pins)
        if verifiedChain.contains(where: { accepted.contains($0) }) { return [] }
        let removed = Set(self.removed)
        return verifiedChain.filter { removed.contains($0) }
    }

    /// `HOST: ...` naming what changes, the entry and, when a dropped domain falls back,
    /// where the pins now come from.
    public var description: String {
        var parts: [String] = []
        let under = baselines.isEmpty ? "" : " (baseline \(baselines.joined(separator: ", ")))"
        switch (before, after) {
        case (nil, nil): return "\(host): not pinned"
        case (.some, nil):
            parts.append(
                "no longer pinned (no entry of the new manifest\(baselines.isEmpty ? "" : " or baseline") covers it)")
        case (nil, .some(let after)):
            parts.append("newly pinned by \(after.entry.name): \(Self.list(after.entry.pins))")
        case (.some(let before), .some(let after)):
            if !removed.isEmpty {
                parts.append("removes \(Self.list(removed)); accepts \(Self.list(after.entry.pins))")
            }
            if !added.isEmpty { parts.append("adds \(Self.list(added))") }
            if before.enforce != after.enforce { parts.append(after.enforce ? "now enforced" : "now report-only") }
            if before.entry.includeSubdomains != after.entry.includeSubdomains {
                parts.append(after.entry.includeSubdomains ? "now covers subdomains" : "no longer covers subdomains")
            }
            if !namedByManifest {
                let source = after.entry.name == host ? "the baseline entry" : "the entry \(after.entry.name)"
                parts.append("dropped from the manifest: falls back to \(source)")
            } else if before.entry.name != after.entry.name {
                parts.append("now matched by \(after.entry.name) (was \(before.entry.name))")
            }
        }
        return "\(host)\(under): " + parts.joined(separator: "; ")
    }

    private static func list(_ pins: [Pin]) -> String {
        pins.isEmpty ? "no pin" : pins.map(\.description).joined(separator: ", ")
    }

    /// Whether anything differs.
    var changes: Bool {
        guard let before, let after else { return before != nil || after != nil }
        return !removed.isEmpty || !added.isEmpty || before.enforce != after.enforce
            || before.entry.includeSubdomains != after.entry.includeSubdomains || before.entry.name != after.entry.name
    }
}

/// Compares the effective policies (docs/DESIGN.md §7, manifest current) a client holds with
/// the replaced manifest and with the new one.
public enum PolicyChanges {
    /// Every host whose effective policy differs.
    ///
    /// - Parameters:
    ///   - old: the manifest replaced, nil before the first (then the baseline alone).
    ///   - new: the manifest published; each manifest's own `revokedPins` never count.
    ///   - baselines: the apps' baselines by label (one per app release); empty assumes an
    ///     empty baseline, so a dropped domain counts as no longer pinned.
    ///   - hosts: further host names to compare (servers under an includeSubdomains entry).
    /// - Returns: the changes by host name, then by baseline; one change per host when
    ///   every baseline gives the same one.
    public static func compare(
        from old: ManifestPayload?, to new: ManifestPayload, baselines: [(label: String, baseline: Baseline)],
        hosts: [String] = []
    ) -> [PolicyChange] {
        let cases =
            baselines.isEmpty
            ? [(label: String?.none, baseline: Baseline.empty)] : baselines.map { ($0.label, $0.baseline) }
        let policies = cases.map { (label, baseline) in
            (
                label: label,
                before: PolicySnapshot(
                    baseline: baseline, manifest: old, manifestValid: old != nil,
                    revoked: Set(old?.revokedPins ?? []), staleGrace: 0
                ).current,
                after: PolicySnapshot(
                    baseline: baseline, manifest: new, manifestValid: true, revoked: Set(new.revokedPins),
                    staleGrace: 0
                ).current
            )
        }
        var names = Set(hosts.compactMap(MergedPolicy.normalizedHost))
        for policy in policies {
            names.formUnion(policy.before.entries.keys)
            names.formUnion(policy.after.entries.keys)
        }
        var changes: [PolicyChange] = []
        for host in names.sorted() {
            var forHost: [PolicyChange] = []
            for policy in policies {
                let after = policy.after.hostPolicy(for: host)
                let change = PolicyChange(
                    host: host, baselines: policy.label.map { [$0] } ?? [], before: policy.before.hostPolicy(for: host),
                    after: after, namedByManifest: after.map { new.domain(named: $0.entry.name) != nil } ?? false)
                guard change.changes else { continue }
                if let same = forHost.firstIndex(where: {
                    $0.before == change.before && $0.after == change.after
                        && $0.namedByManifest == change.namedByManifest
                }) {
                    forHost[same].baselines += change.baselines
                } else {
                    forHost.append(change)
                }
            }
            changes += forHost
        }
        return changes
    }
}
