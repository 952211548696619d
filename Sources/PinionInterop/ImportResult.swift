// What an importer produced: manifest domain entries and notes on what was changed or left out.

import PinionCore

/// A remark about one part of an imported file.
public struct ImportNote: Sendable, Equatable, CustomStringConvertible {
    /// What kind of remark it is.
    public enum Kind: String, Sendable, Equatable {
        /// Imported after a change of spelling (case, padding, whitespace).
        case normalised
        /// A setting Pinion cannot express; the import goes on without it.
        case notRepresentable
        /// A part left out on purpose (debug overrides, trust anchors, unpinned domains).
        case skipped
        /// An element or key the importer does not know; tolerated and left out.
        case unknown
        /// A value that could not be imported (a bad pin, a bad host name).
        case rejected
        /// Something worth knowing before signing (a single pin, a looser rule).
        case warning
    }

    /// What kind of remark it is.
    public var kind: Kind
    /// Where in the file: `line 12` or a key path.
    public var location: String
    /// The remark.
    public var message: String

    /// - Parameters:
    ///   - kind: the kind of remark.
    ///   - location: where in the file.
    ///   - message: the remark.
    public init(_ kind: Kind, at location: String, _ message: String) {
        self.kind = kind
        self.location = location
        self.message = message
    }

    /// `location: [kind] message`.
    public var description: String {
        let label: String
        switch kind {
        case .normalised: label = "normalised"
        case .notRepresentable: label = "not representable"
        case .skipped: label = "skipped"
        case .unknown: label = "unknown, ignored"
        case .rejected: label = "not imported"
        case .warning: label = "warning"
        }
        return "\(location): \(label): \(message)"
    }
}

/// The outcome of an import: the domain entries, in file order, and the notes.
public struct ImportResult: Sendable, Equatable {
    /// Domain entries that pass the manifest's domain rules (docs/DESIGN.md §5).
    public var domains: [ManifestPayload.Domain]
    /// Everything changed, left out or worth a look, in file order.
    public var notes: [ImportNote]

    /// - Parameters:
    ///   - domains: the imported entries.
    ///   - notes: the remarks.
    public init(domains: [ManifestPayload.Domain], notes: [ImportNote]) {
        self.domains = domains
        self.notes = notes
    }
}

/// Spellings of pins and host names found in other platforms' files.
enum ForeignText {
    /// A base64 SHA-256 digest as Android, Apple and TrustKit write it: canonical padded
    /// base64, or the same without `=` padding; whitespace around it is ignored.
    ///
    /// - Returns: the pin and whether the spelling was changed, or nil when it is not 32
    ///   bytes of base64.
    static func pin(_ text: String) -> (pin: Pin, normalised: Bool)? {
        let trimmed = text.trimmingASCIIWhitespace()
        var candidate = trimmed
        if candidate.utf8.count % 4 != 0 {
            candidate += String(repeating: "=", count: 4 - candidate.utf8.count % 4)
        }
        guard let digest = Base64.decodeCanonical(candidate), digest.count == 32, let pin = try? Pin(digest: digest)
        else { return nil }
        return (pin, candidate != text)
    }

    /// A host name in the manifest's spelling: whitespace trimmed, ASCII lowercase, one
    /// trailing dot removed, then `HostName.validate`.
    ///
    /// - Returns: the name and whether the spelling was changed.
    /// - Throws: the `FormatRule` of `HostName.validate`.
    static func hostName(_ text: String) throws(FormatRule) -> (name: String, normalised: Bool) {
        var name = text.trimmingASCIIWhitespace()
        name = String(
            decoding: name.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
        if name.hasSuffix("."), !name.hasSuffix("..") { name.removeLast() }
        try HostName.validate(name)
        return (name, name != text)
    }

    /// Text safe to print in a note: at most 80 characters, controls escaped.
    static func quoted(_ text: String) -> String {
        let short = text.count > 80 ? String(text.prefix(80)) + "..." : text
        return "\"" + TerminalText.escape(short) + "\""
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs, carriage returns and line feeds.
    func trimmingASCIIWhitespace() -> String {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        let bytes = Array(utf8)
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
