// A fake connection pool that reuses one connection per host without a new pin check, as URLSession,
// OkHttp and JSSE do, and flushes on the client's trust generation: the model the Apple glue follows.

import PinionTrust
import PinionTrustTestSupport

/// One connection per host, tagged with the trust generation it was made under. A request reuses
/// the host's connection (no pin check, as a reused TLS connection or resumed session has none)
/// while its tag equals `client.trustGeneration`; `flush(below:)` drops older ones, and is what
/// the app calls on `ClientEvent.trustRemoved`.
final class ConnectionPool: Sendable {
    /// What one request did.
    enum Outcome: Equatable {
        /// A new connection was made and its verified chain passed the pin check.
        case opened(connection: Int, verdict: ConnectionVerdict)
        /// The host's pooled connection was reused without a pin check.
        case reused(connection: Int)
        /// A new connection was made and the pin check refused it (nothing was sent).
        case refused(verdict: ConnectionVerdict)
        /// No client is attached yet.
        case noClient
    }

    private struct Connection {
        let number: Int
        let generation: UInt64
    }

    private let state = Guarded<(client: PinningClient?, connections: [String: Connection], next: Int)>((nil, [:], 1))

    /// Attaches the client (built after the pool, since its `onEvent` calls `flush`).
    func attach(_ client: PinningClient) { state.withLock { $0.client = client } }

    /// The hosts with a pooled connection.
    var pooledHosts: [String] { state.withLock { $0.connections.keys.sorted() } }

    /// Drops every connection made under a generation below `generation`.
    func flush(below generation: UInt64) {
        state.withLock { $0.connections = $0.connections.filter { $0.value.generation >= generation } }
    }

    /// Sends one request to `host`, whose server would present `verifiedChainDER` on a new
    /// connection. The pool's lock is never held while the client runs (its events call `flush`).
    func request(_ host: String, verifiedChainDER: [[UInt8]]) -> Outcome {
        guard let client = state.withLock({ $0.client }) else { return .noClient }
        let generation = client.trustGeneration
        let pooled = state.withLock { state -> Int? in
            guard let connection = state.connections[host] else { return nil }
            guard connection.generation == generation else {
                state.connections[host] = nil
                return nil
            }
            return connection.number
        }
        if let pooled { return .reused(connection: pooled) }
        let verdict = client.verdict(for: host, verifiedChainDER: verifiedChainDER)
        // Tagged with the generation the verdict was given under (it may have just raised it).
        let tag = client.trustGeneration
        switch verdict {
        case .trusted, .notPinned, .reportOnly:
            let number = state.withLock { state -> Int in
                let number = state.next
                state.next += 1
                state.connections[host] = Connection(number: number, generation: tag)
                return number
            }
            return .opened(connection: number, verdict: verdict)
        case .rejected:
            state.withLock { $0.connections[host] = nil }
            return .refused(verdict: verdict)
        }
    }
}
