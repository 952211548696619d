// Why a manifest's signatures did not count, said in terms of what to do: the scope, the
// root version it names, the keys that signed it, checked before blaming the signatures.

/// Turns a manifest's threshold failure into the cause a signer can act on. The verdict is
/// unchanged (the manifest is refused, exit 1); only the message is: `0 valid signature(s)`
/// would blame the signatures when the manifest names another scope, a root the verifier
/// does not know yet, or was signed by keys the newest root has removed.
public enum ManifestDiagnosis {
    /// The message for `error` raised while verifying `envelope` under `chain.newest`, or
    /// nil when `error` is not a pins-role threshold failure.
    ///
    /// Checked in order: the payload's scope against the root's; its rootVersion against
    /// the newest trusted root (newer: the chain is missing roots; older: signed under a
    /// replaced root, naming keys that root no longer lists); then the key ids the
    /// signatures name against those the pins role lists.
    ///
    /// - Parameters:
    ///   - error: the error verification raised.
    ///   - envelope: the manifest envelope that was refused.
    ///   - chain: the trusted roots it was verified under.
    ///   - crypto: Ed25519 and SHA-256, to name the signatures that do not verify.
    /// - Returns: the message, or nil for errors other than a pins-role threshold failure.
    public static func explain(_ error: TrustError, envelope: Envelope, chain: RootChain, crypto: CryptoProvider)
        -> String?
    {
        guard case .thresholdNotMet(.pins, let rootVersion, let valid, let threshold) = error else { return nil }
        let newest = chain.newest.payload
        let signers = unique(envelope.signatures.map(\.keyID))
        let listed = newest.pinsRole.keyIDs
        if let payload = try? ManifestPayload.parse(envelope.payload) {
            if payload.scope != newest.scope {
                return TrustError.scopeMismatch(expected: newest.scope, found: payload.scope).description
            }
            if payload.rootVersion > newest.version {
                let missing = (newest.version + 1...payload.rootVersion).map(String.init)
                return
                    "manifest rootVersion \(payload.rootVersion), newest trusted root is \(newest.version): publish or pass root \(list(missing)) first (--root-chain DIR)"
            }
            let removed = signers.filter { !listed.contains($0) }
            if payload.rootVersion < newest.version, !removed.isEmpty {
                return
                    "signed by pins keys that root \(newest.version) no longer lists (\(removed.joined(separator: ", "))): re-sign under root \(newest.version)"
            }
        }
        let named =
            signers.isEmpty
            ? "the envelope has no signature" : "signatures name key ids \(signers.joined(separator: ", "))"
        let start =
            valid == 0
            ? "no valid signature by a key of the pins role of root version \(rootVersion)"
            : "\(valid) valid signature(s) from the pins role of root version \(rootVersion); threshold is \(threshold)"
        var message = "\(start); \(named); the role lists \(listed.joined(separator: ", "))"
        let failing = Signatures.check(envelope, role: newest.pinsRole, keys: newest, crypto: crypto).invalid
        if !failing.isEmpty {
            message +=
                "; the signature(s) of \(failing.joined(separator: ", ")) do not verify (payload or signature changed after signing)"
        }
        return message
    }

    private static func unique(_ ids: [String]) -> [String] {
        var seen = Set<String>()
        return ids.filter { seen.insert($0).inserted }
    }

    /// `2`, `2 and 3`, `2, 3 and 4`.
    private static func list(_ items: [String]) -> String {
        guard items.count > 1, let last = items.last else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " and " + last
    }
}
