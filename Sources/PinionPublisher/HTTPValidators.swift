// Last-Modified and If-Modified-Since (RFC 9110 §8.8.2, §13.1.3), the error bodies shared
// with the nginx configuration, and the optional CORS header of `pinion serve`.

import PinionCore

#if canImport(Glibc)
    import Glibc
#endif

/// The bodies of `pinion serve`'s error responses: one JSON object with one member,
/// `{"error": "<reason>"}` and a newline, `Content-Type: application/json`, the same bytes
/// deploy/nginx/pinion.conf returns for 404 and 405 (docs/PUBLISHING.md).
public enum PublisherErrorBody {
    /// The body for `status`: its reason phrase in lowercase (`not found`, `method not
    /// allowed`, `bad request`, ...).
    public static func text(_ status: Int) -> String {
        "{\"error\": \"\(HTTPResponse.reason(status).lowercased())\"}\n"
    }
}

/// The value of `Access-Control-Allow-Origin` that `pinion serve --cors` adds to every
/// GET and HEAD answer (files, 304 and 404), so a browser-based auditor may read a tree:
/// the tree is public and carries no credentials.
let corsHeader = ("Access-Control-Allow-Origin", "*")

extension HTTPResponse {
    /// An error response with the JSON body of `PublisherErrorBody`, or `{"error": message}`
    /// when a message is given; never stored by caches.
    static func error(
        _ status: Int, message: String? = nil, sendBody: Bool, close: Bool, date: String,
        extra: [(String, String)] = []
    ) -> HTTPResponse {
        let body = message.map { "{\"error\": \(JSONWriter.quote($0))}\n" } ?? PublisherErrorBody.text(status)
        return make(
            status: status,
            headers: [
                ("Content-Type", "application/json"), ("Cache-Control", "no-store"),
                ("X-Content-Type-Options", "nosniff"),
            ] + extra,
            body: Array(body.utf8), sendBody: sendBody, close: close, date: date)
    }
}

extension HTTPResponse {
    /// The answer to a report POST (docs/DESIGN.md §14): 204 with no body, or an error with
    /// the JSON body `{"error": "<reason>"}` (the reason names the member and the rule;
    /// `Content-Type: application/json`, as every other error `pinion serve` sends). An
    /// empty reason is the status's reason phrase, in lowercase.
    static func reportAnswer(
        _ status: Int, _ reason: String, close: Bool, date: String, extra: [(String, String)] = []
    ) -> HTTPResponse {
        if status == 204 {
            return make(
                status: 204, headers: [("Cache-Control", "no-store")] + extra, body: [], sendBody: false,
                close: close, date: date)
        }
        return error(
            status, message: reason.isEmpty ? nil : reason, sendBody: true, close: close, date: date, extra: extra)
    }
}

enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]

    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) of `seconds` since 1970.
    static func format(_ seconds: Int64) -> String {
        var value = time_t(seconds)
        var parts = tm()
        gmtime_r(&value, &parts)
        return HTTPDateClock.format(parts)
    }

    /// Parses an IMF-fixdate, the form every HTTP/1.1 sender generates (RFC 9110 §5.6.7).
    /// The obsolete RFC 850 and asctime forms are not accepted: the field is then ignored,
    /// which only costs a full response.
    ///
    /// - Returns: seconds since 1970, or nil when `text` is not an IMF-fixdate.
    static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        // "Sun, 06 Nov 1994 08:49:37 GMT" is 29 bytes.
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20,
            bytes[11] == 0x20, bytes[16] == 0x20, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"),
            bytes[25] == 0x20, String(decoding: bytes[26...], as: UTF8.self) == "GMT",
            days.contains(String(decoding: bytes[0..<3], as: UTF8.self)),
            let month = months.firstIndex(of: String(decoding: bytes[8..<11], as: UTF8.self)),
            let day = number(bytes[5..<7]), let year = number(bytes[12..<16]), let hour = number(bytes[17..<19]),
            let minute = number(bytes[20..<22]), let second = number(bytes[23..<25]),
            (1...31).contains(day), hour < 24, minute < 60, second < 61, year >= 1970
        else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(min(second, 59))
        let seconds = timegm(&parts)
        // timegm normalises 31 Feb into March: refuse dates that do not exist.
        guard seconds >= 0, parts.tm_mday == Int32(day), parts.tm_mon == Int32(month) else { return nil }
        return Int64(seconds)
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }
}

/// RFC 9110 §13.1.3 and §13.2.2: whether a GET or HEAD with these header fields gets 304
/// by date. If-Modified-Since counts only when the request has no If-None-Match, holds
/// exactly one valid IMF-fixdate, and that date is not before the file's modification
/// time (in whole seconds, as Last-Modified is sent).
func notModifiedSince(_ headers: [(name: String, value: String)], lastModified: Int64) -> Bool {
    guard !headers.contains(where: { $0.name == "if-none-match" }) else { return false }
    let fields = headers.filter { $0.name == "if-modified-since" }
    guard fields.count == 1, let date = HTTPDate.parse(fields[0].value) else { return false }
    return lastModified <= date
}
