// Escaping for multi-line output bound for a terminal: every line escaped, the line breaks kept.

extension TerminalText {
    /// `escape(_:)` applied to each line of `text`; the `\n` between lines are kept, so a
    /// report of several lines still reads as lines while a carriage return, an escape
    /// sequence or a C1 control (U+009B CSI, U+009D OSC) inside a line is shown as
    /// `\u{XXXX}`.
    ///
    /// - Returns: `text`, escaped line by line; unchanged when it holds nothing to escape.
    public static func escapeLines(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 != "\n" && escape(String($0)) != String($0) }) else {
            return text
        }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { escape(String($0)) }.joined(
            separator: "\n")
    }
}
