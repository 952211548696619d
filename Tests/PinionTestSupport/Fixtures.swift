// Test fixtures shared by the test targets: keys made at test time, and roots and
// manifests signed with explicit times.

import PinionCore
import PinionCrypto

/// A fixed reference time for fixtures (tests never read the wall clock).
public let t0 = Timestamp(secondsSince1970: 1_796_029_200)  // 2026-11-30T09:00:00Z
public let day: Int64 = 86_400

public let sodium = CryptoProvider.sodium

/// A pin with the given repeated byte (distinct, valid SHA-256-shaped digests).
public func pin(_ byte: UInt8) -> Pin {
    (try? Pin(digest: [UInt8](repeating: byte, count: 32))) ?? { preconditionFailure("32 bytes") }()
}

public func makeKey() throws -> Ed25519SecretKey { try Ed25519SecretKey.generate() }

public func rootKey(_ key: Ed25519SecretKey) -> RootPayload.Key {
    RootPayload.Key(keyID: key.publicKey.keyID, publicKey: key.publicKey.raw)
}

public func rootPayload(
    version: Int64 = 1, scope: String = "com.example.app", rootKeys: [Ed25519SecretKey],
    rootThreshold: Int = 1,
    pinsKeys: [Ed25519SecretKey], pinsThreshold: Int = 1, issuedAt: Timestamp = t0,
    expiresAt: Timestamp = t0.adding(seconds: 365 * day), maxManifestLifetime: Int64 = 90 * day
) -> RootPayload {
    var keys: [RootPayload.Key] = []
    for key in rootKeys + pinsKeys where !keys.contains(rootKey(key)) { keys.append(rootKey(key)) }
    return RootPayload(
        scope: scope, version: version, issuedAt: issuedAt, expiresAt: expiresAt,
        maxManifestLifetime: maxManifestLifetime,
        keys: keys,
        rootRole: .init(keyIDs: rootKeys.map { $0.publicKey.keyID }, threshold: rootThreshold),
        pinsRole: .init(keyIDs: pinsKeys.map { $0.publicKey.keyID }, threshold: pinsThreshold))
}

public func sign(_ kind: PayloadKind, _ payload: [UInt8], with keys: [Ed25519SecretKey]) throws -> Envelope {
    var envelope = Envelope(kind: kind, payload: payload)
    for key in keys {
        envelope.signatures.append(
            .init(keyID: key.publicKey.keyID, signature: try key.sign(envelope.signingInput)))
    }
    return envelope
}

public func manifestPayload(
    version: Int64 = 1, rootVersion: Int64 = 1, scope: String = "com.example.app",
    issuedAt: Timestamp = t0,
    lifetime: Int64 = 30 * day, domains: [ManifestPayload.Domain]? = nil
) -> ManifestPayload {
    ManifestPayload(
        scope: scope, rootVersion: rootVersion, version: version, issuedAt: issuedAt,
        expiresAt: issuedAt.adding(seconds: lifetime),
        domains: domains ?? [ManifestPayload.Domain(name: "api.example.com", pins: [pin(1), pin(2)])])
}

/// A one-key-per-role setup: root key R, pins key P, root version 1 signed by R.
public struct Setup {
    public let rootKey: Ed25519SecretKey
    public let pinsKey: Ed25519SecretKey
    public let root: RootPayload
    public let rootEnvelope: Envelope

    public init() throws {
        rootKey = try makeKey()
        pinsKey = try makeKey()
        root = rootPayload(rootKeys: [rootKey], pinsKeys: [pinsKey])
        rootEnvelope = try sign(.root, root.serialized(), with: [rootKey])
    }

    public func chain() throws -> RootChain {
        try RootChain(anchor: rootEnvelope.serialized(), crypto: sodium)
    }
}
