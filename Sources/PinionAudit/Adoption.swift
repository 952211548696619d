// `pinion adoption`: manifest polls from access logs tallied per scope by what clients hold
// (manifest version and baseline), by polls and by distinct network prefixes, and the switch
// gate of docs/OPERATIONS.md: the share of clients whose policy would accept a server key.

import PinionCore
import PinionTrust

/// What clients hold, per scope: polls and distinct network prefixes for each `Held` value.
/// Counts polls and prefixes, never devices; keeps no address.
public struct AdoptionTally: Sendable {
    /// One (scope, held) group.
    public struct Bucket: Sendable, Equatable {
        /// What the group's polls said they hold.
        public var held: ManifestPoll.Held
        /// Polls in the group.
        public var polls: Int
        /// Distinct network prefixes among them.
        public var prefixes: Int
    }

    /// One scope's groups.
    public struct Scope: Sendable, Equatable {
        /// The scope.
        public var scope: String
        /// Polls of the scope.
        public var polls: Int
        /// Distinct network prefixes of the scope.
        public var prefixes: Int
        /// Its groups: tokens by version then baseline, then `invalid`, then `none`.
        public var buckets: [Bucket]
    }

    private var counts: [String: [ManifestPoll.Held: (polls: Int, prefixes: Set<String>)]] = [:]
    private var prefixesByScope: [String: Set<String>] = [:]
    /// Prefixes that polled with at least one `Held` value, per scope and value (for the gate).
    private var heldByPrefix: [String: [String: Set<ManifestPoll.Held>]] = [:]

    public init() {}

    /// Counts one poll.
    public mutating func add(_ poll: ManifestPoll) {
        counts[poll.scope, default: [:]][poll.held, default: (0, [])].polls += 1
        counts[poll.scope, default: [:]][poll.held, default: (0, [])].prefixes.insert(poll.prefix)
        prefixesByScope[poll.scope, default: []].insert(poll.prefix)
        heldByPrefix[poll.scope, default: [:]][poll.prefix, default: []].insert(poll.held)
    }

    /// Every scope with polls, by name.
    public var scopes: [Scope] {
        counts.keys.sorted().map { name in
            let groups = counts[name] ?? [:]
            let buckets = groups.map { Bucket(held: $0.key, polls: $0.value.polls, prefixes: $0.value.prefixes.count) }
                .sorted { Self.order($0.held) < Self.order($1.held) }
            return Scope(
                scope: name, polls: buckets.reduce(0) { $0 + $1.polls }, prefixes: prefixesByScope[name]?.count ?? 0,
                buckets: buckets)
        }
    }

    private static func order(_ held: ManifestPoll.Held) -> (Int, Int64, String) {
        switch held {
        case .token(let have, let base): (0, have, base)
        case .invalid: (1, 0, "")
        case .none: (2, 0, "")
        }
    }

    /// The share of a scope's clients that would accept, by polls and by prefixes.
    ///
    /// - Parameters:
    ///   - scope: the scope.
    ///   - accepts: whether a client holding a value accepts (`AdoptionGate.accepts`).
    /// - Returns: accepting polls over all polls, and prefixes all of whose polls accept over
    ///   all prefixes (a prefix with one refusing poll counts as refusing); nil without polls.
    public func shares(scope: String, accepts: (ManifestPoll.Held) -> Bool) -> (polls: Double, prefixes: Double)? {
        guard let groups = counts[scope], let byPrefix = heldByPrefix[scope], !byPrefix.isEmpty else { return nil }
        let total = groups.values.reduce(0) { $0 + $1.polls }
        guard total > 0 else { return nil }
        let accepting = groups.filter { accepts($0.key) }.values.reduce(0) { $0 + $1.polls }
        let acceptingPrefixes = byPrefix.values.filter { $0.allSatisfy(accepts) }.count
        return (Double(accepting) / Double(total), Double(acceptingPrefixes) / Double(byPrefix.count))
    }
}

/// Whether a client holding a given manifest version and baseline would accept a server key
/// for a domain at a time: the fail-closed merge of docs/DESIGN.md §7 (`PolicySnapshot`) of
/// that baseline and that manifest, with the manifest's expiry.
public struct AdoptionGate: Sendable {
    /// The domain the server answers for.
    public let domain: String
    /// The SPKI pin of the key the server moves to.
    public let pin: Pin
    /// The time to judge at (a manifest past its `expiresAt` no longer counts).
    public let time: Timestamp
    /// The scope's published manifests by version (the tree's `history/`).
    public let manifests: [Int64: ManifestPayload]
    /// The app releases' baselines by `base` (the first 16 hex digits of their SHA-256);
    /// `PollToken.noBaseline` maps to no pins.
    public let baselines: [String: Baseline]

    /// - Parameters:
    ///   - domain: the host name.
    ///   - pin: the key's pin.
    ///   - time: when to judge.
    ///   - manifests: published manifests by version.
    ///   - baselines: baselines by `base`.
    public init(
        domain: String, pin: Pin, time: Timestamp, manifests: [Int64: ManifestPayload], baselines: [String: Baseline]
    ) {
        self.domain = domain
        self.pin = pin
        self.time = time
        self.manifests = manifests
        self.baselines = baselines
    }

    /// Whether clients holding `held` accept the key. Unknown baselines, unknown versions,
    /// queries that do not parse and requests without one count as not accepting. The
    /// revoked set is every `revokedPins` of the versions up to the held one (a superset of
    /// what a client keeps, so the gate errs towards "not accepting").
    public func accepts(_ held: ManifestPoll.Held) -> Bool {
        guard case .token(let have, let base) = held else { return false }
        let baseline: Baseline
        if base == PollToken.noBaseline {
            baseline = .empty
        } else if let known = baselines[base] {
            baseline = known
        } else {
            return false
        }
        var manifest: ManifestPayload?
        if have > 0 {
            guard let held = manifests[have] else { return false }
            manifest = held
        }
        let revoked = Set(manifests.filter { $0.key <= have }.values.flatMap(\.revokedPins))
        let policy = PolicySnapshot(
            baseline: baseline, manifest: manifest, manifestValid: manifest != nil, revoked: revoked, staleGrace: 0
        ).policy(at: time)
        guard let host = policy.hostPolicy(for: domain) else { return !revoked.contains(pin) }
        return !host.enforce || host.entry.pins.contains(pin)
    }
}
