// Responses of `pinion serve`: status line and headers as bytes, HTTP-dates, and the
// If-None-Match comparison (RFC 9110 §13.1.2, §5.6.7, §8.8.3).

#if canImport(Glibc)
    import Glibc
#endif

/// A response to send: a head and an optional body shared with the file cache.
struct HTTPResponse {
    /// Status code.
    var status: Int
    /// The head bytes (status line, headers, blank line).
    var head: [UInt8]
    /// The body (not sent for HEAD and 304, whose heads still describe it).
    var body: [UInt8]
    /// Body bytes counted in the access log.
    var bodyBytes: Int { body.count }

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

/// Formats instants as IMF-fixdate (RFC 9110 §5.6.7) and RFC 3339, re-formatting at most
/// once per second. Not thread-safe: one per worker.
struct HTTPDateClock {
    private var second: time_t = -1
    private(set) var httpDate = ""
    private(set) var logTime = ""

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Brings the strings up to the current second.
    mutating func update() {
        let now = time(nil)
        guard now != second else { return }
        second = now
        var parts = tm()
        var value = now
        gmtime_r(&value, &parts)
        httpDate = Self.format(parts)
        logTime = Self.rfc3339(parts)
    }

    /// IMF-fixdate of `parts`, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func format(_ parts: tm) -> String {
        let day = days[Int(parts.tm_wday) % 7]
        let month = months[Int(parts.tm_mon) % 12]
        return "\(day), \(two(parts.tm_mday)) \(month) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    static func rfc3339(_ parts: tm) -> String {
        "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
