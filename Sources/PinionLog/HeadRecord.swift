// The head record (docs/DESIGN.md §12): the log entry one publish step appends, as fixed text bytes.

import PinionCore

/// Why a head record was refused.
public enum HeadRecordError: Error, Equatable, Sendable, CustomStringConvertible {
    /// More than `HeadRecord.maxBytes` bytes.
    case tooLarge
    /// The bytes are not exactly the record's five lines; carries the reason.
    case malformed(String)

    public var description: String {
        switch self {
        case .tooLarge: return "a head record is at most \(HeadRecord.maxBytes) bytes"
        case .malformed(let reason): return "malformed head record: \(reason)"
        }
    }
}

/// The state of a scope after one publish step, the only kind of log entry.
///
/// Its bytes are exactly five lines, each ending in one newline (0x0A), ASCII only:
///
///     pinion.head/v1
///     scope <scope>
///     sequence <n>
///     root <version> <payload SHA-256, 64 lowercase hex>
///     manifest <rootVersion> <version> <payload SHA-256, 64 lowercase hex>
///
/// Numbers are decimal without leading zeroes, at most 2^53 - 1; versions start at 1.
/// `sequence` is the zero-based position of the step's entry in index.json's `manifests`,
/// which is also the entry's index in the log. `root` is the newest root after the step,
/// `manifest` the latest manifest (its `rootVersion` never above the newest root's version).
/// docs/TRANSPARENCY.md carries a test vector.
public struct HeadRecord: Sendable, Equatable, Hashable {
    /// The first line, which versions the format.
    public static let tag = "pinion.head/v1"
    /// Largest head record, in bytes (a 128-character scope gives 415).
    public static let maxBytes = 512

    /// The scope the step published (`v1/{scope}/`).
    public let scope: String
    /// The step's zero-based position in index.json, and the entry's log index.
    public let sequence: Int64
    /// The newest root's version.
    public let rootVersion: Int64
    /// SHA-256 of the newest root's payload bytes, 32 bytes.
    public let rootPayloadSHA256: [UInt8]
    /// The latest manifest's rootVersion.
    public let manifestRootVersion: Int64
    /// The latest manifest's version.
    public let manifestVersion: Int64
    /// SHA-256 of the latest manifest's payload bytes, 32 bytes.
    public let manifestPayloadSHA256: [UInt8]

    /// - Throws: `HeadRecordError.malformed` for an invalid scope, a number out of range,
    ///   a hash that is not 32 bytes, or a manifest rootVersion above the root's version.
    public init(
        scope: String, sequence: Int64, rootVersion: Int64, rootPayloadSHA256: [UInt8], manifestRootVersion: Int64,
        manifestVersion: Int64, manifestPayloadSHA256: [UInt8]
    ) throws(HeadRecordError) {
        do { try Scope.validate(scope) } catch { throw .malformed("scope: \(error)") }
        guard (0...Limits.maxInteger).contains(sequence) else { throw .malformed("sequence out of range") }
        for version in [rootVersion, manifestRootVersion, manifestVersion]
        where !(1...Limits.maxInteger).contains(version) {
            throw .malformed("version \(version) out of range")
        }
        guard manifestRootVersion <= rootVersion else {
            throw .malformed("the manifest's rootVersion is above the newest root's version")
        }
        guard rootPayloadSHA256.count == 32, manifestPayloadSHA256.count == 32 else {
            throw .malformed("a payload SHA-256 is 32 bytes")
        }
        self.scope = scope
        self.sequence = sequence
        self.rootVersion = rootVersion
        self.rootPayloadSHA256 = rootPayloadSHA256
        self.manifestRootVersion = manifestRootVersion
        self.manifestVersion = manifestVersion
        self.manifestPayloadSHA256 = manifestPayloadSHA256
    }

    /// The record's exact bytes (the log entry).
    public var bytes: [UInt8] {
        Array(
            """
            \(HeadRecord.tag)
            scope \(scope)
            sequence \(sequence)
            root \(rootVersion) \(Hex.encode(rootPayloadSHA256))
            manifest \(manifestRootVersion) \(manifestVersion) \(Hex.encode(manifestPayloadSHA256))

            """.utf8)
    }

    /// Parses a head record strictly: it must be byte for byte what `bytes` would give.
    ///
    /// - Throws: `HeadRecordError`.
    public static func parse(_ bytes: [UInt8]) throws(HeadRecordError) -> HeadRecord {
        guard bytes.count <= maxBytes else { throw .tooLarge }
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) || $0 == 0x0A }) else {
            throw .malformed("only printable ASCII and newlines")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasSuffix("\n") else { throw .malformed("does not end in a newline") }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        guard lines.count == 5, lines[0] == tag else { throw .malformed("expected five lines starting \(tag)") }
        let scope = try field(lines[1], "scope", count: 1)[0]
        let sequence = try number(try field(lines[2], "sequence", count: 1)[0])
        let root = try field(lines[3], "root", count: 2)
        let manifest = try field(lines[4], "manifest", count: 3)
        let record = try HeadRecord(
            scope: scope, sequence: sequence, rootVersion: try number(root[0]), rootPayloadSHA256: try hash(root[1]),
            manifestRootVersion: try number(manifest[0]), manifestVersion: try number(manifest[1]),
            manifestPayloadSHA256: try hash(manifest[2]))
        guard record.bytes == bytes else { throw .malformed("not in canonical form") }
        return record
    }

    private static func field(_ line: String, _ name: String, count: Int) throws(HeadRecordError) -> [String] {
        let parts = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == count + 1, parts[0] == name else { throw .malformed("expected '\(name)' line") }
        return Array(parts[1...])
    }

    private static func number(_ text: String) throws(HeadRecordError) -> Int64 {
        guard !text.isEmpty, text.utf8.count <= 16, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            text == "0" || !text.hasPrefix("0"), let value = Int64(text)
        else { throw .malformed("'\(text)' is not a decimal without leading zeroes") }
        return value
    }

    private static func hash(_ text: String) throws(HeadRecordError) -> [UInt8] {
        guard text.utf8.count == 64, let bytes = Hex.decodeLowercase(text) else {
            throw .malformed("'\(text)' is not 64 lowercase hex digits")
        }
        return bytes
    }
}
