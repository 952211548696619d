// StrictEd25519Verifier around a permissive OpenSSL EVP verifier gives SodiumEd25519Verifier's verdicts
// on Wycheproof, ed25519-speccheck and 20,000 fixed-seed mutations; the unwrapped verifier does not.

import PinionCore
import PinionCrypto
import Testing

@Suite struct StrictVerifierTests {
    let permissive = OpenSSLEd25519Verifier()
    let strict = StrictEd25519Verifier(wrapping: OpenSSLEd25519Verifier())
    let sodium = SodiumEd25519Verifier()

    struct Tally: Equatable {
        var strictDifferences: [String] = []
        var permissiveDifferences = 0
        var accepted = 0
    }

    func compare(_ cases: [SignatureCase]) -> Tally {
        var tally = Tally()
        for item in cases {
            let expected = sodium.isValidSignature(item.signature, of: item.message, publicKey: item.publicKey)
            if expected { tally.accepted += 1 }
            if strict.isValidSignature(item.signature, of: item.message, publicKey: item.publicKey) != expected {
                tally.strictDifferences.append(item.name)
            }
            if permissive.isValidSignature(item.signature, of: item.message, publicKey: item.publicKey) != expected {
                tally.permissiveDifferences += 1
            }
        }
        return tally
    }

    @Test func sameVerdictsAsLibsodiumOnAll151WycheproofCases() throws {
        let cases = try SignatureCases.wycheproof()
        #expect(cases.count == 151)
        // libsodium itself gives Wycheproof's verdicts, so the comparison is against the right rule.
        #expect(cases.allSatisfy { Sodium.verify($0.0.signature, $0.0.message, $0.0.publicKey) == $0.1 })
        let tally = compare(cases.map(\.0))
        #expect(tally.strictDifferences == [])
        #expect(tally.accepted == cases.filter(\.1).count)
    }

    @Test func sameVerdictsAsLibsodiumOnThe12SpeccheckCases() throws {
        let cases = try SignatureCases.speccheck()
        #expect(cases.count == 12)
        let tally = compare(cases)
        #expect(tally.strictDifferences == [])
        // The measured rows of Fixtures/README.md.
        let sodiumRow = cases.map { sodium.isValidSignature($0.signature, of: $0.message, publicKey: $0.publicKey) }
        let opensslRow = cases.map {
            permissive.isValidSignature($0.signature, of: $0.message, publicKey: $0.publicKey)
        }
        #expect(sodiumRow == [false, false, false, true, false, false, false, false, false, false, false, false])
        #expect(opensslRow == [true, true, true, true, false, false, false, false, false, false, false, true])
        // The wrapper is what closes the gap: the unwrapped verifier differs on cases 0, 1, 2 and 11.
        #expect(tally.permissiveDifferences == 4)
    }

    @Test func sameVerdictsAsLibsodiumOn20000Mutations() {
        let cases = SignatureCases.mutations(count: 20_000, seed: 0x5049_4e49_4f4e_0010)
        let tally = compare(cases)
        #expect(tally.strictDifferences == [])
        // Both verdicts occur, and the permissive verifier alone would disagree on some cases.
        #expect(tally.accepted > 1_000)
        #expect(tally.accepted < 19_000)
        #expect(tally.permissiveDifferences > 100)
    }

    @Test func refusesBeforeCallingTheWrappedVerifier() {
        // A wrapped verifier that accepts everything: every refusal must come from the wrapper.
        struct AcceptsAll: Ed25519Verifier {
            func isValidSignature(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool { true }
            func isUsablePublicKey(_ publicKey: [UInt8]) -> Bool { true }
        }
        let wrapper = StrictEd25519Verifier(wrapping: AcceptsAll())
        let message = Array("payload".utf8)
        let (publicKey, signature) = Sodium.sign(message, seed: [UInt8](repeating: 3, count: 32))
        #expect(wrapper.isValidSignature(signature, of: message, publicKey: publicKey))
        // Wrong lengths.
        #expect(!wrapper.isValidSignature(Array(signature.dropLast()), of: message, publicKey: publicKey))
        #expect(!wrapper.isValidSignature(signature + [0], of: message, publicKey: publicKey))
        #expect(!wrapper.isValidSignature(signature, of: message, publicKey: Array(publicKey.dropLast())))
        #expect(!wrapper.isValidSignature(signature, of: message, publicKey: publicKey + [0]))
        // S >= L: S + L, and S = L exactly.
        let s = Array(signature[32..<64])
        #expect(
            !wrapper.isValidSignature(
                Array(signature[0..<32]) + SignatureCases.addOrder(s), of: message, publicKey: publicKey))
        #expect(
            !wrapper.isValidSignature(
                Array(signature[0..<32]) + SignatureCases.order, of: message, publicKey: publicKey))
        // Small-order and non-canonical R and A.
        for bad in Torsion.blocklistEncodings + nonCanonicalEncodings {
            #expect(!wrapper.isValidSignature(bad + s, of: message, publicKey: publicKey))
            #expect(!wrapper.isValidSignature(signature, of: message, publicKey: bad))
        }
        // Off-curve R and A (y = 2 has no x on edwards25519).
        let offCurve = [UInt8(2)] + [UInt8](repeating: 0, count: 31)
        #expect(Sodium.add(offCurve, Torsion.points[0]) == nil)
        #expect(!wrapper.isValidSignature(offCurve + s, of: message, publicKey: publicKey))
        #expect(!wrapper.isValidSignature(signature, of: message, publicKey: offCurve))
    }

    @Test func mixedOrderKeyIsVerifiedButNotUsable() throws {
        // speccheck case 3: libsodium 1.0.18 verifies under a mixed-order A (no subgroup check in
        // verification), while its point validation refuses that A as a root key.
        let case3 = try SignatureCases.speccheck()[3]
        #expect(strict.isValidSignature(case3.signature, of: case3.message, publicKey: case3.publicKey))
        #expect(!strict.isUsablePublicKey(case3.publicKey))
        #expect(!sodium.isUsablePublicKey(case3.publicKey))
    }
}
