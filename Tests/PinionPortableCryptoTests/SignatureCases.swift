// Signature test cases for the verdict comparison: Wycheproof, ed25519-speccheck (Fixtures/, see
// Fixtures/README.md) and fixed-seed mutations of valid signatures, keys and messages.

import Foundation
import PinionTrustTestSupport

/// One verification input.
struct SignatureCase: Sendable {
    let name: String
    let message: [UInt8]
    let publicKey: [UInt8]
    let signature: [UInt8]
}

enum SignatureCases {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures")

    /// The 151 Wycheproof ed25519 cases with their expected verdicts.
    static func wycheproof() throws -> [(SignatureCase, Bool)] {
        struct File: Decodable {
            struct Group: Decodable {
                struct Key: Decodable { let pk: String }
                let publicKey: Key
                let tests: [Test]
            }
            struct Test: Decodable {
                let tcId: Int
                let msg: String
                let sig: String
                let result: String
            }
            let testGroups: [Group]
        }
        let data = try Data(contentsOf: fixtures.appendingPathComponent("ed25519_test.json"))
        let file = try JSONDecoder().decode(File.self, from: data)
        return file.testGroups.flatMap { group in
            group.tests.map { test in
                (
                    SignatureCase(
                        name: "wycheproof tcId \(test.tcId)", message: hexBytes(test.msg),
                        publicKey: hexBytes(group.publicKey.pk), signature: hexBytes(test.sig)),
                    test.result == "valid"
                )
            }
        }
    }

    /// The 12 ed25519-speccheck cases, in order.
    static func speccheck() throws -> [SignatureCase] {
        let text = try String(
            contentsOf: fixtures.appendingPathComponent("ed25519-speccheck-cases.txt"), encoding: .utf8)
        return text.split(separator: "\n").enumerated().map { index, line in
            let fields = line.split(separator: " ").map { hexBytes(String($0)) }
            return SignatureCase(
                name: "speccheck case \(index)", message: fields.count > 0 ? fields[0] : [],
                publicKey: fields.count > 1 ? fields[1] : [], signature: fields.count > 2 ? fields[2] : [])
        }
    }

    /// `count` cases from `seed`: a valid signature, then one mutation chosen at random.
    static func mutations(count: Int, seed: UInt64) -> [SignatureCase] {
        var generator = SplitMix(state: seed)
        return (0..<count).map { index in mutation(index, &generator) }
    }

    static let order: [UInt8] = hexBytes("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")

    /// `s + L` for a 32-byte little-endian `s` (no overflow for s < L).
    static func addOrder(_ s: [UInt8]) -> [UInt8] {
        var out = s
        var carry = 0
        for index in 0..<32 {
            let sum = Int(s[index]) + Int(order[index]) + carry
            out[index] = UInt8(sum & 0xff)
            carry = sum >> 8
        }
        return out
    }

    static func mutation(_ index: Int, _ generator: inout SplitMix) -> SignatureCase {
        let message = generator.bytes(Int.random(in: 0...48, using: &generator))
        let (publicKey, signature) = Sodium.sign(message, seed: generator.bytes(32))
        var m = message
        var a = publicKey
        var sig = signature
        let kind = Int.random(in: 0...13, using: &generator)
        switch kind {
        case 0: break
        case 1: sig[Int.random(in: 0..<64, using: &generator)] ^= 1 << UInt8.random(in: 0...7, using: &generator)
        case 2: a[Int.random(in: 0..<32, using: &generator)] ^= 1 << UInt8.random(in: 0...7, using: &generator)
        case 3:
            if m.isEmpty { m = [0] } else { m[Int.random(in: 0..<m.count, using: &generator)] ^= 1 }
        case 4: sig.replaceSubrange(32..<64, with: addOrder(Array(sig[32..<64])))
        case 5: sig.replaceSubrange(0..<32, with: Torsion.blocklistEncodings.randomElement(using: &generator) ?? [])
        case 6: a = Torsion.blocklistEncodings.randomElement(using: &generator) ?? []
        case 7:
            // Small-order A and R with S = 0: [0]B − [h]A = −[h]A, which is R for some h; the
            // permissive verifier accepts these, libsodium never.
            a = Torsion.blocklistEncodings.randomElement(using: &generator) ?? []
            sig = (Torsion.points.randomElement(using: &generator) ?? []) + [UInt8](repeating: 0, count: 32)
        case 8: sig.replaceSubrange(0..<32, with: nonCanonicalEncodings.randomElement(using: &generator) ?? [])
        case 9: a = nonCanonicalEncodings.randomElement(using: &generator) ?? []
        case 10:
            if let torsion = Torsion.points.randomElement(using: &generator),
                let mixed = Sodium.add(Array(sig[0..<32]), torsion)
            {
                sig.replaceSubrange(0..<32, with: mixed)
            }
        case 11:
            if let torsion = Torsion.points.randomElement(using: &generator), let mixed = Sodium.add(a, torsion) {
                a = mixed
            }
        case 12:
            // A key of mixed order and a signature made for it: libsodium accepts it when
            // [h]T is the identity, as in speccheck case 3.
            let torsion = Torsion.points.randomElement(using: &generator) ?? []
            if let made = Sodium.signWithMixedKey(
                m, scalarSeed: generator.bytes(32), nonceSeed: generator.bytes(32), torsion: torsion)
            {
                a = made.publicKey
                sig = made.signature
            }
        default:
            // A random 32-byte public key: mostly off the curve or of the wrong order.
            a = generator.bytes(32)
        }
        return SignatureCase(name: "mutation \(index) kind \(kind)", message: m, publicKey: a, signature: sig)
    }
}
