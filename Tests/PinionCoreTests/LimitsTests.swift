// The standard limits are consistent with each other: a manifest at the domain limit with four
// pins per domain, with long host names, fits the envelope limit and verifies under the
// standard limits; one domain more, or an envelope one byte over, is refused while parsing.

import PinionCore
import PinionCrypto
import PinionTestSupport
import Testing

@Suite struct LimitsTests {
    /// 10,000 distinct names of 240 characters (four labels: three of 63 and the rest).
    static func longName(_ index: Int) -> String {
        let head = String(format: "%05d", index)
        let first = head + String(repeating: "a", count: 63 - head.count)
        let label = String(repeating: "b", count: 63)
        let last = String(repeating: "c", count: 240 - 3 * 63 - 3 - 8) + ".example"
        return [first, label, label, last].joined(separator: ".")
    }

    static func domains(_ count: Int) throws -> [ManifestPayload.Domain] {
        try (0..<count).map { index in
            let pins = try (0..<4).map { slot -> Pin in
                var digest = [UInt8](repeating: UInt8(slot), count: 32)
                digest[0] = UInt8(index & 0xff)
                digest[1] = UInt8(index >> 8)
                return try Pin(digest: digest)
            }
            return ManifestPayload.Domain(name: longName(index), pins: pins)
        }
    }

    @Test func aManifestAtTheDomainLimitWithFourPinsPerDomainFitsAndVerifies() throws {
        let limits = Limits.standard
        let setup = try Setup()
        let payload = manifestPayload(domains: try Self.domains(limits.maxDomains))
        let envelope = try sign(.pins, payload.serialized(), with: [setup.pinsKey]).serialized()
        #expect(Self.longName(0).count == 240)
        #expect(envelope.count > 4 * 1024 * 1024, "the case the old 4 MiB limit refused")
        #expect(envelope.count <= limits.maxEnvelopeBytes)
        let verified = try ManifestVerifier.verify(envelope, under: try setup.chain().newest, crypto: sodium)
        #expect(verified.payload.domains.count == limits.maxDomains)
        #expect(verified.payload.domains.allSatisfy { $0.pins.count == 4 })
    }

    @Test func oneDomainOverTheLimitIsRefusedWhileParsing() throws {
        let limits = Limits.standard
        let setup = try Setup()
        let payload = manifestPayload(domains: try Self.domains(limits.maxDomains + 1))
        let envelope = try sign(.pins, payload.serialized(), with: [setup.pinsKey]).serialized()
        #expect(throws: TrustError.self) {
            _ = try ManifestVerifier.verify(envelope, under: try setup.chain().newest, crypto: sodium)
        }
    }

    @Test func anEnvelopeOneByteOverTheLimitIsRefusedBeforeParsing() throws {
        var limits = Limits.standard
        let setup = try Setup()
        let envelope = try sign(.pins, manifestPayload().serialized(), with: [setup.pinsKey]).serialized()
        limits.maxEnvelopeBytes = envelope.count - 1
        #expect(throws: TrustError.self) {
            _ = try ManifestVerifier.verify(envelope, under: try setup.chain().newest, crypto: sodium, limits: limits)
        }
        limits.maxEnvelopeBytes = envelope.count
        _ = try ManifestVerifier.verify(envelope, under: try setup.chain().newest, crypto: sodium, limits: limits)
    }
}
