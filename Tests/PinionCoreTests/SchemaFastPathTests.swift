// The manifest schema's cheaper bookkeeping refuses what it refused: members read by position
// (past 64 members too), paths rendered only on error, duplicate pins by scan or by set.

import PinionCore
import Testing

private func pinText(_ byte: Int) -> String { "sha256/" + Base64.encode([UInt8](repeating: UInt8(byte), count: 32)) }

private func quoted(_ pins: [String]) -> String { "[" + pins.map { "\"\($0)\"" }.joined(separator: ",") + "]" }

private func manifest(domains: [String], revoked: String = "[]") -> [UInt8] {
    let text =
        #"{"type":"pinion.pins","specVersion":1,"scope":"com.example.app","rootVersion":1,"version":7,"#
        + #""issuedAt":"2026-12-01T09:00:00Z","expiresAt":"2026-12-31T09:00:00Z","#
        + #""domains":["# + domains.joined(separator: ",") + #"],"revokedPins":"# + revoked + "}"
    return Array(text.utf8)
}

private func domain(_ name: String, pins: [String] = [pinText(1), pinText(2)], extra: String = "") -> String {
    #"{"name":"\#(name)","pins":\#(quoted(pins))\#(extra)}"#
}

/// `count` extension members, `,"x-0":0,...`.
private func extensions(_ count: Int) -> String { (0..<count).map { #","x-\#($0)":\#($0)"# }.joined() }

@Suite struct SchemaFastPathTests {
    @Test func errorPathsNameTheElement() {
        let names = (0..<5).map { "d\($0).example.com" }
        var domains = names.map { domain($0) }
        domains[3] = domain("D3.example.com")
        #expect(
            throws: FormatError(
                path: "domains[3].name", rule: .invalidHostName("uppercase letters; host names are listed in lowercase")
            )
        ) { try ManifestPayload.parse(manifest(domains: domains)) }
        domains[3] = domain("d3.example.com", pins: [pinText(1), "sha256/AAAA"])
        #expect(
            throws: FormatError(
                path: "domains[3].pins[1]", rule: .invalidPin("not 32 bytes after base64 decoding (got 3)"))
        ) { try ManifestPayload.parse(manifest(domains: domains)) }
        domains[3] = #"{"name":"d3.example.com","pins":[7]}"#
        #expect(throws: FormatError(path: "domains[3].pins[0]", rule: .wrongType(expected: "a pin string"))) {
            try ManifestPayload.parse(manifest(domains: domains))
        }
        domains[3] = "[]"
        #expect(throws: FormatError(path: "domains[3]", rule: .wrongType(expected: "an object"))) {
            try ManifestPayload.parse(manifest(domains: domains))
        }
        domains[3] = domain("d3.example.com", extra: #","pinz":[]"#)
        #expect(throws: FormatError(path: "domains[3]", rule: .unknownMember("pinz"))) {
            try ManifestPayload.parse(manifest(domains: domains))
        }
        domains[3] = domain("d1.example.com")
        #expect(throws: FormatError(path: "domains[3].name", rule: .duplicateDomain("d1.example.com"))) {
            try ManifestPayload.parse(manifest(domains: domains))
        }
    }

    @Test func duplicatePinsAreFoundByScanAndBySet() {
        // 17 pins and more take the set; the revoked list is unbounded.
        for count in [2, 15, 16, 17, 40] {
            var pins = (0..<count).map { pinText($0) }
            pins.append(pinText(count / 2))
            #expect(
                throws: FormatError(path: "domains[1].pins[\(count)]", rule: .duplicatePin(pinText(count / 2))),
                "\(count) pins"
            ) {
                try ManifestPayload.parse(
                    manifest(domains: [domain("a.example.com"), domain("b.example.com", pins: pins)]))
            }
            #expect(
                throws: FormatError(path: "revokedPins[\(count)]", rule: .duplicatePin(pinText(count / 2))),
                "\(count) revoked pins"
            ) { try ManifestPayload.parse(manifest(domains: [domain("a.example.com")], revoked: quoted(pins))) }
            let distinct = try? ManifestPayload.parse(
                manifest(
                    domains: [domain("b.example.com", pins: Array(pins.dropLast()))], revoked: quoted(pins.dropLast())))
            #expect(distinct?.domains[0].pins.count == count)
            #expect(distinct?.revokedPins.count == count)
        }
    }

    @Test func membersPastTheSixtyFourthAreReadAndChecked() throws {
        // The schema's members after 70 extensions: read (bit positions past 64), so accepted.
        let late =
            #"{"x-a":1\#(extensions(70)),"name":"a.example.com","enforce":false,"pins":\#(quoted([pinText(1)]))}"#
        let payload = try ManifestPayload.parse(manifest(domains: [late]))
        #expect(payload.domains[0].enforce == false)
        #expect(payload.domains[0].extensions.count == 71)
        // An unknown member past 64 is still refused, at any position.
        for position in [0, 63, 64, 65, 100] {
            var members = (0..<100).map { #""x-\#($0)":\#($0)"# }
            members.insert(#""extra":true"#, at: position)
            let object =
                #"{"name":"a.example.com","pins":\#(quoted([pinText(1)])),"# + members.joined(separator: ",") + "}"
            #expect(throws: FormatError(path: "domains[0]", rule: .unknownMember("extra")), "position \(position)") {
                try ManifestPayload.parse(manifest(domains: [object]))
            }
        }
    }

    @Test func onlyAnXDashPrefixMakesAnExtension() {
        // "x" alone, "xy", a capital X, and x with a combining accent (a different first character).
        for name in ["x", "xy", "X-a", "x\\u0301-a", "\\u0078\\u0301-b"] {
            let object = domain("a.example.com", extra: #","\#(name)":1"#)
            #expect(throws: FormatError.self, "\(name)") { try ManifestPayload.parse(manifest(domains: [object])) }
        }
        // An escaped x is still x.
        let escaped = domain("a.example.com", extra: #","\u0078-note":1"#)
        #expect((try? ManifestPayload.parse(manifest(domains: [escaped])))?.domains[0].extensions.count == 1)
    }
}
