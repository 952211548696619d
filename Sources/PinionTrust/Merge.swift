// The fail-closed merge of the baseline B, the last manifest M and the revoked set R
// (docs/DESIGN.md §7): an expired manifest can only take trust away, nothing becomes unpinned.

import PinionCore

/// The effective pin policy: one entry per domain named by the baseline, the manifest or a
/// dropped store, keyed by exact name for lookups per connection.
///
/// An entry's `pins` may be empty; an enforced entry without pins refuses every connection
/// (docs/DESIGN.md §7, "no usable pin").
public struct MergedPolicy: Sendable, Equatable {
    /// The entries by exact domain name.
    public private(set) var entries: [String: PinnedDomain] {
        didSet { parents = MergedPolicy.parentIndex(entries) }
    }

    /// The includeSubdomains entries by a 64-bit FNV-1a hash of their name's bytes, so the
    /// per-connection walk over a host's parent domains looks them up without building a
    /// String per suffix (bench/RESULTS.md, pin evaluation). Derived from `entries`.
    private var parents: [UInt64: [PinnedDomain]] = [:]

    /// Policies are equal when their entries are (the index is derived from them).
    public static func == (lhs: MergedPolicy, rhs: MergedPolicy) -> Bool { lhs.entries == rhs.entries }

    static func parentIndex(_ entries: [String: PinnedDomain]) -> [UInt64: [PinnedDomain]] {
        var index: [UInt64: [PinnedDomain]] = [:]
        for entry in entries.values where entry.includeSubdomains {
            index[fnv1a(entry.name.utf8), default: []].append(entry)
        }
        return index
    }

    /// FNV-1a, 64 bits: a fast, non-cryptographic hash; collisions only cost a comparison.
    static func fnv1a<Bytes: Collection>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// The includeSubdomains entry named exactly `suffix` (bytes of a normalised name).
    func parentEntry(_ suffix: ArraySlice<UInt8>) -> PinnedDomain? {
        guard let candidates = parents[MergedPolicy.fnv1a(suffix)] else { return nil }
        return candidates.first { $0.name.utf8.elementsEqual(suffix) }
    }

    /// A policy of the given entries.
    ///
    /// - Parameter domains: the entries. Two entries with one name are combined fail-closed,
    ///   as the merge combines B and M when neither is current: enforce and
    ///   includeSubdomains are ORed and only pins in both remain.
    public init(_ domains: [PinnedDomain]) {
        var entries: [String: PinnedDomain] = [:]
        entries.reserveCapacity(domains.count)
        for domain in domains {
            if let existing = entries[domain.name] {
                entries[domain.name] = MergedPolicy.strictest(existing, domain)
            } else {
                entries[domain.name] = domain
            }
        }
        self.entries = entries
        parents = MergedPolicy.parentIndex(entries)
    }

    /// A policy that pins nothing.
    public static let empty = MergedPolicy([])

    /// The entry for exactly `name` (no subdomain matching; see `evaluate(host:verifiedChain:policy:)`).
    public func entry(named name: String) -> PinnedDomain? { entries[name] }

    /// All entries sorted by name, for display and serialisation.
    public var domains: [PinnedDomain] { entries.values.sorted { $0.name < $1.name } }

    static func strictest(_ first: PinnedDomain, _ second: PinnedDomain) -> PinnedDomain {
        let other = Set(second.pins)
        return PinnedDomain(
            name: first.name, includeSubdomains: first.includeSubdomains || second.includeSubdomains,
            enforce: first.enforce || second.enforce, pins: first.pins.filter { other.contains($0) })
    }
}

/// Both merges of docs/DESIGN.md §7 for one (B, M, R), computed once, and the instant from which
/// the expired one applies. Expiry is then a comparison per connection, not a re-merge.
public struct PolicySnapshot: Sendable, Equatable {
    /// The merge while M is current: M's pins replace B's for every domain M names.
    public let current: MergedPolicy
    /// The merge once M is expired or no longer valid: M only takes trust away. With no
    /// manifest at all this is B minus R (plus forced domains).
    public let expired: MergedPolicy
    /// M counts as current strictly before this instant (`M.expiresAt + staleGrace`); nil
    /// when there is no manifest or it is not valid, so `expired` always applies.
    public let manifestCurrentUntil: Timestamp?
    /// `M.expiresAt` of the manifest, valid or not (RFC 7469 §3 `effective-expiration-date`
    /// of reports); nil without a manifest.
    public let manifestExpiresAt: Timestamp?

