// One event loop of `pinion serve` and `pinion witness`: epoll over the shared listening socket, a wake-up
// eventfd and its own connections, each a small state machine over non-blocking OpenSSL.

import COpenSSL
import CPinionShims
import Dispatch
import PinionCrypto
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An event loop thread. Its connections are touched by its own thread only.
final class Worker: @unchecked Sendable {
    // @unchecked: everything mutable here is confined to the worker's thread; other
    // threads only call `wake()`, which writes to an eventfd.
    private let listener: Int32
    private let epoll: Int32
    private let wakeup: Int32
    private let handler: any HTTPRequestHandler
    private let tls: CurrentTLSContext
    private let log: AccessLog
    private let shared: SharedState
    private let settings: HTTPServerSettings
    /// This worker's counters; nil when metrics are off.
    private let metrics: (any HTTPServerObserver)?
    /// Answers handed back later (report commits): descriptor, token, the response maker.
    private let lateAnswers = Mutex<[(Int32, UInt64, HTTPLateResponse)]>([])
    private var nextAnswerToken: UInt64 = 0
    /// Set by `checkDeadlinesNow`: the next wake-up checks every deadline and signals `deadlinesChecked`.
    private let deadlineCheckRequested = Atomic<Bool>(false)
    private let deadlinesChecked = DispatchSemaphore(value: 0)
    private var connections: [Int32: Connection] = [:]
    private var listening = false
    private var acceptPausedUntil: UInt64 = 0
    private var clock = HTTPDateClock()
    private var scratch = [UInt8](repeating: 0, count: 16 * 1024)

    init(
        listener: Int32, handler: any HTTPRequestHandler, tls: CurrentTLSContext, log: AccessLog, shared: SharedState,
        settings: HTTPServerSettings, observer: (any HTTPServerObserver)?
    ) throws(HTTPServerError) {
        self.metrics = observer
        self.listener = listener
        self.handler = handler
        self.tls = tls
        self.log = log
        self.shared = shared
        self.settings = settings
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw .system("epoll_create1: \(String(cString: strerror(errno)))") }
        wakeup = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeup >= 0 else {
            close(epoll)
            throw .system("eventfd: \(String(cString: strerror(errno)))")
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wakeup
        epoll_ctl(epoll, EPOLL_CTL_ADD, wakeup, &event)
    }

    deinit {
        close(epoll)
        close(wakeup)
    }

    /// Wakes the loop so it notices the drain or force flags.
    func wake() {
        var one: UInt64 = 1
        _ = write(wakeup, &one, 8)
    }

    /// Has the loop check every connection's deadline at its next wake-up, and waits (at
    /// most `timeout` seconds) until it has.
    ///
    /// - Returns: false when the loop did not check in time (not running, or stopped).
    func checkDeadlinesNow(timeout: Double) -> Bool {
        deadlineCheckRequested.store(true, ordering: .sequentiallyConsistent)
        wake()
        return deadlinesChecked.wait(timeout: .now() + timeout) == .success
    }

    /// Queues a late answer for the connection `descriptor` (if it still waits for `token`)
    /// and wakes the loop to send it; called from any thread.
    fileprivate func queueLateAnswer(descriptor: Int32, token: UInt64, _ make: @escaping HTTPLateResponse) {
        lateAnswers.withLock { $0.append((descriptor, token, make)) }
        wake()
    }

    /// Now on the settings' monotonic clock, in nanoseconds.
    private func monotonicNanoseconds() -> UInt64 { settings.clock.nanoseconds() }

    // MARK: - Loop

