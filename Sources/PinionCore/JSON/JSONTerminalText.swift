// JSON output made safe for a terminal: characters a terminal would act on are written as
// JSON `\u` escapes, so `--json` output cannot move the cursor, recolour or retitle.

extension JSONWriter {
    /// `write(value)` as text in which every DEL, C1 control (U+0080-U+009F, such as
    /// U+009B CSI and U+009D OSC), Unicode format character (bidirectional overrides),
    /// line or paragraph separator, private-use or unassigned scalar is a `\uXXXX` escape
    /// (RFC 8259 §7; a UTF-16 surrogate pair above U+FFFF). The result is the same JSON
    /// value: outside strings the writer only produces ASCII punctuation, digits and
    /// letters, so every such scalar is inside a string literal. C0 controls are already
    /// escaped by `quote(_:)`.
    ///
    /// - Returns: UTF-8 text, indented, ending with `\n`.
    public static func terminalSafeText(_ value: JSONValue) -> String {
        let text = String(decoding: write(value), as: UTF8.self)
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var output = ""
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                output.unicodeScalars.append(scalar)
                continue
            }
            for unit in String(scalar).utf16 {
                let hex = String(unit, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return output
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        if (0x7F...0x9F).contains(scalar.value) { return true }
        switch scalar.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate: return true
        default: return false
        }
    }
}
