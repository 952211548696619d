// The changes between two roots or two manifests that lower protection or widen trust,
// named in words so a co-signer sees them before signing (`pinion diff`, `sign --previous`).

import PinionCore

/// One change a co-signer should weigh before signing.
public struct ReviewConcern: Sendable, Equatable, CustomStringConvertible {
    /// What the change does to clients.
    public enum Kind: String, Sendable {
        /// Clients check less (a log removed, freshness off, enforce off, a threshold lowered).
        case lowersProtection = "lowers protection"
        /// Clients accept more (keys added to a role, pins added, a log key replaced).
        case widensTrust = "widens trust"
    }

    public var kind: Kind
    /// One sentence naming the member and the values, e.g. "the log's quorum is lowered from 2 to 1".
    public var text: String

    /// `"<kind>: <text>"`.
    public var description: String { "\(kind.rawValue): \(text)" }

    /// The longest manifest lifetime `pinion lint` accepts by default, in seconds (90 days).
    public static let lintLifetime: Int64 = 90 * 86_400

    /// The concerns of the root rotation `old` -> `new`.
    public static func between(_ old: RootPayload, _ new: RootPayload) -> [ReviewConcern] {
        var output: [ReviewConcern] = []
        func add(_ kind: Kind, _ text: String) { output.append(ReviewConcern(kind: kind, text: text)) }
        for (name, before, after) in [("root", old.rootRole, new.rootRole), ("pins", old.pinsRole, new.pinsRole)] {
            if after.threshold < before.threshold {
                add(
                    .lowersProtection,
                    "the \(name) role's threshold is lowered from \(before.threshold) to \(after.threshold)")
            }
            let added = after.keyIDs.filter { !before.keyIDs.contains($0) }
            if !added.isEmpty {
                add(.widensTrust, "key(s) added to the \(name) role: \(added.joined(separator: ", "))")
            }
            for id in after.keyIDs where before.keyIDs.contains(id) && old.publicKey(for: id) != new.publicKey(for: id)
            {
                add(.widensTrust, "the public key listed under \(id) in the \(name) role is replaced")
            }
        }
        if new.maxManifestLifetime > old.maxManifestLifetime {
            add(
                .lowersProtection,
                "maxManifestLifetime is raised from \(HumanDuration.text(old.maxManifestLifetime)) to \(HumanDuration.text(new.maxManifestLifetime))"
            )
        }
        lifetime(
            old: old.expiresAt.secondsSince1970 - old.issuedAt.secondsSince1970,
            new: new.expiresAt.secondsSince1970 - new.issuedAt.secondsSince1970, document: "root", lint: false, add)
        if new.effectivePinsRoleSince > old.effectivePinsRoleSince && new.effectivePinsRoleSince == new.version
            && new.pinsRoleUnchangedAllowsKeeping(old)
        {
            add(
                .lowersProtection,
                "manifests are cut off: manifests signed under roots before version \(new.effectivePinsRoleSince) stop being accepted, so clients refresh nothing until a manifest is re-signed"
            )
        }
        if new.effectivePinsRoleSince < old.effectivePinsRoleSince {
            add(
                .widensTrust,
                "pinsRoleSince is lowered from \(old.effectivePinsRoleSince) to \(new.effectivePinsRoleSince): manifests signed under older roots are accepted again"
            )
        }
        logConcerns(old.log, new.log, add)
        return output
    }

