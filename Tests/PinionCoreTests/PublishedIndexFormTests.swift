// index.json's payloadSHA256 in the `sha256:<hex>` form, with the older bare-hex form still read.

import PinionCore
import PinionTestSupport
import Testing

@Suite struct PublishedIndexFormTests {
    let hash = [UInt8](repeating: 0xAB, count: 32)

    func index(_ text: String) -> [UInt8] {
        Array(
            (#"{"type": "pinion.index", "specVersion": 1, "scope": "com.example.app", "manifests": [{"version": 1, "rootVersion": 1, "payloadSHA256": ""#
                + text + #"", "issuedAt": "2026-11-30T09:00:00Z", "expiresAt": "2026-12-30T09:00:00Z"}]}"#).utf8)
    }

    @Test func writesTheSHA256PrefixAndReadsBothForms() throws {
        let written = PublishedIndex(
            scope: "com.example.app",
            manifests: [
                .init(
                    version: 1, rootVersion: 1, payloadSHA256: hash, issuedAt: t0, expiresAt: t0.adding(seconds: day))
            ])
        let text = String(decoding: written.serialized(), as: UTF8.self)
        #expect(text.contains(#""payloadSHA256": "sha256:"# + String(repeating: "ab", count: 32) + "\""))
        #expect(try PublishedIndex.parse(written.serialized()) == written)
        let hex = String(repeating: "ab", count: 32)
        #expect(try PublishedIndex.parse(index("sha256:" + hex)).manifests[0].payloadSHA256 == hash)
        #expect(try PublishedIndex.parse(index(hex)).manifests[0].payloadSHA256 == hash)
    }

    @Test(arguments: [
        "sha256:", "sha256:" + String(repeating: "AB", count: 32), "SHA256:" + String(repeating: "ab", count: 32),
        "sha512:" + String(repeating: "ab", count: 32), "sha256:sha256:" + String(repeating: "ab", count: 32),
        String(repeating: "ab", count: 31), "",
    ])
    func otherSpellingsAreRefused(text: String) {
        #expect(throws: FormatError.self) { try PublishedIndex.parse(index(text)) }
    }
}
