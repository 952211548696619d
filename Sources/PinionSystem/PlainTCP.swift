// Plain TCP sockets with deadlines (poll), for small side listeners such as the metrics
// endpoint of `pinion serve`, and IP literal checks. All sockaddr pointer work lives here.

#if canImport(Glibc)
    import Glibc
#endif

/// A failed socket call: what was attempted and the system's reason (errno text).
public struct SocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done, e.g. `bind 127.0.0.1:9100`.
    public let context: String
    /// `strerror(errno)`, or a reason of ours.
    public let detail: String

    public var description: String { "\(context): \(detail)" }
}

/// IP literals, checked and written canonically by the C library (inet_pton, inet_ntop).
public enum IPLiteral {
    /// The canonical text of an IPv4 or IPv6 literal (`::ffff:1.2.3.4` is kept as IPv6), or
    /// nil when `text` is not one (host names are never looked up).
    public static func canonical(_ text: String) -> String? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN) + 1)
            guard inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count)) != nil else { return nil }
            return cText(buffer)
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            guard inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)) != nil else { return nil }
            return cText(buffer)
        }
        return nil
    }

    /// The network an address belongs to, as counted where addresses must not be kept: an
    /// IPv4 address's /24 (`203.0.113.0/24`), an IPv6 address's /64 (`2001:db8:1:2::/64`).
    /// An IPv4-mapped IPv6 address counts as its IPv4 address.
    ///
    /// - Parameter text: an IPv4 or IPv6 literal, without port or brackets.
    /// - Returns: the prefix in CIDR notation, or nil when `text` is not a literal.
    public static func networkPrefix(_ text: String) -> String? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            let bytes = withUnsafeBytes(of: v4.s_addr) { Array($0) }
            return "\(bytes[0]).\(bytes[1]).\(bytes[2]).0/24"
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        var bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return "\(bytes[12]).\(bytes[13]).\(bytes[14]).0/24"
        }
        for index in 8..<16 { bytes[index] = 0 }
        var network = in6_addr()
        withUnsafeMutableBytes(of: &network) { $0.copyBytes(from: bytes) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        guard inet_ntop(AF_INET6, &network, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return cText(buffer) + "/64"
    }

    /// The address's bytes in network order: 4 for IPv4, 16 for IPv6 (an IPv4-mapped IPv6
    /// address stays 16 bytes), or nil when `text` is not a literal.
    ///
    /// - Parameter text: an IPv4 or IPv6 literal, without port, brackets or zone.
    public static func bytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: v4.s_addr) { Array($0) } }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        return withUnsafeBytes(of: v6) { Array($0) }
    }

    /// The canonical text of 4 or 16 address bytes (network order), or nil for another count.
    public static func text(_ bytes: [UInt8]) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        if bytes.count == 4 {
            var v4 = in_addr()
            withUnsafeMutableBytes(of: &v4) { $0.copyBytes(from: bytes) }
            guard inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count)) != nil else { return nil }
            return cText(buffer)
        }
        guard bytes.count == 16 else { return nil }
        var v6 = in6_addr()
        withUnsafeMutableBytes(of: &v6) { $0.copyBytes(from: bytes) }
        guard inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return cText(buffer)
    }

    /// True for 127.0.0.0/8 and ::1.
    public static func isLoopback(_ text: String) -> Bool {
        guard let canonical = canonical(text) else { return false }
        return canonical == "::1" || canonical.hasPrefix("127.")
    }

    fileprivate static func cText(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A listening TCP socket bound to an IP literal.
public final class TCPListener: Sendable {
    private let descriptor: Int32
    /// The bound port (the system's choice when 0 was asked for).
    public let port: UInt16
    /// The bound address as given.
    public let host: String

    /// Binds and listens (backlog 64, close-on-exec, SO_REUSEADDR).
    ///
    /// - Parameters:
    ///   - host: an IPv4 or IPv6 literal.
    ///   - port: the TCP port; 0 picks a free one.
    /// - Throws: `SocketError`.
    public init(host: String, port: UInt16) throws(SocketError) {
        let made: (descriptor: Int32, port: UInt16)
        do throws(ListeningSocket.Failure) {
            made = try ListeningSocket.open(host: host, port: port, nonBlocking: false, backlog: 64)
        } catch {
            switch error {
            case .notAnIPLiteral: throw SocketError(context: "listen \(host)", detail: "not an IPv4 or IPv6 address")
            case .system(let address, let detail): throw SocketError(context: "listen \(address)", detail: detail)
            }
        }
        self.port = made.port
        descriptor = made.descriptor
        self.host = host
    }

    deinit { close(descriptor) }

    /// Waits up to `timeoutMilliseconds` for a connection.
    ///
    /// - Returns: the accepted connection, or nil on timeout, on a transient error, or after
    ///   `shutdown()`.
    public func accept(timeoutMilliseconds: Int32) -> TCPConnection? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeoutMilliseconds) == 1, poller.revents & Int16(POLLIN) != 0 else { return nil }
        let accepted = Glibc.accept(descriptor, nil, nil)
        guard accepted >= 0 else { return nil }
        _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
        return TCPConnection(descriptor: accepted)
    }

    /// Stops listening: later `accept` calls return nil at once.
    public func shutdown() { _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }
}

