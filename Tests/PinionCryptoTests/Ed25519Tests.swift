// Ed25519 and SHA-256 over libsodium against published vectors: RFC 8032 §7.1, Wycheproof
// (Fixtures/ed25519_test.json: C2SP/wycheproof testvectors_v1, Apache-2.0, copied verbatim,
// sha256 752d2ea7...975536) and FIPS 180-4.

import Foundation
import PinionCore
import Testing

@testable import PinionCrypto

@Suite struct Ed25519Tests {
    /// One test of RFC 8032 §7.1, all fields hex.
    struct RFC8032Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let seed: String
        let publicKey: String
        let message: String
        let signature: String

        var testDescription: String { name }
    }

    /// RFC 8032 §7.1, the five Ed25519 tests, transcribed from the RFC text.
    static let rfc8032Vectors: [RFC8032Vector] = [
        RFC8032Vector(
            name: "TEST 1",
            seed: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
            publicKey: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
            message: "",
            signature: "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
                + "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
        RFC8032Vector(
            name: "TEST 2",
            seed: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
            publicKey: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
            message: "72",
            signature: "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
                + "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
        RFC8032Vector(
            name: "TEST 3",
            seed: "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
            publicKey: "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
            message: "af82",
            signature: "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac"
                + "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
        RFC8032Vector(
            name: "TEST 1024",
            seed: "f5e5767cf153319517630f226876b86c8160cc583bc013744c6bf255f5cc0ee5",
            publicKey: "278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e",
            message: [
                "08b8b2b733424243760fe426a4b54908632110a66c2f6591eabd3345e3e4eb98",
                "fa6e264bf09efe12ee50f8f54e9f77b1e355f6c50544e23fb1433ddf73be84d8",
                "79de7c0046dc4996d9e773f4bc9efe5738829adb26c81b37c93a1b270b20329d",
                "658675fc6ea534e0810a4432826bf58c941efb65d57a338bbd2e26640f89ffbc",
                "1a858efcb8550ee3a5e1998bd177e93a7363c344fe6b199ee5d02e82d522c4fe",
                "ba15452f80288a821a579116ec6dad2b3b310da903401aa62100ab5d1a36553e",
                "06203b33890cc9b832f79ef80560ccb9a39ce767967ed628c6ad573cb116dbef",
                "efd75499da96bd68a8a97b928a8bbc103b6621fcde2beca1231d206be6cd9ec7",
                "aff6f6c94fcd7204ed3455c68c83f4a41da4af2b74ef5c53f1d8ac70bdcb7ed1",
                "85ce81bd84359d44254d95629e9855a94a7c1958d1f8ada5d0532ed8a5aa3fb2",
                "d17ba70eb6248e594e1a2297acbbb39d502f1a8c6eb6f1ce22b3de1a1f40cc24",
                "554119a831a9aad6079cad88425de6bde1a9187ebb6092cf67bf2b13fd65f270",
                "88d78b7e883c8759d2c4f5c65adb7553878ad575f9fad878e80a0c9ba63bcbcc",
                "2732e69485bbc9c90bfbd62481d9089beccf80cfe2df16a2cf65bd92dd597b07",
                "07e0917af48bbb75fed413d238f5555a7a569d80c3414a8d0859dc65a46128ba",
                "b27af87a71314f318c782b23ebfe808b82b0ce26401d2e22f04d83d1255dc51a",
                "ddd3b75a2b1ae0784504df543af8969be3ea7082ff7fc9888c144da2af58429e",
                "c96031dbcad3dad9af0dcbaaaf268cb8fcffead94f3c7ca495e056a9b47acdb7",
                "51fb73e666c6c655ade8297297d07ad1ba5e43f1bca32301651339e22904cc8c",
                "42f58c30c04aafdb038dda0847dd988dcda6f3bfd15c4b4c4525004aa06eeff8",
                "ca61783aacec57fb3d1f92b0fe2fd1a85f6724517b65e614ad6808d6f6ee34df",
                "f7310fdc82aebfd904b01e1dc54b2927094b2db68d6f903b68401adebf5a7e08",
                "d78ff4ef5d63653a65040cf9bfd4aca7984a74d37145986780fc0b16ac451649",
                "de6188a7dbdf191f64b5fc5e2ab47b57f7f7276cd419c17a3ca8e1b939ae49e4",
                "88acba6b965610b5480109c8b17b80e1b7b750dfc7598d5d5011fd2dcc5600a3",
                "2ef5b52a1ecc820e308aa342721aac0943bf6686b64b2579376504ccc493d97e",
                "6aed3fb0f9cd71a43dd497f01f17c0e2cb3797aa2a2f256656168e6c496afc5f",
                "b93246f6b1116398a346f1a641f3b041e989f7914f90cc2c7fff357876e506b5",
                "0d334ba77c225bc307ba537152f3f1610e4eafe595f6d9d90d11faa933a15ef1",
                "369546868a7f3a45a96768d40fd9d03412c091c6315cf4fde7cb68606937380d",
                "b2eaaa707b4c4185c32eddcdd306705e4dc1ffc872eeee475a64dfac86aba41c",
                "0618983f8741c5ef68d3a101e8a3b8cac60c905c15fc910840b94c00a0b9d0",
            ].joined(),
            signature: "0aab4c900501b3e24d7cdf4663326a3a87df5e4843b2cbdb67cbf6e460fec350"
                + "aa5371b1508f9f4528ecea23c436d94b5e8fcd4f681e30a6ac00a9704a188a03"),
        RFC8032Vector(
            name: "TEST SHA(abc)",
            seed: "833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42",
            publicKey: "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
            message: "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
            signature: "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b589"
                + "09351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704"),
    ]

    @Test func rfc8032TableHasAllFiveTestsWithTheirMessageLengths() throws {
        #expect(Self.rfc8032Vectors.count == 5)
        let lengths = try Self.rfc8032Vectors.map { try bytes(hex: $0.message).count }
        #expect(lengths == [0, 1, 2, 1023, 64])
        // TEST SHA(abc) signs SHA-512("abc") (FIPS 180-4 example).
        #expect(Self.rfc8032Vectors[4].message.hasPrefix("ddaf35a193617aba"))
    }

    @Test(arguments: rfc8032Vectors)
    func rfc8032SigningFromSeedGivesThePublishedPublicKeyAndSignature(_ vector: RFC8032Vector) throws {
        let key = try Ed25519SecretKey(seed: secureBytes(hex: vector.seed))
        let message = try bytes(hex: vector.message)
        #expect(key.publicKey.raw == (try bytes(hex: vector.publicKey)))
        #expect(try key.sign(message) == (try bytes(hex: vector.signature)))
    }

    @Test(arguments: rfc8032Vectors)
    func rfc8032PublishedSignatureVerifies(_ vector: RFC8032Vector) throws {
        let verifier = SodiumEd25519Verifier()
        let message = try bytes(hex: vector.message)
        let signature = try bytes(hex: vector.signature)
        let publicKey = try bytes(hex: vector.publicKey)
        #expect(verifier.isValidSignature(signature, of: message, publicKey: publicKey))
        var tampered = signature
        tampered[0] ^= 0x01
        #expect(!verifier.isValidSignature(tampered, of: message, publicKey: publicKey))
        #expect(!verifier.isValidSignature(signature, of: message + [0], publicKey: publicKey))
    }

    @Test func wycheproofVerdictsMatchForAll151Cases() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/ed25519_test.json")
        let file = try JSONDecoder().decode(WycheproofFile.self, from: Data(contentsOf: url))
        let verifier = SodiumEd25519Verifier()
        var count = 0
        for group in file.testGroups {
            let publicKey = try bytes(hex: group.publicKey.pk)
            for test in group.tests {
                count += 1
                #expect(test.result == "valid" || test.result == "invalid", "tcId \(test.tcId)")
                let verdict = verifier.isValidSignature(
                    try bytes(hex: test.sig), of: try bytes(hex: test.msg), publicKey: publicKey)
                #expect(verdict == (test.result == "valid"), "tcId \(test.tcId): \(test.comment)")
            }
        }
        #expect(count == 151)
        #expect(file.numberOfTests == 151)
    }

    @Test func verifierRejectsWrongLengthsInsteadOfReadingPastThem() throws {
        let vector = Self.rfc8032Vectors[1]
        let message = try bytes(hex: vector.message)
        let signature = try bytes(hex: vector.signature)
        let publicKey = try bytes(hex: vector.publicKey)
        let verifier = SodiumEd25519Verifier()
        #expect(
            !verifier.isValidSignature(Array(signature.dropLast()), of: message, publicKey: publicKey))
        #expect(!verifier.isValidSignature(signature + [0], of: message, publicKey: publicKey))
        #expect(!verifier.isValidSignature([], of: message, publicKey: publicKey))
        #expect(
            !verifier.isValidSignature(signature, of: message, publicKey: Array(publicKey.dropLast())))
        #expect(!verifier.isValidSignature(signature, of: message, publicKey: publicKey + [0]))
        #expect(!verifier.isValidSignature(signature, of: message, publicKey: []))
    }

    @Test func sha256MatchesFIPS180Examples() throws {
        let hasher = SodiumSHA256()
        #expect(
            hasher.sha256(Array("abc".utf8))
                == (try bytes(hex: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")))
        #expect(
            hasher.sha256([])
                == (try bytes(hex: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")))
        let twoBlocks = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(
            hasher.sha256(twoBlocks)
                == (try bytes(hex: "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")))
    }

    @Test func keyIDIsLowercaseHexSHA256OfTheRawPublicKey() throws {
        let key = try Ed25519PublicKey(raw: bytes(hex: Self.rfc8032Vectors[0].publicKey))
        // sha256 of the 32 raw bytes of RFC 8032 TEST 1's public key (computed with sha256sum).
        #expect(key.keyID == "21fe31dfa154a261626bf854046fd2271b7bed4b6abe45aa58877ef47f9721b9")
        #expect(key.keyID.count == 64)
    }

    @Test func publicKeyRejectsWrongLengths() {
        #expect(throws: Ed25519Error.invalidPublicKeyLength(31)) {
            try Ed25519PublicKey(raw: [UInt8](repeating: 1, count: 31))
        }
        #expect(throws: Ed25519Error.invalidPublicKeyLength(33)) {
            try Ed25519PublicKey(raw: [UInt8](repeating: 1, count: 33))
        }
    }

    @Test func publicKeyRejectsSmallOrderAndNonCanonicalPoints() throws {
        // The identity (small order) and its non-canonical encoding y = p + 1.
        let identity = [UInt8(1)] + [UInt8](repeating: 0, count: 31)
        #expect(throws: Ed25519Error.invalidPublicKeyPoint) { try Ed25519PublicKey(raw: identity) }
        let nonCanonical = [UInt8(0xee)] + [UInt8](repeating: 0xff, count: 30) + [0x7f]
        #expect(throws: Ed25519Error.invalidPublicKeyPoint) { try Ed25519PublicKey(raw: nonCanonical) }
    }

    @Test func seedMustBe32Bytes() throws {
        #expect(throws: Ed25519Error.invalidSeedLength(31)) {
            try Ed25519SecretKey(seed: SecureBytes(capacity: 31))
        }
        #expect(throws: Ed25519Error.invalidSeedLength(64)) {
            try Ed25519SecretKey(seed: SecureBytes(capacity: 64))
        }
    }

    @Test func generatedKeysAreDistinctAndTheirSignaturesVerify() throws {
        let first = try Ed25519SecretKey.generate()
        let second = try Ed25519SecretKey.generate()
        #expect(first.publicKey != second.publicKey)
        let message = Array("DSSEv1 0  0 ".utf8)
        let signature = try first.sign(message)
        #expect(signature.count == 64)
        let verifier = CryptoProvider.sodium.verifier
        #expect(verifier.isValidSignature(signature, of: message, publicKey: first.publicKey.raw))
        #expect(!verifier.isValidSignature(signature, of: message, publicKey: second.publicKey.raw))
    }

    @Test func sodiumProviderUsesLibsodiumPrimitives() throws {
        let provider = CryptoProvider.sodium
        #expect(provider.verifier is SodiumEd25519Verifier)
        #expect(provider.hasher.sha256([]).count == 32)
    }
}

