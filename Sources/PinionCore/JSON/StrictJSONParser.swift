// Strict JSON parser shared by signer, publisher, client and auditor (docs/DESIGN.md §5).
//
// Written here rather than taken from Foundation because JSONSerialization and
// JSONDecoder accept what Pinion must refuse: duplicate member names (last one wins),
// lone surrogates, and they lose the exact text of integers. The parser enforces the
// byte, depth and element limits while it reads, so hostile input cannot make it do
// unbounded work.

/// Limits the parser enforces while reading.
public struct JSONLimits: Sendable, Equatable {
    /// Largest accepted input, in bytes.
    public var maxBytes: Int
    /// Deepest accepted nesting of arrays and objects (the top-level value is depth 1).
    public var maxDepth: Int
    /// Most elements in one array and most members in one object.
    public var maxElements: Int
    /// Tighter limits for arrays held by a member of the given name (for example
    /// `"signatures": 32`), applied while the array is read.
    public var maxElementsByMember: [String: Int]

    public init(maxBytes: Int, maxDepth: Int, maxElements: Int, maxElementsByMember: [String: Int] = [:]) {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
        self.maxElements = maxElements
        self.maxElementsByMember = maxElementsByMember
    }
}

/// Parses RFC 8259 JSON strictly: valid UTF-8, no duplicate member names, no lone
/// surrogates, no leading zeros, nothing but whitespace after the value.
public enum StrictJSONParser {
    /// - Parameters:
    ///   - bytes: the document (UTF-8, no byte order mark).
    ///   - limits: byte, depth and element limits, checked while parsing.
    /// - Returns: the value tree.
    /// - Throws: `FormatError` with the path of the offending value and the rule broken.
    public static func parse(_ bytes: [UInt8], limits: JSONLimits) throws(FormatError) -> JSONValue {
        if bytes.count > limits.maxBytes {
            throw FormatError(path: "", rule: .tooLarge(bytes: bytes.count, limit: limits.maxBytes))
        }
        if let offset = firstInvalidUTF8Offset(bytes) {
            throw FormatError(path: "", rule: .invalidUTF8(offset: offset))
        }
        var parser = Parser(bytes: bytes, limits: limits)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 1)
        parser.skipWhitespace()
        if parser.index < bytes.count {
            throw FormatError(path: "", rule: .trailingBytes(offset: parser.index))
        }
        return value
    }

    /// Offset of the first byte that breaks UTF-8 well-formedness (RFC 3629), or nil.
    static func firstInvalidUTF8Offset(_ bytes: [UInt8]) -> Int? {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                upper = 0x9F  // excludes encoded surrogates
            case 0xF0:
                length = 4
                lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                upper = 0x8F
            default: return index
            }
            if index + length > count { return index }
            let second = bytes[index + 1]
            if second < lower || second > upper { return index }
            var offset = 2
            while offset < length {
                if bytes[index + offset] & 0xC0 != 0x80 { return index }
                offset += 1
            }
            index += length
        }
        return nil
    }
}

private struct Parser {
    /// Objects with fewer members than this are checked for duplicate names by a scan.
    static let linearScanMembers = 16

    let bytes: [UInt8]
    let limits: JSONLimits
    var index = 0
    /// Path components for error messages, kept as a stack while descending.
    var path: [PathComponent] = []

    enum PathComponent {
        case member(String)
        case element(Int)
    }

