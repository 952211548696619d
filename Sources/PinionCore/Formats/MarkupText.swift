// Character references for text put into generated HTML and XML: the audit and reports pages
// (`HTMLWriter`) and the Android and Apple configuration exports share one rule.

/// Escaping of text for element content and quoted attribute values.
public enum MarkupText {
    /// `text` with `&`, `<`, `>`, `"` and `'` as `&amp;`, `&lt;`, `&gt;`, `&quot;` and `&#39;`:
    /// text only, valid in HTML (Living Standard §13.1.2.6, §13.1.3) and XML 1.0 (§2.4, §4.1).
    /// Unicode scalar by scalar, so a combining mark after `<` cannot hide it.
    ///
    /// - Parameter text: any text.
    /// - Returns: the escaped text.
    public static func escape(_ text: String) -> String {
        var output = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&#39;"
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output
    }
}
