// The seam between the HTTPS server stack (HTTPSPublisher, Worker) and what it answers: the static tree of `pinion serve`, or the witness of `pinion witness`.

/// One complete request as a handler sees it.
struct HTTPRequest {
    /// The parsed head.
    let head: HTTPRequestHead
    /// The body (a POST's Content-Length bytes; empty otherwise).
    let body: [UInt8]
    /// The connection's peer, `IP:PORT` or `[IPv6]:PORT`.
    let peer: String
    /// The Date header value for the response (RFC 9110 §5.6.7).
    let date: String
    /// True when the response must carry `Connection: close`.
    let close: Bool
    /// Seconds on the monotonic clock when the request completed (for rate limits).
    let monotonicSeconds: Double

    /// An HTTP/1.0 client keeps the connection only when told so (RFC 9112 §9.3).
    var keepAliveHeaders: [(String, String)] {
        head.minorVersion == 0 && !close ? [("Connection", "keep-alive")] : []
    }
}

/// Answers complete requests on a worker thread, synchronously; called by several workers at
/// once, so it keeps its own state behind locks.
protocol HTTPRequestHandler: Sendable {
    /// The response to `request`.
    func response(to request: HTTPRequest) -> HTTPResponse
}
