// The two cryptographic primitives the pure core needs, as protocols so that a
// platform build can plug in its own (libsodium/OpenSSL here, CryptoKit on Apple).

/// Ed25519 signature verification (RFC 8032 §5.1.7).
///
/// Implementations must be strict: reject S >= L, small-order R or A and non-canonical
/// encodings of A (libsodium's `crypto_sign_verify_detached` semantics).
public protocol Ed25519Verifier: Sendable {
    /// - Parameters:
    ///   - signature: the signature, 64 bytes (any other length is invalid).
    ///   - message: the signed bytes.
    ///   - publicKey: the raw public key, 32 bytes (any other length is invalid).
    /// - Returns: `true` only when the signature is valid.
    func isValidSignature(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool

    /// - Parameter publicKey: a raw public key, 32 bytes.
    /// - Returns: `false` for keys no signature can verify under (small-order or
    ///   non-canonical points); a root listing one is refused, since it would silently
    ///   weaken its role.
    func isUsablePublicKey(_ publicKey: [UInt8]) -> Bool
}

/// SHA-256 (FIPS 180-4).
public protocol SHA256Hasher: Sendable {
    /// - Returns: the 32-byte digest of `bytes`.
    func sha256(_ bytes: [UInt8]) -> [UInt8]
}

/// The primitives handed to every verifying part of the core.
public struct CryptoProvider: Sendable {
    public let verifier: any Ed25519Verifier
    public let hasher: any SHA256Hasher

    public init(verifier: any Ed25519Verifier, hasher: any SHA256Hasher) {
        self.verifier = verifier
        self.hasher = hasher
    }
}
