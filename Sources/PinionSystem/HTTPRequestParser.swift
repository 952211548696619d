// A strict parser for the HTTP/1.1 request head (RFC 9112 §2-§5), for `pinion serve`.
// Written here because no HTTP server library is available to this package (SwiftNIO
// cannot be fetched); it parses only what a static publisher needs and refuses the rest.

import PinionTrust

/// Limits on one request head. Defaults follow the publisher's design: 8 KiB for the
/// request line, 8 KiB and 100 fields for the header section.
public struct HTTPRequestLimits: Sendable, Equatable {
    /// Longest request line accepted, in bytes without CRLF; longer gives 414.
    public var maxRequestLineBytes: Int
    /// Largest header section accepted, in bytes including CRLFs; larger gives 431.
    public var maxHeaderBytes: Int
    /// Most header fields accepted; more gives 431.
    public var maxHeaderCount: Int
    /// Largest POST body accepted (Content-Length only), in bytes; larger gives 413. 0 (the
    /// default): no request may have a body.
    public var maxBodyBytes: Int

    /// - Parameters: see the properties (bytes and a count).
    public init(
        maxRequestLineBytes: Int = 8192, maxHeaderBytes: Int = 8192, maxHeaderCount: Int = 100, maxBodyBytes: Int = 0
    ) {
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxBodyBytes = maxBodyBytes
    }
}

/// The request methods a parser recognises by name; any other token is `.other`.
public enum HTTPMethod: Sendable, Equatable {
    case get
    case head
    /// Any other method token (answered 405); the token is kept for the access log.
    case other(String)

    /// The method as sent.
    public var name: String {
        switch self {
        case .get: return "GET"
        case .head: return "HEAD"
        case .other(let token): return token
        }
    }
}

/// One parsed request head.
public struct HTTPRequestHead: Sendable, Equatable {
    /// The method.
    public var method: HTTPMethod
    /// The request target as sent (origin form: a path, optionally `?query`; or absolute
    /// form, `https://host/path`).
    public var target: String
    /// The path part of `target` (before `?`, after the authority of an absolute-form
    /// target), still undecoded.
    public var path: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// Header fields in order, names lowercased, values with surrounding whitespace removed.
    public var headers: [(name: String, value: String)]
    /// True when the connection must close after the response (HTTP/1.0 without
    /// keep-alive, or `Connection: close`).
    public var wantsClose: Bool
    /// Bytes of body that follow the head (a POST's Content-Length; 0 for every other request).
    public var contentLength: Int = 0

    /// The first value of header `name` (lowercase), or nil.
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }

    public static func == (lhs: HTTPRequestHead, rhs: HTTPRequestHead) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.minorVersion == rhs.minorVersion
            && lhs.wantsClose == rhs.wantsClose && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

/// Why a request head was refused, with the status the server answers before closing.
public enum HTTPRequestError: Error, Sendable, Equatable {
    /// The request line is longer than the limit (414 URI Too Long).
    case requestLineTooLong
    /// The header section is larger than the limit, or has too many fields (431).
    case headersTooLarge
    /// The version is not HTTP/1.0 or HTTP/1.1 (505).
    case unsupportedVersion
    /// A POST body larger than `HTTPRequestLimits.maxBodyBytes` (413 Content Too Large).
    case bodyTooLarge
    /// Anything else malformed or refused (400); `reason` is for the access log.
    case malformed(reason: String)

    /// The HTTP status code answered.
    public var status: Int {
        switch self {
        case .requestLineTooLong: return 414
        case .headersTooLarge: return 431
        case .unsupportedVersion: return 505
        case .bodyTooLarge: return 413
        case .malformed: return 400
        }
    }
}

/// The result of feeding buffered bytes to the parser.
public enum HTTPParseResult: Sendable, Equatable {
    /// A complete head; `consumed` bytes of the buffer belong to it.
    case complete(HTTPRequestHead, consumed: Int)
    /// More bytes are needed; nothing is refused yet.
    case incomplete
}

