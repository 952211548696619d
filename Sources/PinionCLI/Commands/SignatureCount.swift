// How `pinion verify` reports the signatures counted against a threshold, for people.

import PinionCore

enum SignatureCount {
    /// `2 valid signatures, 2 needed, from 3 keys`: the valid signatures, the role's
    /// threshold and the role's key count, each named, so a 2-of-3 role never reads as
    /// "2 of 2".
    static func text(_ valid: Int, of role: RootPayload.Role) -> String {
        let signatures = valid == 1 ? "signature" : "signatures"
        let keys = role.keyIDs.count == 1 ? "key" : "keys"
        return "\(valid) valid \(signatures), \(role.threshold) needed, from \(role.keyIDs.count) \(keys)"
    }

    /// The signatures of a trusted root: its own root role's, and for a rotation also the
    /// previous root role's (DESIGN.md: a threshold of the old root role AND of the new one).
    static func rootText(_ root: VerifiedRoot, previous: VerifiedRoot?) -> String {
        let own = text(root.ownRoleReport.valid.count, of: root.payload.rootRole)
        guard let previousReport = root.previousRoleReport, let previous else {
            return "root role: " + own
        }
        let old = text(previousReport.valid.count, of: previous.payload.rootRole)
        return "old root role (version \(previous.version)): \(old); new root role: \(own)"
    }
}
