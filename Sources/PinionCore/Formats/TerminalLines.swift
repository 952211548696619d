// Escaping for multi-line output bound for a terminal: every line escaped, the line breaks kept.

extension TerminalText {
    /// `escape(_:)` applied to each line of `text`; the `\n` between lines are kept, so a
    /// report of several lines still reads as lines while a carriage return, an escape
    /// sequence or a C1 control (U+009B CSI, U+009D OSC) inside a line is shown as
    /// `\u{XXXX}`.
    ///
    /// - Returns: `text`, escaped line by line; unchanged when it holds nothing to escape.
    public static func escapeLines(_ text: String) -> String {
        // The common case, plain text, is scanned once without building anything.
        guard text.unicodeScalars.contains(where: mayNeedEscape) else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { escape(String($0)) }.joined(
            separator: "\n")
    }

    /// True for every scalar `escape(_:)` may replace, except the line feed: controls, DEL,
    /// and anything outside ASCII that is not a plain letter, mark, number, punctuation,
    /// symbol or space (the exact rule is then `escape`'s).
    private static func mayNeedEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A: return false
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x20...0x7E: return false
        default:
            switch scalar.properties.generalCategory {
            case .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate: return true
            default: return false
            }
        }
    }
}
