// One HTTP/1.1 response head (status line and header fields) read strictly per RFC 9112 §4-§6, pure.

/// Why response bytes are refused by `HTTPResponseParser` (RFC 9112). The transport turns
/// these into its own errors (`HTTPSError.malformedResponse`, `.responseTooLarge`,
/// `.connectionLost`), adding the host and port.
public enum HTTPResponseParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes break RFC 9112 or a limit on the head, chunk lines or trailers; the detail
    /// quotes at most 64 input bytes, with every byte outside printable ASCII shown as `?`.
    case malformed(String)
    /// The body (after removing chunked coding) would be larger than `limit` bytes.
    case bodyTooLarge(limit: Int)
    /// The stream ended before the first byte of a response.
    case closedBeforeResponse
    /// A body delimited by the end of the stream ended without a TLS close_notify, so it
    /// may be truncated (RFC 9112 §8).
    case closedWithoutCloseNotify

    public var description: String {
        switch self {
        case .malformed(let detail): return detail
        case .bodyTooLarge(let limit): return "response body larger than \(limit) bytes"
        case .closedBeforeResponse: return "closed before sending a response"
        case .closedWithoutCloseNotify:
            return "closed without TLS close_notify; the body, delimited by the close, may be truncated"
        }
    }
}

/// How a response body is delimited (RFC 9112 §6.3).
public enum HTTPResponseFraming: Equatable, Sendable {
    /// Transfer-Encoding: chunked (RFC 9112 §7.1).
    case chunked
    /// Content-Length: exactly this many bytes.
    case length(Int)
    /// Neither: the body is everything until the server closes the connection.
    case untilClose
}

/// A parsed status line and header fields (RFC 9112 §4, §5), as `HTTPResponseParser`
/// returns it.
public struct HTTPResponseHead: Sendable {
    /// The status code, 100 to 599.
    public let status: Int
    /// The minor version of `HTTP/1.x`: 0 or 1.
    public let minorVersion: Int
    /// Field names lowercased, values with surrounding spaces and tabs removed, in order;
    /// obs-text bytes (0x80-0xFF) become the Unicode scalars of the same value (Latin-1).
    public let fields: [(String, String)]

    /// Parses one header block: `lines` are its lines without line ends, status line
    /// first, without the empty line that ends the block.
    ///
    /// Refused (`HTTPResponseParseError.malformed`): a status line other than
    /// `HTTP/1.0` or `HTTP/1.1`, SP, three digits in 100...599, then nothing or SP and a
    /// reason phrase without control characters (a bare CR included); more than
    /// `maximumFields` field lines; a line without a colon, with white space at its start
    /// (obs-fold, RFC 9112 §5.2) or before the colon, or a name that is not an RFC 9110
    /// token; a value with a control character other than tab (a bare CR included,
    /// RFC 9112 §2.2).
    public init(lines: [ArraySlice<UInt8>], maximumFields: Int) throws(HTTPResponseParseError) {
        guard let statusLine = lines.first else { throw .malformed("empty header block") }
        let bytes = Array(statusLine)
        let prefix = Array("HTTP/1.".utf8)
        guard bytes.count >= 12, Array(bytes[0..<7]) == prefix, bytes[7] == 0x30 || bytes[7] == 0x31,
            bytes[8] == 0x20, bytes[9...11].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            bytes.count == 12 || bytes[12] == 0x20,
            bytes.dropFirst(12).allSatisfy(HTTPSyntax.isFieldValueByte)
        else {
            throw .malformed("invalid status line \"\(Self.printable(bytes.prefix(64)))\"")
        }
        let status = bytes[9...11].reduce(0) { $0 * 10 + Int($1 - 0x30) }
        guard (100...599).contains(status) else { throw .malformed("status code \(status) out of range") }
        guard lines.count - 1 <= maximumFields else {
            throw .malformed("more than \(maximumFields) header fields")
        }
        self.status = status
        self.minorVersion = Int(bytes[7] - 0x30)
        self.fields = try lines.dropFirst().map { line throws(HTTPResponseParseError) in try Self.field(line) }
    }

    /// The value of the first field named `name` (lowercase), if any.
    public func value(_ name: String) -> String? {
        fields.first { $0.0 == name }?.1
    }

    /// The body's framing (RFC 9112 §6.3): `chunked` when Transfer-Encoding is given (the
    /// only coding understood), else the Content-Length, else until close.
    ///
    /// Refused: any transfer coding but a single `chunked`; Transfer-Encoding in an
    /// HTTP/1.0 response (§6.1) or together with Content-Length (§6.3: a sign of response
    /// smuggling); Content-Length values that disagree, or one that is not 1 to 18 digits.
    public func framing() throws(HTTPResponseParseError) -> HTTPResponseFraming {
        let codings = fields.filter { $0.0 == "transfer-encoding" }
            .flatMap { $0.1.split(separator: ",") }
            .map { Self.trimmed($0).lowercased() }
            .filter { !$0.isEmpty }
        let lengths = fields.filter { $0.0 == "content-length" }
            .flatMap { $0.1.split(separator: ",", omittingEmptySubsequences: false) }
            .map { Self.trimmed($0) }
        if !codings.isEmpty {
            guard codings == ["chunked"] else {
                throw .malformed(
                    "unsupported transfer coding \"\(Self.printable(codings.joined(separator: ", ").utf8.prefix(64)))\""
                )
            }
            guard minorVersion == 1 else { throw .malformed("Transfer-Encoding in an HTTP/1.0 response") }
            guard lengths.isEmpty else { throw .malformed("both Transfer-Encoding and Content-Length") }
            return .chunked
        }
        guard let first = lengths.first else { return .untilClose }
        guard lengths.allSatisfy({ $0 == first }), !first.isEmpty, first.utf8.count <= 18,
            first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let length = Int(first)
        else {
            throw .malformed("invalid Content-Length")
        }
        return .length(length)
    }

    /// One field line `name: value` (RFC 9112 §5.1), name lowercased, value trimmed.
    static func field(_ line: ArraySlice<UInt8>) throws(HTTPResponseParseError) -> (String, String) {
        guard let colon = line.firstIndex(of: 0x3a) else {
            throw .malformed("header line without a colon")
        }
        let name = line[line.startIndex..<colon]
        // Also refuses obs-fold lines (leading white space) and space before the colon.
        guard !name.isEmpty, name.allSatisfy(HTTPSyntax.isTokenByte) else {
            throw .malformed("invalid header field name \"\(Self.printable(name.prefix(64)))\"")
        }
        var value = line[(colon + 1)...]
        while let first = value.first, first == 0x20 || first == 0x09 { value.removeFirst() }
        while let last = value.last, last == 0x20 || last == 0x09 { value.removeLast() }
        guard value.allSatisfy(HTTPSyntax.isFieldValueByte) else {
            throw .malformed("control character in header field \"\(Self.printable(name))\"")
        }
        let lowered = String(decoding: name, as: UTF8.self).lowercased()
        return (lowered, String(String.UnicodeScalarView(value.map { Unicode.Scalar($0) })))
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// Bytes for an error message: printable ASCII kept, everything else as `?`.
    static func printable<S: Sequence<UInt8>>(_ bytes: S) -> String {
        String(decoding: bytes.map { $0 >= 0x20 && $0 < 0x7f ? $0 : 0x3f }, as: UTF8.self)
    }

    /// `text` without leading and trailing spaces and tabs (RFC 9110 OWS).
    private static func trimmed(_ text: Substring) -> String {
        var bytes = text.utf8
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
