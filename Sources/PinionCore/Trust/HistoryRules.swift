// The rules a published history obeys from one manifest to the next (docs/DESIGN.md §5, §9,
// §10), shared by `pinion publish` (for the step it adds) and the auditor.

/// A rule broken between two consecutive published manifests.
public enum HistoryViolation: Error, Sendable, Equatable, CustomStringConvertible {
    /// Versions must count up by exactly one.
    case versionNotNext(expected: Int64, found: Int64)
    /// `previous` must be the SHA-256 of the prior payload (nil: missing).
    case previousMismatch(expected: [UInt8], found: [UInt8]?)
    /// issuedAt must not go backwards.
    case issuedAtBeforeLatest(latest: Timestamp, found: Timestamp)
    /// rootVersion must not go backwards.
    case rootVersionDecreased(latest: Int64, found: Int64)
    /// Revocations carry forward unless lifted explicitly.
    case revocationLifted([Pin])

    public var description: String {
        switch self {
        case .versionNotNext(let expected, let found): return "version \(found) is not the next version \(expected)"
        case .previousMismatch(let expected, let found):
            let text = found.map { "sha256:" + Hex.encode($0) } ?? "missing"
            return "previous is \(text), expected sha256:\(Hex.encode(expected)) (the latest published payload)"
        case .issuedAtBeforeLatest(let latest, let found):
            return "issuedAt \(found) is before the latest published issuedAt \(latest)"
        case .rootVersionDecreased(let latest, let found):
            return "rootVersion \(found) is below the latest published rootVersion \(latest)"
        case .revocationLifted(let pins):
            return "revocation(s) of the latest version missing: \(pins.map(\.description).joined(separator: ", "))"
        }
    }
}

/// Checks of one step of a published history.
public enum HistoryRules {
    /// Checks `next` as the successor of `latest` (docs/DESIGN.md §9): version latest + 1,
    /// `previous` = SHA-256 of the latest payload, issuedAt and rootVersion not going back,
    /// and every revoked pin of the latest still revoked.
    ///
    /// - Parameters:
    ///   - latestPayloadSHA256: SHA-256 of the latest payload bytes (32 bytes).
    ///   - allowLift: accept a missing revocation (then reported by `liftedRevocations`).
    /// - Throws: the first `HistoryViolation`.
    public static func checkSuccessor(
        _ next: ManifestPayload, of latest: ManifestPayload, latestPayloadSHA256: [UInt8], allowLift: Bool
    ) throws(HistoryViolation) {
        for violation in successorViolations(next, of: latest, latestPayloadSHA256: latestPayloadSHA256) {
            if case .revocationLifted = violation, allowLift { continue }
            throw violation
        }
    }

    /// Every rule of `checkSuccessor` that `next` breaks as the successor of `latest`, in
    /// the order `checkSuccessor` checks them (the auditor lists them all). A lifted
    /// revocation is included; whether it is an error is the caller's decision.
    ///
    /// - Parameters:
    ///   - latestPayloadSHA256: SHA-256 of the latest payload bytes (32 bytes).
    /// - Returns: the violations, empty when `next` is a valid successor.
    public static func successorViolations(
        _ next: ManifestPayload, of latest: ManifestPayload, latestPayloadSHA256: [UInt8]
    ) -> [HistoryViolation] {
        var violations: [HistoryViolation] = []
        if !(latest.version < Limits.maxInteger && next.version == latest.version + 1) {
            violations.append(.versionNotNext(expected: latest.version + 1, found: next.version))
        }
        if next.previous != latestPayloadSHA256 {
            violations.append(.previousMismatch(expected: latestPayloadSHA256, found: next.previous))
        }
        if next.rootVersion < latest.rootVersion {
            violations.append(.rootVersionDecreased(latest: latest.rootVersion, found: next.rootVersion))
        }
        if next.issuedAt < latest.issuedAt {
            violations.append(.issuedAtBeforeLatest(latest: latest.issuedAt, found: next.issuedAt))
        }
        let lifted = liftedRevocations(next, of: latest)
        if !lifted.isEmpty { violations.append(.revocationLifted(lifted)) }
        return violations
    }

    /// Revoked pins of `latest` that `next` no longer revokes.
    public static func liftedRevocations(_ next: ManifestPayload, of latest: ManifestPayload) -> [Pin] {
        let kept = Set(next.revokedPins)
        return latest.revokedPins.filter { !kept.contains($0) }
    }
}
