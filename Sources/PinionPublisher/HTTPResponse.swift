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
        var text = "HTTP/1.1 \(status) \(reason(status))\r\nServer: pinion\r\nDate: \(date)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        // RFC 9110 §8.6: no Content-Length in a 204 either.
        if status != 304, status != 204 { text += "Content-Length: \(body.count)\r\n" }
        if close { text += "Connection: close\r\n" }
        text += "\r\n"
        return HTTPResponse(
            status: status, head: Array(text.utf8), body: sendBody && status != 304 && status != 204 ? body : [])
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
    let bytes = Array(field.utf8)
    let target = Array(etag.utf8)
    let whole = trimmingOptionalWhitespace(bytes[...])
    if whole.count == 1, whole.first == UInt8(ascii: "*") { return true }
    for candidate in bytes.split(separator: UInt8(ascii: ",")) {
        var tag = trimmingOptionalWhitespace(candidate)
        if tag.starts(with: [UInt8(ascii: "W"), UInt8(ascii: "/")]) { tag = tag.dropFirst(2) }
        if tag.elementsEqual(target) { return true }
    }
    return false
}
