// What the client persists between runs (docs/DESIGN.md §6 step 6): enough to re-verify
// everything at start-up from the embedded root, and to keep the floor.

import PinionCore
import PinionLog

/// The persisted trust state of one scope. Every envelope is kept as its exact bytes, so
/// that start-up re-verifies signatures instead of trusting a parsed copy.
public struct ClientState: Sendable, Equatable {
    /// The scope the state belongs to; a state of another scope is foreign and dropped.
    public var scope: String
    /// Envelope bytes of every root accepted after the embedded one, oldest first
    /// (versions embedded + 1, embedded + 2, ...).
    public var acceptedRoots: [[UInt8]]
    /// Exact envelope bytes of the last accepted manifest, if any.
    public var manifest: [UInt8]?
    /// The floor (rootVersion, version) of the last accepted manifest; never goes down.
    public var floor: ManifestOrder?
    /// SHA-256 (FIPS 180-4) of the payload accepted at the floor, 32 bytes; nil when no
    /// floor is set or the state was written by formatVersion 1, which did not record it.
    /// A manifest offered at the floor while no envelope is stored is accepted only with this
    /// hash; another payload at the floor is equivocation (docs/DESIGN.md §6).
    public var floorPayloadSHA256: [UInt8]?
    /// Highest start time of a successful refresh (never moved by a future-dated issuedAt).
    public var lastKnownTime: Timestamp?
    /// The revoked set R: union of `revokedPins` of every manifest accepted since the pins
    /// role last changed (docs/DESIGN.md §7).
    public var revokedPins: [Pin]
    /// Key ids of the pins role when R was started; a different role restarts R.
    public var revokedSetPinsRole: [String]
    /// Domain names of the last accepted manifest. If the rest of the state is lost or
    /// refused, these stay enforced with no pins until a fresh manifest arrives.
    public var manifestDomainNames: [String]
    /// ETag of the last `manifest.json` response, for If-None-Match.
    public var manifestETag: String?
    /// The log checkpoint verified at the last refresh whose newest root had a `log` member
    /// (docs/DESIGN.md §12), with its cosigned note and t_q; nil without a log. Dropped when a
    /// root rotation changes the log's origin or key.
    public var logCheckpoint: StoredCheckpoint?

    /// A state with every member given; absent members default to a first run's.
    public init(
        scope: String, acceptedRoots: [[UInt8]] = [], manifest: [UInt8]? = nil, floor: ManifestOrder? = nil,
        lastKnownTime: Timestamp? = nil, revokedPins: [Pin] = [], revokedSetPinsRole: [String] = [],
        manifestDomainNames: [String] = [], manifestETag: String? = nil, floorPayloadSHA256: [UInt8]? = nil,
        logCheckpoint: StoredCheckpoint? = nil
    ) {
        self.logCheckpoint = logCheckpoint
        self.scope = scope
        self.acceptedRoots = acceptedRoots
        self.manifest = manifest
        self.floor = floor
        self.floorPayloadSHA256 = floorPayloadSHA256
        self.lastKnownTime = lastKnownTime
        self.revokedPins = revokedPins
        self.revokedSetPinsRole = revokedSetPinsRole
        self.manifestDomainNames = manifestDomainNames
        self.manifestETag = manifestETag
    }
}

/// The order of manifests: (rootVersion, version), compared lexicographically (docs/DESIGN.md §5).
public struct ManifestOrder: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var rootVersion: Int64
    public var version: Int64

    public init(rootVersion: Int64, version: Int64) {
        self.rootVersion = rootVersion
        self.version = version
    }

    public static func < (lhs: ManifestOrder, rhs: ManifestOrder) -> Bool {
        (lhs.rootVersion, lhs.version) < (rhs.rootVersion, rhs.version)
    }

    public var description: String { "(rootVersion \(rootVersion), version \(version))" }
}
