// Ed25519 (RFC 8032) and SHA-256 over libsodium: the core's verifier and hasher, key ids,
// and secret keys whose bytes live only in guarded memory.

import CSodium
import PinionCore

/// Byte sizes fixed by RFC 8032 §5.1 (libsodium's `crypto_sign_*BYTES`).
enum Ed25519Size {
    /// Raw public key (encoded point A): 32 bytes.
    static let publicKey = 32
    /// Seed (RFC 8032 "private key" k): 32 bytes.
    static let seed = 32
    /// libsodium's expanded secret key (seed || public key): 64 bytes.
    static let secretKey = 64
    /// Signature (R || S): 64 bytes.
    static let signature = 64
}

/// Runs `sodium_init` exactly once per process, before the first libsodium call of this file.
///
/// A `static let` is initialised lazily and thread-safely by the Swift runtime, so every
/// entry point can check `isReady` without a lock; the result never changes afterwards.
private enum SodiumRuntime {
    static let isReady: Bool = (try? initializeSodium()) != nil
}

/// Errors from Ed25519 key handling.
public enum Ed25519Error: Error, Equatable, CustomStringConvertible {
    /// A raw public key was not 32 bytes long; carries the length given, in bytes.
    case invalidPublicKeyLength(Int)
    /// 32 bytes that are not the canonical encoding of a point of the prime-order subgroup
    /// (off the curve, small order, mixed order or non-canonical): never the public key of a
    /// real Ed25519 secret key.
    case invalidPublicKeyPoint
    /// A seed was not 32 bytes long; carries the length given, in bytes.
    case invalidSeedLength(Int)
    /// libsodium could not be initialised, or a libsodium call failed; carries the call.
    case sodiumFailure(String)

    /// A one-line, human-readable explanation.
    public var description: String {
        switch self {
        case .invalidPublicKeyLength(let count):
            return "an Ed25519 public key is 32 bytes, got \(count)"
        case .invalidPublicKeyPoint:
            return
                "the 32 bytes are not a valid Ed25519 public key (not a canonical point of prime order)"
        case .invalidSeedLength(let count):
            return "an Ed25519 seed is 32 bytes, got \(count)"
        case .sodiumFailure(let call):
            return "libsodium failed in \(call)"
        }
    }
}

/// Strict Ed25519 verification (RFC 8032 §5.1.7) with libsodium's
/// `crypto_sign_verify_detached`: rejects S >= L, small-order R or A and a non-canonical
/// encoding of A (docs/DESIGN.md §2).
public struct SodiumEd25519Verifier: Ed25519Verifier {
    /// Creates the verifier; libsodium is initialised on first use.
    public init() {}

    /// - Parameters:
    ///   - signature: the signature R || S, 64 bytes; any other length gives `false`.
    ///   - message: the signed bytes, any length.
    ///   - publicKey: the raw public key, 32 bytes; any other length gives `false`.
    /// - Returns: `true` only when the signature is valid under strict verification; also
    ///   `false` if libsodium could not be initialised (fail closed).
    public func isValidSignature(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8])
        -> Bool
    {
        guard SodiumRuntime.isReady,
            signature.count == Ed25519Size.signature,
            publicKey.count == Ed25519Size.publicKey
        else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }

    /// - Parameter publicKey: a raw public key, 32 bytes.
    /// - Returns: `true` when it is a canonical encoding of a point that can verify
    ///   signatures (the checks of `Ed25519PublicKey.init(raw:)`: not small-order, not
    ///   mixed-order, canonical).
    public func isUsablePublicKey(_ publicKey: [UInt8]) -> Bool {
        (try? Ed25519PublicKey(raw: publicKey)) != nil
    }
}

/// SHA-256 (FIPS 180-4) with libsodium's `crypto_hash_sha256`.
public struct SodiumSHA256: SHA256Hasher {
    /// Creates the hasher; libsodium is initialised on first use.
    public init() {}

    /// - Parameter bytes: the input, any length.
    /// - Returns: the 32-byte digest.
    public func sha256(_ bytes: [UInt8]) -> [UInt8] {
        // libsodium's SHA-256 has a single portable implementation that sodium_init does not
        // select, so the digest is correct even in the (practically impossible) case that
        // initialisation failed; touching the flag keeps "init before use" uniform.
        _ = SodiumRuntime.isReady
        var digest = [UInt8](repeating: 0, count: 32)
        _ = crypto_hash_sha256(&digest, bytes, UInt64(bytes.count))
        return digest
    }
}

extension CryptoProvider {
    /// The libsodium implementation of the core's primitives: strict Ed25519 verification
    /// and SHA-256.
    ///
    /// Initialising this value runs `sodium_init` once (thread-safe, lazily); should libsodium
    /// ever fail to initialise, the verifier rejects every signature rather than guess.
    public static let sodium: CryptoProvider = {
        _ = SodiumRuntime.isReady
        return CryptoProvider(verifier: SodiumEd25519Verifier(), hasher: SodiumSHA256())
    }()
}

/// An Ed25519 public key (RFC 8032 §5.1.5) and its Pinion key id.
public struct Ed25519PublicKey: Sendable, Hashable {
    /// The raw public key, exactly 32 bytes.
    public let raw: [UInt8]

