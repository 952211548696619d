// Last-Modified and If-Modified-Since (RFC 9110 §8.8.2, §13.1.3), the error bodies shared
// with the nginx configuration, and the optional CORS header of `pinion serve`.

import PinionCore
import PinionSystem

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
