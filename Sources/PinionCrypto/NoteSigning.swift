// PinionCrypto's Ed25519 keys as C2SP note signers, for the log key (checkpoints) and witness keys (cosignatures).

import PinionCore

/// An Ed25519 secret key (libsodium) as a `NoteSigner`: `pinion publish --log-key`,
/// `pinion log refresh` and `pinion witness` sign checkpoint notes and cosignatures with it
/// (RFC 8032 Ed25519; C2SP signed-note and tlog-cosignature define what is signed).
public struct Ed25519NoteSigner: NoteSigner, Sendable {
    /// The key that signs.
    public let key: Ed25519SecretKey

    /// - Parameter key: the log's or the witness's Ed25519 secret key.
    public init(key: Ed25519SecretKey) { self.key = key }

    /// The raw 32-byte Ed25519 public key.
    public var publicKey: [UInt8] { key.publicKey.raw }

    /// - Returns: the 64-byte Ed25519 signature of `message`.
    /// - Throws: `Ed25519Error` from libsodium.
    public func sign(_ message: [UInt8]) throws -> [UInt8] { try key.sign(message) }
}
