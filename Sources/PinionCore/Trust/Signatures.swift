// Threshold counting of DSSE signatures for one role (docs/DESIGN.md §2).

/// The outcome of checking an envelope's signatures against one role of a root.
public struct SignatureReport: Sendable, Equatable {
    /// Distinct key ids of the role whose signature verified, in envelope order.
    public var valid: [String] = []
    /// Key ids of the role whose signature failed verification (a warning, not an error).
    public var invalid: [String] = []
    /// Key ids that signed more than once; the extra signatures do not count again.
    public var duplicates: [String] = []
    /// Key ids not in the role (unknown keys, or keys of the other role); ignored.
    public var ignored: [String] = []

    public init() {}

    /// Whether at least `threshold` distinct keys of the role verified.
    public func meets(_ threshold: Int) -> Bool { valid.count >= threshold }
}

/// Counts signatures toward a role's threshold.
public enum Signatures {
    /// Only signatures whose key id is listed in `role` count; each distinct key counts
    /// once; a failing signature does not count and is reported in `invalid`.
    ///
    /// - Parameters:
    ///   - envelope: the signed envelope; signatures cover `envelope.signingInput` (DSSE PAE).
    ///   - role: the role being checked.
    ///   - keys: the root document providing the public keys of the role.
    ///   - crypto: Ed25519 verification.
    /// - Returns: the report; compare `valid.count` with `role.threshold`.
    public static func check(
        _ envelope: Envelope, role: RootPayload.Role, keys: RootPayload, crypto: CryptoProvider
    ) -> SignatureReport {
        var report = SignatureReport()
        let members = Set(role.keyIDs)
        let message = envelope.signingInput
        for signature in envelope.signatures {
            guard members.contains(signature.keyID), let publicKey = keys.publicKey(for: signature.keyID)
            else {
                report.ignored.append(signature.keyID)
                continue
            }
            if report.valid.contains(signature.keyID) {
                report.duplicates.append(signature.keyID)
                continue
            }
            if crypto.verifier.isValidSignature(signature.signature, of: message, publicKey: publicKey) {
                report.valid.append(signature.keyID)
            } else {
                report.invalid.append(signature.keyID)
            }
        }
        // A key whose failing signature was followed by a valid one is not a warning.
        report.invalid.removeAll(where: { report.valid.contains($0) })
        return report
    }
}
