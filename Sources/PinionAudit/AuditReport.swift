// The facts an audit establishes: roots, manifests and their signers, the pin timeline per
// domain, revocations, expiry coverage, and every violation and warning (docs/DESIGN.md §10).

import PinionCore
import PinionTrust

/// One root of the tree, as published.
public struct RootSummary: Sendable, Equatable {
    public var version: Int64
    /// `root/{version}.json`, or the given root when the tree lacks it.
    public var file: String
    /// SHA-256 of the payload bytes (32 bytes).
    public var payloadSHA256: [UInt8]
    public var issuedAt: Timestamp
    public var expiresAt: Timestamp
    /// Seconds.
    public var maxManifestLifetime: Int64
    public var rootRole: RootPayload.Role
    public var pinsRole: RootPayload.Role
    /// Key ids whose signature verified and counted: the previous root's root role (for
    /// a rotation), then this root's own root role; each key once.
    public var signers: [String]
    /// Whether the pins role differs from the previous root's (keys or threshold).
    public var pinsRoleChanged: Bool
}

/// One history file, in version order: every file read is listed, including those that
/// failed verification or could not be parsed (their unknown members are nil).
public struct ManifestSummary: Sendable, Equatable {
    /// The version of its history file name.
    public var version: Int64
    /// The payload's rootVersion; nil when the payload could not be parsed.
    public var rootVersion: Int64?
    /// The payload's issuedAt; nil when the payload could not be parsed.
    public var issuedAt: Timestamp?
    /// The payload's expiresAt; nil when the payload could not be parsed.
    public var expiresAt: Timestamp?
    /// SHA-256 of the payload bytes (32 bytes); nil when the envelope could not be parsed.
    public var payloadSHA256: [UInt8]?
    /// Key ids of the pins role whose signature verified (empty when the threshold was not met).
    public var signers: [String]
    /// Whether index.json lists this version.
    public var inIndex: Bool
    /// The rule of the finding that makes clients refuse this version (`manifest-signature`,
    /// `manifest-foreign-key`, `manifest-format`, `manifest-root-missing`, `scope`,
    /// `lifetime-cap`); nil when it verified under the root it names.
    public var failure: AuditRule?

    /// Whether it verified under the root it names (clients would accept it).
    public var verified: Bool { failure == nil }

    /// - Parameters:
    ///   - version: the version of the file name.
    ///   - rootVersion: the payload's rootVersion, nil when unparsed.
    ///   - issuedAt: the payload's issuedAt, nil when unparsed.
    ///   - expiresAt: the payload's expiresAt, nil when unparsed.
    ///   - payloadSHA256: SHA-256 of the payload bytes, nil when the envelope is unreadable.
    ///   - signers: pins-role key ids whose signatures counted.
    ///   - inIndex: whether index.json lists the version.
    ///   - failure: the rule that fails it, nil when it verified.
    public init(
        version: Int64, rootVersion: Int64?, issuedAt: Timestamp?, expiresAt: Timestamp?, payloadSHA256: [UInt8]?,
        signers: [String], inIndex: Bool, failure: AuditRule?
    ) {
        self.version = version
        self.rootVersion = rootVersion
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.payloadSHA256 = payloadSHA256
        self.signers = signers
        self.inIndex = inIndex
        self.failure = failure
    }
}

/// One change of one domain's entry.
public enum DomainEvent: Sendable, Equatable {
    /// The domain appears, with its flags and pins.
    case added(enforce: Bool, includeSubdomains: Bool, pins: [Pin])
    /// A version that failed verification lists the domain with these flags and pins, and
    /// no version before it verified: there is nothing trusted to compare it with, so this is
    /// what the file claims, never a change (always on an untrusted entry).
    case claimed(enforce: Bool, includeSubdomains: Bool, pins: [Pin])
    /// The domain is no longer listed.
    case removed
    case pinAdded(Pin)
    case pinRemoved(Pin)
    /// `enforce` became this value (false = report-only).
    case enforceChanged(Bool)
    case includeSubdomainsChanged(Bool)
    /// A pin of this domain (before or after the step) was revoked.
    case pinRevoked(Pin)
    /// A revocation of a pin of this domain was lifted.
    case revocationLifted(Pin)
}

/// The changes of one domain, in version order.
public struct DomainTimeline: Sendable, Equatable {
    /// One change: which version made it, when that version was issued, and what changed.
    public struct Entry: Sendable, Equatable {
        /// The version that made the change.
        public var version: Int64
        /// That version's issuedAt.
        public var date: Timestamp
        public var event: DomainEvent
        /// False when the version failed verification: the change is what its unverified
        /// (or refused) content says, never the domain's pins; later changes are relative
        /// to the last verified version.
        public var trusted: Bool = true

        /// - Parameters:
        ///   - version: the version that made the change.
        ///   - date: that version's issuedAt.
        ///   - event: what changed.
        ///   - trusted: false when the version failed verification.
        public init(version: Int64, date: Timestamp, event: DomainEvent, trusted: Bool = true) {
            self.version = version
            self.date = date
            self.event = event
            self.trusted = trusted
        }
    }

    public var name: String
    public var entries: [Entry]

    /// - Parameters:
    ///   - name: the domain name.
    ///   - entries: its changes, in version order.
    public init(name: String, entries: [Entry]) {
        self.name = name
        self.entries = entries
    }
}