/// Parses request heads from a byte buffer. Requests with a body are refused (a publisher
/// has nothing to receive), which also rules out request smuggling through
/// Content-Length and Transfer-Encoding disagreements; the one exception is a POST with a
/// Content-Length when `HTTPRequestLimits.maxBodyBytes` allows it (report collection).
/// Transfer-Encoding is always refused.
public enum HTTPRequestParser {
    private static let cr: UInt8 = 13
    private static let lf: UInt8 = 10

    /// Parses the head at the start of `buffer`.
    ///
    /// - Parameters:
    ///   - buffer: bytes received so far on the connection (the next request first).
    ///   - limits: size limits.
    /// - Returns: `.complete` with the head and its length in bytes, or `.incomplete`.
    /// - Throws: `HTTPRequestError` for a head that can never become valid.
    public static func parse(_ buffer: ArraySlice<UInt8>, limits: HTTPRequestLimits = HTTPRequestLimits())
        throws(HTTPRequestError) -> HTTPParseResult
    {
        var start = buffer.startIndex
        // RFC 9112 §2.2: a server should ignore at least one empty line before the request line.
        var skipped = 0
        while start + 1 < buffer.endIndex, buffer[start] == cr, buffer[start + 1] == lf, skipped < 4 {
            start += 2
            skipped += 1
        }
        guard let lineEnd = findLineEnd(buffer, from: start, limit: limits.maxRequestLineBytes + 2) else {
            if buffer.endIndex - start > limits.maxRequestLineBytes + 1 { throw .requestLineTooLong }
            try refuseBareControl(buffer[start..<buffer.endIndex])
            return .incomplete
        }
        if lineEnd - start > limits.maxRequestLineBytes { throw .requestLineTooLong }
        let (method, target, minor) = try parseRequestLine(buffer[start..<lineEnd])

        var headers: [(name: String, value: String)] = []
        var position = lineEnd + 2
        let headerStart = position
        while true {
            let headerLimit = limits.maxHeaderBytes - (position - headerStart) + 2
            guard let end = findLineEnd(buffer, from: position, limit: headerLimit) else {
                if buffer.endIndex - headerStart > limits.maxHeaderBytes { throw .headersTooLarge }
                try refuseBareControl(buffer[position..<buffer.endIndex])
                return .incomplete
            }
            if end + 2 - headerStart > limits.maxHeaderBytes { throw .headersTooLarge }
            if end == position {
                position = end + 2
                break
            }
            if headers.count == limits.maxHeaderCount { throw .headersTooLarge }
            headers.append(try parseField(buffer[position..<end]))
            position = end + 2
        }
        let head = try validate(method: method, target: target, minor: minor, headers: headers, limits: limits)
        return .complete(head, consumed: position - buffer.startIndex)
    }

    /// Index of the CR of the first CRLF at or after `from`, looking at most `limit` bytes.
    private static func findLineEnd(_ buffer: ArraySlice<UInt8>, from: Int, limit: Int) -> Int? {
        let end = min(buffer.endIndex, from + max(limit, 0))
        var index = from
        while index < end {
            if buffer[index] == cr {
                guard index + 1 < buffer.endIndex else { return nil }
                return buffer[index + 1] == lf ? index : nil
            }
            index += 1
        }
        return nil
    }

