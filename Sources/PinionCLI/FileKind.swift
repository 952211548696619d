// What a file looks like, for messages that refuse the wrong kind of file: the file, what
// was expected, and what it seems to be instead.

enum FileKind {
    /// A short description of what `bytes` look like: `PEM (BEGIN CERTIFICATE)`, `JSON`,
    /// `XML`, `a binary plist`, `empty`, `text` or `binary data (DER?)`.
    static func guess(_ bytes: [UInt8]) -> String {
        if bytes.isEmpty { return "empty" }
        if bytes.starts(with: Array("bplist".utf8)) { return "a binary plist" }
        let head = String(decoding: bytes.prefix(512), as: UTF8.self)
        if let begin = head.range(of: "-----BEGIN ") {
            let label = head[begin.upperBound...].prefix { $0 != "-" && $0 != "\n" }
            return "PEM (BEGIN \(TerminalSafe.short(String(label))))"
        }
        let first = head.unicodeScalars.first { !$0.properties.isWhitespace && $0 != "\u{FEFF}" }
        switch first {
        case "{", "[": return "JSON"
        case "<": return "XML"
        default: break
        }
        let printable = bytes.prefix(512).allSatisfy { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 >= 0x20 }
        return printable ? "text" : "binary data (DER?)"
    }

    /// `PATH: not <expected> (it looks like <guess>): <detail>`, or `PATH: <detail>` when
    /// the file looks like the expected kind (then the detail says what is wrong inside).
    ///
    /// - Parameters:
    ///   - looksRight: the guesses that match the expected kind (e.g. `["JSON"]`).
    static func message(
        _ path: String, expected: String, looksRight: Set<String>, bytes: [UInt8], detail: String
    ) -> String {
        let kind = guess(bytes)
        if looksRight.contains(kind) { return "\(path): \(detail)" }
        return "\(path): not \(expected) (it looks like \(kind)): \(detail)"
    }
}

/// Keeps a label from a file short and printable in a message.
private enum TerminalSafe {
    static func short(_ text: String) -> String {
        String(
            text.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }.prefix(40).map(
                Character.init))
    }
}

extension CLIError {
    /// `from(error, file:)` for a document read from `file`, saying what kind of file was
    /// expected when `bytes` are not JSON at all (a certificate given as a root, say).
    static func document(_ error: any Error, file: String, bytes: [UInt8], expected: String) -> CLIError {
        let kind = FileKind.guess(bytes)
        guard kind != "JSON" else { return from(error, file: file) }
        let plain = from(error)
        return CLIError(exitCode: plain.exitCode, "\(file): not \(expected) (it looks like \(kind)): \(plain.message)")
    }
}