/// One accepted TCP connection with deadline-bounded reads and writes. Used by one thread at
/// a time: the accepting thread hands it over to the one that serves it; only `shutdown()`
/// may come from another thread.
///
/// `@unchecked Sendable`: the descriptor is immutable, reads and writes come from one thread
/// at a time (ownership moves with the hand-over), and shutdown(2) is safe beside them.
public final class TCPConnection: @unchecked Sendable {
    private let descriptor: Int32

    fileprivate init(descriptor: Int32) {
        self.descriptor = descriptor
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(descriptor) }

    /// Shuts the connection down in both directions (shutdown(2), `SHUT_RDWR`): a read or
    /// write waiting on it in another thread returns at once (empty, or false). The
    /// descriptor stays open until the object is released.
    public func shutdown() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Reads at most `maximum` bytes, waiting up to `timeoutMilliseconds`.
    ///
    /// - Returns: the bytes; empty at end of stream, on timeout or on error.
    public func read(maximum: Int, timeoutMilliseconds: Int32) -> [UInt8] {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeoutMilliseconds) == 1 else { return [] }
        var buffer = [UInt8](repeating: 0, count: max(1, maximum))
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return [] }
        return Array(buffer[0..<count])
    }

    /// Writes all of `bytes`, each wait bounded by `timeoutMilliseconds`.
    ///
    /// - Returns: false when the peer went away or stalled.
    @discardableResult
    public func write(_ bytes: [UInt8], timeoutMilliseconds: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            guard poll(&poller, 1, timeoutMilliseconds) == 1 else { return false }
            let count = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return send(descriptor, base + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }
}

/// The one listening-socket set-up, shared by `pinion serve`'s TLS listener and the small
/// plain listeners (metrics): an IPv4 or IPv6 literal (never a name lookup), SO_REUSEADDR,
/// close-on-exec, optionally non-blocking, and the port the system bound.
package enum ListeningSocket {
    /// Why no listening socket was made.
    package enum Failure: Error, Equatable {
        /// The host is not an IPv4 or IPv6 literal.
        case notAnIPLiteral
        /// socket, bind, listen or getsockname failed; `address` is `HOST:PORT` (IPv6 in
        /// brackets), `detail` the system's reason.
        case system(address: String, detail: String)
    }

    /// Binds and listens.
    ///
    /// - Parameters:
    ///   - host: an IPv4 or IPv6 literal.
    ///   - port: the TCP port; 0 picks a free one.
    ///   - nonBlocking: whether the socket is `SOCK_NONBLOCK` (for an epoll loop).
    ///   - backlog: the listen(2) backlog.
    /// - Returns: the descriptor (the caller closes it) and the bound port.
    /// - Throws: `Failure`.
    package static func open(host: String, port: UInt16, nonBlocking: Bool, backlog: Int32) throws(Failure) -> (
        descriptor: Int32, port: UInt16
    ) {
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        let family: Int32
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            family = AF_INET
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
        } else if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            family = AF_INET6
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
        } else {
            throw .notAnIPLiteral
        }
        let address = family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
        let flags = SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | (nonBlocking ? SOCK_NONBLOCK.rawValue : 0)
        let made = socket(family, Int32(flags), 0)
        guard made >= 0 else { throw .system(address: address, detail: String(cString: strerror(errno))) }
        var one: Int32 = 1
        setsockopt(made, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound: Int32
        if family == AF_INET {
            bound = withUnsafePointer(to: &v4) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(made, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        } else {
            bound = withUnsafePointer(to: &v6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(made, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
        guard bound == 0, listen(made, backlog) == 0 else {
            let detail = String(cString: strerror(errno))
            close(made)
            throw .system(address: address, detail: detail)
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(made, $0, &length) }
        }
        guard named == 0 else {
            let detail = String(cString: strerror(errno))
            close(made)
            throw .system(address: address, detail: detail)
        }
        let boundPort: UInt16 = withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET {
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    UInt16(bigEndian: $0.pointee.sin_port)
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                UInt16(bigEndian: $0.pointee.sin6_port)
            }
        }
        return (made, boundPort)
    }
}