/// A revocation added or lifted at one version.
public struct RevocationEvent: Sendable, Equatable {
    public var version: Int64
    public var date: Timestamp
    public var pin: Pin
    /// False: revoked at `version`; true: lifted at `version`.
    public var lifted: Bool

    /// - Parameters:
    ///   - version: the version that revoked or lifted `pin`.
    ///   - date: that version's issuedAt.
    ///   - lifted: true for a lifted revocation.
    public init(version: Int64, date: Timestamp, pin: Pin, lifted: Bool) {
        self.version = version
        self.date = date
        self.pin = pin
        self.lifted = lifted
    }
}

/// A span of time in which no published manifest was unexpired (clients had only
/// expired data: section 7's fail-closed merge applied).
public struct CoverageGap: Sendable, Equatable {
    /// When the last unexpired manifest expired.
    public var from: Timestamp
    /// When the next manifest was issued, or the audit time for a gap still open.
    public var until: Timestamp
    /// The version whose expiry opened the gap.
    public var afterVersion: Int64
    /// The version that closed it; nil when the gap is still open at the audit time.
    public var beforeVersion: Int64?

    /// - Parameters:
    ///   - from: when the last unexpired manifest expired.
    ///   - until: when the next was issued, or the audit time.
    ///   - afterVersion: the version whose expiry opened the gap.
    ///   - beforeVersion: the version that closed it, nil when still open.
    public init(from: Timestamp, until: Timestamp, afterVersion: Int64, beforeVersion: Int64?) {
        self.from = from
        self.until = until
        self.afterVersion = afterVersion
        self.beforeVersion = beforeVersion
    }

    /// Length in seconds.
    public var seconds: Int64 { until.secondsSince1970 - from.secondsSince1970 }
}

/// Everything one audit found.
public struct AuditReport: Sendable, Equatable {
    /// The root's scope.
    public var scope: String
    /// Where the tree was read (`TreeSource.location`).
    public var location: String
    /// The time expiry was judged at (`--at`, default now).
    public var at: Timestamp
    /// The version of the root the audit was given (the trust anchor).
    public var anchorVersion: Int64
    /// Roots in version order.
    public var roots: [RootSummary] = []
    /// Every history file read, in version order (those that failed verification marked).
    public var manifests: [ManifestSummary] = []
    /// The version of the given root when the tree's root of that version has other payload
    /// bytes (`root-equivocation`): the question is whether the given root is the one the
    /// app embeds. Findings that follow from it carry `followsFrom == .givenRoot`.
    public var givenRootDiffers: Int64?
    /// The version manifest.json holds, when it parses.
    public var manifestJSONVersion: Int64?
    /// Per domain, in order of first appearance.
    public var domains: [DomainTimeline] = []
    /// Revocations added and lifted, in version order.
    public var revocations: [RevocationEvent] = []
    /// Earliest issuedAt and latest expiresAt over the manifests that verified.
    public var coverage: (from: Timestamp, until: Timestamp)? {
        let verified = manifests.filter(\.verified)
        guard let from = verified.compactMap(\.issuedAt).min(), let until = verified.compactMap(\.expiresAt).max()
        else { return nil }
        return (from, until)
    }
    /// Spans without an unexpired manifest, in time order.
    public var gaps: [CoverageGap] = []
    /// Rules broken: the audit fails when any is present.
    public var violations: [AuditFinding] = []
    /// Findings that do not fail the audit.
    public var warnings: [AuditFinding] = []
    /// The transparency log's facts, when the newest root has a `log` member.
    public var log: LogAuditSummary?

    /// An empty report: nothing read yet.
    ///
    /// - Parameters:
    ///   - scope: the root's scope.
    ///   - location: where the tree is read.
    ///   - at: the time expiry is judged at.
    ///   - anchorVersion: the given root's version.
    public init(scope: String, location: String, at: Timestamp, anchorVersion: Int64) {
        self.scope = scope
        self.location = location
        self.at = at
        self.anchorVersion = anchorVersion
    }

    /// Whether every rule holds (warnings allowed).
    public var passed: Bool { violations.isEmpty }

    /// Equal when every fact is equal (`coverage` is derived from `manifests`).
    public static func == (lhs: AuditReport, rhs: AuditReport) -> Bool {
        lhs.scope == rhs.scope && lhs.location == rhs.location && lhs.at == rhs.at
            && lhs.anchorVersion == rhs.anchorVersion && lhs.roots == rhs.roots && lhs.manifests == rhs.manifests
            && lhs.manifestJSONVersion == rhs.manifestJSONVersion && lhs.domains == rhs.domains
            && lhs.revocations == rhs.revocations && lhs.gaps == rhs.gaps && lhs.violations == rhs.violations
            && lhs.warnings == rhs.warnings && lhs.log == rhs.log && lhs.givenRootDiffers == rhs.givenRootDiffers
    }

    /// The violations of one rule.
    public func violations(_ rule: AuditRule) -> [AuditFinding] { violations.filter { $0.rule == rule } }
    /// The warnings of one rule.
    public func warnings(_ rule: AuditRule) -> [AuditFinding] { warnings.filter { $0.rule == rule } }
    /// The timeline of one domain.
    public func timeline(_ name: String) -> DomainTimeline? { domains.first { $0.name == name } }
}
