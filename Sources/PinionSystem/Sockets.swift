// Sockets for the TLS clients: monotonic deadlines for poll(2), TCP connects with timeouts,
// readiness waits on non-blocking sockets.

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Time

/// A point in time on the monotonic clock, for poll(2) waits.
package struct IODeadline: Sendable {
    /// The instant the deadline passes.
    package let end: ContinuousClock.Instant

    /// A deadline `seconds` from now.
    package init(seconds: Double) {
        end = ContinuousClock.now + .seconds(seconds)
    }

    private init(end: ContinuousClock.Instant) {
        self.end = end
    }

    /// `seconds` from now, but no later than `self`.
    package func capping(seconds: Double) -> IODeadline {
        IODeadline(end: min(end, ContinuousClock.now + .seconds(seconds)))
    }

    /// True once the deadline is reached.
    package var hasPassed: Bool { ContinuousClock.now >= end }

    /// Milliseconds left, rounded up, for poll(2); 0 when passed.
    package var remainingMilliseconds: Int32 {
        let left = end - ContinuousClock.now
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }
}

// MARK: - Sockets

/// Name checks, TCP connects with timeouts and readiness waits on non-blocking sockets.
package enum SocketSupport {
    /// Why `connectTCP(address:port:attemptTimeout:deadline:)` returned no socket. The caller
    /// names the host and port in its own error type.
    package enum ConnectFailure: Error, Equatable {
        /// Name resolution (`getaddrinfo`) failed or gave no address; `detail` is its
        /// error text.
        case resolutionFailed(detail: String)
        /// The last address tried refused the connection.
        case refused
        /// The last address tried failed for another reason; `errno` is the system error.
        case failed(errno: Int32)
        /// The last attempt took longer than its timeout; `deadlinePassed` is true when
        /// the overall deadline is what ran out (then no further address was tried).
        case timedOut(deadlinePassed: Bool)
    }

    /// True when `text` is an IPv4 or IPv6 literal (without brackets).
    package static func isIPLiteral(_ text: String) -> Bool {
        var buffer = in6_addr()
        return inet_pton(AF_INET, text, &buffer) == 1 || inet_pton(AF_INET6, text, &buffer) == 1
    }

    /// Waits until `descriptor` is ready for `events`; false when `deadline` passed.
    package static func waitReady(_ descriptor: Int32, for events: Int16, until deadline: IODeadline) -> Bool {
        while true {
            let milliseconds = deadline.remainingMilliseconds
            if milliseconds == 0 { return false }
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return true }
            if ready == 0 { continue }  // recheck the deadline: poll may wake early
            if errno != EINTR { return true }  // let the next socket call report the error
        }
    }

    /// Resolves `address` and returns a connected non-blocking TCP socket (close-on-exec)
    /// that the caller closes. Addresses are tried in `getaddrinfo` order; the failure of
    /// the last one is thrown.
    ///
    /// - Parameters:
    ///   - address: DNS name or IP literal (without brackets); an IP literal is not looked
    ///     up (`AI_NUMERICHOST`).
    ///   - port: TCP port.
    ///   - attemptTimeout: seconds allowed for each connect attempt.
    ///   - deadline: an overall deadline, or nil for none: when given, each attempt ends
    ///     by it too, and no address is tried once it has passed.
    /// - Returns: the connected socket.
    /// - Throws: `ConnectFailure`.
    package static func connectTCP(
        address: String, port: UInt16, attemptTimeout: Double, deadline: IODeadline?
    ) throws(ConnectFailure) -> Int32 {
        try withAddresses(of: address, port: port) { (list) throws(ConnectFailure) -> Int32 in
            try connectFirst(list, attemptTimeout: attemptTimeout, deadline: deadline)
        }
    }

    /// Tries each address of `list` in order until one connects.
    private static func connectFirst(
        _ list: UnsafeMutablePointer<addrinfo>?, attemptTimeout: Double, deadline: IODeadline?
    ) throws(ConnectFailure) -> Int32 {
        var lastError = ConnectFailure.resolutionFailed(detail: "no addresses")
        var next = list
        while let info = next {
            next = info.pointee.ai_next
            if let deadline, deadline.hasPassed { throw ConnectFailure.timedOut(deadlinePassed: true) }
            let type = Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue)
            let descriptor = socket(info.pointee.ai_family, type, info.pointee.ai_protocol)
            guard descriptor >= 0 else {
                lastError = .failed(errno: errno)
                continue
            }
            let limit = deadline?.capping(seconds: attemptTimeout) ?? IODeadline(seconds: attemptTimeout)
            let code = connectOne(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen, until: limit)
            if code == 0 { return descriptor }
            close(descriptor)
            switch code {
            case ETIMEDOUT: lastError = .timedOut(deadlinePassed: deadline?.hasPassed ?? false)
            case ECONNREFUSED: lastError = .refused
            default: lastError = .failed(errno: code)
            }
        }
        throw lastError
    }

    /// Every address `name` resolves to for TCP, as numeric literals (IPv6 without brackets),
    /// in `getaddrinfo` order, each once.
    ///
    /// - Parameters:
    ///   - name: DNS name or IP literal (without brackets); an IP literal is returned as is.
    ///   - port: TCP port (only narrows the lookup to stream sockets).
    /// - Returns: one or more addresses.
    /// - Throws: `ConnectFailure.resolutionFailed` when the lookup fails or gives none.
    package static func resolveAll(_ name: String, port: UInt16) throws(ConnectFailure) -> [String] {
        try withAddresses(of: name, port: port) { (list) throws(ConnectFailure) -> [String] in
            try numericAddresses(list)
        }
    }

    /// The numeric text of each address of `list`, each once.
    private static func numericAddresses(_ list: UnsafeMutablePointer<addrinfo>?) throws(ConnectFailure) -> [String] {
        var addresses: [String] = []
        var next = list
        while let info = next {
            next = info.pointee.ai_next
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let code = getnameinfo(
                info.pointee.ai_addr, info.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0,
                NI_NUMERICHOST)
            guard code == 0 else { continue }
            let address = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !addresses.contains(address) { addresses.append(address) }
        }
        guard !addresses.isEmpty else { throw ConnectFailure.resolutionFailed(detail: "no addresses") }
        return addresses
    }

    /// Resolves `name` for TCP (`getaddrinfo`, numeric service; numeric host for an IP
    /// literal) and calls `body` with the list, which is freed when `body` returns.
    ///
    /// - Throws: `ConnectFailure.resolutionFailed` when the lookup fails, or what `body` throws.
    private static func withAddresses<Result>(
        of name: String, port: UInt16, _ body: (UnsafeMutablePointer<addrinfo>?) throws(ConnectFailure) -> Result
    ) throws(ConnectFailure) -> Result {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | (isIPLiteral(name) ? AI_NUMERICHOST : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name, String(port), &hints, &list)
        guard status == 0 else {
            let detail = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            throw ConnectFailure.resolutionFailed(detail: detail)
        }
        defer { freeaddrinfo(list) }
        return try body(list)
    }

    /// Connects a non-blocking socket; returns 0 or an errno value (ETIMEDOUT on timeout).
    private static func connectOne(
        _ descriptor: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t, until limit: IODeadline
    ) -> Int32 {
        if connect(descriptor, address, length) == 0 { return 0 }
        guard errno == EINPROGRESS || errno == EINTR else { return errno }
        guard waitReady(descriptor, for: Int16(POLLOUT), until: limit) else { return ETIMEDOUT }
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &size) == 0 else { return errno }
        return error
    }
}
