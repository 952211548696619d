// StrictEd25519Verifier.isUsablePublicKey (pure Swift) against libsodium 1.0.18's point validation,
// the rule SodiumEd25519Verifier applies on Linux: random encodings and every edge case, 0 differences.

import PinionCrypto
import PinionTrustTestSupport
import Testing

@testable import PinionCore

@Suite struct PointValidationTests {
    let strict = StrictEd25519Verifier(wrapping: OpenSSLEd25519Verifier())
    let linux = SodiumEd25519Verifier()

    /// The encodings on which the pure-Swift rule and the Linux rule disagree.
    func differences(_ encodings: [[UInt8]]) -> [String] {
        encodings.compactMap { encoding in
            let expected = linux.isUsablePublicKey(encoding)
            #expect(expected == Sodium.isValidPoint(encoding) || encoding.count != 32)
            guard strict.isUsablePublicKey(encoding) != expected else { return nil }
            return encoding.map { String($0, radix: 16) }.joined(separator: ",")
        }
    }

    @Test func agreesWithLibsodiumOn20000RandomEncodings() {
        var generator = SplitMix(state: 0x5049_4e49_4f4e_0001)
        let encodings = (0..<20_000).map { _ in generator.bytes(32) }
        let accepted = encodings.filter { linux.isUsablePublicKey($0) }.count
        // About 1/16 of random strings are valid (half decode, one in eight of those has prime
        // order): the sample exercises both verdicts.
        #expect(accepted > 800 && accepted < 1_800)
        #expect(differences(encodings) == [])
    }

    @Test func agreesOnEverySmallOrderEncodingAndRefusesThem() {
        let encodings = Torsion.points + Torsion.points.map(Torsion.withSign) + Torsion.blocklistEncodings
        #expect(differences(encodings) == [])
        #expect(encodings.allSatisfy { !strict.isUsablePublicKey($0) })
    }

    @Test func agreesOnTorsionSumsOfPrimeOrderKeys() {
        var generator = SplitMix(state: 0x5049_4e49_4f4e_0002)
        var encodings: [[UInt8]] = []
        var mixedOrderTwo: [[UInt8]] = []
        for _ in 0..<64 {
            let key = Sodium.sign([], seed: generator.bytes(32)).publicKey
            encodings.append(key)
            for (index, torsion) in Torsion.points.enumerated() {
                guard let sum = Sodium.add(key, torsion) else { continue }
                encodings.append(sum)
                encodings.append(Torsion.withSign(sum))
                if index == 1 { mixedOrderTwo.append(sum) }
            }
        }
        #expect(encodings.count == 64 * 17)
        #expect(differences(encodings) == [])
        // Unpatched libsodium 1.0.18 checked only x of [L]P and so accepted P + (0, −1); the
        // library this runs on (Debian's 1.0.18-1+deb12u1) refuses it, and so must the pure rule.
        #expect(mixedOrderTwo.count == 64)
        #expect(mixedOrderTwo.allSatisfy { !strict.isUsablePublicKey($0) && !linux.isUsablePublicKey($0) })
        #expect(encodings.contains { strict.isUsablePublicKey($0) })
    }

    @Test func agreesOnNonCanonicalEncodingsAndRefusesThem() {
        let xZeroWithSign = [Torsion.withSign(Torsion.points[0]), Torsion.withSign(Torsion.orderTwo)]
        let encodings = nonCanonicalEncodings + xZeroWithSign
        #expect(differences(encodings) == [])
        #expect(encodings.allSatisfy { !strict.isUsablePublicKey($0) })
    }

    @Test func agreesOnOffCurveEncodingsAndRefusesThem() {
        var generator = SplitMix(state: 0x5049_4e49_4f4e_0003)
        var offCurve: [[UInt8]] = []
        while offCurve.count < 200 {
            var candidate = generator.bytes(32)
            candidate[31] &= 0x7f
            // Off the curve: libsodium cannot add it to the identity.
            if Sodium.add(candidate, Torsion.points[0]) == nil { offCurve.append(candidate) }
        }
        #expect(differences(offCurve) == [])
        #expect(offCurve.allSatisfy { !strict.isUsablePublicKey($0) })
    }

    @Test func refusesWrongLengths() {
        let key = Sodium.sign([], seed: [UInt8](repeating: 7, count: 32)).publicKey
        #expect(strict.isUsablePublicKey(key))
        for encoding in [[], Array(key.dropLast()), key + [0], key + key] {
            #expect(!strict.isUsablePublicKey(encoding))
            #expect(!linux.isUsablePublicKey(encoding))
        }
    }

    @Test func curveConstantsMatchRFC8032() {
        // d and √−1 as RFC 8032 §5.1 and ref10 write them (little-endian canonical encodings).
        #expect(
            EdwardsPoint.Constants.d.encoded()
                == hexBytes("a3785913ca4deb75abd841414d0a700098e879777940c78c73fe6f2bee6c0352"))
        #expect(
            EdwardsPoint.Constants.sqrtMinusOne.encoded()
                == hexBytes("b0a00e4a271beec478e42fad0618432fa7d7fb3d99004d2b0bdfc14f8024832b"))
        // The base point decodes, lies on the curve and has order L.
        let base = hexBytes("5866666666666666666666666666666666666666666666666666666666666666")
        let point = EdwardsPoint(decoding: base)
        #expect(point?.isOnCurve == true)
        #expect(point?.isInPrimeOrderSubgroup == true)
    }
}
