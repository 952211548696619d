// `pinion serve`'s answers: GET and HEAD of the published tree's files with validators and caching fields, /healthz,
// and report POSTs handed to the report intake.

import PinionSystem

/// The request handler of `pinion serve` (docs/DESIGN.md §9): the tree's `/v1/...json` files
/// with ETag, Last-Modified and Cache-Control, 304 for a matching If-None-Match or
/// If-Modified-Since, `/healthz`, 405 for methods other than GET and HEAD, 404 for anything else.
/// Report POSTs (`POST /v1/{scope}/reports`, when collection is on) go to the report intake,
/// and are answered once committed (docs/DESIGN.md §14; the checks are in ReportIntake).
struct StaticTreeHandler: HTTPRequestHandler {
    /// The file opener over the served tree.
    let files: PublishedFiles
    /// Adds `Access-Control-Allow-Origin: *` to GET and HEAD answers.
    let cors: Bool
    /// The /healthz verdict's source.
    let services: ServerServices

    /// A report POST is answered at once (refused, or 429/503 with Retry-After) or parked
    /// until the writer thread has committed it (204 only then); everything else now.
    func answer(_ request: HTTPRequest, later: HTTPLateAnswer) -> HTTPAnswer {
        guard let reports = services.reports, request.head.method == .other("POST"),
            let scope = ReportIntake.scope(ofPath: request.head.path)
        else { return .now(response(to: request)) }
        let decision = reports.receive(
            scope: scope, head: request.head, body: request.body, peer: request.peer,
            monotonicSeconds: request.monotonicSeconds
        ) { status, reason in
            later.send { date, close in
                HTTPResponse.reportAnswer(
                    status, reason, close: close, date: date, extra: status == 503 ? [("Retry-After", "5")] : [])
            }
        }
        switch decision {
        case .respond(let status, let reason, let retryAfter):
            return .now(
                HTTPResponse.reportAnswer(
                    status, reason, close: request.close, date: request.date,
                    extra: retryAfter.map { [("Retry-After", String($0))] } ?? []))
        case .queued:
            return .later
        }
    }

    func response(to request: HTTPRequest) -> HTTPResponse {
        let head = request.head
        let close = request.close
        let date = request.date
        // An HTTP/1.0 client keeps the connection only when each answer says so: errors (404,
        // 405) and /healthz too.
        let keepAlive = request.keepAliveHeaders
        let sendBody: Bool
        switch head.method {
        case .get: sendBody = true
        case .head: sendBody = false
        case .other:
            return HTTPResponse.error(
                405, sendBody: true, close: close, date: date, extra: [("Allow", "GET, HEAD")] + keepAlive)
        }
        let cors = self.cors ? [corsHeader] : []
        if head.path == "/healthz" {
            let verdict = services.health()
            return HTTPResponse.text(
                verdict.isHealthy ? 200 : 503, verdict.text, sendBody: sendBody, close: close, date: date,
                extra: keepAlive)
        }
        guard let path = PublishedPath(head.path) else {
            return HTTPResponse.error(404, sendBody: sendBody, close: close, date: date, extra: cors + keepAlive)
        }
        let file: PublishedFile
        do {
            file = try files.file(at: path)
        } catch .readFailed {
            return HTTPResponse.error(500, sendBody: sendBody, close: close, date: date, extra: keepAlive)
        } catch .unavailable {
            // Out of descriptors or memory: never a 404, which a client would read as "no
            // such root" or "no such version".
            return HTTPResponse.error(
                503, sendBody: sendBody, close: true, date: date, extra: [("Retry-After", "5")])
        } catch {
            return HTTPResponse.error(404, sendBody: sendBody, close: close, date: date, extra: cors + keepAlive)
        }
        // A log tile or entry bundle goes gzip-encoded to a client that accepts it (C2SP
        // tlog-tiles), with its own ETag; caches key tiles on Accept-Encoding either way.
        let encoded = file.gzipped.flatMap { acceptsGzip(head.headers) ? $0 : nil }
        let etag = encoded?.etag ?? file.etag
        // Field lines of a list header combine (RFC 9110 §5.3).
        var condition: String?
        for field in head.headers where field.name == "if-none-match" {
            condition = condition.map { $0 + ", " + field.value } ?? field.value
        }
        let notModified =
            condition.map { ifNoneMatchMatches($0, etag: etag) }
            ?? notModifiedSince(head.headers, lastModified: file.lastModified)
        // One array in the order sent: Content-Type (not in a 304, RFC 9110 §15.4.5), the
        // coding, the validators and caching fields, CORS, keep-alive.
        var fields: [(String, String)] = []
        fields.reserveCapacity(9)
        if !notModified { fields.append(("Content-Type", path.contentType)) }
        if encoded != nil, !notModified { fields.append(("Content-Encoding", "gzip")) }
        if path.isLogTile { fields.append(("Vary", "Accept-Encoding")) }
        fields.append(("ETag", etag))
        fields.append(("Last-Modified", file.lastModifiedText))
        fields.append(("Cache-Control", path.cacheControl))
        fields.append(("X-Content-Type-Options", "nosniff"))
        fields.append(contentsOf: cors)
        fields.append(contentsOf: keepAlive)
        if path.isManifest, head.method == .get, let metrics = services.metrics {
            metrics.polls.count(
                scope: path.components[1], query: Self.query(of: head.target), served: file.manifestVersion)
        }
        if notModified {
            return HTTPResponse.make(status: 304, headers: fields, body: [], sendBody: false, close: close, date: date)
        }
        return HTTPResponse.make(
            status: 200, headers: fields, body: encoded?.body ?? file.body, sendBody: sendBody, close: close,
            date: date)
    }

    /// The query of a request target (after its first `?`), or nil without one; a byte scan,
    /// since the poll counter reads it on every manifest request.
    static func query(of target: String) -> Substring? {
        let bytes = target.utf8.span
        for offset in 0..<bytes.count where bytes[offset] == UInt8(ascii: "?") {
            return target[target.utf8.index(target.utf8.startIndex, offsetBy: offset + 1)...]
        }
        return nil
    }
}
