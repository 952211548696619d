// OpenSSL and socket helpers shared by the PinionCrypto code (SPKI.swift, TLSProbe.swift)
// and the pinned HTTPS client of PinionClient (`package` access: this package only).

import COpenSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - OpenSSL

/// OpenSSL error text, trust store loading, DER encodings and SHA-256.
package enum OpenSSLSupport {
    /// Empties the calling thread's OpenSSL error queue and returns its entries as text
    /// (`error:...:reason`), oldest first, separated by "; ".
    package static func errorText() -> String {
        var messages: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if messages.count < 8 {
                ERR_error_string_n(code, &buffer, buffer.count)
                messages.append(
                    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
        }
        return messages.isEmpty ? "no OpenSSL error detail" : messages.joined(separator: "; ")
    }

    /// Why an `SSL_connect`, `SSL_read` or `SSL_write` failed: the OpenSSL error queue when
    /// it has entries (emptied, see `errorText()`), else the system error `savedErrno`
    /// (the `errno` saved right after the call; pass 0 when it does not apply), else
    /// `connection closed by peer`.
    package static func ioFailureText(savedErrno: Int32) -> String {
        if ERR_peek_error() != 0 { return errorText() }
        if savedErrno != 0 { return String(cString: strerror(savedErrno)) }
        return "connection closed by peer"
    }

    /// Why `loadTrustAnchors(into:caFile:)` failed.
    package enum TrustStoreFailure: Error, Equatable {
        /// The CA file could not be opened (`detail` is the system's reason) or OpenSSL
        /// could not load it (`detail` is its error text).
        case caFileUnreadable(path: String, detail: String)
        /// OpenSSL could not load its default verify paths; `detail` is its error text.
        case defaultPathsUnavailable(detail: String)
    }

    /// Loads the trust anchors of a client `SSL_CTX *`: the PEM certificates of `caFile`,
    /// or OpenSSL's default verify paths (the system store) when `caFile` is nil.
    ///
    /// - Parameters:
    ///   - context: the `SSL_CTX *` to configure.
    ///   - caFile: PEM file of trusted certificates, or nil.
    /// - Throws: `TrustStoreFailure`.
    package static func loadTrustAnchors(into context: OpaquePointer, caFile: String?) throws(TrustStoreFailure) {
        if let caFile {
            // Checked first so that a missing file gets the system's reason, not OpenSSL's.
            let descriptor = open(caFile, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw TrustStoreFailure.caFileUnreadable(path: caFile, detail: String(cString: strerror(errno)))
            }
            close(descriptor)
            guard SSL_CTX_load_verify_file(context, caFile) == 1 else {
                throw TrustStoreFailure.caFileUnreadable(path: caFile, detail: errorText())
            }
        } else {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw TrustStoreFailure.defaultPathsUnavailable(detail: errorText())
            }
        }
    }

    /// SHA-256 (FIPS 180-4) with OpenSSL's EVP interface; 32 bytes, or nil when OpenSSL
    /// cannot allocate or its configuration provides no SHA-256. Over a DER
    /// SubjectPublicKeyInfo this is the RFC 7469 §2.4 pin.
    package static func sha256(_ bytes: [UInt8]) -> [UInt8]? {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let status = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { output in
                EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        guard status == 1, length == 32 else { return nil }
        return digest
    }

    /// `i2d_X509_PUBKEY`: the DER SubjectPublicKeyInfo; nil when OpenSSL cannot encode it.
    package static func spkiDER(of pubkey: OpaquePointer) -> [UInt8]? {
        encode { i2d_X509_PUBKEY(pubkey, $0) }
    }

    /// `i2d_PUBKEY`: the DER SubjectPublicKeyInfo of an `EVP_PKEY`'s public half.
    package static func publicKeyDER(of key: OpaquePointer) -> [UInt8]? {
        encode { i2d_PUBKEY(key, $0) }
    }

    /// `i2d_X509`: the DER certificate.
    package static func certificateDER(of x509: OpaquePointer) -> [UInt8]? {
        encode { i2d_X509(x509, $0) }
    }

    /// Runs an OpenSSL `i2d_*` function twice: for the length, then into a buffer; nil when
    /// OpenSSL reports no length or writes another length than it announced.
    package static func encode(_ i2d: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32)
        -> [UInt8]?
    {
        let length = Int(i2d(nil))
        guard length > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: length)
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d(&cursor)
        }
        guard Int(written) == length else { return nil }
        return out
    }
}

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
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | (isIPLiteral(address) ? AI_NUMERICHOST : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(address, String(port), &hints, &list)
        guard status == 0 else {
            let detail = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            throw ConnectFailure.resolutionFailed(detail: detail)
        }
        defer { freeaddrinfo(list) }

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
