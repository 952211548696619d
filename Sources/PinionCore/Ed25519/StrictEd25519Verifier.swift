// libsodium's Ed25519 verdicts on top of any more permissive verifier (CryptoKit, OpenSSL, Go, the
// JDK): encodings refused before the wrapped verifier is asked, and the point validation in pure Swift.

/// An `Ed25519Verifier` that gives the verdicts of libsodium 1.0.18's
/// `crypto_sign_verify_detached` (RFC 8032 §5.1.7 with libsodium's stricter checks) when
/// it wraps a cofactorless verifier that recomputes R and compares encodings, as OpenSSL 3,
/// Go, BoringSSL, the JDK, BouncyCastle and, by ed25519-speccheck's published table,
/// CryptoKit do. Those accept small-order A and R, and some non-canonical encodings;
/// this wrapper refuses, before the wrapped verifier sees them:
/// - a signature that is not 64 bytes or a public key that is not 32 bytes;
/// - S >= L (`sc25519_is_canonical`);
/// - small-order R or A (libsodium's blocklist, `ge25519_has_small_order`);
/// - a non-canonical A or R (y >= p, `ge25519_is_canonical`);
/// - an A or R that is not a point of the curve (libsodium never accepts either: it cannot
///   decompress such an A, and its recomputed R is always a valid encoding).
///
/// A mixed-order A (a prime-order point plus a torsion point) is NOT refused for signatures,
/// because libsodium 1.0.18's verification does not refuse it either (ed25519-speccheck
/// case 3); `isUsablePublicKey` does refuse it.
///
/// A cofactored verifier (one checking [8]R = [8]([S]B − [h]A)) would still accept more
/// than libsodium; do not wrap one.
public struct StrictEd25519Verifier: Ed25519Verifier {
    private let wrapped: any Ed25519Verifier

    /// - Parameter wrapped: the platform's verifier; it is called only for inputs that pass
    ///   every refusal above.
    public init(wrapping wrapped: any Ed25519Verifier) {
        self.wrapped = wrapped
    }

    /// - Parameters:
    ///   - signature: R || S, 64 bytes; any other length gives `false`.
    ///   - message: the signed bytes, any length.
    ///   - publicKey: the raw public key A, 32 bytes; any other length gives `false`.
    /// - Returns: `true` only when the encodings pass libsodium's checks and the wrapped
    ///   verifier accepts the signature.
    public func isValidSignature(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard Self.passesLibsodiumEncodingChecks(signature: signature, publicKey: publicKey) else { return false }
        return wrapped.isValidSignature(signature, of: message, publicKey: publicKey)
    }

    /// libsodium's point validation, `crypto_core_ed25519_is_valid_point`, as
    /// `SodiumEd25519Verifier` applies it on Linux (Debian 12's libsodium 1.0.18-1+deb12u1):
    /// 32 bytes, canonical (y < p), not on the small-order blocklist, on the curve, and [L]A
    /// the identity (in the prime-order subgroup), so that an Apple client and a Linux client
    /// accept the same root keys. The wrapped verifier is not consulted.
    ///
    /// Unpatched upstream 1.0.18 checked only that [L]A has x = 0, and so also accepted a
    /// prime-order point plus the point of order 2; this rule, like Debian's build, refuses it.
    ///
    /// - Parameter publicKey: a raw public key.
    /// - Returns: whether libsodium 1.0.18 accepts it as a valid point.
    public func isUsablePublicKey(_ publicKey: [UInt8]) -> Bool {
        Self.isValidPoint(publicKey)
    }

    /// The refusals made before the wrapped verifier is called (see the type's documentation).
    static func passesLibsodiumEncodingChecks(signature: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64, publicKey.count == 32 else { return false }
        guard Ed25519Encoding.isCanonicalScalar(signature, offset: 32) else { return false }
        let r = Array(signature[0..<32])
        guard !Ed25519Encoding.hasSmallOrder(r), Ed25519Encoding.isCanonicalPoint(r) else { return false }
        guard Ed25519Encoding.isCanonicalPoint(publicKey), !Ed25519Encoding.hasSmallOrder(publicKey) else {
            return false
        }
        return EdwardsPoint(decoding: publicKey) != nil && EdwardsPoint(decoding: r) != nil
    }

    /// `crypto_core_ed25519_is_valid_point` (libsodium 1.0.18), in its order of checks.
    static func isValidPoint(_ encoding: [UInt8]) -> Bool {
        guard encoding.count == 32,
            Ed25519Encoding.isCanonicalPoint(encoding),
            !Ed25519Encoding.hasSmallOrder(encoding),
            let point = EdwardsPoint(decoding: encoding),
            point.isOnCurve
        else { return false }
        return point.isInPrimeOrderSubgroup
    }
}
