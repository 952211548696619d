// The side listener of `pinion serve --metrics-listen`: plain HTTP, one request per
// connection, GET /metrics (Prometheus text format) and GET /healthz, on its own thread.

import Dispatch
import Foundation
import PinionCore
import PinionSystem
import Synchronization

/// What the workers and the metrics listener share besides the files: the counters (nil
/// when metrics are off, so the request path pays nothing), the tree's status for health,
/// the clock, and report collection (nil when off).
final class ServerServices: Sendable {
    let metrics: ServerMetrics?
    /// The tree's status reader; nil when the server answers no tree (`pinion witness`).
    let status: TreeStatusReader?
    let clock: @Sendable () -> Timestamp
    let reports: ReportIntake?
    let shared: SharedState

    init(
        metrics: ServerMetrics?, status: TreeStatusReader?, clock: @escaping @Sendable () -> Timestamp,
        reports: ReportIntake?, shared: SharedState
    ) {
        self.metrics = metrics
        self.status = status
        self.clock = clock
        self.reports = reports
        self.shared = shared
    }

    /// Seconds a reading of the tree's status is reused: /healthz on the public port must not
    /// let a flood of requests re-read and re-parse the tree at every one.
    static let statusLifetimeNanoseconds: UInt64 = 1_000_000_000

    private let cachedStatus = Mutex<(readAt: UInt64, scopes: [ScopeStatus])?>(nil)

    /// The tree's status, read at most once a second (expiry is still judged at `clock()`).
    func scopes() -> [ScopeStatus] {
        let now = monotonicNanoseconds()
        if let cached = cachedStatus.withLock({ $0 }), now &- cached.readAt < Self.statusLifetimeNanoseconds {
            return cached.scopes
        }
        let scopes = status?.read() ?? []
        cachedStatus.withLock { $0 = (now, scopes) }
        return scopes
    }

    /// The /healthz verdict now.
    func health() -> HealthVerdict { HealthVerdict(scopes: scopes(), at: clock()) }

    /// The /metrics text now.
    func exposition(metrics: ServerMetrics) -> String {
        let scopes = scopes()
        return MetricsSnapshot(
            metrics: metrics, openConnections: shared.open.load(ordering: .relaxed),
            connectionCap: shared.maxConnections, scopes: scopes, health: HealthVerdict(scopes: scopes, at: clock()),
            reportsEnabled: reports != nil, reportQueueCapacity: reports?.collector.queueCapacity ?? 0
        ).render()
    }
}

/// The plain-HTTP metrics listener. Up to `maximumConcurrentScrapes` connections are served
/// at once, each on a thread of its own, closed after its response, and the whole
/// request (every read) must arrive within `timeoutMilliseconds`. When every slot is taken,
/// a new connection takes the slot of the oldest one still waiting for its request (a
/// scraper sends its request as soon as it connects; only idle or trickling clients wait),
/// so idle clients cannot lock scrapes or /healthz out; only when every slot is writing a
/// response is the new connection closed at once. A flood of new connections can still
/// crowd out a scraper: bind the listener where only the monitoring network reaches it.
final class MetricsServer: Sendable {
    /// Milliseconds a whole request may take to arrive, and one write may wait.
    static let timeoutMilliseconds: Int32 = 5_000
    /// Connections served at once; the listener is for a few scrapers and health checks.
    static let maximumConcurrentScrapes = 8
    private let slots = DispatchSemaphore(value: MetricsServer.maximumConcurrentScrapes)
    /// Connections still reading their request, oldest first, by serial number.
    private let waiting = Mutex<[(serial: UInt64, connection: TCPConnection)]>([])
    private let serials = Atomic<UInt64>(0)

    private let listener: TCPListener
    private let services: ServerServices
    private let metrics: ServerMetrics
    private let stopping = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// The bound port.
    var port: UInt16 { listener.port }
    /// `http://ADDRESS:PORT`.
    var url: String {
        let host = listener.host.contains(":") ? "[\(listener.host)]" : listener.host
        return "http://\(host):\(listener.port)"
    }

    /// Binds the listener.
    ///
    /// - Throws: `PublisherError.listenFailed` or `.badListenAddress`.
    init(host: String, port: UInt16, services: ServerServices, metrics: ServerMetrics) throws(PublisherError) {
        guard IPLiteral.canonical(host) != nil else {
            throw .badListenAddress("--metrics-listen: \(host) is not an IPv4 or IPv6 address")
        }
        do {
            listener = try TCPListener(host: host, port: port)
        } catch {
            throw .listenFailed(address: "\(host):\(port)", detail: error.detail)
        }
        self.services = services
        self.metrics = metrics
    }

