// The metrics semantics of `pinion serve`'s engine events: which counters of ServerMetrics each event of a worker adds to.

import PinionSystem

/// Counts one worker's engine events in its `WorkerMetrics` shard (and the server-wide
/// report refusals): responses by path class and status, handshakes, cap refusals.
struct WorkerObserver: HTTPServerObserver {
    /// The worker's shard.
    let worker: WorkerMetrics
    /// The server-wide counters.
    let server: ServerMetrics

    func handshakeCompleted() { worker.handshakes.add() }

    func handshakeFailed() { worker.handshakeFailures.add() }

    func refusedAtConnectionCap() { worker.capRefusals.add() }

    /// Counted as a report refused for its size: where metrics are on (`pinion serve`), only
    /// report POSTs may carry a body.
    func refusedBodyTooLarge() { server.refuse(.tooLarge) }

    func responded(path: String?, status: Int, bodyBytes: Int) {
        worker.countResponse(path.map { RequestPathClass(path: $0) } ?? .other, status: status, bodyBytes: bodyBytes)
    }
}

extension HTTPRequestHandler {
    /// Every handler of PinionPublisher answers a refused request head with the JSON error
    /// body of `PublisherErrorBody` and `Connection: close`.
    package func response(toRefused error: HTTPRequestError, date: String) -> HTTPResponse {
        HTTPResponse.error(error.status, sendBody: true, close: true, date: date)
    }
}
