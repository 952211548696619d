// What changed between two manifests or two roots (`pinion diff`, and each step of the
// auditor's timeline), so a co-signer sees what they are about to sign.

import PinionCore
import PinionTrust

/// A value before and after.
public struct Change<Value: Sendable & Equatable>: Sendable, Equatable {
    public let old: Value
    public let new: Value

    /// - Parameters:
    ///   - old: the value in the old document.
    ///   - new: the value in the new document.
    public init(old: Value, new: Value) {
        self.old = old
        self.new = new
    }

    /// Whether the value differs.
    public var changed: Bool { old != new }
}

/// Why two documents cannot be compared.
public enum DiffError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One is a root, the other a manifest.
    case kindsDiffer(old: PayloadKind, new: PayloadKind)
    /// The documents belong to different scopes.
    case scopesDiffer(old: String, new: String)

    public var description: String {
        switch self {
        case .kindsDiffer(let old, let new):
            return "cannot compare a \(Self.name(old)) with a \(Self.name(new)); give two manifests or two roots"
        case .scopesDiffer(let old, let new):
            return "cannot compare documents of different scopes (\"\(old)\" and \"\(new)\")"
        }
    }

    private static func name(_ kind: PayloadKind) -> String { kind == .root ? "root" : "manifest" }
}

/// How one domain present in both manifests changed.
public struct DomainChange: Sendable, Equatable {
    public var name: String
    /// Pins of the new entry that the old one lacks, in the new entry's order.
    public var pinsAdded: [Pin]
    /// Pins of the old entry that the new one lacks, in the old entry's order.
    public var pinsRemoved: [Pin]
    /// Set when `enforce` changed (false = report-only).
    public var enforce: Change<Bool>?
    /// Set when `includeSubdomains` changed.
    public var includeSubdomains: Change<Bool>?

    /// Whether nothing about the domain changed.
    public var isEmpty: Bool {
        pinsAdded.isEmpty && pinsRemoved.isEmpty && enforce == nil && includeSubdomains == nil
    }
}

/// The differences between two manifest payloads of one scope (docs/DESIGN.md §5).
public struct ManifestDiff: Sendable, Equatable {
    public var scope: String
    public var version: Change<Int64>
    public var rootVersion: Change<Int64>
    public var issuedAt: Change<Timestamp>
    public var expiresAt: Change<Timestamp>
    /// `previous` of each (SHA-256, 32 bytes; nil when absent).
    public var previous: Change<[UInt8]?>
    /// Domains only the new manifest has, in its order.
    public var domainsAdded: [ManifestPayload.Domain]
    /// Domains only the old manifest has, in its order.
    public var domainsRemoved: [ManifestPayload.Domain]
    /// Domains in both whose pins or flags changed, in the new manifest's order.
    public var domainsChanged: [DomainChange]
    /// Pins the new manifest revokes that the old one did not.
    public var revocationsAdded: [Pin]
    /// Pins the old manifest revoked that the new one no longer does (the auditor flags these).
    public var revocationsLifted: [Pin]
    /// Changes that lower protection or widen trust, in words.
    public var concerns: [ReviewConcern]

    /// Whether the payloads differ in any compared member.
    public var hasChanges: Bool {
        version.changed || rootVersion.changed || issuedAt.changed || expiresAt.changed || previous.changed
            || !domainsAdded.isEmpty || !domainsRemoved.isEmpty || !domainsChanged.isEmpty
            || !revocationsAdded.isEmpty || !revocationsLifted.isEmpty
    }

    /// Compares two manifests. Work is linear in their domains and pins.
    ///
    /// - Throws: `DiffError.scopesDiffer`.
    public static func between(_ old: ManifestPayload, _ new: ManifestPayload) throws(DiffError) -> ManifestDiff {
        guard old.scope == new.scope else { throw .scopesDiffer(old: old.scope, new: new.scope) }
        return unchecked(old, new)
    }

    /// `between` without the scope check (the auditor compares documents of one scope).
    static func unchecked(_ old: ManifestPayload, _ new: ManifestPayload) -> ManifestDiff {
        var oldDomains: [String: ManifestPayload.Domain] = [:]
        for domain in old.domains { oldDomains[domain.name] = oldDomains[domain.name] ?? domain }
        var newNames = Set<String>()
        var added: [ManifestPayload.Domain] = []
        var changed: [DomainChange] = []
        for domain in new.domains {
            newNames.insert(domain.name)
            guard let before = oldDomains[domain.name] else {
                added.append(domain)
                continue
            }
            let oldPins = Set(before.pins)
            let newPins = Set(domain.pins)
            let change = DomainChange(
                name: domain.name, pinsAdded: domain.pins.filter { !oldPins.contains($0) },
                pinsRemoved: before.pins.filter { !newPins.contains($0) },
                enforce: before.enforce == domain.enforce ? nil : Change(old: before.enforce, new: domain.enforce),
                includeSubdomains: before.includeSubdomains == domain.includeSubdomains
                    ? nil : Change(old: before.includeSubdomains, new: domain.includeSubdomains))
            if !change.isEmpty { changed.append(change) }
        }
        let oldRevoked = Set(old.revokedPins)
        return ManifestDiff(
            scope: new.scope, version: Change(old: old.version, new: new.version),
            rootVersion: Change(old: old.rootVersion, new: new.rootVersion),
            issuedAt: Change(old: old.issuedAt, new: new.issuedAt),
            expiresAt: Change(old: old.expiresAt, new: new.expiresAt),
            previous: Change(old: old.previous, new: new.previous), domainsAdded: added,
            domainsRemoved: old.domains.filter { !newNames.contains($0.name) }, domainsChanged: changed,
            revocationsAdded: new.revokedPins.filter { !oldRevoked.contains($0) },
            revocationsLifted: HistoryRules.liftedRevocations(new, of: old), concerns: ReviewConcern.between(old, new))
    }
}