    /// Starts the thread.
    func start() {
        guard !started.exchange(true, ordering: .sequentiallyConsistent) else { return }
        let thread = Thread { [self] in
            while !stopping.load(ordering: .relaxed) {
                guard let connection = listener.accept(timeoutMilliseconds: 200) else { continue }
                guard takeSlot() else { continue }  // Closed at once (released here).
                let serial = serials.wrappingAdd(1, ordering: .relaxed).oldValue
                waiting.withLock { $0.append((serial, connection)) }
                // A thread of its own, not the shared dispatch pool: the handler blocks on
                // reads for up to the timeout, and on 2 cores a pool busy with other work
                // (or with idle scrapers) would make a scrape wait behind them.
                let handler = Thread { [self] in
                    defer {
                        received(serial)
                        slots.signal()
                    }
                    handle(connection, serial: serial)
                }
                handler.stackSize = 1 << 20
                handler.start()
            }
            finished.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// A free slot, or the slot of the oldest connection still waiting for its request (shut
    /// down, so that its handler returns at once); false when every slot is writing a response.
    private func takeSlot() -> Bool {
        if slots.wait(timeout: .now()) == .success { return true }
        guard let oldest = waiting.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { return false }
        oldest.connection.shutdown()
        return slots.wait(timeout: .now() + .milliseconds(Int(Self.timeoutMilliseconds))) == .success
    }

    /// The connection `serial` has its request (or is done): it no longer gives way.
    private func received(_ serial: UInt64) {
        waiting.withLock { $0.removeAll { $0.serial == serial } }
    }

    /// Stops accepting and waits for the thread.
    func stop() {
        guard started.load(ordering: .sequentiallyConsistent),
            !stopping.exchange(true, ordering: .sequentiallyConsistent)
        else { return }
        listener.shutdown()
        finished.wait()
    }

    private func handle(_ connection: TCPConnection, serial: UInt64) {
        var buffer: [UInt8] = []
        var clock = HTTPDateClock()
        clock.update()
        let limits = HTTPRequestLimits(maxRequestLineBytes: 1024, maxHeaderBytes: 8192, maxHeaderCount: 50)
        // One deadline for the whole request: a client trickling a byte at a time gets no
        // fresh timeout per read.
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(Self.timeoutMilliseconds) * 1_000_000
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return }
            let left = Int32(clamping: (deadline - now + 999_999) / 1_000_000)
            let chunk = connection.read(maximum: 4096, timeoutMilliseconds: left)
            if chunk.isEmpty { return }
            buffer += chunk
            do {
                if case .complete(let head, _) = try HTTPRequestParser.parse(buffer[...], limits: limits) {
                    received(serial)
                    let response = respond(to: head, date: clock.httpDate)
                    connection.write(response.head + response.body, timeoutMilliseconds: Self.timeoutMilliseconds)
                    return
                }
            } catch {
                let response = HTTPResponse.text(
                    error.status, HTTPResponse.reason(error.status), sendBody: true, close: true, date: clock.httpDate)
                connection.write(response.head + response.body, timeoutMilliseconds: Self.timeoutMilliseconds)
                return
            }
        }
    }

    private func respond(to head: HTTPRequestHead, date: String) -> HTTPResponse {
        let sendBody: Bool
        switch head.method {
        case .get: sendBody = true
        case .head: sendBody = false
        case .other:
            return HTTPResponse.text(
                405, "Method Not Allowed", sendBody: true, close: true, date: date, extra: [("Allow", "GET, HEAD")])
        }
        switch head.path {
        case "/metrics":
            return HTTPResponse.make(
                status: 200,
                headers: [
                    ("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store"),
                ],
                body: Array(services.exposition(metrics: metrics).utf8), sendBody: sendBody, close: true, date: date)
        case "/healthz":
            let verdict = services.health()
            return HTTPResponse.text(
                verdict.isHealthy ? 200 : 503, verdict.text, sendBody: sendBody, close: true, date: date)
        default:
            return HTTPResponse.text(404, "Not Found", sendBody: sendBody, close: true, date: date)
        }
    }
}