    init(bytes: [UInt8], limits: JSONLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    var pathText: String { Parser.render(path) }

    static func render(_ path: [PathComponent]) -> String {
        var text = ""
        for component in path {
            switch component {
            case .member(let name):
                if !text.isEmpty { text += "." }
                text += name
            case .element(let index):
                text += "[\(index)]"
            }
        }
        return text
    }

    func fail(_ rule: FormatRule) -> FormatError {
        FormatError(path: pathText, rule: rule)
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    func syntax(_ expected: String) -> FormatError {
        fail(.syntax(offset: index, expected: expected))
    }

    mutating func parseValue(depth: Int) throws(FormatError) -> JSONValue {
        guard index < bytes.count else { throw syntax("a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try parseNumber())
        default:
            throw syntax("a value")
        }
    }

    mutating func expectLiteral(_ literal: String) throws(FormatError) {
        let expected = Array(literal.utf8)
        guard index + expected.count <= bytes.count,
            Array(bytes[index..<index + expected.count]) == expected
        else { throw syntax(literal) }
        index += expected.count
    }

    mutating func parseObject(depth: Int) throws(FormatError) -> JSONValue {
        if depth > limits.maxDepth { throw fail(.nestingTooDeep(limit: limits.maxDepth)) }
        index += 1  // {
        var members: [JSONObject.Member] = []
        var seen = Set<String>()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(JSONObject(members))
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw syntax("a member name")
            }
            let name = try parseString()
            // Pinion's objects have a handful of members: a linear scan finds duplicates
            // without a set per object (5% of an audit, bench/RESULTS.md); past
            // `linearScanMembers` a set takes over, so a hostile object stays linear.
            if members.count < Parser.linearScanMembers {
                if members.contains(where: { $0.name == name }) { throw fail(.duplicateKey(name)) }
            } else {
                if seen.isEmpty { seen = Set(members.map(\.name)) }
                if seen.contains(name) { throw fail(.duplicateKey(name)) }
                seen.insert(name)
            }
            if members.count >= limits.maxElements {
                throw fail(.tooManyElements(limit: limits.maxElements))
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw syntax("':'") }
            index += 1
            skipWhitespace()
            path.append(.member(name))
            let value = try parseValue(depth: depth + 1)
            path.removeLast()
            members.append(JSONObject.Member(name, value))
            skipWhitespace()
            guard index < bytes.count else { throw syntax("',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(JSONObject(members))
            }
            throw syntax("',' or '}'")
        }
    }

    /// The element limit of the array being read: the member-specific one if any.
    var arrayLimit: Int {
        if case .member(let name)? = path.last, let limit = limits.maxElementsByMember[name] {
            return min(limit, limits.maxElements)
        }
        return limits.maxElements
    }

    mutating func parseArray(depth: Int) throws(FormatError) -> JSONValue {
        let limit = arrayLimit
        if depth > limits.maxDepth { throw fail(.nestingTooDeep(limit: limits.maxDepth)) }
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            if elements.count >= limit {
                throw fail(.tooManyElements(limit: limit))
            }
            path.append(.element(elements.count))
            let value = try parseValue(depth: depth + 1)
            path.removeLast()
            elements.append(value)
            skipWhitespace()
            guard index < bytes.count else { throw syntax("',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            throw syntax("',' or ']'")
        }
    }

    /// RFC 8259 §6: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
    mutating func parseNumber() throws(FormatError) -> String {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw syntax("a digit") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw fail(.leadingZero) }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw syntax("a digit after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw syntax("a digit in the exponent")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    mutating func parseString() throws(FormatError) -> String {
        index += 1  // opening quote
        // Runs between escapes are copied as whole UTF-8 slices (the input was validated
        // up front, and a run ends at an ASCII byte, so each run is valid on its own);
        // appending them scalar by scalar dominated the parse of large manifests.
        var text = ""
        var escaped = false
        var runStart = index
        while true {
            guard index < bytes.count else { throw syntax("'\"' to end the string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let run = String(decoding: bytes[runStart..<index], as: UTF8.self)
                index += 1
                guard escaped else { return run }
                text += run
                return text
            }
            if byte < 0x20 { throw syntax("an escaped control character") }
            if byte == UInt8(ascii: "\\") {
                text += String(decoding: bytes[runStart..<index], as: UTF8.self)
                escaped = true
                index += 1
                try parseEscape(into: &text.unicodeScalars)
                runStart = index
                continue
            }
            index += 1
        }
    }

    mutating func parseEscape(into scalars: inout String.UnicodeScalarView) throws(FormatError) {
        guard index < bytes.count else { throw syntax("an escape character") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): scalars.append("\"")
        case UInt8(ascii: "\\"): scalars.append("\\")
        case UInt8(ascii: "/"): scalars.append("/")
        case UInt8(ascii: "b"): scalars.append("\u{08}")
        case UInt8(ascii: "f"): scalars.append("\u{0C}")
        case UInt8(ascii: "n"): scalars.append("\n")
        case UInt8(ascii: "r"): scalars.append("\r")
        case UInt8(ascii: "t"): scalars.append("\t")
        case UInt8(ascii: "u"):
            let first = try parseHex4()
            if (0xDC00...0xDFFF).contains(first) { throw fail(.loneSurrogate) }
            if (0xD800...0xDBFF).contains(first) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index + 1] == UInt8(ascii: "u")
                else { throw fail(.loneSurrogate) }
                index += 2
                let second = try parseHex4()
                guard (0xDC00...0xDFFF).contains(second) else { throw fail(.loneSurrogate) }
                let combined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                guard let scalar = Unicode.Scalar(combined) else { throw fail(.loneSurrogate) }
                scalars.append(scalar)
            } else {
                guard let scalar = Unicode.Scalar(first) else { throw fail(.loneSurrogate) }
                scalars.append(scalar)
            }
        default:
            index -= 1
            throw syntax("a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")
        }
    }

    mutating func parseHex4() throws(FormatError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw syntax("4 hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw syntax("4 hex digits")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
