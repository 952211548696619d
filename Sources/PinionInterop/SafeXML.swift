// A small element tree read from untrusted XML with Foundation's XMLParser: UTF-8 only, no
// DTD (so no external entities and no entity expansion), bounded size, depth and count.

import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// One XML element: name, attributes, the character data directly inside it, children and
/// the line it starts on.
public struct XMLNode: Sendable, Equatable {
    /// The element name as written (with any prefix).
    public var name: String
    /// Attributes by name as written.
    public var attributes: [String: String]
    /// Character data and CDATA directly inside this element, concatenated.
    public var text: String
    /// Child elements in document order.
    public var children: [XMLNode]
    /// 1-based line of the start tag.
    public var line: Int

    /// `line N`, for messages.
    public var location: String { "line \(line)" }
}

/// Limits on untrusted XML (bytes, nesting, elements).
public struct XMLLimits: Sendable, Equatable {
    /// Largest input, in bytes.
    public var maxBytes: Int
    /// Deepest element nesting (the root element is depth 1).
    public var maxDepth: Int
    /// Most elements in one document.
    public var maxElements: Int

    /// - Parameters:
    ///   - maxBytes: largest input in bytes (default 1 MiB).
    ///   - maxDepth: deepest nesting (default 32).
    ///   - maxElements: most elements (default 100,000).
    public init(maxBytes: Int = 1 << 20, maxDepth: Int = 32, maxElements: Int = 100_000) {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
        self.maxElements = maxElements
    }
}

/// Reads untrusted XML into an `XMLNode` tree.
public enum SafeXML {
    /// Parses `bytes` after refusing what XML parsers are attacked with.
    ///
    /// Refused before parsing: more than `limits.maxBytes` bytes; UTF-16 or UTF-32 byte order
    /// marks, an `encoding` other than UTF-8 or invalid UTF-8 (a scan for declarations is only
    /// sound on the bytes the parser reads); any `<!DOCTYPE` or `<!ENTITY`, so external
    /// entities (XXE) and entity expansion ("billion laughs") never reach the parser.
    /// Refused while parsing: nesting deeper than `limits.maxDepth`, more than
    /// `limits.maxElements` elements, and every well-formedness error.
    ///
    /// - Parameters:
    ///   - bytes: the document.
    ///   - limits: size, depth and element limits.
    /// - Returns: the root element.
    /// - Throws: `InteropError` with code `.tooLarge`, `.notUTF8`, `.documentTypeRefused`,
    ///   `.tooDeep`, `.tooManyElements` or `.malformed` (with the parser's line).
    public static func parse(_ bytes: [UInt8], limits: XMLLimits = XMLLimits()) throws(InteropError) -> XMLNode {
        guard bytes.count <= limits.maxBytes else {
            throw InteropError(.tooLarge, "larger than the limit of \(limits.maxBytes) bytes")
        }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0, 0])
            || (bytes.count >= 2 && (bytes[0] == 0 || bytes[1] == 0))
        {
            throw InteropError(.notUTF8, "UTF-16 or UTF-32 text; only UTF-8 is accepted")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw InteropError(.notUTF8, "not valid UTF-8")
        }
        if let encoding = declaredEncoding(text), !["utf-8", "utf8", "us-ascii"].contains(encoding.lowercased()) {
            throw InteropError(.notUTF8, "declares encoding \"\(encoding)\"; only UTF-8 is accepted")
        }
        for marker in ["<!DOCTYPE", "<!ENTITY"] where text.contains(marker) {
            throw InteropError(
                .documentTypeRefused,
                "\(marker) found: document type and entity declarations are refused (external entities, entity expansion)"
            )
        }
        let parser = XMLParser(data: Data(bytes))
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        parser.shouldReportNamespacePrefixes = false
        let builder = TreeBuilder(limits: limits)
        parser.delegate = builder
        let succeeded = parser.parse()
        if let failure = builder.failure { throw failure }
        // On Linux parse() can return true while parserError is set (mismatched tags).
        if !succeeded || parser.parserError != nil {
            let code = (parser.parserError as NSError?)?.code ?? -1
            throw InteropError(
                .malformed, at: "line \(parser.lineNumber)", "not well-formed XML (XMLParser error \(code))")
        }
        guard let root = builder.root else { throw InteropError(.malformed, "no root element") }
        return root
    }

    /// The `encoding` pseudo-attribute of an XML declaration, if any.
    static func declaredEncoding(_ text: String) -> String? {
        var body = Substring(text)
        if body.hasPrefix("\u{FEFF}") { body = body.dropFirst() }
        guard body.hasPrefix("<?xml"), let end = body.range(of: "?>") else { return nil }
        let declaration = body[..<end.lowerBound]
        guard let key = declaration.range(of: "encoding") else { return nil }
        // XML allows any white space (also CR and LF) around "=": an encoding this cannot
        // read is reported as unreadable, never taken as UTF-8 (fail closed).
        let rest = declaration[key.upperBound...].drop(while: { $0.isWhitespace || $0 == "=" })
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return "(unreadable)" }
        let value = rest.dropFirst().prefix(while: { $0 != quote })
        return String(value)
    }
}

/// Builds the tree from XMLParser callbacks and aborts on the first limit exceeded.
private final class TreeBuilder: NSObject, XMLParserDelegate {
    let limits: XMLLimits
    var stack: [XMLNode] = []
    var root: XMLNode?
    var count = 0
    var failure: InteropError?

    init(limits: XMLLimits) { self.limits = limits }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        guard failure == nil else { return }
        count += 1
        if stack.count + 1 > limits.maxDepth {
            fail(
                parser,
                InteropError(
                    .tooDeep, at: "line \(parser.lineNumber)", "elements nest deeper than \(limits.maxDepth) levels"))
            return
        }
        if count > limits.maxElements {
            fail(
                parser,
                InteropError(
                    .tooManyElements, at: "line \(parser.lineNumber)", "more than \(limits.maxElements) elements"))
            return
        }
        stack.append(
            XMLNode(name: elementName, attributes: attributes, text: "", children: [], line: parser.lineNumber))
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        guard failure == nil, let node = stack.popLast() else { return }
        if stack.isEmpty {
            root = node
        } else {
            stack[stack.count - 1].children.append(node)
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard failure == nil, !stack.isEmpty else { return }
        stack[stack.count - 1].text += string
        if stack[stack.count - 1].text.utf8.count > limits.maxBytes {
            fail(parser, InteropError(.tooLarge, at: "line \(parser.lineNumber)", "character data too large"))
        }
    }

    func parser(_ parser: XMLParser, foundCDATA block: Data) {
        self.parser(parser, foundCharacters: String(decoding: block, as: UTF8.self))
    }

    func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
        fail(
            parser,
            InteropError(.documentTypeRefused, at: "line \(parser.lineNumber)", "external entity \(name) refused"))
        return nil
    }

    private func fail(_ parser: XMLParser, _ error: InteropError) {
        if failure == nil { failure = error }
        parser.abortParsing()
    }
}
