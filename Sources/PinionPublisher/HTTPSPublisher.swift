// `pinion serve` and `pinion witness`: PinionSystem's HTTPS server engine (HTTPSServer: sockets, TLS, epoll loops)
// around a request handler (the published tree's static files, or the witness), with the metrics listener and the
// report collector beside it.

import Foundation
import PinionCore
import PinionSystem
import Synchronization

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

    private let engine: HTTPSServer
    private let log: AccessLog
    private let metricsServer: MetricsServer?
    private let collector: ReportCollector?
    /// The counters, when metrics are on (`configuration.metricsListen`).
    public let metrics: ServerMetrics?
    /// `http://ADDRESS:PORT` of the metrics listener, when it is on.
    public var metricsURL: String? { metricsServer?.url }

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
        do throws(HTTPServerError) {
            engine = try HTTPSServer(
                settings: HTTPServerSettings(
                    host: configuration.host, port: configuration.port,
                    certificateChainFile: configuration.certificateChainFile,
                    privateKeyFile: configuration.privateKeyFile, workers: configuration.workers,
                    maxConnections: configuration.maxConnections,
                    maxRequestsPerConnection: configuration.maxRequestsPerConnection,
                    headerTimeout: configuration.headerTimeout, idleTimeout: configuration.idleTimeout,
                    writeTimeout: configuration.writeTimeout, requestLimits: configuration.requestLimits,
                    clock: configuration.deadlineClock),
                accessLog: accessLog)
        } catch {
            throw PublisherError(error)
        }
        port = engine.port
        maxConnections = engine.maxConnections
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
                    settings: settings, collector: made, repository: configuration.repository, metrics: metrics,
                    clock: configuration.clock)
            } else {
                collector = nil
            }
        } catch {
            throw .reportStore(error)
        }
        let services = ServerServices(
            metrics: metrics, status: files.map { TreeStatusReader(repository: configuration.repository, files: $0) },
            clock: configuration.clock, reports: intake, shared: engine.shared)
        if let metrics, let address = configuration.metricsListen {
            metricsServer = try MetricsServer(
                host: address.host, port: address.port, services: services, metrics: metrics)
        } else {
            metricsServer = nil
        }
        let answering: any HTTPRequestHandler
        if let handler {
            answering = handler
        } else if let files {
            answering = StaticTreeHandler(files: files, cors: configuration.cors, services: services)
        } else {
            throw .badSetting("no request handler")
        }
        let observers: [(any HTTPServerObserver)?] = (0..<configuration.workers).map { index in
            metrics.map { WorkerObserver(worker: $0.shards[index], server: $0) }
        }
        do throws(HTTPServerError) {
            try engine.attach(handler: answering, observers: observers)
        } catch {
            throw PublisherError(error)
        }
    }

    deinit {
        metricsServer?.stop()
        collector?.stop()
    }

    /// Starts the worker threads; returns at once.
    public func start() {
        engine.start {
            collector?.start()
            metricsServer?.start()
        }
    }

    /// Loads the certificate chain and key again from the configured files; new
    /// connections use them, open connections keep theirs. On failure the old ones stay.
    ///
    /// - Throws: `PublisherError.tlsCredentials`.
    public func reloadCredentials() throws(PublisherError) {
        do throws(HTTPServerError) {
            try engine.reloadCredentials()
        } catch {
            metrics?.reloadFailures.add()
            throw PublisherError(error)
        }
        metrics?.reloadSuccesses.add()
    }

    /// The connection cap in force: the configured one, lowered when the process may not
    /// open that many descriptors (then file opens would fail under load).
    public let maxConnections: Int

    /// Connections open now (accepted and not yet closed).
    public var openConnections: Int { engine.openConnections }

    /// Makes every worker check its connections' deadlines now against
    /// `configuration.deadlineClock`, and returns once each has (tests advance a
    /// `ManualMonotonicClock`, then call this, instead of sleeping until a deadline passes).
    ///
    /// - Returns: true when every worker ran the check within 10 s.
    @discardableResult
    package func checkDeadlinesNow() -> Bool { engine.checkDeadlinesNow() }

    /// Stops accepting, closes idle connections, lets requests in flight finish (each
    /// closing after its response), and returns when all connections are closed or
    /// `timeout` seconds have passed, after which what is left is closed.
    ///
    /// - Parameter timeout: seconds to wait for requests in flight.
    /// - Returns: true when every connection finished within `timeout`.
    @discardableResult
    public func drain(timeout: Double) -> Bool {
        let clean = engine.drain(timeout: timeout)
        // After the workers: every report they queued is written and answered first.
        collector?.stop()
        metricsServer?.stop()
        log.flush()
        return clean
    }
}
