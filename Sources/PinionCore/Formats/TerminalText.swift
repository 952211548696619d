// Makes untrusted text safe to print: documents may come from a hostile publisher, and
// their member names and values end up in error messages on an operator's terminal.

/// Escaping of control and formatting characters in text bound for a terminal or a log.
public enum TerminalText {
    /// Replaces C0 and C1 controls, DEL, and Unicode format, line- and paragraph-separator
    /// characters (bidirectional overrides among them) with `\u{XXXX}`, so that a message
    /// cannot move the cursor, recolour, hide or reorder what is shown.
    ///
    /// - Returns: `text`, escaped; unchanged when it holds none of those characters.
    public static func escape(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var output = ""
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                output += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        default: break
        }
        switch scalar.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate: return true
        default: return false
        }
    }
}