    /// Checks and wraps a raw public key.
    ///
    /// Beyond the length, the bytes must be the canonical encoding of a point of the
    /// prime-order subgroup (`crypto_core_ed25519_is_valid_point`): a key that fails this
    /// is never produced by key generation and can only be a mistake or an attack.
    ///
    /// - Parameter raw: 32 bytes.
    /// - Throws: `Ed25519Error.invalidPublicKeyLength`, `.invalidPublicKeyPoint`, or
    ///   `.sodiumFailure("sodium_init")`.
    public init(raw: [UInt8]) throws {
        guard raw.count == Ed25519Size.publicKey else {
            throw Ed25519Error.invalidPublicKeyLength(raw.count)
        }
        guard SodiumRuntime.isReady else { throw Ed25519Error.sodiumFailure("sodium_init") }
        guard crypto_core_ed25519_is_valid_point(raw) == 1 else {
            throw Ed25519Error.invalidPublicKeyPoint
        }
        self.raw = raw
    }

    /// The key id (docs/DESIGN.md §2): lowercase hex SHA-256 of the 32 raw bytes, 64 characters.
    public var keyID: String {
        KeyID.of(publicKey: raw, hasher: SodiumSHA256())
    }
}

/// An Ed25519 secret key. The 32-byte seed and libsodium's 64-byte expanded secret key
/// (seed || public key) exist only in one `SecureBytes` buffer, wiped when this object is
/// released; nothing here copies them into Swift arrays or strings.
///
/// Immutable after initialisation, hence safe to share between threads.
public final class Ed25519SecretKey: @unchecked Sendable {
    /// The matching public key.
    public let publicKey: Ed25519PublicKey
    /// libsodium's secret key layout: seed (32 bytes) || public key (32 bytes).
    private let secretKey: SecureBytes

    private init(secretKey: SecureBytes, publicKey: [UInt8]) throws {
        self.secretKey = secretKey
        self.publicKey = try Ed25519PublicKey(raw: publicKey)
    }

    /// Generates a new key pair from libsodium's CSPRNG (`crypto_sign_keypair`).
    ///
    /// - Returns: the new secret key.
    /// - Throws: `SodiumError` if guarded memory cannot be allocated, `Ed25519Error` if
    ///   libsodium fails.
    public static func generate() throws -> Ed25519SecretKey {
        guard SodiumRuntime.isReady else { throw Ed25519Error.sodiumFailure("sodium_init") }
        let secret = try SecureBytes(capacity: Ed25519Size.secretKey)
        var publicKey = [UInt8](repeating: 0, count: Ed25519Size.publicKey)
        let status = secret.withUnsafeMutableBytes { buffer -> Int32 in
            guard let secretBytes = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
                return -1
            }
            return crypto_sign_keypair(&publicKey, secretBytes)
        }
        guard status == 0 else { throw Ed25519Error.sodiumFailure("crypto_sign_keypair") }
        return try Ed25519SecretKey(secretKey: secret, publicKey: publicKey)
    }

    /// Derives the key pair from a seed (RFC 8032 §5.1.5, `crypto_sign_seed_keypair`).
    ///
    /// - Parameter seed: the 32-byte seed (RFC 8032's private key); it is read, not kept.
    /// - Throws: `Ed25519Error.invalidSeedLength` unless `seed.count` is 32; `SodiumError`
    ///   if guarded memory cannot be allocated; `Ed25519Error.sodiumFailure` if libsodium fails.
    public init(seed: SecureBytes) throws {
        guard seed.count == Ed25519Size.seed else { throw Ed25519Error.invalidSeedLength(seed.count) }
        guard SodiumRuntime.isReady else { throw Ed25519Error.sodiumFailure("sodium_init") }
        let secret = try SecureBytes(capacity: Ed25519Size.secretKey)
        var publicKey = [UInt8](repeating: 0, count: Ed25519Size.publicKey)
        let status = seed.withUnsafeBytes { seedBuffer in
            secret.withUnsafeMutableBytes { secretBuffer -> Int32 in
                guard let seedBytes = seedBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    let secretBytes = secretBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
                else { return -1 }
                return crypto_sign_seed_keypair(&publicKey, secretBytes, seedBytes)
            }
        }
        guard status == 0 else { throw Ed25519Error.sodiumFailure("crypto_sign_seed_keypair") }
        self.secretKey = secret
        self.publicKey = try Ed25519PublicKey(raw: publicKey)
    }

    /// Signs a message (RFC 8032 §5.1.6, PureEdDSA, deterministic; `crypto_sign_detached`).
    ///
    /// - Parameter message: the bytes to sign, any length (for DSSE: the PAE bytes).
    /// - Returns: the 64-byte signature R || S.
    /// - Throws: `Ed25519Error.sodiumFailure` if libsodium fails.
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: Ed25519Size.signature)
        var length: UInt64 = 0
        let status = secretKey.withUnsafeBytes { secret -> Int32 in
            guard let secretBytes = secret.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
                return -1
            }
            return crypto_sign_detached(&signature, &length, message, UInt64(message.count), secretBytes)
        }
        guard status == 0, length == UInt64(Ed25519Size.signature) else {
            throw Ed25519Error.sodiumFailure("crypto_sign_detached")
        }
        return signature
    }

    /// Read access to the 32-byte seed, for encoding the key as PKCS#8 (RFC 8410 §7).
    /// The buffer is valid only inside `body` and must not be copied out.
    func withUnsafeSeed<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try secretKey.withUnsafeBytes { secret in
            try body(UnsafeRawBufferPointer(rebasing: secret.prefix(Ed25519Size.seed)))
        }
    }
}
