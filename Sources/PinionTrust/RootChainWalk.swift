// The one root-chain walk (docs/DESIGN.md §4): root N+1, N+2, ... from the newest trusted root until one is absent.

import PinionCore

/// The walk over `root/{n}.json` that the client, `pinion verify --root-chain`,
/// `pinion publish`, `pinion status` and the auditor share (docs/DESIGN.md §4, §6).
///
/// Each step looks up root `newest + 1`. Absent ends the walk: the chain is complete. A
/// failed lookup ends it and keeps the verified prefix. Found bytes are refused when the
/// walk has already followed `maxRotations` rotations (so a hostile tree cannot keep a
/// client busy), and otherwise go through `RootChain.append`. That step checks the version
/// is exactly newest + 1, the scope is the same, and the root is signed by a threshold of the
/// old root's root role and of its own. A refused root ends the walk; the prefix stands.
///
/// The walk only reads through `lookup`. It never skips a number, so a gap ends the chain
/// where the gap starts. Callers that can list the directory refuse files beyond the gap
/// themselves. The auditor drives the walk one `step` at a time, because it carries on past
/// a refused root to list every fault.
public struct RootChainWalk: Sendable {
    /// How a walk ended.
    public enum End<Failure: Error>: Error {
        /// `root/{nextVersion}.json` is absent: the chain is complete up to `nextVersion - 1`.
        case complete(nextVersion: Int64)
        /// The lookup of `root/{version}.json` failed (I/O, network). The prefix stands.
        case lookupFailed(version: Int64, Failure)
        /// `root/{version}.json` was found and refused: `TrustError.tooManyRotations` when
        /// the walk's limit was reached, else the error of `RootChain.append`.
        case refused(version: Int64, bytes: [UInt8], TrustError)
    }

    /// What one step did.
    public enum Step<Failure: Error> {
        /// The next root was accepted; the chain now ends with it.
        case accepted(VerifiedRoot, bytes: [UInt8])
        /// The walk ended; stepping again looks up the same root again.
        case ended(End<Failure>)
    }

    /// The chain so far: the starting chain plus every accepted rotation.
    public private(set) var chain: RootChain
    /// Rotations accepted by this walk.
    public private(set) var rotations = 0
    /// Most rotations this walk accepts; nil for no limit (a publisher's own tree, or an
    /// audit bounded by its own limit).
    public let maxRotations: Int?
    let crypto: CryptoProvider
    let limits: Limits

    /// A walk from the newest root of `chain`.
    ///
    /// - Parameters:
    ///   - chain: the trusted chain to extend (the embedded root, a stored chain, root 1).
    ///   - maxRotations: most rotations to accept (default `RootChain.maxRotationsPerWalk`).
    ///   - crypto: Ed25519 and SHA-256.
    ///   - limits: format limits for each root envelope.
    public init(
        from chain: RootChain, maxRotations: Int? = RootChain.maxRotationsPerWalk, crypto: CryptoProvider,
        limits: Limits = .standard
    ) {
        self.chain = chain
        self.maxRotations = maxRotations
        self.crypto = crypto
        self.limits = limits
    }

    /// Looks up root `newest + 1` and accepts or refuses it.
    ///
    /// - Parameter lookup: the bytes of `root/{version}.json`, nil when it is absent; it
    ///   throws `Failure` when the lookup itself failed.
    /// - Returns: `.accepted` with the root, or `.ended` with how the walk ended.
    public mutating func step<Failure: Error>(lookup: (Int64) throws(Failure) -> [UInt8]?) -> Step<Failure> {
        let version = chain.newest.version + 1
        let found: [UInt8]?
        do { found = try lookup(version) } catch { return .ended(.lookupFailed(version: version, error)) }
        guard let bytes = found else { return .ended(.complete(nextVersion: version)) }
        switch accept(bytes) {
        case .success(let root): return .accepted(root, bytes: bytes)
        case .failure(let error): return .ended(.refused(version: version, bytes: bytes, error))
        }
    }

    /// Accepts or refuses `bytes` as root `newest + 1`, counting it against the limit (for
    /// a caller that read the file itself).
    ///
    /// - Returns: the accepted root, or `TrustError.tooManyRotations` when the limit was
    ///   reached, else the error of `RootChain.append`; the chain is unchanged on failure.
    public mutating func accept(_ bytes: [UInt8]) -> Result<VerifiedRoot, TrustError> {
        if let maxRotations, rotations >= maxRotations {
            return .failure(.tooManyRotations(limit: maxRotations))
        }
        do {
            let root = try chain.append(bytes, crypto: crypto, limits: limits)
            rotations += 1
            return .success(root)
        } catch {
            return .failure(error)
        }
    }

    /// Steps until the walk ends.
    ///
    /// - Parameters:
    ///   - lookup: as for `step`.
    ///   - accepted: called after each accepted root, in order, with its envelope bytes.
    /// - Returns: how the walk ended; `chain` holds the verified prefix either way.
    public mutating func run<Failure: Error>(
        lookup: (Int64) throws(Failure) -> [UInt8]?, accepted: (VerifiedRoot, [UInt8]) -> Void = { _, _ in }
    ) -> End<Failure> {
        while true {
            switch step(lookup: lookup) {
            case .accepted(let root, let bytes): accepted(root, bytes)
            case .ended(let end): return end
            }
        }
    }
}
