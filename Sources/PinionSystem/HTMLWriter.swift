// A small escaping HTML writer for the self-contained pages of `pinion audit --html` and
// `pinion reports --html`. Our own because Debian's Swift world ships no HTML templating
// library, and the pages need only elements, text and attributes: tag and attribute names
// are compile-time constants, and every value (most of it attacker-supplied: host names,
// app versions, witness names, log origins) is stripped of control and bidirectional
// characters as terminal output is (`TerminalText`), capped, and escaped.

import PinionCore

/// Builds one HTML document whose only markup comes from string literals: text and attribute
/// values are always escaped, so untrusted input cannot open an element, end the style sheet
/// or break out of an attribute.
public struct HTMLWriter: Sendable {
    /// The longest value shown, in Unicode scalars: a longer one is cut and says how much
    /// was left out (a client may send a 100 KB `app-version`).
    public static let maxValueScalars = 300

    /// The markup written so far (the body's content).
    public private(set) var markup = ""

    /// An empty writer.
    public init() {}

    /// Untrusted text as shown: control, format (bidirectional overrides among them) and
    /// separator characters spelt `\u{XXXX}` as on a terminal, then cut to
    /// `maxValueScalars` with a note of how many scalars were left out. Not yet escaped.
    ///
    /// - Parameter text: any text.
    /// - Returns: the text to show.
    public static func shown(_ text: String) -> String {
        let visible = TerminalText.escape(text)
        let scalars = visible.unicodeScalars
        guard scalars.count > maxValueScalars else { return visible }
        var cut = String.UnicodeScalarView()
        cut.append(contentsOf: scalars.prefix(maxValueScalars))
        return String(cut) + "\u{2026} (\(scalars.count - maxValueScalars) more characters not shown)"
    }

    /// `shown(text)` escaped for element content and quoted attribute values: `&`, `<`, `>`,
    /// `"` and `'` become character references (HTML Living Standard §13.1.2.6, §13.1.3).
    ///
    /// - Parameter text: any text.
    /// - Returns: markup that is text only.
    public static func escape(_ text: String) -> String { MarkupText.escape(shown(text)) }

    /// Appends escaped text.
    public mutating func text(_ text: String) { markup += Self.escape(text) }

    /// Appends `<tag attributes>`; each attribute value is escaped and double-quoted.
    ///
    /// - Parameters:
    ///   - tag: an element name (a literal).
    ///   - attributes: name (a literal) and value pairs.
    public mutating func open(_ tag: StaticString, _ attributes: [(StaticString, String)] = []) {
        markup += "<\(tag)"
        for (name, value) in attributes { markup += " \(name)=\"\(Self.escape(value))\"" }
        markup += ">"
    }

    /// Appends `</tag>`.
    public mutating func close(_ tag: StaticString) { markup += "</\(tag)>" }

    /// Appends a void or self-closed element (`<rect ... />` in SVG, `<br>`).
    ///
    /// - Parameters:
    ///   - tag: an element name (a literal).
    ///   - attributes: name (a literal) and value pairs, escaped.
    public mutating func empty(_ tag: StaticString, _ attributes: [(StaticString, String)] = []) {
        markup += "<\(tag)"
        for (name, value) in attributes { markup += " \(name)=\"\(Self.escape(value))\"" }
        markup += " />"
    }

    /// Appends `<tag>text</tag>`.
    public mutating func element(_ tag: StaticString, _ text: String) { element(tag, [], text) }

    /// Appends `<tag attributes>text</tag>`.
    public mutating func element(_ tag: StaticString, _ attributes: [(StaticString, String)], _ text: String) {
        open(tag, attributes)
        self.text(text)
        close(tag)
    }

    /// Appends `<tag attributes>`, what `content` writes, then `</tag>`.
    public mutating func element(
        _ tag: StaticString, _ attributes: [(StaticString, String)] = [], content: (inout HTMLWriter) -> Void
    ) {
        open(tag, attributes)
        content(&self)
        close(tag)
    }

    /// A whole document: charset, a Content-Security-Policy that forbids every fetch and
    /// script and allows only the one style sheet given (by its SHA-256, CSP Level 3 §8.3),
    /// the title, the style sheet, and `body` as the body's content.
    ///
    /// - Parameters:
    ///   - title: the page title (untrusted text allowed).
    ///   - style: the page's style sheet (a literal: it is not escaped).
    ///   - body: the body's content.
    ///   - hasher: SHA-256 for the style sheet's hash source.
    /// - Returns: the document as UTF-8 bytes.
    public static func document(title: String, style: StaticString, body: HTMLWriter, hasher: any SHA256Hasher)
        -> [UInt8]
    {
        let styleText = "\(style)"
        let styleHash = Base64.encode(hasher.sha256(Array(styleText.utf8)))
        var head = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        head +=
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'sha256-\(styleHash)'\">\n"
        head += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        head += "<title>\(escape(title))</title>\n<style>\(styleText)</style>\n</head>\n<body>\n"
        return Array((head + body.markup + "\n</body>\n</html>\n").utf8)
    }
}
