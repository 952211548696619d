// Signals of `pinion serve` (SIGHUP reload, SIGTERM and SIGINT drain) delivered through a
// pipe, so that no thread is ever killed by them and the main thread handles them in order.

import CPinionShims

#if canImport(Glibc)
    import Glibc
#endif

/// What an operator asked for with a signal.
public enum ServerSignal: Sendable, Equatable {
    /// SIGHUP: load the certificate and key again.
    case reload
    /// SIGTERM or SIGINT: drain and exit.
    case stop
}

/// Routes SIGHUP, SIGTERM and SIGINT of this process to a pipe the caller reads with
/// `next()`. Install it before starting worker threads; once installed, those signals no
/// longer terminate the process.
public final class ServerSignals: Sendable {
    private let readEnd: Int32

    /// - Throws: `HTTPServerError.system` when the pipe or the handlers cannot be set up.
    public init() throws(HTTPServerError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .system("pipe: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // The write end never blocks the handler: a burst of signals beyond the pipe's
        // capacity is dropped, and one pending byte is enough to act.
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        guard pinion_server_route_signals(ends[1]) == 0 else {
            throw .system("sigaction: \(String(cString: strerror(errno)))")
        }
        readEnd = ends[0]
    }

    /// Blocks until the next signal arrives.
    ///
    /// - Returns: what it asks for, or nil if the pipe failed.
    public func next() -> ServerSignal? {
        while true {
            var number: UInt8 = 0
            let count = read(readEnd, &number, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else { return nil }
            return Int32(number) == SIGHUP ? .reload : .stop
        }
    }
}
