// The strict parser's refusals (docs/DESIGN.md §5), as a table of bad inputs and their errors.

import PinionCore
import Testing

let pin1 = "sha256/" + Base64.encode([UInt8](repeating: 1, count: 32))
let pin2 = "sha256/" + Base64.encode([UInt8](repeating: 2, count: 32))

let baseManifest =
    #"{"type":"pinion.pins","specVersion":1,"scope":"com.example.app","rootVersion":1,"version":7,"#
    + #""issuedAt":"2026-12-01T09:00:00Z","expiresAt":"2026-12-31T09:00:00Z","#
    + #""domains":[{"name":"api.example.com","pins":["\#(pin1)","\#(pin2)"]}],"revokedPins":[]}"#

/// One bad input: the base manifest with one text replaced, and the error it must give.
struct BadInput: CustomTestStringConvertible, Sendable {
    let name: String
    let bytes: [UInt8]
    let path: String
    let rule: FormatRule
    var limits = Limits.standard

    init(
        _ name: String, replace old: String, with new: String, path: String, rule: FormatRule,
        limits: Limits = .standard
    ) {
        precondition(baseManifest.contains(old), "fixture text not found: \(old)")
        self.name = name
        self.bytes = Array(baseManifest.replacingOccurrences(of: old, with: new).utf8)
        self.path = path
        self.rule = rule
        self.limits = limits
    }

    init(_ name: String, bytes: [UInt8], path: String, rule: FormatRule) {
        self.name = name
        self.bytes = bytes
        self.path = path
        self.rule = rule
    }

    var testDescription: String { name }
}

extension String {
    func replacingOccurrences(of old: String, with new: String) -> String {
        guard let range = range(of: old) else { return self }
        return replacingCharacters(in: range, with: new)
    }
}

