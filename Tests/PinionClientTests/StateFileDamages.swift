// The damages a state copy must be refused for (docs/DESIGN.md §6): each with the exact reason the
// codec gives, shared by the codec tests (StateStoreTests) and the copy tests (StateCopiesTests).

import PinionCore
import PinionCrypto
import PinionLinux
import Testing

private let scope = "com.example.app"

/// The JSON object of a state file, to edit in tests.
func stateObject(_ bytes: [UInt8]) throws -> JSONObject {
    guard case .object(let object) = try StrictJSONParser.parse(bytes, limits: Limits.standard.json) else {
        throw StateTestFailure("not an object")
    }
    return object
}

/// Writes `object` with a correct `contentSHA256` (the documented checksum: SHA-256 of the
/// document without that member as JSONWriter writes it), so schema rules are reached.
func resealedState(_ object: JSONObject) -> [UInt8] {
    var content = JSONObject(object.members.filter { $0.name != "contentSHA256" })
    let digest = Hex.encode(SodiumSHA256().sha256(JSONWriter.write(.object(content))))
    content.set("contentSHA256", .string(digest))
    return JSONWriter.write(.object(content))
}

struct StateTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One way to damage a state copy, and the reason the codec must give (nil: any reason).
struct StateFileDamage: Sendable, CustomTestStringConvertible {
    let name: String
    let reason: StateError?
    let apply: @Sendable ([UInt8]) throws -> [UInt8]

    var testDescription: String { name }

    init(_ name: String, reason: StateError? = nil, _ apply: @escaping @Sendable ([UInt8]) throws -> [UInt8]) {
        self.name = name
        self.reason = reason
        self.apply = apply
    }
}

func corruptCopy(_ path: String, _ rule: FormatRule) -> StateError {
    .corrupt(FormatError(file: StateStore.copyFileNames[0], path: path, rule: rule))
}

private func replacing(_ old: String, _ new: String) -> @Sendable ([UInt8]) throws -> [UInt8] {
    { bytes in
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains(old) else { throw StateTestFailure("fixture text not found: \(old)") }
        return Array(text.replacingOccurrences(of: old, with: new).utf8)
    }
}

private func editing(_ edit: @escaping @Sendable (inout JSONObject) -> Void) -> @Sendable ([UInt8]) throws -> [UInt8] {
    { bytes in
        var value = try stateObject(bytes)
        edit(&value)
        return resealedState(value)
    }
}