    private static func logConcerns(_ old: LogPolicy?, _ new: LogPolicy?, _ add: (Kind, String) -> Void) {
        guard let old else { return }
        guard let new else {
            add(
                .lowersProtection,
                "the transparency log is removed: clients stop requiring a cosigned proof for manifests, so a split view goes unseen"
            )
            return
        }
        if new.origin != old.origin {
            add(.widensTrust, "the log origin changes from \(old.origin) to \(new.origin)")
        }
        if new.logKey != old.logKey {
            add(
                .widensTrust,
                "the log key is replaced (\(old.logKey.name) \(hex(old.logKey.keyID)) -> \(new.logKey.name) \(hex(new.logKey.keyID))): whoever holds the new key runs the log clients trust"
            )
        }
        let oldByName = Dictionary(old.witnesses.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for witness in new.witnesses {
            guard let before = oldByName[witness.name] else {
                add(.widensTrust, "witness \(witness.name) (key id \(hex(witness.key.keyID))) is added")
                continue
            }
            if before.key != witness.key {
                add(
                    .widensTrust,
                    "witness \(witness.name)'s key is replaced (key id \(hex(before.key.keyID)) -> \(hex(witness.key.keyID)))"
                )
            }
            if before.url != witness.url {
                add(.widensTrust, "witness \(witness.name)'s URL changes from \(before.url) to \(witness.url)")
            }
        }
        let newNames = Set(new.witnesses.map(\.name))
        for witness in old.witnesses where !newNames.contains(witness.name) {
            add(.lowersProtection, "witness \(witness.name) (key id \(hex(witness.key.keyID))) is removed")
        }
        if new.quorum < old.quorum {
            add(.lowersProtection, "the log's quorum is lowered from \(old.quorum) to \(new.quorum)")
        }
        if new.maxCheckpointAge == 0, old.maxCheckpointAge != 0 {
            add(.lowersProtection, "maxCheckpointAge is set to 0: checkpoint freshness is turned off")
        } else if old.maxCheckpointAge != 0, new.maxCheckpointAge > old.maxCheckpointAge {
            add(
                .lowersProtection,
                "maxCheckpointAge is raised from \(HumanDuration.text(old.maxCheckpointAge)) to \(HumanDuration.text(new.maxCheckpointAge))"
            )
        }
        if new.checkpointGrace > old.checkpointGrace {
            add(
                .lowersProtection,
                "checkpointGrace is raised from \(HumanDuration.text(old.checkpointGrace)) to \(HumanDuration.text(new.checkpointGrace))"
            )
        }
    }

    /// The concerns of the manifest update `old` -> `new`.
    public static func between(_ old: ManifestPayload, _ new: ManifestPayload) -> [ReviewConcern] {
        var output: [ReviewConcern] = []
        func add(_ kind: Kind, _ text: String) { output.append(ReviewConcern(kind: kind, text: text)) }
        var oldDomains: [String: ManifestPayload.Domain] = [:]
        for domain in old.domains { oldDomains[domain.name] = oldDomains[domain.name] ?? domain }
        let newNames = Set(new.domains.map(\.name))
        for domain in new.domains {
            guard let before = oldDomains[domain.name] else { continue }
            let added = domain.pins.filter { !before.pins.contains($0) }
            if !added.isEmpty {
                add(
                    .widensTrust,
                    "pin(s) added to \(domain.name): \(added.map(\.description).joined(separator: ", "))")
            }
            if before.enforce, !domain.enforce {
                add(.lowersProtection, "\(domain.name) turns enforce off (report-only: failures are no longer refused)")
            }
            if !before.includeSubdomains, domain.includeSubdomains {
                add(.widensTrust, "\(domain.name) now covers its subdomains too (includeSubdomains)")
            }
        }
        for domain in old.domains where !newNames.contains(domain.name) {
            add(
                .lowersProtection,
                "\(domain.name) is dropped: clients fall back to the baseline pins for it (or to no pinning)")
        }
        for pin in HistoryRules.liftedRevocations(new, of: old) {
            add(.widensTrust, "the revocation of \(pin) is lifted: the pin matches again")
        }
        lifetime(old: old.lifetime, new: new.lifetime, document: "manifest", lint: true, add)
        return output
    }

    private static func lifetime(
        old: Int64, new: Int64, document: String, lint: Bool, _ add: (Kind, String) -> Void
    ) {
        if new > old {
            add(
                .lowersProtection,
                "the \(document) lives longer than the previous version (\(HumanDuration.text(new)) against \(HumanDuration.text(old))): a stale copy can be replayed for longer"
            )
        }
        if lint, new > lintLifetime {
            add(
                .lowersProtection,
                "the \(document) lives \(HumanDuration.text(new)), longer than lint's \(HumanDuration.text(lintLifetime)) default"
            )
        }
    }

    private static func hex(_ keyID: UInt32) -> String { Hex.encode(NoteVerifierKey.bigEndian(keyID)) }
}

extension RootPayload {
    /// Whether a `pinsRoleSince` raised to the new version cut off manifests the old role
    /// could still have signed (the role itself kept), as `root rotate --cut-off-manifests` does.
    fileprivate func pinsRoleUnchangedAllowsKeeping(_ old: RootPayload) -> Bool {
        old.pinsRoleUnchanged(in: self)
    }
}
