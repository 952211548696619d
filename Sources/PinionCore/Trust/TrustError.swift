// Typed errors of the trust rules: signatures, thresholds, rotation, order and expiry.

/// Why a root or manifest is not trusted. Each case carries what a message needs.
public enum TrustError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The envelope or payload broke the strict format.
    case format(FormatError)
    /// The envelope holds the other kind of document.
    case wrongPayloadKind(expected: PayloadKind, found: PayloadKind)
    /// Fewer than `threshold` distinct keys of the role produced valid signatures.
    case thresholdNotMet(role: RoleName, rootVersion: Int64, valid: Int, threshold: Int)
    /// The document's scope is not the root's.
    case scopeMismatch(expected: String, found: String)
    /// A root that is not exactly the next version of the newest trusted root.
    case rootNotNext(expected: Int64, found: Int64)
    /// A root with the same version as a trusted one but different payload bytes.
    case rootEquivocation(version: Int64)
    /// A manifest whose rootVersion is not the newest trusted root's version.
    case rootVersionMismatch(expected: Int64, found: Int64)
    /// A manifest whose `expiresAt - issuedAt` exceeds the root's `maxManifestLifetime` (seconds).
    case lifetimeExceedsCap(lifetime: Int64, cap: Int64)
    /// The newest root has expired: no manifest is accepted under it.
    case rootExpired(version: Int64, expiresAt: Timestamp, now: Timestamp)
    /// The manifest has expired.
    case manifestExpired(version: Int64, expiresAt: Timestamp, now: Timestamp)
    /// More root rotations than one walk may follow.
    case tooManyRotations(limit: Int)
    /// A manifest whose rootVersion is below the newest root's `pinsRoleSince`: the pins
    /// role or cap changed since it was signed (docs/DESIGN.md §5).
    case rootVersionBeforePinsRole(found: Int64, pinsRoleSince: Int64, newest: Int64)
    /// A root whose `pinsRoleSince` breaks the rotation rule (docs/DESIGN.md §4): it may keep
    /// the previous root's value (or a higher one) only when the pins role is unchanged and
    /// the cap not raised; otherwise it must be the root's own version. `allowed` is the
    /// range accepted.
    case pinsRoleSinceInvalid(
        rootVersion: Int64, found: Int64, allowed: ClosedRange<Int64>, pinsRoleChanged: Bool)

    public var description: String {
        switch self {
        case .format(let error): return error.description
        case .wrongPayloadKind(let expected, let found):
            return "payloadType is \(found.rawValue), expected \(expected.rawValue)"
        case .thresholdNotMet(let role, let rootVersion, let valid, let threshold):
            return
                "\(valid) valid signature(s) from the \(role.rawValue) role of root version \(rootVersion); threshold is \(threshold)"
        case .scopeMismatch(let expected, let found):
            return "scope is \"\(found)\", the root's scope is \"\(expected)\""
        case .rootNotNext(let expected, let found):
            return "root version \(found) is not the next version (\(expected)) of the trusted chain"
        case .rootEquivocation(let version):
            return
                "root version \(version) differs from the trusted root of the same version (equivocation)"
        case .rootVersionMismatch(let expected, let found) where found > expected:
            return
                "manifest rootVersion \(found), newest trusted root is \(expected): publish or pass the roots up to \(found) first"
        case .rootVersionMismatch(let expected, let found):
            return "manifest rootVersion \(found), newest trusted root is \(expected): re-sign under root \(expected)"
        case .lifetimeExceedsCap(let lifetime, let cap):
            return
                "lifetime \(HumanDuration.text(lifetime)) (expiresAt - issuedAt) exceeds the root's cap of \(HumanDuration.text(cap)) (maxManifestLifetime)"
        case .rootExpired(let version, let expiresAt, let now):
            return "root version \(version) expired at \(expiresAt) (now \(now))"
        case .manifestExpired(let version, let expiresAt, let now):
            return "manifest version \(version) expired at \(expiresAt) (now \(now))"
        case .tooManyRotations(let limit): return "more than \(limit) root rotations in one walk"
        case .rootVersionBeforePinsRole(let found, let since, let newest):
            return
                "manifest rootVersion \(found) is below pinsRoleSince \(since) of the newest root (version \(newest)): the pins role or cap changed since; re-sign under root \(newest)"
        case .pinsRoleSinceInvalid(let version, let found, let allowed, let changed):
            return changed
                ? "root version \(version) changes the pins role or raises maxManifestLifetime, so pinsRoleSince must be \(allowed.upperBound), not \(found)"
                : "root version \(version) has pinsRoleSince \(found), below the previous root's \(allowed.lowerBound); it may be \(allowed.lowerBound) to \(allowed.upperBound)"
        }
    }
}