    func run() {
        setListening(true)
        var events = [epoll_event](repeating: epoll_event(), count: 128)
        var lastSweep = monotonicNanoseconds()
        var drainSeen = false
        while true {
            if shared.forceClose.load(ordering: .relaxed) {
                for connection in Array(connections.values) { drop(connection) }
                break
            }
            if !drainSeen, shared.draining.load(ordering: .relaxed) {
                drainSeen = true
                setListening(false)
                for connection in Array(connections.values) where connection.isIdle { drop(connection) }
                for connection in connections.values { connection.closeAfterResponse = true }
            }
            if drainSeen, connections.isEmpty { break }
            let now = monotonicNanoseconds()
            if !listening, !drainSeen, now >= acceptPausedUntil { setListening(true) }

            let count = events.withUnsafeMutableBufferPointer { buffer in
                epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), 100)
            }
            if count < 0 {
                if errno == EINTR { continue }
                break
            }
            clock.update()
            for index in 0..<Int(count) {
                let descriptor = events[index].data.fd
                let flags = events[index].events
                if descriptor == wakeup {
                    var value: UInt64 = 0
                    _ = read(wakeup, &value, 8)
                    deliverLateAnswers()
                    if deadlineCheckRequested.exchange(false, ordering: .sequentiallyConsistent) {
                        sweepDeadlines(now: monotonicNanoseconds())
                        deadlinesChecked.signal()
                    }
                } else if descriptor == listener {
                    acceptConnections()
                } else if let connection = connections[descriptor] {
                    if flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0,
                        connection.phase == .lingering || connection.phase == .awaitingCommit
                    {
                        drop(connection)
                    } else {
                        drive(connection)
                    }
                }
            }
            let after = monotonicNanoseconds()
            if after &- lastSweep >= 50_000_000 {
                lastSweep = after
                sweepDeadlines(now: after)
            }
        }
        setListening(false)
    }

    private func setListening(_ on: Bool) {
        guard on != listening else { return }
        if on {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue
            event.data.fd = listener
            listening = epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event) == 0
        } else {
            epoll_ctl(epoll, EPOLL_CTL_DEL, listener, nil)
            listening = false
        }
    }

    private func acceptConnections() {
        for _ in 0..<64 {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let descriptor = pinion_server_accept(listener, &storage, &length)
            if descriptor < 0 {
                switch errno {
                case EINTR, ECONNABORTED: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors or memory: stop accepting for a moment instead of
                    // spinning on a listener that stays readable.
                    acceptPausedUntil = monotonicNanoseconds() + 100_000_000
                    setListening(false)
                    log.event(time: clock.logTime, "accept paused: \(String(cString: strerror(errno)))")
                    return
                default: return
                }
            }
            let peer = Self.peerText(storage)
            let open = shared.open.wrappingAdd(1, ordering: .relaxed).newValue
            if open > shared.maxConnections {
                shared.open.wrappingSubtract(1, ordering: .relaxed)
                metrics?.refusedAtConnectionCap()
                // Logged before the close, so the line exists once the peer sees the close.
                log.record(
                    time: clock.logTime, peer: peer, method: "-", path: "- (connection cap)", status: 503, bytes: 0,
                    nanoseconds: 0)
                close(descriptor)
                continue
            }
            var one: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            guard let session = tls.makeSSL() else {
                shared.open.wrappingSubtract(1, ordering: .relaxed)
                close(descriptor)
                continue
            }
            guard session.withPointer({ pinion_https_set_socket($0, descriptor) }) == 1 else {
                shared.open.wrappingSubtract(1, ordering: .relaxed)
                close(descriptor)
                continue
            }
            session.withPointer { SSL_set_accept_state($0) }
            let now = monotonicNanoseconds()
            let connection = Connection(
                descriptor: descriptor, session: session, peer: peer,
                timer: ConnectionTimer(deadlines: settings.deadlines, acceptedAt: now), acceptedAt: now)
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.fd = descriptor
            guard epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event) == 0 else {
                connection.release()
                shared.open.wrappingSubtract(1, ordering: .relaxed)
                continue
            }
            connections[descriptor] = connection
            drive(connection)
        }
    }

    private static func peerText(_ storage: sockaddr_storage) -> String {
        var copy = storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        return withUnsafePointer(to: &copy) { pointer -> String in
            if Int32(storage.ss_family) == AF_INET {
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var raw = address.pointee.sin_addr
                    inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                    return "\(Self.cText(text)):\(UInt16(bigEndian: address.pointee.sin_port))"
                }
            }
            if Int32(storage.ss_family) == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                    return "[\(Self.cText(text))]:\(UInt16(bigEndian: address.pointee.sin6_port))"
                }
            }
            return "-"
        }
    }

    private static func cText(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func sweepDeadlines(now: UInt64) {
        for connection in Array(connections.values) where connection.timer.hasExpired(at: now) {
            if connection.phase == .reading, !connection.buffer.isEmpty {
                // A request that never completed in time (slowloris): logged, not answered.
                logRequest(connection, method: "-", path: "- (header timeout)", status: 408, bytes: 0, now: now)
            } else if connection.phase == .writing {
                logRequest(
                    connection, method: connection.logMethod, path: connection.logPath + " (write timeout)",
                    status: connection.pendingStatus, bytes: connection.bodyBytesSent, now: now)
            } else if connection.phase == .awaitingCommit {
                // The writer is slower than the write timeout: no answer, so no acknowledgement.
                logRequest(
                    connection, method: connection.logMethod, path: connection.logPath + " (commit timeout)",
                    status: 503, bytes: 0, now: now)
            } else if connection.phase == .handshaking {
                metrics?.handshakeFailed()
            }
            drop(connection)
        }
    }

    // MARK: - Connections

    private func want(_ connection: Connection, writable: Bool) {
        guard connection.wantsWrite != writable else { return }
        connection.wantsWrite = writable
        var event = epoll_event()
        event.events = writable ? EPOLLOUT.rawValue : EPOLLIN.rawValue
        event.data.fd = connection.descriptor
        epoll_ctl(epoll, EPOLL_CTL_MOD, connection.descriptor, &event)
    }

    /// Closes at once: no close_notify, no lingering.
    private func drop(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.descriptor) != nil else { return }
        epoll_ctl(epoll, EPOLL_CTL_DEL, connection.descriptor, nil)
        connection.release()
        shared.open.wrappingSubtract(1, ordering: .relaxed)
    }

    /// Sends close_notify and half-closes, then reads and discards what the peer still
    /// sends for a short while, so that it reads the last response rather than a reset.
    private func closeGracefully(_ connection: Connection) {
        ERR_clear_error()
        _ = SSL_shutdown(connection.ssl)
        ERR_clear_error()
        shutdown(connection.descriptor, Int32(SHUT_WR))
        connection.phase = .lingering
        connection.timer.closing(at: monotonicNanoseconds())
        want(connection, writable: false)
        linger(connection)
    }

    private func linger(_ connection: Connection) {
        while true {
            let count = scratch.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 { continue }
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return }
            drop(connection)
            return
        }
    }

    /// Whether a step of `drive` moved the connection on (drive takes the next step) or left it
    /// waiting for the socket, parked, or closed (drive returns).
    private enum Step {
        case advanced
        case waiting
    }

    /// Runs the connection's state machine until it must wait for the socket or a late answer,
    /// or is closed.
    private func drive(_ connection: Connection) {
        while connections[connection.descriptor] != nil {
            let step: Step
            switch connection.phase {
            case .handshaking: step = handshake(connection)
            case .reading: step = readRequest(connection)
            case .writing: step = finishResponse(connection)
            case .lingering:
                linger(connection)
                step = .waiting
            case .awaitingCommit: step = .waiting
            }
            guard case .advanced = step else { return }
        }
    }

    /// One step of the TLS handshake; a failed handshake closes only this connection.
    private func handshake(_ connection: Connection) -> Step {
        ERR_clear_error()
        let result = SSL_do_handshake(connection.ssl)
        if result == 1 {
            connection.phase = .reading
            connection.requestStart = monotonicNanoseconds()
            metrics?.handshakeCompleted()
            return .advanced
        }
        switch SSL_get_error(connection.ssl, result) {
        case SSL_ERROR_WANT_READ: want(connection, writable: false)
        case SSL_ERROR_WANT_WRITE: want(connection, writable: true)
        default:
            // Plain HTTP, a broken ClientHello, a vanished client: only this
            // connection is affected.
            ERR_clear_error()
            metrics?.handshakeFailed()
            drop(connection)
        }
        return .waiting
    }

    /// Answers a complete request from the buffer, or else reads more bytes.
    private func readRequest(_ connection: Connection) -> Step {
        if !connection.buffer.isEmpty, takeRequest(connection) { return .advanced }
        if shared.draining.load(ordering: .relaxed), connection.buffer.isEmpty {
            drop(connection)
            return .waiting
        }
        return receive(connection)
    }

    /// Parses the buffer; true when a request (or a refusal of a bad one) was taken from it
    /// and its response begun.
    private func takeRequest(_ connection: Connection) -> Bool {
        let parsed: HTTPParseResult
        do {
            parsed = try HTTPRequestParser.parse(connection.buffer[...], limits: settings.requestLimits)
        } catch {
            if error == .bodyTooLarge { metrics?.refusedBodyTooLarge() }
            connection.requestPath = nil
            let response = handler.response(toRefused: error, date: clock.httpDate)
            connection.buffer = []
            begin(connection, response: response, method: "-", path: "-", close: true)
            return true
        }
        guard case .complete(let head, let consumed) = parsed,
            connection.buffer.count - consumed >= head.contentLength
        else { return false }
        let body = Array(connection.buffer[consumed..<(consumed + head.contentLength)])
        connection.buffer.removeSubrange(0..<(consumed + head.contentLength))
        respond(connection, to: head, body: body)
        return true
    }

    /// Reads what TLS has into the buffer, at most what one request may still need.
    private func receive(_ connection: Connection) -> Step {
        ERR_clear_error()
        let room = min(
            scratch.count,
            settings.requestLimits.maxRequestLineBytes
                + settings.requestLimits.maxHeaderBytes + settings.requestLimits.maxBodyBytes + 8
                - connection.buffer.count)
        let count = scratch.withUnsafeMutableBytes {
            SSL_read(connection.ssl, $0.baseAddress, Int32(max(room, 1)))
        }
        if count > 0 {
            if connection.buffer.isEmpty, connection.timer.awaitsRequest {
                connection.requestStart = monotonicNanoseconds()
                connection.timer.requestStarted(at: connection.requestStart)
            }
            connection.buffer.append(contentsOf: scratch[0..<Int(count)])
            return .advanced
        }
        switch SSL_get_error(connection.ssl, count) {
        case SSL_ERROR_WANT_READ: want(connection, writable: false)
        case SSL_ERROR_WANT_WRITE: want(connection, writable: true)
        case SSL_ERROR_ZERO_RETURN: closeGracefully(connection)
        default:
            ERR_clear_error()
            drop(connection)
        }
        return .waiting
    }

    /// Writes the rest of the response; once all is sent, logs it and closes the connection or
    /// turns it back to reading the next request.
    private func finishResponse(_ connection: Connection) -> Step {
        guard writePending(connection) else { return .waiting }
        logRequest(
            connection, method: connection.logMethod, path: connection.logPath,
            status: connection.pendingStatus, bytes: connection.bodyBytesSent, now: monotonicNanoseconds())
        connection.requestsServed += 1
        connection.response = nil
        if connection.closeAfterResponse {
            closeGracefully(connection)
            return .waiting
        }
        connection.phase = .reading
        let now = monotonicNanoseconds()
        if connection.buffer.isEmpty {
            // A small buffer is kept for the next request; a large one is released
            // while the connection idles.
            if connection.buffer.capacity > 4096 { connection.buffer = [] }
        } else {
            connection.requestStart = now
        }
        connection.timer.responded(at: now, pipelined: !connection.buffer.isEmpty)
        // Nothing received and nothing buffered in OpenSSL (SSL_has_pending counts
        // read-ahead bytes too): wait for the level-triggered EPOLLIN instead of a read
        // that would only return EAGAIN (one system call per keep-alive request).
        if connection.buffer.isEmpty, SSL_has_pending(connection.ssl) == 0 {
            want(connection, writable: false)
            return .waiting
        }
        return .advanced
    }

    /// Writes what is left of the response; true when all of it is sent.
    private func writePending(_ connection: Connection) -> Bool {
        guard let response = connection.response else { return true }
        while connection.headSent < response.head.count || connection.bodyBytesSent < response.body.count {
            ERR_clear_error()
            let written: Int32
            let headLeft = response.head.count - connection.headSent
            if headLeft > 0, !response.body.isEmpty, headLeft + response.body.count <= 16 * 1024 {
                // Small response: head and body in one TLS record.
                var merged = [UInt8]()
                merged.reserveCapacity(headLeft + response.body.count - connection.bodyBytesSent)
                merged.append(contentsOf: response.head[connection.headSent...])
                merged.append(contentsOf: response.body[connection.bodyBytesSent...])
                written = merged.withUnsafeBytes { SSL_write(connection.ssl, $0.baseAddress, Int32($0.count)) }
                if written > 0 {
                    let toHead = min(Int(written), headLeft)
                    connection.headSent += toHead
                    connection.bodyBytesSent += Int(written) - toHead
                }
            } else if headLeft > 0 {
                written = response.head.withUnsafeBytes {
                    SSL_write(connection.ssl, $0.baseAddress! + connection.headSent, Int32(headLeft))
                }
                if written > 0 { connection.headSent += Int(written) }
            } else {
                let chunk = min(response.body.count - connection.bodyBytesSent, 64 * 1024)
                written = response.body.withUnsafeBytes {
                    SSL_write(connection.ssl, $0.baseAddress! + connection.bodyBytesSent, Int32(chunk))
                }
                if written > 0 { connection.bodyBytesSent += Int(written) }
            }
            if written > 0 { continue }
            switch SSL_get_error(connection.ssl, written) {
            case SSL_ERROR_WANT_WRITE:
                want(connection, writable: true)
                return false
            case SSL_ERROR_WANT_READ:
                want(connection, writable: false)
                return false
            default:
                ERR_clear_error()
                drop(connection)
                return false
            }
        }
        return true
    }

    private func begin(_ connection: Connection, response: HTTPResponse, method: String, path: String, close: Bool) {
        connection.response = response
        connection.pendingStatus = response.status
        connection.headSent = 0
        connection.bodyBytesSent = 0
        connection.logMethod = method
        connection.logPath = path
        if close { connection.closeAfterResponse = true }
        connection.phase = .writing
        connection.timer.responding(at: monotonicNanoseconds())
    }

    private func respond(_ connection: Connection, to head: HTTPRequestHead, body: [UInt8]) {
        let close =
            head.wantsClose || connection.closeAfterResponse
            || connection.requestsServed + 1 >= settings.maxRequestsPerConnection
            || shared.draining.load(ordering: .relaxed)
        if metrics != nil { connection.requestPath = head.path }
        nextAnswerToken &+= 1
        let token = nextAnswerToken
        let descriptor = connection.descriptor
        let request = HTTPRequest(
            head: head, body: body, peer: connection.peer, date: clock.httpDate, close: close,
            monotonicSeconds: Double(monotonicNanoseconds()) / 1e9)
        let answer = handler.answer(request, later: HTTPLateAnswer(worker: self, descriptor: descriptor, token: token))
        switch answer {
        case .now(let response):
            begin(connection, response: response, method: head.method.name, path: head.target, close: close)
        case .later:
            connection.answerToken = token
            connection.logMethod = head.method.name
            connection.logPath = head.target
            connection.closeAfterResponse = connection.closeAfterResponse || close
            connection.phase = .awaitingCommit
            connection.timer.awaitingCommit(at: monotonicNanoseconds())
            // Nothing is read while parked; errors and hang-ups still wake the loop.
            var event = epoll_event()
            event.events = 0
            event.data.fd = connection.descriptor
            epoll_ctl(epoll, EPOLL_CTL_MOD, connection.descriptor, &event)
            connection.wantsWrite = true
        }
    }

    /// Sends the answers handed back later to the connections still waiting for them.
    private func deliverLateAnswers() {
        let answers = lateAnswers.withLock { pending -> [(Int32, UInt64, HTTPLateResponse)] in
            let taken = pending
            pending = []
            return taken
        }
        for (descriptor, token, make) in answers {
            guard let connection = connections[descriptor], connection.phase == .awaitingCommit,
                connection.answerToken == token
            else { continue }
            let close = connection.closeAfterResponse || shared.draining.load(ordering: .relaxed)
            let response = make(clock.httpDate, close)
            begin(connection, response: response, method: connection.logMethod, path: connection.logPath, close: close)
            want(connection, writable: false)
            drive(connection)
        }
    }

    private func logRequest(
        _ connection: Connection, method: String, path: String, status: Int, bytes: Int, now: UInt64
    ) {
        metrics?.responded(path: connection.requestPath, status: status, bodyBytes: bytes)
        log.record(
            time: clock.logTime, peer: connection.peer, method: method, path: path, status: status, bytes: bytes,
            nanoseconds: now &- connection.requestStart)
    }
}

