// CertificateSPKI (PinionCore's strict DER walk) equals OpenSSL's pin on every system certificate and on
// RSA, EC and Ed25519 leaves made with openssl, and refuses truncated, BER and malformed DER.

import Foundation
import PinionCore
import PinionCrypto
import Testing

@Suite struct CertificateSPKITests {
    let hasher = SodiumSHA256()

    func expectSameAsOpenSSL(_ der: [UInt8], _ name: String) throws {
        let oracle = try #require(OpenSSLOracle.spkiDER(ofCertificate: der), "\(name): OpenSSL refuses it")
        let ours = try CertificateSPKI.fromCertificateDER(der, hasher: hasher)
        #expect(ours.spkiDER == oracle, "\(name)")
        #expect(ours.sha256 == OpenSSLOracle.sha256(oracle), "\(name)")
    }

    @Test func equalsOpenSSLOnEveryCertificateInEtcSSLCerts() throws {
        let directory = "/etc/ssl/certs"
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".pem") }
        var seen = Set<[UInt8]>()
        for name in names.sorted() {
            guard let text = try? String(contentsOfFile: directory + "/" + name, encoding: .utf8) else { continue }
            for der in pemCertificates(text) where seen.insert(der).inserted {
                try expectSameAsOpenSSL(der, name)
            }
        }
        // Debian's ca-certificates ships well over a hundred roots.
        #expect(seen.count > 100)
    }

    @Test(arguments: [
        ("RSA 2048", ["-newkey", "rsa:2048"]),
        ("RSA 3072", ["-newkey", "rsa:3072"]),
        ("RSA 4096", ["-newkey", "rsa:4096"]),
        ("P-256", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]),
        ("P-384", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-384"]),
        ("P-521", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-521"]),
        ("Ed25519", ["-newkey", "ed25519"]),
    ])
    func equalsOpenSSLOnALeafMadeWithOpenSSL(name: String, keyArguments: [String]) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pinion-spki-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("leaf.der").path
        let status = try runOpenSSL(
            [
                "req", "-x509", "-nodes", "-subj", "/CN=leaf.example", "-days", "2", "-outform", "DER",
                "-keyout", directory.appendingPathComponent("leaf.key").path, "-out", path,
            ] + keyArguments)
        #expect(status == 0)
        let der = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        try expectSameAsOpenSSL(der, name)
    }

    @Test func returnsTheSPKIOfASyntheticCertificateVerbatim() throws {
        let spki = DER.ed25519SPKI([UInt8](repeating: 0x42, count: 32))
        for certificate in [
            DER.certificate(spki: spki), DER.certificate(spki: spki, version: false),
            DER.certificate(spki: spki, extensions: false),
            DER.certificate(spki: spki, tbsExtra: DER.tlv(0x82, [0, 1]), extensions: false),
        ] {
            #expect(try CertificateSPKI.subjectPublicKeyInfo(ofCertificateDER: certificate) == spki)
        }
    }

    func realCertificate() throws -> [UInt8] {
        let text = try String(contentsOfFile: "/etc/ssl/certs/ca-certificates.crt", encoding: .utf8)
        return try #require(pemCertificates(text).first)
    }

    func malformed(_ der: [UInt8]) -> DERError? {
        do {
            _ = try CertificateSPKI.subjectPublicKeyInfo(ofCertificateDER: der)
            return nil
        } catch CertificateSPKIError.malformed(let error) {
            return error
        } catch {
            return nil
        }
    }

    @Test func refusesEveryTruncation() throws {
        let der = try realCertificate()
        for count in 1..<der.count {
            #expect(malformed(Array(der.prefix(count))) != nil, "prefix of \(count) bytes")
        }
        #expect(throws: CertificateSPKIError.empty) { try CertificateSPKI.subjectPublicKeyInfo(ofCertificateDER: []) }
    }

    func isTrailingData(_ error: DERError?) -> Bool {
        if case .trailingData = error { return true }
        return false
    }

    @Test func refusesTrailingGarbageAtEveryLevel() throws {
        let spki = DER.ed25519SPKI([UInt8](repeating: 0x42, count: 32))
        let garbage = DER.tlv(0x05, [])
        let certificate = DER.certificate(spki: spki)
        // After the certificate.
        #expect(malformed(certificate + [0]) == .trailingData(offset: certificate.count))
        #expect(malformed(certificate + certificate) == .trailingData(offset: certificate.count))
        // Inside the certificate, after signatureValue.
        #expect(isTrailingData(malformed(DER.certificate(spki: spki, certificateExtra: garbage))))
        // Inside tbsCertificate, after the extensions.
        #expect(isTrailingData(malformed(DER.certificate(spki: spki, tbsExtra: garbage))))
        // Inside the SubjectPublicKeyInfo, and inside its AlgorithmIdentifier.
        let key = DER.tlv(0x03, [0] + [UInt8](repeating: 1, count: 32))
        let longSPKI = DER.sequence(DER.sequence(DER.tlv(0x06, [0x2b, 0x65, 0x70])), key, garbage)
        #expect(isTrailingData(malformed(DER.certificate(spki: longSPKI))))
        let longAlgorithm = DER.sequence(DER.sequence(DER.tlv(0x06, [0x2b, 0x65, 0x70]), garbage, garbage), key)
        #expect(isTrailingData(malformed(DER.certificate(spki: longAlgorithm))))
        // A constructed element whose content ends inside an element, deep in the SPKI.
        let broken = DER.sequence(DER.sequence(DER.tlv(0x06, [0x2b, 0x65, 0x70]), DER.tlv(0x30, [0x05])), key)
        if case .truncated = malformed(DER.certificate(spki: broken)) {} else { Issue.record("not truncated") }
    }

    @Test func refusesIndefiniteAndNonMinimalLengths() throws {
        let der = try realCertificate()
        // The outer length rewritten as BER's indefinite form, with end-of-contents octets.
        let headerLength = der[1] & 0x7f == 0 ? 2 : 2 + Int(der[1] & 0x7f)
        let indefinite = [0x30, 0x80] + der[headerLength...] + [0, 0]
        #expect(malformed(Array(indefinite)) == .indefiniteLength(offset: 1))
        // The outer length with one more (leading zero) octet.
        let count = der.count - headerLength
        let padded = [0x30, 0x83, 0x00, UInt8(count >> 8), UInt8(count & 0xff)] + der[headerLength...]
        #expect(malformed(Array(padded)) == .nonMinimalLength(offset: 1))
        // A short length in the long form, deep inside the SPKI.
        let spki = DER.sequence(
            DER.sequence(DER.tlv(0x06, [0x2b, 0x65, 0x70])), [0x03, 0x81, 0x21, 0] + [UInt8](repeating: 1, count: 32))
        #expect(malformed(DER.certificate(spki: spki)) != nil)
        if case .nonMinimalLength = malformed(DER.certificate(spki: spki)) {
        } else {
            Issue.record("not nonMinimalLength")
        }
        // Five length octets.
        #expect(malformed([0x30, 0x85, 0, 0, 0, 0, 1, 0]) == .lengthTooLarge(offset: 1))
    }

    @Test func refusesWrongTags() throws {
        let spki = DER.ed25519SPKI([UInt8](repeating: 0x42, count: 32))
        var der = DER.certificate(spki: spki)
        der[0] = 0x31  // a SET, not a SEQUENCE
        #expect(malformed(der) == .unexpectedTag(expected: 0x30, found: 0x31, offset: 0))
        // The key as an OCTET STRING instead of a BIT STRING.
        let octetKey = DER.sequence(
            DER.sequence(DER.tlv(0x06, [0x2b, 0x65, 0x70])), DER.tlv(0x04, [UInt8](repeating: 1, count: 32)))
        #expect(malformed(DER.certificate(spki: octetKey)) != nil)
        // No serial number (the version followed by the AlgorithmIdentifier).
        let noSerial = DER.tlv(
            0x30, DER.tlv(0x30, DER.tlv(0xa0, DER.tlv(0x02, [2])) + spki) + DER.sequence() + DER.tlv(0x03, [0]))
        #expect(malformed(noSerial) != nil)
        // A high-tag-number identifier.
        #expect(malformed([0x30, 0x03, 0x1f, 0x81, 0x00]) == .unsupportedTag(offset: 2))
    }

    @Test func refusesMalformedBitStringsAndOversizedInput() throws {
        // Empty, 8 unused bits, unused bits without content, and unused bits that are not zero
        // (OpenSSL clears those when it re-encodes: a second pin for the same key; found by fuzzing).
        for key in [[UInt8](), [8, 1, 2], [1], [1, 0x04, 0x1d], [3, 0xff]] {
            let spki = DER.sequence(DER.sequence(DER.tlv(0x06, [0x2b, 0x65, 0x70])), DER.tlv(0x03, key))
            #expect(throws: CertificateSPKIError.malformedSubjectPublicKeyInfo) {
                try CertificateSPKI.subjectPublicKeyInfo(ofCertificateDER: DER.certificate(spki: spki))
            }
        }
        let huge = [UInt8](repeating: 0, count: CertificateSPKI.maximumCertificateBytes + 1)
        #expect(throws: CertificateSPKIError.tooLarge(huge.count)) {
            try CertificateSPKI.subjectPublicKeyInfo(ofCertificateDER: huge)
        }
    }

    @Test func refusesTheFuzzFindingWithSetUnusedBits() throws {
        // fuzz/regressions/certspki/unused-bits-set: an openssl-made P-256 certificate whose key
        // BIT STRING declares 1 unused bit with that bit set. OpenSSL parses it and pins the key
        // with the bit cleared; the DER walk refuses it rather than pin other bytes.
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/unused-bits-set.der")
        let der = [UInt8](try Data(contentsOf: url))
        let oracle = try #require(OpenSSLOracle.spkiDER(ofCertificate: der))
        #expect(!der.starts(with: oracle) && der.firstRange(of: oracle) == nil)
        #expect(throws: CertificateSPKIError.malformedSubjectPublicKeyInfo) {
            try CertificateSPKI.subjectPublicKeyInfo(ofCertificateDER: der)
        }
    }

    @Test func refusesBERFormsInsideTheSPKIThatOpenSSLWouldNormalise() throws {
        let key = DER.tlv(0x03, [0] + [UInt8](repeating: 1, count: 32))
        let oid = DER.tlv(0x06, [0x2b, 0x65, 0x70])
        let cases: [(String, [UInt8], DERError)] = [
            // Second fuzz finding: a constructed VisibleString, which OpenSSL re-encodes as primitive.
            ("constructed string", [0x3a, 0x00], .wrongConstruction(offset: 0)),
            ("primitive SEQUENCE", [0x10, 0x00], .wrongConstruction(offset: 0)),
            ("BOOLEAN 0x01", [0x01, 0x01, 0x01], .nonCanonicalValue(offset: 0)),
            ("INTEGER with a leading zero", [0x02, 0x02, 0x00, 0x01], .nonCanonicalValue(offset: 0)),
            ("INTEGER with a leading 0xff", [0x02, 0x02, 0xff, 0x80], .nonCanonicalValue(offset: 0)),
            ("empty INTEGER", [0x02, 0x00], .nonCanonicalValue(offset: 0)),
            ("NULL with content", [0x05, 0x01, 0x00], .nonCanonicalValue(offset: 0)),
            ("OID with a 0x80 subidentifier start", [0x06, 0x03, 0x2a, 0x80, 0x01], .nonCanonicalValue(offset: 0)),
            ("OID ending inside a subidentifier", [0x06, 0x02, 0x2a, 0x86], .nonCanonicalValue(offset: 0)),
            ("BIT STRING with set unused bits", [0x03, 0x02, 0x01, 0x01], .nonCanonicalValue(offset: 0)),
        ]
        for (name, parameters, expected) in cases {
            let spki = DER.sequence(DER.sequence(oid, parameters), key)
            let certificate = DER.certificate(spki: spki)
            let offset = try #require(certificate.firstRange(of: spki)).lowerBound + 2 + 2 + oid.count
            let shifted: DERError
            switch expected {
            case .wrongConstruction: shifted = .wrongConstruction(offset: offset)
            default: shifted = .nonCanonicalValue(offset: offset)
            }
            #expect(malformed(certificate) == shifted, "\(name)")
        }
        // The DER forms of the same values are accepted.
        for parameters in [
            [0x1a, 0x00], [0x01, 0x01, 0xff], [0x02, 0x01, 0x01], [0x02, 0x02, 0x00, 0x80], [0x05, 0x00],
        ]
            as [[UInt8]]
        {
            let spki = DER.sequence(DER.sequence(oid, parameters), key)
            #expect(try CertificateSPKI.subjectPublicKeyInfo(ofCertificateDER: DER.certificate(spki: spki)) == spki)
        }
    }

    @Test func pinionSPKIRefusesACertificateOpenSSLParsesButThatIsNotStrictDER() throws {
        // `pinion spki` (SPKIReader) used to pin OpenSSL's normalised re-encoding of this key; it now
        // takes pins from the DER walk, and says why there is none.
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/unused-bits-set.der")
        let der = [UInt8](try Data(contentsOf: url))
        #expect(OpenSSLOracle.spkiDER(ofCertificate: der) != nil)
        let pem =
            "-----BEGIN CERTIFICATE-----\n" + Data(der).base64EncodedString(options: .lineLength64Characters)
            + "\n-----END CERTIFICATE-----\n"
        #expect {
            _ = try SPKIReader.objects(in: Array(pem.utf8), source: "unused-bits-set.pem") { nil }
        } throws: { error in
            guard case .invalidDER(_, _, _, let detail) = error as? SPKIError else { return false }
            return detail.contains("not strict DER")
        }
        // As bare DER it is no object the reader recognises (each DER form is tried in turn).
        #expect(throws: SPKIError.unrecognized(file: "unused-bits-set.der")) {
            _ = try SPKIReader.objects(in: der, source: "unused-bits-set.der") { nil }
        }
    }

    @Test func refusesNestingBeyondTheLimit() {
        var nested: [UInt8] = []
        for _ in 0...(40) { nested = DER.tlv(0x30, nested) }
        let result = malformed(nested)
        if case .nestingTooDeep = result {} else { Issue.record("got \(String(describing: result))") }
    }
}
