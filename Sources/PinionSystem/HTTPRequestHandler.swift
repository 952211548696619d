// The seam between the HTTPS server engine (HTTPSServer, Worker) and what it answers: the static tree of `pinion serve`, or the witness of `pinion witness`.

/// One complete request as a handler sees it.
package struct HTTPRequest {
    /// The parsed head.
    package let head: HTTPRequestHead
    /// The body (a POST's Content-Length bytes; empty otherwise).
    package let body: [UInt8]
    /// The connection's peer, `IP:PORT` or `[IPv6]:PORT`.
    package let peer: String
    /// The Date header value for the response (RFC 9110 §5.6.7).
    package let date: String
    /// True when the response must carry `Connection: close`.
    package let close: Bool
    /// Seconds on the server's monotonic clock when the request completed (for rate limits).
    package let monotonicSeconds: Double

    /// - Parameters: see the properties.
    package init(
        head: HTTPRequestHead, body: [UInt8], peer: String, date: String, close: Bool, monotonicSeconds: Double
    ) {
        self.head = head
        self.body = body
        self.peer = peer
        self.date = date
        self.close = close
        self.monotonicSeconds = monotonicSeconds
    }

    /// An HTTP/1.0 client keeps the connection only when told so (RFC 9112 §9.3).
    package var keepAliveHeaders: [(String, String)] {
        head.minorVersion == 0 && !close ? [("Connection", "keep-alive")] : []
    }
}

/// A response to send: the head bytes (status line, header fields, blank line) and the body
/// bytes, built by the handler (PinionPublisher's `HTTPResponse.make`); the engine sends
/// them as given.
package struct HTTPResponse {
    /// Status code.
    package var status: Int
    /// The head bytes (status line, headers, blank line).
    package var head: [UInt8]
    /// The body (empty for HEAD, 204 and 304, whose heads still describe it).
    package var body: [UInt8]
    /// Body bytes counted in the access log.
    package var bodyBytes: Int { body.count }

    /// - Parameters: see the properties.
    package init(status: Int, head: [UInt8], body: [UInt8]) {
        self.status = status
        self.head = head
        self.body = body
    }
}

/// A response the handler builds later, once something outside the request (the report
/// writer) has decided: given the Date value and whether the connection closes after it.
package typealias HTTPLateResponse = @Sendable (_ date: String, _ close: Bool) -> HTTPResponse

/// What a handler does with a request.
package enum HTTPAnswer {
    /// Send this response now.
    case now(HTTPResponse)
    /// Send nothing yet: the handler calls `send` on the `HTTPLateAnswer` it was given once,
    /// from any thread; the connection reads nothing meanwhile, and is dropped without an
    /// answer when the write timeout passes first.
    case later
}

/// Answers complete requests on a worker thread, synchronously; called by several workers at
/// once, so it keeps its own state behind locks.
package protocol HTTPRequestHandler: Sendable {
    /// The response to `request`.
    func response(to request: HTTPRequest) -> HTTPResponse

    /// The answer to `request`: now, or later through `later` (report POSTs, which are
    /// acknowledged only once stored). The default answers `response(to:)` now.
    func answer(_ request: HTTPRequest, later: HTTPLateAnswer) -> HTTPAnswer

    /// The response to bytes that are not an acceptable request head (400, 413, 414, 431,
    /// 505 as `error.status` says); the connection closes after it.
    func response(toRefused error: HTTPRequestError, date: String) -> HTTPResponse
}

extension HTTPRequestHandler {
    package func answer(_ request: HTTPRequest, later: HTTPLateAnswer) -> HTTPAnswer {
        .now(response(to: request))
    }
}

/// What the engine reports to the metrics of one worker; every call is made on that worker's
/// thread.
package protocol HTTPServerObserver: Sendable {
    /// A TLS handshake completed.
    func handshakeCompleted()
    /// A TLS handshake failed or timed out.
    func handshakeFailed()
    /// A connection was closed at accept because the connection cap was reached.
    func refusedAtConnectionCap()
    /// A request head announced a body over the limit (413).
    func refusedBodyTooLarge()
    /// A response ended (sent, or given up at a deadline): the request path (nil when no
    /// request was parsed), the status and the body bytes sent.
    func responded(path: String?, status: Int, bodyBytes: Int)
}