    /// Merges B, M and R (docs/DESIGN.md §7).
    ///
    /// For every domain d in B or M, with R the revoked set:
    /// - M current: pins(d) = M.pins(d) − R if d is in M, else B.pins(d) − R.
    /// - M expired or not valid: d in B and M: (B.pins(d) ∩ M.pins(d)) − R; d only in B:
    ///   B.pins(d) − R; d only in M: no pins.
    /// - No M: B.pins(d) − R.
    /// - Always: enforce(d) = B.enforce(d) OR M.enforce(d), includeSubdomains(d) = B OR M
    ///   (a domain in only one of them takes that one's flags).
    ///
    /// - Parameters:
    ///   - baseline: the app's baseline B.
    ///   - manifest: the last accepted manifest M, current or not; nil if none was accepted.
    ///   - manifestValid: M verified and its rootVersion is the newest trusted root. Expiry is
    ///     not part of this flag; it is decided per connection by `policy(at:)`.
    ///   - revoked: R, the union of `revokedPins` of every manifest accepted since the pins
    ///     role last changed. Revoked pins never count, whatever B or M say.
    ///   - staleGrace: seconds after `M.expiresAt` during which M still counts as current
    ///     (default 0 in the SDK); negative values count as 0.
    ///   - rootExpiresAt: the newest root's `expiresAt`; M stops counting as current then,
    ///     whatever its own expiry and `staleGrace`.
    ///   - logCurrentUntil: with a transparency log, the first instant past t_q +
    ///     maxCheckpointAge + checkpointGrace (docs/DESIGN.md §12): M stops counting as
    ///     current then, like at its expiry (narrow only); nil without a log.
    ///   - forcedDomains: domain names of a dropped store (docs/DESIGN.md §6): each becomes an
    ///     enforced entry with no pins (every connection refused) until a fresh manifest
    ///     arrives, even if B lists it, since the lost manifest may have replaced B's pins;
    ///     its subdomains are refused too, since the lost entry may have covered them.
    public init(
        baseline: Baseline, manifest: ManifestPayload?, manifestValid: Bool, revoked: Set<Pin>,
        staleGrace: Int64, forcedDomains: [String] = [], rootExpiresAt: Timestamp? = nil,
        logCurrentUntil: Timestamp? = nil
    ) {
        let base = Dictionary(baseline.domains.map { ($0.name, $0) }, uniquingKeysWith: MergedPolicy.strictest)
        let manifestEntries = manifest.map { PolicySnapshot.entries(of: $0) }
        let expired = PolicySnapshot.merge(
            base, manifestEntries, manifestCurrent: false, revoked: revoked, forced: forcedDomains)
        if let manifest, manifestValid {
            self.current = PolicySnapshot.merge(
                base, manifestEntries, manifestCurrent: true, revoked: revoked, forced: forcedDomains)
            // Only the newest root's expiry ends everything signed under it (docs/DESIGN.md §4);
            // staleGrace never extends it.
            let graceEnd = manifest.expiresAt.adding(seconds: max(0, staleGrace))
            let rootEnd = rootExpiresAt.map { min(graceEnd, $0) } ?? graceEnd
            self.manifestCurrentUntil = logCurrentUntil.map { min(rootEnd, $0) } ?? rootEnd
        } else {
            self.current = expired
            self.manifestCurrentUntil = nil
        }
        self.expired = expired
        self.manifestExpiresAt = manifest?.expiresAt
    }

