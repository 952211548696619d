// Verification of a pin manifest under a trusted root (docs/DESIGN.md §5, §6 step 3).

/// A manifest whose signatures met the pins role's threshold of the root it names.
public struct VerifiedManifest: Sendable, Equatable {
    public let envelope: Envelope
    public let payload: ManifestPayload
    /// SHA-256 of the payload bytes: the document's identity.
    public let payloadSHA256: [UInt8]
    /// Signatures checked against the pins role.
    public let report: SignatureReport

    /// Checks `expiresAt > now`.
    /// - Throws: `TrustError.manifestExpired`.
    public func checkCurrent(at now: Timestamp) throws(TrustError) {
        guard payload.expiresAt > now else {
            throw .manifestExpired(version: payload.version, expiresAt: payload.expiresAt, now: now)
        }
    }
}

/// The manifest checks every part shares.
public enum ManifestVerifier {
    /// Verifies, in the order of docs/DESIGN.md §6 step 3: envelope (size limit, strict form),
    /// payloadType, signatures against `root`'s pins role, strict payload, scope,
    /// `root.pinsRoleSince <= rootVersion <= root.version` (a manifest signed under an older
    /// root with the same pins role stays valid across a rotation, §5), and lifetime within
    /// the newest root's `maxManifestLifetime`.
    /// Expiry and order against a floor are the caller's (they depend on time and state).
    ///
    /// - Parameters:
    ///   - bytes: the envelope file.
    ///   - root: the newest trusted root.
    ///   - crypto: Ed25519 and SHA-256.
    ///   - limits: size and count limits.
    /// - Throws: `TrustError` naming the first rule broken.
    public static func verify(
        _ bytes: [UInt8], under root: VerifiedRoot, crypto: CryptoProvider, limits: Limits = .standard
    )
        throws(TrustError) -> VerifiedManifest
    {
        let envelope: Envelope
        do { envelope = try Envelope.parse(bytes, limits: limits) } catch { throw .format(error) }
        return try verify(envelope, parsedPayload: nil, payloadSHA256: nil, under: root, crypto: crypto, limits: limits)
    }

    /// The checks of `verify(_:under:crypto:limits:)` after the envelope is parsed, for a
    /// caller that has already parsed the envelope and its payload (the auditor reads every
    /// manifest once; parsing it again here was a third of its work, bench/RESULTS.md).
    ///
    /// - Parameters:
    ///   - envelope: the parsed envelope.
    ///   - parsedPayload: `ManifestPayload.parse(envelope.payload, limits: limits)` if the
    ///     caller has it, else nil (it is parsed here).
    ///   - payloadSHA256: `crypto.hasher.sha256(envelope.payload)` if the caller has it, else
    ///     nil (it is computed here).
    ///   - root: the newest trusted root.
    ///   - crypto: Ed25519 and SHA-256.
    ///   - limits: size and count limits.
    /// - Throws: `TrustError` naming the first rule broken.
    package static func verify(
        _ envelope: Envelope, parsedPayload: ManifestPayload?, payloadSHA256: [UInt8]?, under root: VerifiedRoot,
        crypto: CryptoProvider, limits: Limits
    ) throws(TrustError) -> VerifiedManifest {
        guard envelope.kind == .pins else {
            throw .wrongPayloadKind(expected: .pins, found: envelope.kind)
        }
        let rootPayload = root.payload
        let report = Signatures.check(
            envelope, role: rootPayload.pinsRole, keys: rootPayload, crypto: crypto)
        guard report.meets(rootPayload.pinsRole.threshold) else {
            throw .thresholdNotMet(
                role: .pins, rootVersion: rootPayload.version, valid: report.valid.count,
                threshold: rootPayload.pinsRole.threshold)
        }
        let payload: ManifestPayload
        if let parsedPayload {
            payload = parsedPayload
        } else {
            do { payload = try ManifestPayload.parse(envelope.payload, limits: limits) } catch {
                var located = error
                located.path = located.path.isEmpty ? "payload" : "payload." + located.path
                throw .format(located)
            }
        }
        guard payload.scope == rootPayload.scope else {
            throw .scopeMismatch(expected: rootPayload.scope, found: payload.scope)
        }
        guard payload.rootVersion <= rootPayload.version else {
            throw .rootVersionMismatch(expected: rootPayload.version, found: payload.rootVersion)
        }
        guard payload.rootVersion >= rootPayload.effectivePinsRoleSince else {
            throw .rootVersionBeforePinsRole(
                found: payload.rootVersion, pinsRoleSince: rootPayload.effectivePinsRoleSince,
                newest: rootPayload.version)
        }
        guard payload.lifetime <= rootPayload.maxManifestLifetime else {
            throw .lifetimeExceedsCap(lifetime: payload.lifetime, cap: rootPayload.maxManifestLifetime)
        }
        return VerifiedManifest(
            envelope: envelope, payload: payload,
            payloadSHA256: payloadSHA256 ?? crypto.hasher.sha256(envelope.payload),
            report: report)
    }
}
