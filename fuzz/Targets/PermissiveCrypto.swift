// Shared by the fuzz targets that walk signed documents (envelope, rootchain): a stand-in
// verifier, so that mutated documents get past the signature thresholds to the rules behind
// them. fuzz/build compiles this file into the targets that link PinionCrypto.

import PinionCore
import PinionCrypto

/// Accepts a 64-byte signature whose first byte is even; keys are checked for real (libsodium).
struct PermissiveVerifier: Ed25519Verifier {
    func isValidSignature(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        signature.count == 64 && publicKey.count == 32 && signature[0] & 1 == 0
    }

    func isUsablePublicKey(_ publicKey: [UInt8]) -> Bool {
        SodiumEd25519Verifier().isUsablePublicKey(publicKey)
    }
}

/// libsodium's SHA-256 with the permissive verifier.
let permissiveCrypto = CryptoProvider(verifier: PermissiveVerifier(), hasher: SodiumSHA256())
