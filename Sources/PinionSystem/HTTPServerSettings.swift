// What the HTTPS server engine of `pinion serve` and `pinion witness` runs with, and why it can fail to start or reload.

/// The engine's settings; PinionPublisher's `PublisherConfiguration` fills them in and
/// checks their ranges first. Times are in seconds.
package struct HTTPServerSettings: Sendable {
    /// IP literal to bind (no DNS lookups).
    package var host: String
    /// TCP port; 0 lets the system pick a free one.
    package var port: UInt16
    /// PEM file with the certificate first, then its intermediates.
    package var certificateChainFile: String
    /// PEM file with the certificate's unencrypted private key.
    package var privateKeyFile: String
    /// Event loop threads, at least 1.
    package var workers: Int
    /// Most connections open at once across all workers (lowered to fit the open files limit).
    package var maxConnections: Int
    /// Requests served on one connection before it is closed.
    package var maxRequestsPerConnection: Int
    /// The deadlines of every connection (`ConnectionDeadlines`).
    package var deadlines: ConnectionDeadlines
    /// Limits on request heads and bodies.
    package var requestLimits: HTTPRequestLimits
    /// The clock the deadlines are measured on (a `ManualMonotonicClock` in tests).
    package var clock: any MonotonicClock

    /// Seconds a closing connection may keep sending before it is dropped (lingering
    /// close: read and discard, so the peer gets the last response instead of a reset).
    package static let lingerSeconds = 2.0

    /// - Parameters: see the properties; `lingerSeconds` is the linger deadline.
    package init(
        host: String, port: UInt16, certificateChainFile: String, privateKeyFile: String, workers: Int,
        maxConnections: Int, maxRequestsPerConnection: Int, headerTimeout: Double, idleTimeout: Double,
        writeTimeout: Double, requestLimits: HTTPRequestLimits, clock: any MonotonicClock
    ) {
        self.host = host
        self.port = port
        self.certificateChainFile = certificateChainFile
        self.privateKeyFile = privateKeyFile
        self.workers = workers
        self.maxConnections = maxConnections
        self.maxRequestsPerConnection = maxRequestsPerConnection
        deadlines = ConnectionDeadlines(
            headerTimeout: headerTimeout, idleTimeout: idleTimeout, writeTimeout: writeTimeout,
            lingerTimeout: Self.lingerSeconds)
        self.requestLimits = requestLimits
        self.clock = clock
    }
}

/// Why the server engine, its access log or its signal routing could not start or reload.
public enum HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The certificate chain or key file is missing, unreadable, not PEM, or the key is not
    /// the certificate's; the detail names the file and OpenSSL's reason.
    case tlsCredentials(detail: String)
    /// The listen address is not an IPv4 or IPv6 literal.
    case badListenAddress(String)
    /// bind or listen failed (address in use, permission).
    case listenFailed(address: String, detail: String)
    /// A system call failed (epoll, eventfd, pipe, sigaction, opening the access log).
    case system(String)

    public var description: String {
        switch self {
        case .tlsCredentials(let detail): return "TLS certificate or key: \(detail)"
        case .badListenAddress(let text): return "--listen: \(text)"
        case .listenFailed(let address, let detail): return "cannot listen on \(address): \(detail)"
        case .system(let text): return text
        }
    }
}
