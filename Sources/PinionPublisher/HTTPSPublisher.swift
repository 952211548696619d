// `pinion serve` and `pinion witness`: an HTTPS server on OpenSSL around a request handler
// (the published tree's static files, or the witness). Each worker thread runs its own epoll
// loop over non-blocking sockets and non-blocking OpenSSL; workers share the listening
// socket (EPOLLEXCLUSIVE), the handler and the current TLS context. Written here because no
// HTTP server library is available to this package.

import Dispatch
import Foundation
import PinionCore
import PinionSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The publisher's HTTPS server. Create it (binds and loads everything, so errors show
/// before anything is announced), `start()` it, then `drain(timeout:)` to stop.
///
/// Responses (docs/DESIGN.md §9, §14): GET and HEAD of `/v1/...json` files of the tree and
/// `/healthz` (503 with the reason while a served manifest or newest root has expired);
/// `POST /v1/{scope}/reports` when report collection is on; 405 for other methods; 404 (`Cache-Control: no-store`) for anything else;
/// ETag = quoted SHA-256 hex of the body; `If-None-Match` gives 304; `manifest.json` and
/// `index.json` get `no-cache`, `root/` and `history/` files
/// `public, max-age=31536000, immutable`.
public final class HTTPSPublisher: Sendable {
    /// The settings it runs with.
    public let configuration: PublisherConfiguration
    /// The bound port (the system's choice when the configuration asked for 0).
    public let port: UInt16
    /// `https://ADDRESS:PORT` (IPv6 in brackets).
    public var url: String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "https://\(host):\(port)"
    }

    private let listener: Int32
    private let tls: CurrentTLSContext
    private let log: AccessLog
    private let shared: SharedState
    private let workers: [Worker]
    private let finished = DispatchGroup()
    private let lifecycle = Mutex(Lifecycle.created)
    private let metricsServer: MetricsServer?
    private let collector: ReportCollector?
    /// The counters, when metrics are on (`configuration.metricsListen`).
    public let metrics: ServerMetrics?
    /// `http://ADDRESS:PORT` of the metrics listener, when it is on.
    public var metricsURL: String? { metricsServer?.url }

    private enum Lifecycle { case created, running, draining, stopped }

    /// Binds the socket, loads the certificate and key and opens the tree.
    ///
    /// - Parameters:
    ///   - configuration: the settings.
    ///   - accessLog: where request lines go.
    /// - Throws: `PublisherError`.
    public convenience init(configuration: PublisherConfiguration, accessLog: AccessLog = .standardError)
        throws(PublisherError)
    {
        let files = try PublishedFiles(directory: configuration.repository, maxFileBytes: configuration.maxFileBytes)
        try self.init(configuration: configuration, accessLog: accessLog, files: files, handler: nil)
    }

    /// The server stack around another handler (`pinion witness`): `configuration.repository`
    /// is not read, and metrics and report collection must be off.
    ///
    /// - Throws: `PublisherError`.
    convenience init(
        configuration: PublisherConfiguration, handler: any HTTPRequestHandler, accessLog: AccessLog
    ) throws(PublisherError) {
        guard configuration.metricsListen == nil, configuration.reports == nil else {
            throw .badSetting("metrics and report collection exist only for a published tree")
        }
        try self.init(configuration: configuration, accessLog: accessLog, files: nil, handler: handler)
    }

    private init(
        configuration: PublisherConfiguration, accessLog: AccessLog, files: PublishedFiles?,
        handler: (any HTTPRequestHandler)?
    ) throws(PublisherError) {
        guard configuration.workers >= 1, configuration.workers <= 256 else {
            throw .badSetting("workers must be between 1 and 256")
        }
        guard configuration.maxConnections >= 1 else { throw .badSetting("the connection cap must be at least 1") }
        guard configuration.maxRequestsPerConnection >= 1 else {
            throw .badSetting("requests per connection must be at least 1")
        }
        for (name, value) in [
            ("header timeout", configuration.headerTimeout), ("idle timeout", configuration.idleTimeout),
            ("write timeout", configuration.writeTimeout), ("drain timeout", configuration.drainTimeout),
        ] {
            guard value.isFinite, value > 0, value <= 86_400 else {
                throw .badSetting("\(name) must be more than 0 and at most 86400 seconds")
            }
        }
        var configuration = configuration
        if configuration.reports != nil, configuration.requestLimits.maxBodyBytes == 0 {
            configuration.requestLimits.maxBodyBytes = ReceivedReport.maxBodyBytes
        }
        self.configuration = configuration
        log = accessLog
        tls = CurrentTLSContext(
            try ServerTLSContext(
                certificateChainFile: configuration.certificateChainFile,
                privateKeyFile: configuration.privateKeyFile))
        (listener, port) = try Self.listen(host: configuration.host, port: configuration.port)
        maxConnections = Self.fitConnectionCap(configuration)
        shared = SharedState(maxConnections: maxConnections)
        let metrics = configuration.metricsListen == nil ? nil : ServerMetrics(workers: configuration.workers)
        self.metrics = metrics
        var intake: ReportIntake?
        do {
            if let settings = configuration.reports {
                let made = try ReportCollector(
                    settings: settings, servedTree: configuration.repository, metrics: metrics,
                    clock: configuration.clock)
                collector = made
                intake = ReportIntake(
                    settings: settings, collector: made, repository: configuration.repository, metrics: metrics)
            } else {
                collector = nil
            }
        } catch {
            close(listener)
            throw .reportStore(error)
        }
        let services = ServerServices(
            metrics: metrics, status: files.map { TreeStatusReader(repository: configuration.repository, files: $0) },
            clock: configuration.clock, reports: intake, shared: shared)
        if let metrics, let address = configuration.metricsListen {
            do {
                metricsServer = try MetricsServer(
                    host: address.host, port: address.port, services: services, metrics: metrics)
            } catch {
                close(listener)
                throw error
            }
        } else {
            metricsServer = nil
        }
        let answering: any HTTPRequestHandler
        if let handler {
            answering = handler
        } else if let files {
            answering = StaticTreeHandler(files: files, cors: configuration.cors, services: services)
        } else {
            close(listener)
            throw .badSetting("no request handler")
        }
        var made: [Worker] = []
        for index in 0..<configuration.workers {
            do {
                made.append(
                    try Worker(
                        listener: listener, handler: answering, tls: tls, log: log, shared: shared,
                        configuration: configuration, services: services, metrics: metrics?.shards[index]))
            } catch {
                close(listener)
                throw error
            }
        }
        workers = made
    }

    deinit {
        closeListener()
        metricsServer?.stop()
        collector?.stop()
    }

    private let listenerClosed = Atomic<Bool>(false)

    /// Closes the listening socket once, so that new connections are refused rather than
    /// left waiting in the backlog of a server that no longer accepts.
    private func closeListener() {
        if !listenerClosed.exchange(true, ordering: .sequentiallyConsistent) { close(listener) }
    }

    /// Starts the worker threads; returns at once.
    public func start() {
        let first = lifecycle.withLock { state -> Bool in
            guard state == .created else { return false }
            state = .running
            return true
        }
        guard first else { return }
        collector?.start()
        metricsServer?.start()
        for worker in workers {
            finished.enter()
            let group = finished
            let thread = Thread {
                worker.run()
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Loads the certificate chain and key again from the configured files; new
    /// connections use them, open connections keep theirs. On failure the old ones stay.
    ///
    /// - Throws: `PublisherError.tlsCredentials`.
    public func reloadCredentials() throws(PublisherError) {
        let context: ServerTLSContext
        do {
            context = try ServerTLSContext(
                certificateChainFile: configuration.certificateChainFile, privateKeyFile: configuration.privateKeyFile)
        } catch {
            metrics?.reloadFailures.add()
            throw error
        }
        tls.replace(with: context)
        metrics?.reloadSuccesses.add()
    }

    /// The connection cap in force: the configured one, lowered when the process may not
    /// open that many descriptors (then file opens would fail under load).
    public let maxConnections: Int

    /// Raises the soft descriptor limit to the hard one and returns the cap that fits in it,
    /// keeping descriptors for the listener, the event loops, files being served and logs.
    private static func fitConnectionCap(_ configuration: PublisherConfiguration) -> Int {
        var limit = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0 else { return configuration.maxConnections }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        let reserve = 64 + 16 * configuration.workers
        let available = Int(clamping: limit.rlim_cur) - reserve  // RLIM_INFINITY clamps to Int.max
        return max(1, min(configuration.maxConnections, available))
    }

    /// Connections open now (accepted and not yet closed).
    public var openConnections: Int { shared.open.load(ordering: .relaxed) }

    /// Stops accepting, closes idle connections, lets requests in flight finish (each
    /// closing after its response), and returns when all connections are closed or
    /// `timeout` seconds have passed, after which what is left is closed.
    ///
    /// - Parameter timeout: seconds to wait for requests in flight.
    /// - Returns: true when every connection finished within `timeout`.
    @discardableResult
    public func drain(timeout: Double) -> Bool {
        let wasRunning = lifecycle.withLock { state -> Bool in
            let running = state == .running
            if state != .stopped { state = running ? .draining : .stopped }
            return running
        }
        guard wasRunning else {
            closeListener()
            return true
        }
        shared.draining.store(true, ordering: .sequentiallyConsistent)
        // Stop listening at once (the descriptor stays open until the workers are done with
        // it): new clients are refused and can fail over instead of waiting in the backlog.
        shutdown(listener, Int32(SHUT_RDWR))
        for worker in workers { worker.wake() }
        let clean = finished.wait(timeout: .now() + timeout) == .success
        if !clean {
            shared.forceClose.store(true, ordering: .sequentiallyConsistent)
            for worker in workers { worker.wake() }
            finished.wait()
        }
        closeListener()
        // After the workers: every report they queued is written and answered first.
        collector?.stop()
        metricsServer?.stop()
        lifecycle.withLock { $0 = .stopped }
        log.flush()
        return clean
    }

    private static func listen(host: String, port: UInt16) throws(PublisherError) -> (Int32, UInt16) {
        do throws(ListeningSocket.Failure) {
            let made = try ListeningSocket.open(host: host, port: port, nonBlocking: true, backlog: 1024)
            return (made.descriptor, made.port)
        } catch {
            switch error {
            case .notAnIPLiteral:
                throw .badListenAddress("\(host) is not an IPv4 or IPv6 address (host names are not looked up)")
            case .system(let address, let detail): throw .listenFailed(address: address, detail: detail)
            }
        }
    }
}

/// State every worker reads: the drain and force flags and the open connection count.
final class SharedState: Sendable {
    let draining = Atomic<Bool>(false)
    let forceClose = Atomic<Bool>(false)
    let open = Atomic<Int>(0)
    let maxConnections: Int

    init(maxConnections: Int) { self.maxConnections = maxConnections }
}