/// Where a handler sends an answer it gives later (`HTTPAnswer.later`): the worker, the
/// connection and the request it belongs to. A plain value, so offering it costs nothing.
package struct HTTPLateAnswer: Sendable {
    fileprivate let worker: Worker
    fileprivate let descriptor: Int32
    fileprivate let token: UInt64

    /// Hands the response back to the worker, once, from any thread; it is built with the
    /// Date value and the close decision of the moment it is sent. Ignored when the
    /// connection has been closed meanwhile (a deadline, a drain).
    package func send(_ make: @escaping HTTPLateResponse) {
        worker.queueLateAnswer(descriptor: descriptor, token: token, make)
    }
}

/// One client connection; only its worker's thread touches it.
final class Connection {
    enum Phase { case handshaking, reading, writing, lingering, awaitingCommit }

    let descriptor: Int32
    /// The TLS state, freed with this connection.
    private let session: OwnedSSL
    /// The `SSL *`, alive as long as this connection.
    var ssl: OpaquePointer { session.pointer }
    let peer: String
    var phase = Phase.handshaking
    /// When the current phase times out (monotonic nanoseconds).
    var timer: ConnectionTimer
    /// Bytes received and not yet parsed (bounded by the request limits).
    var buffer: [UInt8] = []
    var requestStart: UInt64 = 0
    var requestsServed = 0
    var closeAfterResponse = false
    var wantsWrite = false
    var response: HTTPResponse?
    var pendingStatus = 0
    var headSent = 0
    var bodyBytesSent = 0
    var logMethod = "-"
    var logPath = "-"
    /// The current request's path, for the metrics (set only when they are on; nil when
    /// no request was parsed).
    var requestPath: String?
    /// The late answer this connection waits for (`awaitingCommit`), to match it.
    var answerToken: UInt64 = 0
    private var released = false

    /// - Parameter timer: started at the accept, whose instant is also the request start.
    init(descriptor: Int32, session: OwnedSSL, peer: String, timer: ConnectionTimer, acceptedAt now: UInt64) {
        self.descriptor = descriptor
        self.session = session
        self.peer = peer
        self.timer = timer
        requestStart = now
    }

    /// No request in progress: still handshaking, or waiting with nothing received.
    var isIdle: Bool {
        phase == .handshaking || (phase == .reading && buffer.isEmpty)
    }

    /// Closes the socket (once); the TLS state goes with the connection object, whose
    /// socket BIO never touches the descriptor when freed.
    func release() {
        guard !released else { return }
        released = true
        close(descriptor)
    }

    deinit { release() }
}
