// libsodium called directly, as an app calls its platform's crypto: the only C calls of this target
// (Ed25519 verify and sign, SHA-256) behind PinionCore's protocols, as CryptoKit would sit on Apple.

import CSodium
import PinionCore

/// libsodium's `sodium_init`, run once; every wrapper refuses to work without it.
private let sodiumReady: Bool = sodium_init() >= 0

/// `crypto_sign_verify_detached` (RFC 8032 §5.1.7), the platform verifier an app plugs in. The
/// client never sees it bare: `PortableCrypto.provider` wraps it in `StrictEd25519Verifier`, as an
/// Apple app wraps CryptoKit's `isValidSignature(_:for:)`.
struct SodiumVerifier: Ed25519Verifier {
    /// - Returns: libsodium's verdict; false for a signature that is not 64 bytes or a key that
    ///   is not 32.
    func isValidSignature(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard sodiumReady, signature.count == 64, publicKey.count == 32 else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }

    /// Whatever is 32 bytes: like CryptoKit's `Curve25519.Signing.PublicKey(rawRepresentation:)`,
    /// no point validation (the wrapper does it in pure Swift).
    func isUsablePublicKey(_ publicKey: [UInt8]) -> Bool { publicKey.count == 32 }
}

/// `crypto_hash_sha256` (FIPS 180-4).
struct SodiumSHA256: SHA256Hasher {
    /// - Returns: the 32-byte digest; 32 zero bytes only if libsodium failed to initialise,
    ///   which no pin or key id can then match.
    func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        guard sodiumReady else { return digest }
        _ = crypto_hash_sha256(&digest, bytes, UInt64(bytes.count))
        return digest
    }
}

/// Why a test signer could not be made.
struct SodiumFailure: Error, CustomStringConvertible {
    let description: String
}

/// An Ed25519 key pair made by `crypto_sign_seed_keypair` from a seed the test chooses, and
/// `crypto_sign_detached` to sign fixtures.
struct SodiumSigner: Sendable {
    let publicKey: [UInt8]
    private let secretKey: [UInt8]

    /// - Parameter seed: 32 bytes; one seed always gives the same key.
    /// - Throws: `SodiumFailure` for a seed of another length or a libsodium failure.
    init(seed: [UInt8]) throws {
        guard sodiumReady, seed.count == 32 else { throw SodiumFailure(description: "need a 32-byte seed") }
        var publicKey = [UInt8](repeating: 0, count: 32)
        var secretKey = [UInt8](repeating: 0, count: 64)
        guard crypto_sign_seed_keypair(&publicKey, &secretKey, seed) == 0 else {
            throw SodiumFailure(description: "crypto_sign_seed_keypair failed")
        }
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// - Returns: the 64-byte detached signature of `message`.
    /// - Throws: `SodiumFailure` when libsodium fails.
    func sign(_ message: [UInt8]) throws -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: 64)
        guard crypto_sign_detached(&signature, nil, message, UInt64(message.count), secretKey) == 0 else {
            throw SodiumFailure(description: "crypto_sign_detached failed")
        }
        return signature
    }
}

/// The provider the tests build every client from.
enum PortableCrypto {
    /// libsodium's verifier inside `StrictEd25519Verifier`, and libsodium's SHA-256.
    static let provider = CryptoProvider(
        verifier: StrictEd25519Verifier(wrapping: SodiumVerifier()), hasher: SodiumSHA256())
}
