// The test oracles: libsodium and OpenSSL called directly (not through PinionCrypto), a permissive
// OpenSSL EVP Ed25519 verifier, point arithmetic for building torsion cases, and a seeded generator.

import COpenSSL
import CSodium
import PinionCore

/// OpenSSL 3's EVP Ed25519 verification (`EVP_DigestVerify`): permissive like CryptoKit and
/// BoringSSL (accepts small-order A and R), the verifier `StrictEd25519Verifier` is tested around.
struct OpenSSLEd25519Verifier: Ed25519Verifier {
    func isValidSignature(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64, publicKey.count == 32 else { return false }
        guard let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, publicKey, 32) else {
            ERR_clear_error()
            return false
        }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else {
            ERR_clear_error()
            return false
        }
        let status = EVP_DigestVerify(context, signature, 64, message, message.count)
        ERR_clear_error()
        return status == 1
    }

    /// Whatever OpenSSL can load as a raw Ed25519 key (no point validation).
    func isUsablePublicKey(_ publicKey: [UInt8]) -> Bool {
        guard publicKey.count == 32, let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, publicKey, 32)
        else { return false }
        EVP_PKEY_free(key)
        return true
    }
}

/// libsodium 1.0.18 called directly, for building cases and as the reference verdict.
enum Sodium {
    static let ready: Bool = sodium_init() >= 0

    /// `crypto_sign_verify_detached`.
    static func verify(_ signature: [UInt8], _ message: [UInt8], _ publicKey: [UInt8]) -> Bool {
        guard ready, signature.count == 64, publicKey.count == 32 else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }

    /// `crypto_core_ed25519_is_valid_point`.
    static func isValidPoint(_ point: [UInt8]) -> Bool {
        guard ready, point.count == 32 else { return false }
        return crypto_core_ed25519_is_valid_point(point) == 1
    }

    /// `crypto_core_ed25519_add`: both operands must be on the curve (any order); nil otherwise.
    static func add(_ p: [UInt8], _ q: [UInt8]) -> [UInt8]? {
        guard ready else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        return crypto_core_ed25519_add(&out, p, q) == 0 ? out : nil
    }

    /// A key pair and detached signature from a 32-byte seed.
    static func sign(_ message: [UInt8], seed: [UInt8]) -> (publicKey: [UInt8], signature: [UInt8]) {
        var publicKey = [UInt8](repeating: 0, count: 32)
        var secretKey = [UInt8](repeating: 0, count: 64)
        var signature = [UInt8](repeating: 0, count: 64)
        guard ready, crypto_sign_seed_keypair(&publicKey, &secretKey, seed) == 0,
            crypto_sign_detached(&signature, nil, message, UInt64(message.count), secretKey) == 0
        else { return ([], []) }
        return (publicKey, signature)
    }

    /// A scalar mod L from 64 bytes (`crypto_core_ed25519_scalar_reduce`).
    static func reduce(_ wide: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        crypto_core_ed25519_scalar_reduce(&out, wide)
        return out
    }

    /// [scalar]B without clamping.
    static func baseMultiple(_ scalar: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 32)
        return crypto_scalarmult_ed25519_base_noclamp(&out, scalar) == 0 ? out : nil
    }

    static func sha512(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        crypto_hash_sha512(&out, bytes, UInt64(bytes.count))
        return out
    }

    /// A signature under a key A' = [a]B + T with torsion T, made the RFC 8032 way with the
    /// public key A' hashed: libsodium accepts it exactly when [h]T is the identity.
    static func signWithMixedKey(
        _ message: [UInt8], scalarSeed: [UInt8], nonceSeed: [UInt8], torsion: [UInt8]
    ) -> (publicKey: [UInt8], signature: [UInt8])? {
        let a = reduce(sha512(scalarSeed))
        let r = reduce(sha512(nonceSeed))
        guard let primeA = baseMultiple(a), let mixedA = add(primeA, torsion), let bigR = baseMultiple(r)
        else { return nil }
        let h = reduce(sha512(bigR + mixedA + message))
        var ha = [UInt8](repeating: 0, count: 32)
        crypto_core_ed25519_scalar_mul(&ha, h, a)
        var s = [UInt8](repeating: 0, count: 32)
        crypto_core_ed25519_scalar_add(&s, r, ha)
        return (mixedA, bigR + s)
    }
}

/// The eight points of order dividing 8, canonical encodings with the sign of x: the identity
/// (order 1), (0, −1) (order 2), (±√−1, 0) (order 4) and the four points of order 8.
enum Torsion {
    static let points: [[UInt8]] = {
        let order8a = hexBytes("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")
        let order8b = hexBytes("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
        let identity = [UInt8(1)] + [UInt8](repeating: 0, count: 31)
        let minusOne = [UInt8(0xec)] + [UInt8](repeating: 0xff, count: 30) + [0x7f]
        let zeroY = [UInt8](repeating: 0, count: 32)
        return [identity, minusOne, zeroY, withSign(zeroY), order8a, withSign(order8a), order8b, withSign(order8b)]
    }()

    /// The point of order 2, (0, −1).
    static var orderTwo: [UInt8] { points[1] }

    /// Every encoding on libsodium's small-order blocklist, with and without the sign bit
    /// (including the non-canonical p and p + 1 and x = 0 with the sign bit set).
    static let blocklistEncodings: [[UInt8]] = {
        var out: [[UInt8]] = []
        let nearP: [[UInt8]] = [0xec, 0xed, 0xee].map { [$0] + [UInt8](repeating: 0xff, count: 30) + [0x7f] }
        for base in [points[0], points[2], points[4], points[6]] + nearP {
            out.append(base)
            out.append(withSign(base))
        }
        return out
    }()

    static func withSign(_ encoding: [UInt8]) -> [UInt8] {
        var copy = encoding
        copy[31] |= 0x80
        return copy
    }
}

/// Every encoding with y >= p = 2^255 − 19 (y = p + k, k = 0...18), both signs.
let nonCanonicalEncodings: [[UInt8]] = (0..<19).flatMap { k -> [[UInt8]] in
    let plain = [UInt8(0xed + k)] + [UInt8](repeating: 0xff, count: 30) + [0x7f]
    return [plain, Torsion.withSign(plain)]
}

/// Hex digits to bytes; test data only (an odd length or a bad digit gives an empty array,
/// which the tests' expectations then fail on).
func hexBytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    guard digits.count % 2 == 0 else { return [] }
    var out: [UInt8] = []
    out.reserveCapacity(digits.count / 2)
    func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case 0x30...0x39: return digit - 0x30
        case 0x61...0x66: return digit - 0x61 + 10
        case 0x41...0x46: return digit - 0x41 + 10
        default: return nil
        }
    }
    var index = 0
    while index < digits.count {
        guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return [] }
        out.append(high << 4 | low)
        index += 2
    }
    return out
}
