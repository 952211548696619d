// The chain of trusted roots from an embedded anchor through each rotation (docs/DESIGN.md §4).

/// A root document whose signatures met the required thresholds.
public struct VerifiedRoot: Sendable, Equatable {
    /// The envelope as received.
    public let envelope: Envelope
    public let payload: RootPayload
    /// SHA-256 of the payload bytes: the document's identity.
    public let payloadSHA256: [UInt8]
    /// Signatures checked against this root's own root role.
    public let ownRoleReport: SignatureReport
    /// Signatures checked against the previous root's root role (nil for the anchor).
    public let previousRoleReport: SignatureReport?

    public var version: Int64 { payload.version }
}

/// The roots trusted so far, oldest first. The first is the anchor the caller trusts
/// (the root embedded in an app, or the one given to `pinion verify --root`).
public struct RootChain: Sendable, Equatable {
    /// Most rotations one walk follows (docs/DESIGN.md §4).
    public static let maxRotationsPerWalk = 256

    public private(set) var roots: [VerifiedRoot]

    /// The newest trusted root.
    public var newest: VerifiedRoot { roots[roots.count - 1] }

    /// Trusts `anchorBytes` as the starting root. It must parse strictly and carry a
    /// threshold of signatures from its own root role (version 1 is self-signed; a later
    /// version was signed by its own root role at rotation).
    ///
    /// - Throws: `TrustError.format`, `.wrongPayloadKind` or `.thresholdNotMet`.
    public init(anchor anchorBytes: [UInt8], crypto: CryptoProvider, limits: Limits = .standard)
        throws(TrustError)
    {
        let (envelope, payload) = try RootChain.decode(anchorBytes, crypto: crypto, limits: limits)
        let own = try RootChain.requireRootThreshold(envelope, signedFor: payload, crypto: crypto)
        let root = VerifiedRoot(
            envelope: envelope, payload: payload, payloadSHA256: crypto.hasher.sha256(envelope.payload),
            ownRoleReport: own,
            previousRoleReport: nil)
        self.roots = [root]
    }

    /// Accepts the rotation to the next root: version exactly newest + 1, the same scope,
    /// signed by a threshold of the newest root's root role AND of its own root role.
    ///
    /// - Returns: the accepted root.
    /// - Throws: `TrustError.format`, `.wrongPayloadKind`, `.rootNotNext`, `.scopeMismatch`,
    ///   `.thresholdNotMet` (naming the role and root version that fell short),
    ///   `.pinsRoleSinceInvalid` (a `pinsRoleSince` that keeps manifests of a changed pins role).
    @discardableResult
    public mutating func append(_ bytes: [UInt8], crypto: CryptoProvider, limits: Limits = .standard)
        throws(TrustError)
        -> VerifiedRoot
    {
        let current = newest.payload
        // The current root role must have signed before the new payload is parsed, so
        // unauthenticated bytes never reach the (costlier) root schema.
        let envelope = try RootChain.decodeEnvelope(bytes, limits: limits)
        let previous = try RootChain.requireRootThreshold(envelope, signedFor: current, crypto: crypto)
        let payload = try RootChain.decodePayload(envelope, crypto: crypto, limits: limits)
        guard payload.version == current.version + 1 else {
            throw .rootNotNext(expected: current.version + 1, found: payload.version)
        }
        guard payload.scope == current.scope else {
            throw .scopeMismatch(expected: current.scope, found: payload.scope)
        }
        let own = try RootChain.requireRootThreshold(envelope, signedFor: payload, crypto: crypto)
        try current.checkPinsRoleSince(of: payload)
        let root = VerifiedRoot(
            envelope: envelope, payload: payload, payloadSHA256: crypto.hasher.sha256(envelope.payload),
            ownRoleReport: own,
            previousRoleReport: previous)
        roots.append(root)
        return root
    }

    /// Checks `envelope`'s signatures against the root role of `root`.
    /// - Throws: `TrustError.thresholdNotMet` naming that root's version.
    static func requireRootThreshold(_ envelope: Envelope, signedFor root: RootPayload, crypto: CryptoProvider)
        throws(TrustError) -> SignatureReport
    {
        let report = Signatures.check(envelope, role: root.rootRole, keys: root, crypto: crypto)
        guard report.meets(root.rootRole.threshold) else {
            throw .thresholdNotMet(
                role: .root, rootVersion: root.version, valid: report.valid.count, threshold: root.rootRole.threshold)
        }
        return report
    }

    /// The trusted root of `version`, if the chain holds it.
    public func root(version: Int64) -> VerifiedRoot? {
        roots.first(where: { $0.version == version })
    }

    /// Checks that the newest root has not expired at `now` (only the newest root's
    /// expiry is enforced, docs/DESIGN.md §4).
    ///
    /// - Throws: `TrustError.rootExpired`.
    public func checkNewestCurrent(at now: Timestamp) throws(TrustError) {
        let payload = newest.payload
        guard payload.expiresAt > now else {
            throw .rootExpired(version: payload.version, expiresAt: payload.expiresAt, now: now)
        }
    }

    static func decode(_ bytes: [UInt8], crypto: CryptoProvider, limits: Limits) throws(TrustError) -> (
        Envelope, RootPayload
    ) {
        let envelope = try decodeEnvelope(bytes, limits: limits)
        return (envelope, try decodePayload(envelope, crypto: crypto, limits: limits))
    }

    static func decodeEnvelope(_ bytes: [UInt8], limits: Limits) throws(TrustError) -> Envelope {
        let envelope: Envelope
        do { envelope = try Envelope.parse(bytes, limits: limits) } catch { throw .format(error) }
        guard envelope.kind == .root else { throw .wrongPayloadKind(expected: .root, found: envelope.kind) }
        return envelope
    }

    static func decodePayload(_ envelope: Envelope, crypto: CryptoProvider, limits: Limits) throws(TrustError)
        -> RootPayload
    {
        do {
            return try RootPayload.parse(envelope.payload, limits: limits, crypto: crypto)
        } catch {
            var located = error
            located.path = located.path.isEmpty ? "payload" : "payload." + located.path
            throw .format(located)
        }
    }
}