// MARK: - Helpers

/// The parts of a Wycheproof EddsaVerify file the test reads.
private struct WycheproofFile: Decodable {
    struct Group: Decodable {
        struct PublicKey: Decodable { let pk: String }
        let publicKey: PublicKey
        let tests: [Case]
    }
    struct Case: Decodable {
        let tcId: Int
        let comment: String
        let msg: String
        let sig: String
        let result: String
    }
    let numberOfTests: Int
    let testGroups: [Group]
}

private struct HexError: Error, CustomStringConvertible {
    let text: String
    var description: String { "not hex: \(text.prefix(40))" }
}

private func bytes(hex: String) throws -> [UInt8] {
    let digits = Array(hex.utf8)
    guard digits.count % 2 == 0 else { throw HexError(text: hex) }
    func value(_ digit: UInt8) throws -> UInt8 {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: throw HexError(text: hex)
        }
    }
    var result: [UInt8] = []
    result.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
        result.append(try value(digits[index]) << 4 | value(digits[index + 1]))
        index += 2
    }
    return result
}

private func secureBytes(hex: String) throws -> SecureBytes {
    let decoded = try bytes(hex: hex)
    let buffer = try SecureBytes(capacity: decoded.count)
    buffer.withUnsafeMutableBytes { $0.copyBytes(from: decoded) }
    return buffer
}
