// How `pinion verify` reports the signatures counted against a threshold, for people.

import PinionCore

enum SignatureCount {
    /// `2 of 2 needed`, or `2 of 2 needed (3 valid)` when more keys signed than needed,
    /// so a count never reads as more than the threshold.
    static func text(_ valid: Int, of threshold: Int) -> String {
        let counted = "\(min(valid, threshold)) of \(threshold) needed"
        return valid > threshold ? counted + " (\(valid) valid)" : counted
    }

    /// The signatures of a trusted root: its own root role's, and for a rotation also the
    /// previous root role's (DESIGN.md: a threshold of the old root role AND of the new one).
    static func rootText(_ root: VerifiedRoot, previous: VerifiedRoot?) -> String {
        let own = text(root.ownRoleReport.valid.count, of: root.payload.rootRole.threshold)
        guard let previousReport = root.previousRoleReport, let previous else {
            return own + " root-role signatures"
        }
        let old = text(previousReport.valid.count, of: previous.payload.rootRole.threshold)
        return "\(old) from the old root role (version \(previous.version)) and \(own) from the new one"
    }
}