let stateFileDamages: [StateFileDamage] = [
    StateFileDamage("empty file") { _ in [] },
    StateFileDamage("binary garbage") { _ in [0xFF, 0xFE, 0x00, 0x13, 0x37, 0xC0, 0x80] },
    StateFileDamage("NUL bytes (a zero-filled block)") { bytes in [UInt8](repeating: 0, count: bytes.count) },
    StateFileDamage("text garbage") { _ in Array("this is not a state file\n".utf8) },
    StateFileDamage("a JSON array", reason: corruptCopy("", .wrongType(expected: "an object"))) { _ in Array("[]".utf8)
    },
    StateFileDamage(
        "valid JSON of another type (a manifest payload)",
        reason: corruptCopy("type", .wrongDocumentType(expected: "pinion.client-state", found: "pinion.pins"))
    ) { _ in
        Array(#"{"type":"pinion.pins","specVersion":1,"scope":"com.example.app","domains":[]}"#.utf8)
    },
    StateFileDamage(
        "the enforced-domains file in place of the state",
        reason: corruptCopy(
            "type", .wrongDocumentType(expected: "pinion.client-state", found: "pinion.enforced-domains"))
    ) { _ in
        Array(
            resealedState(
                JSONObject([
                    .init("type", .string("pinion.enforced-domains")), .init("formatVersion", .number("1")),
                    .init("scope", .string(scope)), .init("stateCommitted", .bool(true)), .init("names", .array([])),
                ])))
    },
    StateFileDamage("an unknown member", reason: corruptCopy("", .unknownMember("extra"))) {
        try editing { $0.set("extra", .bool(true)) }($0)
    },
    StateFileDamage("an x- member (only Pinion writes this file)", reason: corruptCopy("", .unknownMember("x-note"))) {
        try editing { $0.set("x-note", .string("hello")) }($0)
    },
    StateFileDamage("an unknown member in floor", reason: corruptCopy("floor", .unknownMember("epoch"))) {
        try editing {
            $0.set(
                "floor",
                .object(
                    JSONObject([
                        .init("rootVersion", .number("3")), .init("version", .number("7")),
                        .init("payloadSHA256", .null), .init("epoch", .number("1")),
                    ])))
        }($0)
    },
    StateFileDamage("a missing member", reason: corruptCopy("", .missingMember("manifestETag"))) {
        try editing { value in value = JSONObject(value.members.filter { $0.name != "manifestETag" }) }($0)
    },
    StateFileDamage(
        "a newer formatVersion",
        reason: .unsupportedFormatVersion(file: StateStore.copyFileNames[0], found: 4, supported: 3)
    ) { try editing { $0.set("formatVersion", .number("4")) }($0) },
    StateFileDamage(
        "formatVersion 2 with the log members (which it did not have)",
        reason: corruptCopy("", .unknownMember("logCheckpoint"))
    ) { try editing { $0.set("formatVersion", .number("2")) }($0) },
    StateFileDamage("no logCheckpoint member", reason: corruptCopy("", .missingMember("logCheckpoint"))) {
        try editing { value in value = JSONObject(value.members.filter { $0.name != "logCheckpoint" }) }($0)
    },
    StateFileDamage(
        "a logCheckpoint that is not an object",
        reason: corruptCopy("logCheckpoint", .wrongType(expected: "an object or null"))
    ) { try editing { $0.set("logCheckpoint", .string("checkpoint")) }($0) },
    StateFileDamage(
        "a logCheckpoint note that is not a signed checkpoint note",
        reason: corruptCopy("logCheckpoint.note", .wrongType(expected: "a C2SP signed checkpoint note"))
    ) {
        try editing {
            $0.set(
                "logCheckpoint",
                .object(
                    JSONObject([
                        .init("note", .string(Base64.encode(Array("not a note\n".utf8)))),
                        .init("quorumTime", .number("5")),
                    ])))
        }($0)
    },
    StateFileDamage(
        "formatVersion 1 with the floor's payload hash (a member it did not have)",
        reason: corruptCopy("floor", .unknownMember("payloadSHA256"))
    ) { try editing { $0.set("formatVersion", .number("1")) }($0) },
    StateFileDamage(
        "a floor payload hash that is not 64 lowercase hex characters",
        reason: corruptCopy("floor.payloadSHA256", .wrongType(expected: "64 lowercase hex characters"))
    ) {
        try editing {
            $0.set(
                "floor",
                .object(
                    JSONObject([
                        .init("rootVersion", .number("3")), .init("version", .number("7")),
                        .init("payloadSHA256", .string(String(repeating: "AB", count: 32))),
                    ])))
        }($0)
    },
    StateFileDamage(
        "white space changed outside the values (the checksum covers every byte)",
        reason: .checksumMismatch(file: StateStore.copyFileNames[0]), replacing("\"scope\": ", "\"scope\":  ")),
    StateFileDamage(
        "the floor edited down without the checksum (rollback by editing the file)",
        reason: .checksumMismatch(file: StateStore.copyFileNames[0]), replacing("\"version\": 7", "\"version\": 6")),
    StateFileDamage(
        "a domain name removed without the checksum",
        reason: .checksumMismatch(file: StateStore.copyFileNames[0]),
        replacing("\"api.example.com\",\n", "")),
    StateFileDamage("the checksum member removed", reason: corruptCopy("", .missingMember("contentSHA256"))) {
        let value = try stateObject($0)
        return JSONWriter.write(.object(JSONObject(value.members.filter { $0.name != "contentSHA256" })))
    },
    StateFileDamage(
        "an invalid domain name", reason: corruptCopy("manifestDomainNames[0]", .invalidHostName("trailing dot"))
    ) {
        try editing { $0.set("manifestDomainNames", .array([.string("api.example.com.")])) }($0)
    },
    StateFileDamage("an envelope that is not canonical base64", reason: corruptCopy("manifest", .invalidBase64)) {
        try editing { $0.set("manifest", .string("e30")) }($0)
    },
    StateFileDamage(
        "a floor of zero", reason: corruptCopy("floor.version", .integerOutOfRange(min: 1, max: Limits.maxInteger))
    ) {
        try editing {
            $0.set(
                "floor",
                .object(JSONObject([.init("rootVersion", .number("3")), .init("version", .number("0"))])))
        }($0)
    },
    StateFileDamage(
        "an ETag with CR LF (header injection on the next request)",
        reason: corruptCopy("manifestETag", .wrongType(expected: "an entity tag without control characters"))
    ) { try editing { $0.set("manifestETag", .string("\"x\"\r\nX-Evil: 1")) }($0) },
    StateFileDamage("a duplicate member", reason: corruptCopy("", .duplicateKey("scope"))) {
        try replacing("\"scope\": \"com.example.app\",", "\"scope\": \"com.example.app\", \"scope\": \"x\",")($0)
    },
    StateFileDamage("bytes after the document", reason: nil) { $0 + Array("{}".utf8) },
    StateFileDamage(
        "over the size limit (refused before parsing)",
        reason: corruptCopy("", .tooLarge(bytes: StateCodec.maxStateBytes + 1, limit: StateCodec.maxStateBytes))
    ) { _ in [UInt8](repeating: UInt8(ascii: " "), count: StateCodec.maxStateBytes + 1) },
]
