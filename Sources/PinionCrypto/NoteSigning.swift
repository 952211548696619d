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

/// An Ed25519 key held in a PKCS#11 token as a `NoteSigner` (docs/DESIGN.md §13): the log
/// key of `pinion publish --log-key pkcs11:...`. Each signature opens a session, logs in
/// with the URI's PIN provider and signs with CKM_EDDSA; the token's public key must stay
/// the one read at start (a token swapped mid-publish is refused).
public struct PKCS11NoteSigner: NoteSigner {
    /// The key's URI (RFC 7512).
    public let uri: PKCS11URI
    /// The raw 32-byte Ed25519 public key, read from the token at `init`.
    public let publicKey: [UInt8]
    private let module: PKCS11Module
    private let pin: PKCS11PINProvider

    /// Largest message signed: a checkpoint note's text is well under 1 KiB.
    public static let maximumMessage = 64 * 1024

    /// - Parameters:
    ///   - uri: the key's URI (it must name an object: `object=` or `id=`).
    ///   - module: the loaded PKCS#11 module.
    ///   - pin: the PIN provider for the token's login.
    /// - Throws: `PKCS11Error` (no such token or key, not Ed25519, the module's errors).
    public init(uri: PKCS11URI, module: PKCS11Module, pin: @escaping PKCS11PINProvider) throws {
        self.uri = uri
        self.module = module
        self.pin = pin
        publicKey = try PKCS11Keys.publicKey(uri: uri, module: module).raw
    }

    /// - Returns: the 64-byte Ed25519 signature of `message` by the token's key.
    /// - Throws: `PKCS11Error`, including `.badSignature` when the token now answers with
    ///   another key than the one read at `init`.
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        let (key, signature) = try PKCS11Keys.sign(
            message, uri: uri, module: module, maximumMessage: Self.maximumMessage, pin: pin)
        guard key.raw == publicKey else { throw PKCS11Error.badSignature(uri: uri.description) }
        return signature
    }
}
