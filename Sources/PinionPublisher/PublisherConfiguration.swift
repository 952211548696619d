// Settings and errors of `pinion serve`, the publisher's HTTPS server (docs/DESIGN.md §9).

import Foundation
import PinionCore
import PinionSystem

/// Where and how the publisher serves a tree. Times are in seconds.
public struct PublisherConfiguration: Sendable {
    /// The directory given to `pinion publish --repo`.
    public var repository: String
    /// PEM file with the server certificate first, then its intermediates (sent as given).
    public var certificateChainFile: String
    /// PEM file with the unencrypted private key of the certificate.
    public var privateKeyFile: String
    /// IP literal to bind (no DNS lookups): `127.0.0.1`, `0.0.0.0`, `::1`, `::`.
    public var host: String
    /// TCP port; 0 lets the system pick a free one (read it from `HTTPSPublisher.port`).
    public var port: UInt16
    /// Worker threads, each running its own event loop; at least 1.
    public var workers: Int
    /// Most connections open at once across all workers; more are accepted and closed
    /// at once (no TLS handshake is spent on them).
    public var maxConnections: Int
    /// Seconds from accept (or from the first byte of a later request on a kept-alive
    /// connection) to a complete request head, TLS handshake included; then the
    /// connection is closed (slowloris).
    public var headerTimeout: Double
    /// Seconds a kept-alive connection may wait for its next request.
    public var idleTimeout: Double
    /// Seconds allowed to send one response; a reader slower than that is dropped.
    public var writeTimeout: Double
    /// Requests served on one connection before it is closed (`Connection: close`).
    public var maxRequestsPerConnection: Int
    /// Seconds a drain (SIGTERM, SIGINT) waits for requests in flight before closing
    /// what is left.
    public var drainTimeout: Double
    /// Limits on request heads (414, 431).
    public var requestLimits: HTTPRequestLimits
    /// Largest file served, in bytes.
    public var maxFileBytes: Int
    /// The plain-HTTP listener of /metrics and /healthz (IP literal and port, 0: a free
    /// one); nil: no metrics, and the request path counts nothing (docs/DESIGN.md §14).
    public var metricsListen: (host: String, port: UInt16)?
    /// Pin-failure report collection (`POST /v1/{scope}/reports`); nil: off (405).
    public var reports: ReportSettings?
    /// The wall clock that /healthz and /metrics judge expiry by, and that report times
    /// come from (injectable for tests).
    public var clock: @Sendable () -> Timestamp
    /// Adds `Access-Control-Allow-Origin: *` to every GET and HEAD answer, so that a
    /// browser-based auditor can fetch the tree (off by default).
    public var cors = false
    /// The monotonic clock the header, idle and write deadlines are measured on
    /// (`CLOCK_MONOTONIC`; tests set a `ManualMonotonicClock` and advance it).
    package var deadlineClock: any MonotonicClock = SystemMonotonicClock()

    /// A configuration with production defaults: 1 worker per core, 4,096 connections,
    /// 10 s header deadline, 30 s keep-alive, 30 s per response, 1,000 requests per
    /// connection, 30 s drain.
    public init(
        repository: String, certificateChainFile: String, privateKeyFile: String, host: String = "127.0.0.1",
        port: UInt16 = 8443
    ) {
        self.repository = repository
        self.certificateChainFile = certificateChainFile
        self.privateKeyFile = privateKeyFile
        self.host = host
        self.port = port
        workers = 1
        maxConnections = 4096
        headerTimeout = 10
        idleTimeout = 30
        writeTimeout = 30
        maxRequestsPerConnection = 1000
        drainTimeout = 30
        requestLimits = HTTPRequestLimits()
        maxFileBytes = 64 << 20
        metricsListen = nil
        reports = nil
        clock = { Timestamp(Date()) }
    }
}

/// Why the publisher could not start, reload or run.
public enum PublisherError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The tree's directory cannot be opened.
    case repositoryUnreadable(path: String, detail: String)
    /// The certificate chain or key cannot be loaded, or they do not match; `detail` is
    /// OpenSSL's reason.
    case tlsCredentials(detail: String)
    /// The listen address is not an IP literal.
    case badListenAddress(String)
    /// socket/bind/listen failed (errno text), e.g. the port is in use.
    case listenFailed(address: String, detail: String)
    /// A setting is out of range.
    case badSetting(String)
    /// The system refused a resource (epoll, eventfd, threads).
    case system(String)
    /// The report database cannot be opened or used.
    case reportStore(ReportStoreError)

    /// The engine's error as the publisher's: the same cases, the same text.
    public init(_ error: HTTPServerError) {
        switch error {
        case .tlsCredentials(let detail): self = .tlsCredentials(detail: detail)
        case .badListenAddress(let text): self = .badListenAddress(text)
        case .listenFailed(let address, let detail): self = .listenFailed(address: address, detail: detail)
        case .system(let text): self = .system(text)
        }
    }

    public var description: String {
        switch self {
        case .repositoryUnreadable(let path, let detail): return "\(path): cannot open the tree: \(detail)"
        case .tlsCredentials(let detail): return "TLS certificate or key: \(detail)"
        case .badListenAddress(let text): return "--listen: \(text)"
        case .listenFailed(let address, let detail): return "cannot listen on \(address): \(detail)"
        case .badSetting(let text): return text
        case .system(let text): return text
        case .reportStore(let error): return "--reports: \(error)"
        }
    }
}
