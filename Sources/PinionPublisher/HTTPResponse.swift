// Responses of `pinion serve`: status line and headers as bytes, and the If-None-Match
// comparison (RFC 9110 §13.1.2, §8.8.3). The engine (PinionSystem's HTTPSServer) sends them.

import PinionSystem

extension HTTPResponse {
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 204: return "No Content"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 422: return "Unprocessable Content"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Status"
        }
    }

    /// Builds a response.
    ///
    /// - Parameters:
    ///   - status: the status code.
    ///   - headers: extra header fields (name, value), in order.
    ///   - body: the representation; its length is always announced (HEAD and 304
    ///     included, as the GET would have it, except 304 which omits Content-Length).
    ///   - sendBody: false for HEAD and 304.
    ///   - close: adds `Connection: close`.
    ///   - date: the Date header value.
    static func make(
        status: Int, headers: [(String, String)], body: [UInt8], sendBody: Bool, close: Bool, date: String
    ) -> HTTPResponse {
        // Appended as bytes to one array sized up front: building a String and copying its
        // UTF-8 out was a tenth of the Swift time of a 304 (bench/NOTES.md).
        var head = [UInt8]()
        head.reserveCapacity(256)
        head.append(contentsOf: "HTTP/1.1 ".utf8)
        appendDecimal(status, to: &head)
        head.append(0x20)
        head.append(contentsOf: reason(status).utf8)
        head.append(contentsOf: "\r\nServer: pinion\r\nDate: ".utf8)
        head.append(contentsOf: date.utf8)
        head.append(contentsOf: "\r\n".utf8)
        for (name, value) in headers {
            head.append(contentsOf: name.utf8)
            head.append(contentsOf: ": ".utf8)
            head.append(contentsOf: value.utf8)
            head.append(contentsOf: "\r\n".utf8)
        }
        // RFC 9110 §8.6: no Content-Length in a 204 either.
        if status != 304, status != 204 {
            head.append(contentsOf: "Content-Length: ".utf8)
            appendDecimal(body.count, to: &head)
            head.append(contentsOf: "\r\n".utf8)
        }
        if close { head.append(contentsOf: "Connection: close\r\n".utf8) }
        head.append(contentsOf: "\r\n".utf8)
        return HTTPResponse(status: status, head: head, body: sendBody && status != 304 && status != 204 ? body : [])
    }

    /// Appends the decimal digits of `value` (not negative) as ASCII.
    private static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        guard value > 0 else { return bytes.append(UInt8(ascii: "0")) }
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// A short plain-text response for errors and /healthz; never stored by caches.
    static func text(
        _ status: Int, _ message: String, sendBody: Bool, close: Bool, date: String, extra: [(String, String)] = []
    )
        -> HTTPResponse
    {
        make(
            status: status,
            headers: [
                ("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store"),
                ("X-Content-Type-Options", "nosniff"),
            ] + extra,
            body: Array((message + "\n").utf8), sendBody: sendBody, close: close, date: date)
    }
}

/// RFC 9110 §13.1.2 If-None-Match with the weak comparison: true when `field` is `*` or
/// lists an entity tag whose opaque part equals `etag`'s.
///
/// Works on the field's bytes, as RFC 9110 defines it: splitting and trimming it as
/// Characters was 7% of the server's CPU time for a 304 (bench/RESULTS.md).
func ifNoneMatchMatches(_ field: String, etag: String) -> Bool {
    // The usual field is the one tag a client stored: compared as whole strings.
    if field == etag { return true }
    // Scanned in place on the UTF-8 views (no copy of either string, no array of candidates).
    let bytes = field.utf8
    let target = etag.utf8
    let whole = trimmingOptionalWhitespace(bytes[...])
    if whole.count == 1, whole.first == UInt8(ascii: "*") { return true }
    var start = bytes.startIndex
    while start < bytes.endIndex {
        let end = bytes[start...].firstIndex(of: UInt8(ascii: ",")) ?? bytes.endIndex
        var tag = trimmingOptionalWhitespace(bytes[start..<end])
        if tag.count >= 2, tag.first == UInt8(ascii: "W"), tag.dropFirst().first == UInt8(ascii: "/") {
            tag = tag.dropFirst(2)
        }
        if !tag.isEmpty, tag.elementsEqual(target) { return true }
        start = end < bytes.endIndex ? bytes.index(after: end) : end
    }
    return false
}

/// `bytes` without leading and trailing spaces and tabs (OWS, RFC 9110 §5.6.3).
func trimmingOptionalWhitespace(_ bytes: Substring.UTF8View) -> Substring.UTF8View {
    var text = bytes
    while let first = text.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { text = text.dropFirst() }
    while let last = text.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { text = text.dropLast() }
    return text
}