    /// Whether M counts as current at `now`: valid and `now < M.expiresAt + staleGrace`
    /// (so `now == expiresAt` with no grace is expired, as in docs/DESIGN.md §6 step 5).
    ///
    /// - Parameter now: the effective time (`max(wall clock, lastKnownTime)`, docs/DESIGN.md §6).
    public func isManifestCurrent(at now: Timestamp) -> Bool {
        guard let manifestCurrentUntil else { return false }
        return now < manifestCurrentUntil
    }

    /// The effective policy at `now`: `current` while M counts as current, else `expired`.
    ///
    /// - Parameter now: the effective time of the connection being evaluated.
    /// - Returns: the merged policy to evaluate the connection against.
    public func policy(at now: Timestamp) -> MergedPolicy {
        isManifestCurrent(at: now) ? current : expired
    }

    /// M's domains by name; two entries with one name (only a payload built in code can have
    /// them: `ManifestPayload.parse` refuses a duplicate) are combined by `MergedPolicy.strictest`.
    static func entries(of payload: ManifestPayload) -> [String: PinnedDomain] {
        var entries: [String: PinnedDomain] = [:]
        entries.reserveCapacity(payload.domains.count)
        for domain in payload.domains {
            let entry = PinnedDomain(domain)
            if let existing = entries.updateValue(entry, forKey: entry.name) {
                entries[entry.name] = MergedPolicy.strictest(existing, entry)
            }
        }
        return entries
    }

    /// One merge of docs/DESIGN.md §7 (see `init`). M's entries are taken over as a whole (shared
    /// when nothing changes them, else by `mapValues`, which keeps the table and rehashes
    /// nothing); only B's few names and the forced ones are looked up and inserted. Rebuilding
    /// a 10,000-entry table per merge, twice per refresh, was a fifth of a refresh
    /// (bench/RESULTS.md, client refresh).
    static func merge(
        _ base: [String: PinnedDomain], _ manifest: [String: PinnedDomain]?, manifestCurrent: Bool,
        revoked: Set<Pin>, forced: [String]
    ) -> MergedPolicy {
        func withoutRevoked(_ pins: [Pin]) -> [Pin] {
            revoked.isEmpty ? pins : pins.filter { !revoked.contains($0) }
        }
        var entries: [String: PinnedDomain]
        switch manifest {
        case .none:
            entries = [:]
        case .some(let manifest) where manifestCurrent:
            // In M: M's pins minus R (flags ORed with B's below).
            entries =
                revoked.isEmpty
                ? manifest
                : manifest.mapValues { entry in
                    var entry = entry
                    entry.pins = withoutRevoked(entry.pins)
                    return entry
                }
        case .some(let manifest):
            // Only in an expired or invalid M: it can no longer grant trust.
            entries = manifest.mapValues { entry in
                PinnedDomain(
                    name: entry.name, includeSubdomains: entry.includeSubdomains, enforce: entry.enforce, pins: [])
            }
        }
        for (name, baseEntry) in base {
            guard let manifestEntry = manifest?[name] else {
                entries[name] = PinnedDomain(
                    name: name, includeSubdomains: baseEntry.includeSubdomains, enforce: baseEntry.enforce,
                    pins: withoutRevoked(baseEntry.pins))
                continue
            }
            let pins: [Pin]
            if manifestCurrent {
                pins = manifestEntry.pins
            } else {
                let granted = Set(manifestEntry.pins)
                pins = baseEntry.pins.filter { granted.contains($0) }
            }
            entries[name] = PinnedDomain(
                name: name, includeSubdomains: baseEntry.includeSubdomains || manifestEntry.includeSubdomains,
                enforce: baseEntry.enforce || manifestEntry.enforce, pins: withoutRevoked(pins))
        }
        // The dropped manifest's pins for these names are unknown (it may have revoked or
        // replaced the baseline's), so no pin is trusted for them until a fresh manifest.
        for name in forced {
            // Whether the lost entry covered subdomains is not stored: assume it did.
            entries[name] = PinnedDomain(name: name, includeSubdomains: true, enforce: true, pins: [])
        }
        return MergedPolicy(entries: entries)
    }
}

extension MergedPolicy {
    fileprivate init(entries: [String: PinnedDomain]) {
        self.entries = entries
        parents = MergedPolicy.parentIndex(entries)
    }
}
