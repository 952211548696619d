// The HTTPS server engine of `pinion serve` and `pinion witness`: the listening socket, the server TLS context and one
// epoll event loop (Worker) per thread around a request handler. Written here because no HTTP server library is
// available to this package; what to answer is the handler's (PinionPublisher).

import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The engine. Create it (binds and loads the credentials, so errors show before anything is
/// announced), `attach` the handler, `start()` it, then `drain(timeout:)` to stop. Workers
/// share the listening socket (EPOLLEXCLUSIVE), the handler and the current TLS context.
package final class HTTPSServer: Sendable {
    /// The settings it runs with.
    package let settings: HTTPServerSettings
    /// The bound port (the system's choice when the settings asked for 0).
    package let port: UInt16
    /// The drain and force flags and the open connection count, shared with the metrics.
    package let shared: SharedState

    private let listener: Int32
    private let tls: CurrentTLSContext
    private let log: AccessLog
    private let workers = Mutex<[Worker]>([])
    private let finished = DispatchGroup()
    private let lifecycle = Mutex(Lifecycle.created)
    private let listenerClosed = Atomic<Bool>(false)

    private enum Lifecycle { case created, running, draining, stopped }

    /// Loads the certificate and key, binds the socket and fits the connection cap.
    ///
    /// - Throws: `HTTPServerError.tlsCredentials`, `.badListenAddress`, `.listenFailed`.
    package init(settings: HTTPServerSettings, accessLog: AccessLog) throws(HTTPServerError) {
        self.settings = settings
        log = accessLog
        tls = CurrentTLSContext(
            try ServerTLSContext(
                certificateChainFile: settings.certificateChainFile, privateKeyFile: settings.privateKeyFile))
        (listener, port) = try Self.listen(host: settings.host, port: settings.port)
        shared = SharedState(maxConnections: Self.fitConnectionCap(settings))
    }

    /// Makes the event loops that answer through `handler`, one per configured worker;
    /// `observers[i]` (when there) counts for worker i. Call once, before `start()`.
    ///
    /// - Throws: `HTTPServerError.system` when epoll or eventfd fail.
    package func attach(handler: any HTTPRequestHandler, observers: [(any HTTPServerObserver)?])
        throws(HTTPServerError)
    {
        var made: [Worker] = []
        for index in 0..<settings.workers {
            made.append(
                try Worker(
                    listener: listener, handler: handler, tls: tls, log: log, shared: shared, settings: settings,
                    observer: index < observers.count ? observers[index] : nil))
        }
        workers.withLock { $0 = made }
    }

    deinit { closeListener() }

    /// Closes the listening socket once, so that new connections are refused rather than
    /// left waiting in the backlog of a server that no longer accepts.
    private func closeListener() {
        if !listenerClosed.exchange(true, ordering: .sequentiallyConsistent) { close(listener) }
    }

    /// Starts the worker threads, after running `first` (the caller's own threads); returns
    /// at once. A second call, or a call after `drain`, does nothing, `first` included.
    package func start(after first: () -> Void = {}) {
        let starting = lifecycle.withLock { state -> Bool in
            guard state == .created else { return false }
            state = .running
            return true
        }
        guard starting else { return }
        first()
        for worker in workers.withLock({ $0 }) {
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

    /// Loads the certificate chain and key again; new connections use them, open
    /// connections keep theirs. On failure the old ones stay.
    ///
    /// - Throws: `HTTPServerError.tlsCredentials`.
    package func reloadCredentials() throws(HTTPServerError) {
        tls.replace(
            with: try ServerTLSContext(
                certificateChainFile: settings.certificateChainFile, privateKeyFile: settings.privateKeyFile))
    }

    /// The connection cap in force: the configured one, lowered when the process may not
    /// open that many descriptors.
    package var maxConnections: Int { shared.maxConnections }

    /// Connections open now (accepted and not yet closed).
    package var openConnections: Int { shared.open.load(ordering: .relaxed) }

    /// Makes every worker check its connections' deadlines against the settings' clock now,
    /// and returns once each has (or after 10 s). Tests advance a `ManualMonotonicClock`
    /// and call this instead of sleeping until a deadline passes.
    ///
    /// - Returns: true when every worker ran the check.
    @discardableResult
    package func checkDeadlinesNow() -> Bool {
        var all = true
        for worker in workers.withLock({ $0 }) where !worker.checkDeadlinesNow(timeout: 10) { all = false }
        return all
    }

    /// Raises the soft descriptor limit to the hard one and returns the cap that fits in it,
    /// keeping descriptors for the listener, the event loops, files being served and logs.
    private static func fitConnectionCap(_ settings: HTTPServerSettings) -> Int {
        var limit = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0 else { return settings.maxConnections }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        let reserve = 64 + 16 * settings.workers
        let available = Int(clamping: limit.rlim_cur) - reserve  // RLIM_INFINITY clamps to Int.max
        return max(1, min(settings.maxConnections, available))
    }

    /// Stops accepting, closes idle connections, lets requests in flight finish (each
    /// closing after its response), and returns when all connections are closed or
    /// `timeout` seconds have passed, after which what is left is closed.
    ///
    /// - Parameter timeout: seconds to wait for requests in flight.
    /// - Returns: true when every connection finished within `timeout`.
    @discardableResult
    package func drain(timeout: Double) -> Bool {
        let wasRunning = lifecycle.withLock { state -> Bool in
            let running = state == .running
            if state != .stopped { state = running ? .draining : .stopped }
            return running
        }
        guard wasRunning else {
            closeListener()
            return true
        }
        let workers = workers.withLock { $0 }
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
        lifecycle.withLock { $0 = .stopped }
        return clean
    }

    private static func listen(host: String, port: UInt16) throws(HTTPServerError) -> (Int32, UInt16) {
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
package final class SharedState: Sendable {
    /// Set by `drain`: stop accepting, close idle connections, close after each response.
    package let draining = Atomic<Bool>(false)
    /// Set when the drain timeout passed: close everything now.
    package let forceClose = Atomic<Bool>(false)
    /// Connections accepted and not yet closed, across workers.
    package let open = Atomic<Int>(0)
    /// The connection cap in force.
    package let maxConnections: Int

    package init(maxConnections: Int) { self.maxConnections = maxConnections }
}
