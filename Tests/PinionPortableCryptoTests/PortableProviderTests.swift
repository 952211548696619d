// A CryptoProvider built the way an Apple app builds one (a permissive Ed25519 inside
// StrictEd25519Verifier, the platform's SHA-256) reaches the core's trust decisions like libsodium.

import Foundation
import PinionCore
import PinionCrypto
import Testing

/// SHA-256 with OpenSSL's EVP_Digest, standing in for CryptoKit's.
struct OpenSSLSHA256: SHA256Hasher {
    func sha256(_ bytes: [UInt8]) -> [UInt8] { OpenSSLOracle.sha256(bytes) }
}

@Suite struct PortableProviderTests {
    let portable = CryptoProvider(
        verifier: StrictEd25519Verifier(wrapping: OpenSSLEd25519Verifier()), hasher: OpenSSLSHA256())

    func repositoryFile(_ path: String) throws -> [UInt8] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return [UInt8](try Data(contentsOf: root.appendingPathComponent(path)))
    }

    @Test func verifiesTheRepositoryRootAndManifestLikeLibsodium() throws {
        let rootBytes = try repositoryFile("manifests/root-1.json")
        let manifestBytes = try repositoryFile("manifests/manifest-1.json")
        let portableChain = try RootChain(anchor: rootBytes, crypto: portable)
        let sodiumChain = try RootChain(anchor: rootBytes, crypto: .sodium)
        #expect(portableChain.newest.payloadSHA256 == sodiumChain.newest.payloadSHA256)
        let portableManifest = try ManifestVerifier.verify(manifestBytes, under: portableChain.newest, crypto: portable)
        let sodiumManifest = try ManifestVerifier.verify(manifestBytes, under: sodiumChain.newest, crypto: .sodium)
        #expect(portableManifest == sodiumManifest)
    }

    @Test func refusesAManifestWithATamperedSignatureLikeLibsodium() throws {
        let rootBytes = try repositoryFile("manifests/root-1.json")
        var manifest = try repositoryFile("manifests/manifest-1.json")
        // One base64 character inside the signature changed (still canonical base64): the signature
        // is invalid, so the pins role falls short of its threshold under both providers.
        let sigStart = try #require(manifest.firstRange(of: Array("\"sig\": \"".utf8))).upperBound
        manifest[sigStart + 10] = manifest[sigStart + 10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        for crypto in [portable, CryptoProvider.sodium] {
            let chain = try RootChain(anchor: rootBytes, crypto: crypto)
            #expect {
                _ = try ManifestVerifier.verify(manifest, under: chain.newest, crypto: crypto)
            } throws: { error in
                guard case .thresholdNotMet = error as? TrustError else { return false }
                return true
            }
        }
    }
}
