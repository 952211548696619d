// Last-Modified and If-Modified-Since (RFC 9110 §8.8.2, §13.1.3), the error bodies shared
// with the nginx configuration, and the optional CORS header of `pinion serve`.

import Foundation
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

/// RFC 9110 §12.5.3: whether a request with these header fields accepts the gzip content
/// coding. Every Accept-Encoding field line counts (a list field). `gzip` or its alias
/// `x-gzip` with a weight above 0 accepts; failing those, `*` with a weight above 0 does. No
/// Accept-Encoding field, a weight of 0, or an element that does not parse (an invalid
/// `q` value) does not: the identity coding is always acceptable, so refusing gzip is the
/// safe reading of an unclear request.
func acceptsGzip(_ headers: [(name: String, value: String)]) -> Bool {
    var gzip: Bool?
    var any: Bool?
    for field in headers where field.name == "accept-encoding" {
        for element in field.value.split(separator: ",") {
            let parts = element.split(separator: ";", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            let coding = parts[0].lowercased()
            guard !coding.isEmpty else { continue }
            var accepted = true
            for parameter in parts.dropFirst() {
                guard let weight = qvalue(parameter) else {
                    accepted = false
                    break
                }
                accepted = weight > 0
            }
            switch coding {
            case "gzip", "x-gzip": gzip = (gzip ?? false) || accepted
            case "*": any = (any ?? false) || accepted
            default: break
            }
        }
    }
    return gzip ?? any ?? false
}

/// The weight of a `q=` parameter (RFC 9110 §12.4.2: `0` to `1` with at most three
/// decimals), in thousandths; nil for anything else.
private func qvalue(_ parameter: String) -> Int? {
    let bytes = Array(parameter.utf8)
    guard bytes.count >= 3, bytes[0] | 0x20 == UInt8(ascii: "q"), bytes[1] == UInt8(ascii: "=") else { return nil }
    let value = bytes[2...]
    guard let first = value.first, first == UInt8(ascii: "0") || first == UInt8(ascii: "1") else { return nil }
    var thousandths = first == UInt8(ascii: "1") ? 1000 : 0
    guard value.count > 1 else { return thousandths }
    guard value[value.startIndex + 1] == UInt8(ascii: "."), value.count <= 5 else { return nil }
    var scale = 100
    for digit in value.dropFirst(2) {
        guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
        thousandths += Int(digit - UInt8(ascii: "0")) * scale
        scale /= 10
    }
    return thousandths <= 1000 ? thousandths : nil
}