    /// A bare CR, a bare LF or NUL can never become a valid head: refuse now rather than
    /// waiting for more bytes.
    private static func refuseBareControl(_ bytes: ArraySlice<UInt8>) throws(HTTPRequestError) {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == 0 { throw .malformed(reason: "NUL byte") }
            if byte == lf { throw .malformed(reason: "bare LF") }
            if byte == cr, index + 1 < bytes.endIndex, bytes[index + 1] != lf {
                throw .malformed(reason: "bare CR")
            }
            index += 1
        }
    }

    private static func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTPRequestError) -> (
        HTTPMethod, String, Int
    ) {
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw .malformed(reason: "request line is not METHOD SP TARGET SP VERSION")
        }
        guard parts[0].allSatisfy(HTTPSyntax.isTokenByte) else { throw .malformed(reason: "method is not a token") }
        // Visible ASCII only (RFC 3986 characters); the path rules refuse the rest later.
        guard parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .malformed(reason: "request target has a control, space or non-ASCII byte")
        }
        let minor: Int
        switch String(decoding: parts[2], as: UTF8.self) {
        case "HTTP/1.1": minor = 1
        case "HTTP/1.0": minor = 0
        case let version
        where version.utf8.count == 8 && version.hasPrefix("HTTP/")
            && version.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }):
            throw .unsupportedVersion
        default: throw .malformed(reason: "no HTTP version")
        }
        let methodName = String(decoding: parts[0], as: UTF8.self)
        let method: HTTPMethod
        switch methodName {
        case "GET": method = .get
        case "HEAD": method = .head
        default: method = .other(methodName)
        }
        return (method, String(decoding: parts[1], as: UTF8.self), minor)
    }

    private static func parseField(_ line: ArraySlice<UInt8>) throws(HTTPRequestError) -> (
        name: String, value: String
    ) {
        guard let first = line.first, first != UInt8(ascii: " "), first != UInt8(ascii: "\t") else {
            throw .malformed(reason: "obsolete line folding")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw .malformed(reason: "header field without a colon")
        }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(HTTPSyntax.isTokenByte) else {
            throw .malformed(reason: "header field name is not a token")
        }
        let value = trimmingOptionalWhitespace(line[(colon + 1)...])
        // field-value: visible ASCII, obs-text, SP and HTAB only; no CTLs (RFC 9110 §5.5).
        guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
            throw .malformed(reason: "control character in a header field value")
        }
        return (String(decoding: name, as: UTF8.self).lowercased(), String(decoding: value, as: UTF8.self))
    }

    private static func validate(
        method: HTTPMethod, target: String, minor: Int, headers: [(name: String, value: String)],
        limits: HTTPRequestLimits
    ) throws(HTTPRequestError) -> HTTPRequestHead {
        let origin = try originFormTarget(target)
        var hosts = 0
        for field in headers where field.name == "host" { hosts += 1 }
        if minor == 1, hosts != 1 { throw .malformed(reason: "HTTP/1.1 needs exactly one Host field") }
        if hosts > 1 { throw .malformed(reason: "more than one Host field") }
        if headers.contains(where: { $0.name == "transfer-encoding" }) {
            throw .malformed(reason: "a request body (Transfer-Encoding) is not accepted")
        }
        let lengths = headers.filter { $0.name == "content-length" }
        let contentLength = try bodyLength(lengths.map(\.value), method: method, limits: limits)
        var wantsClose = minor == 0
        for field in headers where field.name == "connection" {
            for option in Array(field.value.utf8).split(separator: UInt8(ascii: ",")) {
                switch String(decoding: trimmingOptionalWhitespace(option), as: UTF8.self).lowercased() {
                case "close": wantsClose = true
                case "keep-alive" where minor == 0: wantsClose = false
                default: break
                }
            }
        }
        // The target is ASCII (checked with the request line): split on the byte.
        let path = origin.utf8.firstIndex(of: UInt8(ascii: "?")).map { String(origin[..<$0]) } ?? origin
        return HTTPRequestHead(
            method: method, target: target, path: path, minorVersion: minor, headers: headers, wantsClose: wantsClose,
            contentLength: contentLength)
    }

    /// The body length of a request: 0 unless it is a POST and bodies are allowed; then the
    /// Content-Length (every field line the same digits, RFC 9110 §8.6), at most the limit.
    private static func bodyLength(_ values: [String], method: HTTPMethod, limits: HTTPRequestLimits)
        throws(HTTPRequestError) -> Int
    {
        if values.allSatisfy({ $0 == "0" }) { return 0 }
        guard limits.maxBodyBytes > 0, method == .other("POST") else {
            throw .malformed(reason: "a request body (Content-Length) is not accepted")
        }
        guard let first = values.first, values.allSatisfy({ $0 == first }), first.utf8.count <= 12,
            first.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let length = Int(first)
        else {
            throw .malformed(reason: "Content-Length is not one decimal number")
        }
        guard length <= limits.maxBodyBytes else { throw .bodyTooLarge }
        return length
    }
}

/// `bytes` without leading and trailing spaces and tabs (OWS, RFC 9110 §5.6.3).
package func trimmingOptionalWhitespace(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var text = bytes
    while let first = text.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { text = text.dropFirst() }
    while let last = text.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { text = text.dropLast() }
    return text
}