/// How one role of a root changed.
public struct RoleChange: Sendable, Equatable {
    public var keyIDsAdded: [String]
    public var keyIDsRemoved: [String]
    /// Set when the threshold changed.
    public var threshold: Change<Int>?

    /// Whether the role is unchanged.
    public var isEmpty: Bool { keyIDsAdded.isEmpty && keyIDsRemoved.isEmpty && threshold == nil }

    static func between(_ old: RootPayload.Role, _ new: RootPayload.Role) -> RoleChange {
        let oldIDs = Set(old.keyIDs)
        let newIDs = Set(new.keyIDs)
        return RoleChange(
            keyIDsAdded: new.keyIDs.filter { !oldIDs.contains($0) },
            keyIDsRemoved: old.keyIDs.filter { !newIDs.contains($0) },
            threshold: old.threshold == new.threshold ? nil : Change(old: old.threshold, new: new.threshold))
    }
}

/// The differences between two root payloads of one scope (docs/DESIGN.md §4).
public struct RootDiff: Sendable, Equatable {
    public var scope: String
    public var version: Change<Int64>
    public var issuedAt: Change<Timestamp>
    public var expiresAt: Change<Timestamp>
    /// Seconds.
    public var maxManifestLifetime: Change<Int64>
    /// Key ids listed in `keys` only by the new root.
    public var keysAdded: [String]
    /// Key ids listed in `keys` only by the old root.
    public var keysRemoved: [String]
    public var rootRole: RoleChange
    public var pinsRole: RoleChange
    /// `pinsRoleSince` as written (nil when absent, meaning the root's own version).
    public var pinsRoleSince: Change<Int64?>
    /// The transparency log policy (nil when the root has none).
    public var log: Change<LogPolicy?>
    /// Changes that lower protection or widen trust, in words.
    public var concerns: [ReviewConcern]

    /// Whether the payloads differ in any compared member.
    public var hasChanges: Bool {
        version.changed || issuedAt.changed || expiresAt.changed || maxManifestLifetime.changed
            || !keysAdded.isEmpty || !keysRemoved.isEmpty || !rootRole.isEmpty || !pinsRole.isEmpty
            || pinsRoleSince.changed || log.changed
    }

    /// Compares two roots.
    ///
    /// - Throws: `DiffError.scopesDiffer`.
    public static func between(_ old: RootPayload, _ new: RootPayload) throws(DiffError) -> RootDiff {
        guard old.scope == new.scope else { throw .scopesDiffer(old: old.scope, new: new.scope) }
        let oldKeys = Set(old.keys.map(\.keyID))
        let newKeys = Set(new.keys.map(\.keyID))
        return RootDiff(
            scope: new.scope, version: Change(old: old.version, new: new.version),
            issuedAt: Change(old: old.issuedAt, new: new.issuedAt),
            expiresAt: Change(old: old.expiresAt, new: new.expiresAt),
            maxManifestLifetime: Change(old: old.maxManifestLifetime, new: new.maxManifestLifetime),
            keysAdded: new.keys.map(\.keyID).filter { !oldKeys.contains($0) },
            keysRemoved: old.keys.map(\.keyID).filter { !newKeys.contains($0) },
            rootRole: RoleChange.between(old.rootRole, new.rootRole),
            pinsRole: RoleChange.between(old.pinsRole, new.pinsRole),
            pinsRoleSince: Change(old: old.pinsRoleSince, new: new.pinsRoleSince),
            log: Change(old: old.log, new: new.log),
            concerns: ReviewConcern.between(old, new))
    }
}

/// Signatures of two envelopes, by key id (not verified here).
public struct SignatureDiff: Sendable, Equatable {
    /// Key ids that sign only the new envelope.
    public var added: [String]
    /// Key ids that sign only the old envelope.
    public var removed: [String]

    /// Compares the signers of two envelopes.
    public static func between(_ old: Envelope, _ new: Envelope) -> SignatureDiff {
        let oldIDs = Set(old.signatures.map(\.keyID))
        let newIDs = Set(new.signatures.map(\.keyID))
        var seen = Set<String>()
        return SignatureDiff(
            added: new.signatures.map(\.keyID).filter { !oldIDs.contains($0) && seen.insert($0).inserted },
            removed: old.signatures.map(\.keyID).filter { !newIDs.contains($0) && seen.insert($0).inserted })
    }
}
