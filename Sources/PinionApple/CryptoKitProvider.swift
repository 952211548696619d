// The core's primitives on Apple platforms: CryptoKit's Ed25519, made strict by StrictEd25519Verifier,
// and CryptoKit's SHA-256. Apple-only glue: type-checked here against Tests/AppleStubs, never compiled
// on an Apple SDK in this repository (see scripts/typecheck-apple).

#if canImport(Security) && canImport(CryptoKit)
    import CryptoKit
    import Foundation
    import PinionCore

    /// CryptoKit's Ed25519 verification (`Curve25519.Signing.PublicKey`), which by
    /// ed25519-speccheck's published table accepts small-order A and R like OpenSSL: use it only
    /// inside `StrictEd25519Verifier`, as `CryptoKitProvider.provider` does.
    struct CryptoKitEd25519Verifier: Ed25519Verifier {
        func isValidSignature(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
            guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return false }
            return key.isValidSignature(signature, for: message)
        }

        func isUsablePublicKey(_ publicKey: [UInt8]) -> Bool {
            (try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey)) != nil
        }
    }

    /// SHA-256 (FIPS 180-4) with CryptoKit's `SHA256`.
    struct CryptoKitSHA256: SHA256Hasher {
        func sha256(_ bytes: [UInt8]) -> [UInt8] {
            Array(SHA256.hash(data: bytes))
        }
    }

    /// The `CryptoProvider` of an Apple app.
    public enum CryptoKitProvider {
        /// CryptoKit's Ed25519 wrapped in `StrictEd25519Verifier` (libsodium's verdicts and point
        /// validation, as on Linux), and CryptoKit's SHA-256.
        public static let provider = CryptoProvider(
            verifier: StrictEd25519Verifier(wrapping: CryptoKitEd25519Verifier()), hasher: CryptoKitSHA256())
    }
#endif