func domain(_ name: String) -> String { #"{"name":"\#(name)","pins":["\#(pin1)","\#(pin2)"]}"# }

let badInputs: [BadInput] = {
    let validPrefix = Array(#"{"type":"pinion.pins","scope":"com.exa"#.utf8)
    var twoDomains = Limits.standard
    twoDomains.maxDomains = 2
    let deep = String(repeating: "[", count: 16) + String(repeating: "]", count: 16)
    return [
        BadInput(
            "duplicate member", replace: #""version":7,"#, with: #""version":7,"version":8,"#, path: "",
            rule: .duplicateKey("version")),
        BadInput(
            "trailing bytes", bytes: Array((baseManifest + " x").utf8), path: "",
            rule: .trailingBytes(offset: baseManifest.utf8.count + 1)),
        BadInput(
            "second JSON value", bytes: Array((baseManifest + "{}").utf8), path: "",
            rule: .trailingBytes(offset: baseManifest.utf8.count)),
        BadInput(
            "invalid UTF-8", bytes: validPrefix + [0xFF] + Array(#"mple"}"#.utf8), path: "",
            rule: .invalidUTF8(offset: validPrefix.count)),
        BadInput(
            "overlong UTF-8", bytes: validPrefix + [0xC0, 0xAF] + Array(#"mple"}"#.utf8), path: "",
            rule: .invalidUTF8(offset: validPrefix.count)),
        BadInput(
            "encoded surrogate in UTF-8",
            bytes: validPrefix + [0xED, 0xA0, 0x80] + Array(#"mple"}"#.utf8), path: "",
            rule: .invalidUTF8(offset: validPrefix.count)),
        BadInput(
            "lone high surrogate", replace: #""com.example.app""#, with: #""com\ud800""#, path: "scope",
            rule: .loneSurrogate),
        BadInput(
            "lone low surrogate", replace: #""com.example.app""#, with: #""\udc00x""#, path: "scope",
            rule: .loneSurrogate),
        BadInput(
            "version 2^53", replace: #""version":7"#, with: #""version":9007199254740992"#,
            path: "version",
            rule: .integerOutOfRange(min: 1, max: 9_007_199_254_740_991)),
        BadInput(
            "version 0", replace: #""version":7"#, with: #""version":0"#, path: "version",
            rule: .integerOutOfRange(min: 1, max: 9_007_199_254_740_991)),
        BadInput(
            "negative version", replace: #""version":7"#, with: #""version":-7"#, path: "version",
            rule: .integerOutOfRange(min: 1, max: 9_007_199_254_740_991)),
        BadInput(
            "fractional version", replace: #""version":7"#, with: #""version":7.5"#, path: "version",
            rule: .notAnInteger),
        BadInput(
            "version 7.0", replace: #""version":7"#, with: #""version":7.0"#, path: "version",
            rule: .notAnInteger),
        BadInput(
            "exponent version", replace: #""version":7"#, with: #""version":7e0"#, path: "version",
            rule: .notAnInteger),
        BadInput(
            "leading zero", replace: #""version":7"#, with: #""version":07"#, path: "version",
            rule: .leadingZero),
        BadInput(
            "version as a string", replace: #""version":7"#, with: #""version":"7""#, path: "version",
            rule: .wrongType(expected: "an integer")),
        BadInput(
            "malformed time", replace: "2026-12-01T09:00:00Z", with: "2026-12-01 09:00:00Z",
            path: "issuedAt",
            rule: .invalidTime("separators must be - T :")),
        BadInput(
            "non-UTC time", replace: "2026-12-01T09:00:00Z", with: "2026-12-01T09:00:00+01:00",
            path: "issuedAt",
            rule: .invalidTime("fractions and offsets are not allowed")),
        BadInput(
            "lowercase z", replace: "2026-12-01T09:00:00Z", with: "2026-12-01T09:00:00z",
            path: "issuedAt",
            rule: .invalidTime("must end with Z (UTC)")),
        BadInput(
            "fractional seconds", replace: "2026-12-01T09:00:00Z", with: "2026-12-01T09:00:00.5Z",
            path: "issuedAt",
            rule: .invalidTime("fractions and offsets are not allowed")),
        BadInput(
            "February 30", replace: "2026-12-01T09:00:00Z", with: "2026-02-30T09:00:00Z",
            path: "issuedAt",
            rule: .invalidTime("no such date or time")),
        BadInput(
            "hour 24", replace: "2026-12-01T09:00:00Z", with: "2026-12-01T24:00:00Z", path: "issuedAt",
            rule: .invalidTime("no such date or time")),
        BadInput(
            "expiry before issue", replace: "2026-12-31T09:00:00Z", with: "2026-11-01T09:00:00Z",
            path: "expiresAt",
            rule: .expiresNotAfterIssued),
        BadInput(
            "missing member", replace: #""rootVersion":1,"#, with: "", path: "",
            rule: .missingMember("rootVersion")),
        BadInput(
            "missing domains",
            bytes: Array(
                (#"{"type":"pinion.pins","specVersion":1,"scope":"a.b","rootVersion":1,"version":1,"#
                    + #""issuedAt":"2026-12-01T09:00:00Z","expiresAt":"2026-12-02T09:00:00Z"}"#).utf8),
            path: "", rule: .missingMember("domains")),
        BadInput(
            "unknown member", replace: #""version":7,"#, with: #""version":7,"extra":1,"#, path: "",
            rule: .unknownMember("extra")),
        BadInput(
            "unknown domain member", replace: #"{"name":"api.example.com","#,
            with: #"{"name":"api.example.com","Enforce":false,"#,
            path: "domains[0]", rule: .unknownMember("Enforce")),
        BadInput(
            "specVersion 2", replace: #""specVersion":1"#, with: #""specVersion":2"#, path: "specVersion",
            rule: .unsupportedSpecVersion(found: 2, supported: 1)),
        BadInput(
            "root type", replace: #""pinion.pins""#, with: #""pinion.root""#, path: "type",
            rule: .wrongDocumentType(expected: "pinion.pins", found: "pinion.root")),
        BadInput(
            "scope with slash", replace: #""com.example.app""#, with: #""com/example""#, path: "scope",
            rule: .invalidScope("only a-z 0-9 . _ - are allowed")),
        BadInput(
            "scope ..", replace: #""com.example.app""#, with: "\"..\"", path: "scope",
            rule: .invalidScope(".. is not allowed")),
        BadInput(
            "scope .", replace: #""com.example.app""#, with: "\".\"", path: "scope",
            rule: .invalidScope(". is not allowed")),
        BadInput(
            "empty scope", replace: #""com.example.app""#, with: #""""#, path: "scope",
            rule: .invalidScope("must be 1 to 128 characters")),
        BadInput(
            "uppercase host", replace: #""api.example.com""#, with: #""API.example.com""#,
            path: "domains[0].name",
            rule: .invalidHostName("uppercase letters; host names are listed in lowercase")),
        BadInput(
            "trailing-dot host", replace: #""api.example.com""#, with: #""api.example.com.""#,
            path: "domains[0].name",
            rule: .invalidHostName("trailing dot")),
        BadInput(
            "wildcard host", replace: #""api.example.com""#, with: #""*.example.com""#,
            path: "domains[0].name",
            rule: .invalidHostName("wildcards are not allowed; use includeSubdomains")),
        BadInput(
            "IPv4 host", replace: #""api.example.com""#, with: #""192.0.2.1""#, path: "domains[0].name",
            rule: .invalidHostName("IP addresses cannot be pinned by name")),
        BadInput(
            "IPv6 host", replace: #""api.example.com""#, with: #""2001:db8::1""#, path: "domains[0].name",
            rule: .invalidHostName("IP addresses cannot be pinned by name")),
        BadInput(
            "hexadecimal IPv4 host", replace: #""api.example.com""#, with: #""0x7f.0x1""#, path: "domains[0].name",
            rule: .invalidHostName("IP addresses cannot be pinned by name")),
        BadInput(
            "mixed IPv4 host", replace: #""api.example.com""#, with: #""127.0.0.0x1""#, path: "domains[0].name",
            rule: .invalidHostName("IP addresses cannot be pinned by name")),
        BadInput(
            "year before 1970", replace: "2026-12-01T09:00:00Z", with: "1582-10-10T00:00:00Z", path: "issuedAt",
            rule: .invalidTime("years before 1970 are not allowed")),
        BadInput(
            "year 0000", replace: "2026-12-01T09:00:00Z", with: "0000-01-01T00:00:00Z", path: "issuedAt",
            rule: .invalidTime("years before 1970 are not allowed")),
        BadInput(
            "single-label host", replace: #""api.example.com""#, with: #""localhost""#,
            path: "domains[0].name",
            rule: .invalidHostName("a single label; at least two are required")),
        BadInput(
            "U-label host", replace: #""api.example.com""#, with: #""bücher.example""#,
            path: "domains[0].name",
            rule: .invalidHostName("non-ASCII; write internationalised names as A-labels (xn--...)")),
        BadInput(
            "empty label", replace: #""api.example.com""#, with: #""api..example.com""#,
            path: "domains[0].name",
            rule: .invalidHostName("empty label")),
        BadInput(
            "31-byte pin", replace: pin1,
            with: "sha256/" + Base64.encode([UInt8](repeating: 1, count: 31)),
            path: "domains[0].pins[0]", rule: .invalidPin("not 32 bytes after base64 decoding (got 31)")),
        BadInput(
            "unpadded base64 pin", replace: pin1, with: String(pin1.dropLast()),
            path: "domains[0].pins[0]",
            rule: .invalidPin("not canonical padded base64")),
        BadInput(
            "non-canonical base64 pin", replace: pin1, with: String(pin1.dropLast(2)) + "F=",
            path: "domains[0].pins[0]",
            rule: .invalidPin("not canonical padded base64")),
        BadInput(
            "URL-safe base64 pin", replace: pin1,
            with: "sha256/" + String(repeating: "_", count: 43) + "=",
            path: "domains[0].pins[0]", rule: .invalidPin("not canonical padded base64")),
        BadInput(
            "pin without prefix", replace: pin1, with: String(pin1.dropFirst(7)),
            path: "domains[0].pins[0]",
            rule: .invalidPin("must start with sha256/")),
        BadInput(
            "duplicate pins", replace: pin2, with: pin1, path: "domains[0].pins[1]",
            rule: .duplicatePin(pin1)),
        BadInput(
            "empty pins", replace: #"["\#(pin1)","\#(pin2)"]"#, with: "[]", path: "domains[0].pins",
            rule: .empty),
        BadInput(
            "duplicate domains", replace: domain("api.example.com"),
            with: domain("api.example.com") + "," + domain("api.example.com"),
            path: "domains[1].name", rule: .duplicateDomain("api.example.com")),
        BadInput(
            "over-limit domain count", replace: domain("api.example.com"),
            with: ["a.example.com", "b.example.com", "c.example.com"].map(domain).joined(separator: ","),
            path: "domains",
            rule: .tooManyElements(limit: 2), limits: twoDomains),
        BadInput(
            "nesting deeper than 16", replace: #""version":7,"#, with: #""version":7,"x-deep":\#(deep),"#,
            path: "x-deep" + String(repeating: "[0]", count: 15), rule: .nestingTooDeep(limit: 16)),
        BadInput(
            "enforce as a string", replace: #"{"name":"api.example.com","#,
            with: #"{"name":"api.example.com","enforce":"true","#,
            path: "domains[0].enforce", rule: .wrongType(expected: "true or false")),
        BadInput(
            "bad previous hash", replace: #""version":7,"#,
            with: #""version":7,"previous":"sha256:ABC","#, path: "previous",
            rule: .invalidPreviousHash("sha256:ABC")),
        BadInput(
            "unescaped control character", replace: #""com.example.app""#, with: "\"com\u{01}\"",
            path: "scope",
            rule: .syntax(
                offset: #"{"type":"pinion.pins","specVersion":1,"scope":"com"#.utf8.count,
                expected: "an escaped control character")),
        BadInput(
            "revoked pin duplicate", replace: #""revokedPins":[]"#,
            with: #""revokedPins":["\#(pin1)","\#(pin1)"]"#,
            path: "revokedPins[1]", rule: .duplicatePin(pin1)),
    ]
}()

@Suite struct StrictParserTests {
    @Test func baseManifestIsValid() throws {
        let payload = try ManifestPayload.parse(Array(baseManifest.utf8))
        #expect(payload.version == 7)
        #expect(payload.domains.map(\.name) == ["api.example.com"])
        #expect(payload.domains[0].enforce && !payload.domains[0].includeSubdomains)
    }

    @Test(arguments: badInputs)
    func rejectsBadInput(_ input: BadInput) {
        #expect(throws: FormatError(path: input.path, rule: input.rule)) {
            try ManifestPayload.parse(input.bytes, limits: input.limits)
        }
    }

    @Test func tableCoversEveryRequiredCase() {
        #expect(badInputs.count >= 50)
    }

    @Test func extensionMembersAreIgnoredAndKept() throws {
        let json = baseManifest.replacingOccurrences(
            of: #""version":7,"#, with: #""version":7,"x-comment":"rotation 2026-12","#)
        let payload = try ManifestPayload.parse(Array(json.utf8))
        #expect(payload.extensions == [JSONObject.Member("x-comment", .string("rotation 2026-12"))])
        let again = try ManifestPayload.parse(payload.serialized())
        #expect(again == payload)
    }

    @Test func whitespaceAroundTheValueIsAllowed() throws {
        let payload = try ManifestPayload.parse(Array(("\n\t " + baseManifest + "\r\n ").utf8))
        #expect(payload.version == 7)
    }

    @Test func largestIntegerIsAccepted() throws {
        let json = baseManifest.replacingOccurrences(
            of: #""version":7"#, with: #""version":9007199254740991"#)
        #expect(try ManifestPayload.parse(Array(json.utf8)).version == 9_007_199_254_740_991)
    }

    @Test func defaultDomainLimitIsTenThousand() throws {
        let entries = (0...10_000).map { domain("d\($0).example.com") }.joined(separator: ",")
        let json = baseManifest.replacingOccurrences(of: domain("api.example.com"), with: entries)
        #expect(throws: FormatError(path: "domains", rule: .tooManyElements(limit: 10_000))) {
            try ManifestPayload.parse(Array(json.utf8))
        }
    }

    @Test func pinLimitIsEnforcedWhileParsing() throws {
        // 65 pins and then a syntax error: the limit must fire first, before the parser
        // reads the rest of the document.
        let pins = (0...64).map { "\"sha256/" + Base64.encode([UInt8](repeating: UInt8($0), count: 32)) + "\"" }
        let json =
            baseManifest.replacingOccurrences(
                of: #"["\#(pin1)","\#(pin2)"]"#, with: "[" + pins.joined(separator: ",") + "]") + " garbage"
        #expect(throws: FormatError(path: "domains[0].pins", rule: .tooManyElements(limit: 64))) {
            try ManifestPayload.parse(Array(json.utf8))
        }
    }

    @Test func controlCharactersInMessagesAreEscaped() {
        let json =
            #"{"payloadType":"application/vnd.pinion.pins+json","payload":"","signatures":[],"\u001b[2KOK: verified\u202e":1}"#
        do {
            _ = try Envelope.parse(Array(json.utf8))
            Issue.record("accepted a document with an unknown member")
        } catch {
            let message = error.description
            #expect(!message.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E })
            #expect(message.contains("\\u{1B}[2KOK: verified\\u{202E}"))
        }
    }

    @Test func terminalTextLeavesOrdinaryTextAlone() {
        #expect(TerminalText.escape("api.example.com: invalid pin: é 😀") == "api.example.com: invalid pin: é 😀")
        #expect(TerminalText.escape("a\r\nb\u{7F}\u{85}\u{2028}") == "a\\u{D}\\u{A}b\\u{7F}\\u{85}\\u{2028}")
    }

    @Test func validSurrogatePairIsDecoded() throws {
        let value = try StrictJSONParser.parse(
            Array(#"["\ud83d\ude00"]"#.utf8), limits: Limits.standard.json)
        #expect(value == .array([.string("😀")]))
    }

    @Test func serializedManifestParsesBackIdentically() throws {
        let payload = try ManifestPayload.parse(Array(baseManifest.utf8))
        #expect(try ManifestPayload.parse(payload.serialized()) == payload)
        #expect(payload.serialized() == (try ManifestPayload.parse(payload.serialized())).serialized())
    }
}
