// `pinion witness`'s HTTP answers: POST add-checkpoint and GET of the latest cosigned checkpoint per origin, under an optional path prefix, with a token bucket per client address.

import PinionCore
import PinionLog
import PinionSystem
import PinionTrust
import Synchronization

/// Request rate allowed per client address: a token bucket (429 with Retry-After past it).
public struct WitnessRateLimit: Sendable, Equatable {
    /// Requests an address may send at once.
    public var burst: Int
    /// Requests per minute after the burst.
    public var perMinute: Double

    /// - Parameters: the burst (at least 1) and the sustained rate per minute (more than 0).
    public init(burst: Int = 60, perMinute: Double = 600) {
        self.burst = burst
        self.perMinute = perMinute
    }
}

/// The witness's routes (docs/TRANSPARENCY.md "Running a witness"), below `pathPrefix`:
/// `POST /add-checkpoint` (C2SP tlog-witness; 200 body: the cosignature line, 409 body: the
/// latest size in decimal, `text/x.tlog.size`; 400/403/404/422 with the reason as text;
/// 503 when persisting failed or the clock is behind the latest cosignature's time) and `GET`/`HEAD /{origin hash}/checkpoint` (lowercase hex SHA-256 of the origin;
/// 200 with the latest cosigned note, 404 when none). Other paths 404, other methods 405.
final class WitnessHandler: HTTPRequestHandler {
    let witness: Witness
    let pathPrefix: String
    private let clock: @Sendable () -> UInt64
    private let limiter: Mutex<ReportRateLimiter?>

    init(witness: Witness, pathPrefix: String, rateLimit: WitnessRateLimit?, clock: @escaping @Sendable () -> UInt64) {
        self.witness = witness
        self.pathPrefix = pathPrefix
        self.clock = clock
        limiter = Mutex(rateLimit.map { ReportRateLimiter(burst: $0.burst, perMinute: $0.perMinute) })
    }

    /// A path prefix: empty, or `/` and segments of A-Z a-z 0-9 - . _ ~ without a final `/`.
    static func isPathPrefix(_ text: String) -> Bool {
        if text.isEmpty { return true }
        guard text.hasPrefix("/"), !text.hasSuffix("/"), !text.contains("//"), text.utf8.count <= 256 else {
            return false
        }
        return text.utf8.allSatisfy { isUnreserved($0) || $0 == 0x2F }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
            || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
    }

    func response(to request: HTTPRequest) -> HTTPResponse {
        let head = request.head
        let sendBody = head.method != .head
        func text(_ status: Int, _ message: String, extra: [(String, String)] = []) -> HTTPResponse {
            HTTPResponse.text(
                status, message, sendBody: sendBody, close: request.close, date: request.date,
                extra: extra + request.keepAliveHeaders)
        }
        let address = ReportClientAddress.address(ofPeer: request.peer)
        if let wait = limiter.withLock({ $0?.take(address, at: request.monotonicSeconds) }) {
            return text(429, "too many requests from \(address)", extra: [("Retry-After", String(wait))])
        }
        guard head.path.hasPrefix(pathPrefix + "/") else { return text(404, "not found") }
        let route = head.path.dropFirst(pathPrefix.count)
        if route == "/add-checkpoint" {
            guard head.method == .other("POST") else {
                return text(405, "add-checkpoint takes POST", extra: [("Allow", "POST")])
            }
            return addCheckpoint(request)
        }
        if let originHash = WitnessCheckpointPath.originHash(ofRoute: route) {
            guard head.method == .get || head.method == .head else {
                return text(405, "checkpoints take GET or HEAD", extra: [("Allow", "GET, HEAD")])
            }
            guard let note = witness.latestNote(originHash: originHash) else {
                return text(404, "no checkpoint cosigned for this origin")
            }
            return HTTPResponse.make(
                status: 200,
                headers: [
                    ("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store"),
                    ("X-Content-Type-Options", "nosniff"),
                ] + request.keepAliveHeaders, body: note, sendBody: sendBody, close: request.close,
                date: request.date)
        }
        return text(404, "not found")
    }

    /// A refused request head (400, 413, 414, 431, 505) is answered in `text/plain` like the
    /// witness's own answers (C2SP tlog-witness prescribes bodies only for 200 and 409), with
    /// `Connection: close`; the parser's detail goes to the access log only.
    func response(toRefused error: HTTPRequestError, date: String) -> HTTPResponse {
        let message: String
        switch error {
        case .requestLineTooLong: message = "the request line is too long"
        case .headersTooLarge: message = "the request header section is too large"
        case .unsupportedVersion: message = "only HTTP/1.0 and HTTP/1.1 are spoken"
        case .bodyTooLarge: message = "the body is larger than this witness accepts (--max-body-bytes)"
        case .malformed: message = "malformed request"
        }
        return HTTPResponse.text(error.status, message, sendBody: true, close: true, date: date)
    }

    private func addCheckpoint(_ request: HTTPRequest) -> HTTPResponse {
        let common = [("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")] + request.keepAliveHeaders
        switch witness.addCheckpoint(request.body, timestamp: max(1, clock())) {
        case .cosigned(let line, _):
            return HTTPResponse.make(
                status: 200, headers: [("Content-Type", "text/plain; charset=utf-8")] + common, body: line,
                sendBody: true, close: request.close, date: request.date)
        case .refused(.conflict(let size)):
            return HTTPResponse.make(
                status: 409, headers: [("Content-Type", "text/x.tlog.size")] + common, body: Array("\(size)\n".utf8),
                sendBody: true, close: request.close, date: request.date)
        case .refused(let refusal):
            return HTTPResponse.text(
                refusal.httpStatus, refusal.description, sendBody: true, close: request.close, date: request.date,
                extra: request.keepAliveHeaders)
        case .unavailable(let reason):
            return HTTPResponse.text(
                503, reason, sendBody: true, close: true, date: request.date, extra: [("Retry-After", "5")])
        case .timeBeforeLast(let last):
            // The clock went back below the latest cosignature's time: nothing is signed until
            // it passes it again (a cosignature never goes back in time).
            return HTTPResponse.text(
                503, "the witness's clock is behind its latest cosignature (time \(last)): try again later",
                sendBody: true, close: true, date: request.date, extra: [("Retry-After", "5")])
        }
    }
}
