// The publisher's access log: one line per response, queued by the workers and written by
// one thread, so lines never interleave and a stalled log never blocks serving.

import Dispatch
import Foundation
import PinionCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where access log lines go. A line is
/// `TIME PEER METHOD PATH STATUS BYTES DURATION`, e.g.
/// `2026-11-30T09:00:00Z 127.0.0.1:50312 GET /v1/com.example/manifest.json 200 1834 0.412ms`;
/// TIME is RFC 3339 UTC, BYTES the body bytes sent, DURATION from the request's first
/// byte to its last response byte. Peer-controlled text is escaped (no control
/// characters reach a terminal or a log parser). `-` stands for an unknown field.
public final class AccessLog: Sendable {
    private let sink: Sink?

    /// Lines waiting for the writer thread at most; beyond that new lines are dropped (and
    /// counted in a later line), so a stalled log (a full pipe, a slow journal) never
    /// blocks serving.
    public static let maxQueuedLines = 10_000

    /// A log to standard error.
    public static let standardError = AccessLog(sink: Sink(descriptor: 2, owned: false))
    /// No log.
    public static let disabled = AccessLog(sink: nil)

    private init(sink: Sink?) {
        self.sink = sink
        sink?.start()
    }

    /// Appends to the file at `path`, creating it (mode 0640) if needed.
    ///
    /// - Throws: `HTTPServerError.system` naming the file and the system error, also when it
    ///   is not a regular file (a FIFO without a reader would block start-up).
    public convenience init(path: String) throws(HTTPServerError) {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o640)
        guard descriptor >= 0 else {
            throw .system("\(path): cannot open the access log: \(String(cString: strerror(errno)))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw .system("\(path): the access log must be a regular file")
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        self.init(sink: Sink(descriptor: descriptor, owned: true))
    }

    deinit { sink?.stop() }

    /// Queues one record; never blocks (see `maxQueuedLines`).
    package func record(
        time: String, peer: String, method: String, path: String, status: Int, bytes: Int, nanoseconds: UInt64
    ) {
        guard let sink else { return }
        let micros = nanoseconds / 1000
        let fraction = String(micros % 1000)
        let duration = "\(micros / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)ms"
        sink.enqueue(
            "\(time) \(peer) \(TerminalText.escape(method)) \(TerminalText.escape(path)) \(status) \(bytes) \(duration)\n"
        )
    }

    /// Queues one free-form event line (start, reload, drain), prefixed with `time`.
    package func event(time: String, _ text: String) {
        sink?.enqueue("\(time) pinion-serve: \(TerminalText.escape(text))\n")
    }

    /// Waits (up to `timeout` seconds) until every line queued so far is written.
    public func flush(timeout: Double = 2) {
        sink?.flush(timeout: timeout)
    }

    /// The queue and the writer thread. Only the writer thread writes to the descriptor.
    private final class Sink: Sendable {
        private struct State {
            var lines: [String] = []
            var dropped = 0
            var stopped = false
            var written = 0
            var queued = 0
        }

        private let descriptor: Int32
        private let owned: Bool
        private let state = Mutex(State())
        private let wakeup = DispatchSemaphore(value: 0)

        init(descriptor: Int32, owned: Bool) {
            self.descriptor = descriptor
            self.owned = owned
        }

        func start() {
            let thread = Thread { [self] in run() }
            thread.stackSize = 256 << 10
            thread.start()
        }

        func stop() {
            state.withLock { $0.stopped = true }
            wakeup.signal()
        }

        func enqueue(_ line: String) {
            let accepted = state.withLock { state -> Bool in
                guard state.lines.count < AccessLog.maxQueuedLines else {
                    state.dropped += 1
                    return false
                }
                state.lines.append(line)
                state.queued += 1
                return true
            }
            if accepted { wakeup.signal() }
        }

        func flush(timeout: Double) {
            let target = state.withLock { $0.queued }
            let deadline = DispatchTime.now() + timeout
            while state.withLock({ $0.written }) < target, DispatchTime.now() < deadline {
                wakeup.signal()
                usleep(1000)
            }
        }

        private func run() {
            while true {
                wakeup.wait()
                let (lines, dropped, stopped) = state.withLock { state in
                    defer {
                        state.lines.removeAll(keepingCapacity: true)
                        state.dropped = 0
                    }
                    return (state.lines, state.dropped, state.stopped)
                }
                var text = lines.joined()
                if dropped > 0 {
                    text += "pinion-serve: \(dropped) access log line(s) dropped (the log is not keeping up)\n"
                }
                if !text.isEmpty { write(text) }
                state.withLock { $0.written += lines.count }
                if stopped {
                    if owned { close(descriptor) }
                    return
                }
            }
        }

        private func write(_ text: String) {
            var bytes = Array(text.utf8)
            bytes.withUnsafeMutableBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0, errno == EINTR { continue }
                    if written <= 0 { return }
                    offset += written
                }
            }
        }
    }
}
