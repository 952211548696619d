// Pinned HTTPS GET on OpenSSL: X.509 validation first, then the caller's pin check on the
// verified chain, before one request byte is sent (docs/DESIGN.md §6 update channel, §8).

import COpenSSL
import CPinionShims
import Foundation
import PinionCore
import PinionCrypto
import PinionTrust

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An HTTPS client for GET requests that validates certificates with OpenSSL and then
/// lets the caller decide on the verified chain before any request byte is sent. FoundationNetworking
/// on Linux has no pinning hook, so the SDK uses this for the update channel (without
/// manifest pins, docs/DESIGN.md §6) and for pinned app connections (docs/DESIGN.md §8).
///
/// Each call opens fresh connections (HTTP/1.1, `Connection: close`), one per redirect
/// hop, with a fresh `SSL_CTX` that has session tickets and the session cache off, so no
/// session is ever resumed (a resumed session carries no verified chain). Calls may run
/// concurrently from several threads; each blocks its thread until done.
public struct PinnedHTTPSClient: Sendable {
    /// Trust store, limits and timeouts.
    public struct Configuration: Sendable {
        /// PEM file of trusted certificates (trust anchors); nil means OpenSSL's default
        /// verify paths (the system trust store).
        public var caFile: String?
        /// Seconds allowed for each TCP connect attempt (one per resolved address).
        public var connectTimeout: Double
        /// Seconds allowed for the whole TLS handshake, and for each wait for progress
        /// while sending the request or reading the response.
        public var ioTimeout: Double
        /// Seconds allowed for the whole call, redirects included; a server that trickles
        /// bytes is cut off here. Name resolution (`getaddrinfo`) is not interruptible
        /// and only checked against it afterwards.
        public var totalDeadline: Double
        /// Largest body accepted, in bytes (after removing chunked coding); reading stops
        /// as soon as the body would exceed it. The header block is limited separately
        /// (8192 bytes, 100 fields).
        public var maxResponseBytes: Int
        /// Redirects (301, 302, 303, 307, 308) followed at most; 0 turns a redirect into
        /// `HTTPSError.tooManyRedirects`.
        public var maxRedirects: Int
        /// The User-Agent header sent unless the caller gives one; empty sends none.
        public var userAgent: String

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - caFile: PEM trust anchors; nil for the system trust store.
        ///   - connectTimeout: seconds per TCP connect attempt, in (0, 86400].
        ///   - ioTimeout: seconds for the handshake and per I/O wait, in (0, 86400].
        ///   - totalDeadline: seconds for the whole call, in (0, 86400].
        ///   - maxResponseBytes: body limit in bytes, at least 0 (default 8 MiB, the
        ///     envelope limit of docs/DESIGN.md §5).
        ///   - maxRedirects: redirects followed, 0 to 20.
        ///   - userAgent: User-Agent value, printable ASCII.
        public init(
            caFile: String? = nil, connectTimeout: Double = 10, ioTimeout: Double = 30, totalDeadline: Double = 60,
            maxResponseBytes: Int = 8 * 1024 * 1024, maxRedirects: Int = 3, userAgent: String = "pinion/1"
        ) {
            self.caFile = caFile
            self.connectTimeout = connectTimeout
            self.ioTimeout = ioTimeout
            self.totalDeadline = totalDeadline
            self.maxResponseBytes = maxResponseBytes
            self.maxRedirects = maxRedirects
            self.userAgent = userAgent
        }
    }

    /// Largest response header block (status line, fields and the empty line), in bytes.
    public static let maximumHeaderBytes = HTTPResponseParser.Limits(maxBodyBytes: 0).maxHeaderBytes
    /// Most header fields in one response (and, separately, in chunked trailers).
    public static let maximumHeaderCount = HTTPResponseParser.Limits(maxBodyBytes: 0).maxHeaderCount

    /// Trust store, limits and timeouts of every call.
    public let configuration: Configuration

    /// Creates a client.
    ///
    /// - Parameter configuration: trust store, limits and timeouts (checked at each call).
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Fetches `url` with GET and returns the response, whatever its status.
    ///
    /// For each hop (the URL, then each redirect target): resolve and connect (to
    /// `connectTo` when the hop's host and port are the URL's), TLS 1.2 or 1.3 with SNI
    /// (RFC 6066 §3; not for IP literals), X.509 validation with `SSL_VERIFY_PEER` against
    /// `caFile` or the system store and an RFC 6125 host name check (`SSL_set1_host`, no
    /// partial wildcards, no subject common name fallback) or IP address check. Only after
    /// validation passed does `pinCheck` see the verified chain; `.proceed` sends the request
    /// (`GET`, HTTP/1.1, Host, User-Agent, `Connection: close`, then `headers`), `.refuse`
    /// closes the connection with no request byte written.
    ///
    /// Responses are read per RFC 9112: the body by chunked coding, Content-Length, or
    /// until the server closes (which must then end with a TLS close_notify, else the
    /// body could be truncated). 301, 302, 303, 307 and 308 with a Location are followed
    /// to https URLs only, as GET, under the same checks and a new `pinCheck` call for the
    /// new host; caller headers named Authorization, Cookie or Proxy-Authorization are
    /// dropped once a redirect leaves the URL's host and port.
    ///
    /// - Parameters:
    ///   - url: an `https` URL without credentials.
    ///   - headers: extra request header fields (names are tokens; values have no control
    ///     characters other than tab). Host, Connection, Content-Length and
    ///     Transfer-Encoding are set by the client and refused here; a User-Agent given
    ///     here replaces the configured one.
    ///   - connectTo: an address (DNS name or IP literal) and port to dial instead of the
    ///     URL's host and port, while SNI, the certificate check and `pinCheck` still use
    ///     the URL's host. Applies to every hop with the URL's host and port.
    ///   - pinCheck: called once per hop after X.509 validation passed and before the
    ///     request is sent, with a non-empty verified chain; never called when validation
    ///     fails or the verified chain is empty.
    /// - Returns: the final response; 4xx and 5xx are responses, not errors.
    /// - Throws: `HTTPSError`: `.certificateVerificationFailed` before any pin check,
    ///   `.emptyVerifiedChain` and `.pinningRefused` before any request byte, and the
    ///   network, timeout, size and redirect errors.
    public func get(
        _ url: URL, headers: [(String, String)] = [], connectTo: (host: String, port: UInt16)? = nil,
        pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse {
        try perform(Request(method: "GET", body: nil), url, headers: headers, connectTo: connectTo, pinCheck: pinCheck)
    }

    /// Sends `body` with POST under exactly the checks of `get` (X.509 first, `pinCheck`
    /// before any request byte) and returns the response. Redirects are not followed (a
    /// redirect is returned as the response), so a body is never re-sent elsewhere.
    ///
    /// - Parameters:
    ///   - body: the request body (sent with Content-Length).
    ///   - contentType: the Content-Type value, e.g. `application/json`.
    /// - Throws: `HTTPSError`, as `get`.
    public func post(
        _ url: URL, body: [UInt8], contentType: String, headers: [(String, String)] = [],
        connectTo: (host: String, port: UInt16)? = nil, pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse {
        try Self.validate([("Content-Type", contentType)])
        return try perform(
            Request(method: "POST", body: (contentType, body)), url, headers: headers, connectTo: connectTo,
            pinCheck: pinCheck)
    }

    /// The method and, for POST, the content type and body.
    private struct Request {
        let method: String
        let body: (contentType: String, bytes: [UInt8])?
    }

    private func perform(
        _ method: Request, _ url: URL, headers: [(String, String)], connectTo: (host: String, port: UInt16)?,
        pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse {
        try Self.validate(configuration)
        let deadline = IODeadline(seconds: configuration.totalDeadline)
        try Self.validate(headers)
        let first = try HTTPSTarget(url)
        var dialOverride: (host: String, port: UInt16)?
        if let connectTo {
            dialOverride = (try Self.dialAddress(connectTo.host), connectTo.port)
        }

        let context = try Self.makeContext(caFile: configuration.caFile)

        var target = first
        var requestHeaders = headers
        var redirects = 0
        while true {
            let sameEndpoint = target.checkedName == first.checkedName && target.port == first.port
            if !sameEndpoint {
                requestHeaders.removeAll {
                    ["authorization", "cookie", "proxy-authorization"].contains($0.0.lowercased())
                }
            }
            let dial = (sameEndpoint ? dialOverride : nil) ?? (target.dialHost, target.port)
            let connection = try HTTPSConnection.open(
                target: target, dialHost: dial.host, dialPort: dial.port, context: context,
                configuration: configuration, deadline: deadline)
            let chain = try connection.peerChain()
            if case .refuse(let reason) = pinCheck(chain) {
                throw HTTPSError.pinningRefused(host: target.host, port: target.port, reason: reason)
            }
            try connection.send(request(method, for: target, headers: requestHeaders))
            let head = try connection.readHead()

            if method.body == nil, [301, 302, 303, 307, 308].contains(head.status),
                let location = head.value("location")
            {
                guard redirects < configuration.maxRedirects else {
                    throw HTTPSError.tooManyRedirects(limit: configuration.maxRedirects)
                }
                guard let next = URL(string: location, relativeTo: target.url)?.absoluteURL else {
                    throw HTTPSError.malformedResponse(
                        host: target.host, port: target.port, detail: "invalid Location \"\(location)\"")
                }
                guard next.scheme?.lowercased() == "https" else {
                    throw HTTPSError.redirectToNonHTTPS(location: next.absoluteString)
                }
                do {
                    target = try HTTPSTarget(next)
                } catch {
                    throw HTTPSError.malformedResponse(
                        host: target.host, port: target.port, detail: "unusable Location: \(error)")
                }
                redirects += 1
                continue  // the redirect's body is never read: the connection just closes
            }
            let body = try connection.readBody(for: head)
            return HTTPSResponse(url: target.url, status: head.status, headers: head.fields, body: body)
        }
    }

    private func request(_ method: Request, for target: HTTPSTarget, headers: [(String, String)]) -> [UInt8] {
        var text = "\(method.method) \(target.requestTarget) HTTP/1.1\r\nHost: \(target.hostHeader)\r\n"
        let callerSetsAgent = headers.contains { $0.0.lowercased() == "user-agent" }
        if !configuration.userAgent.isEmpty, !callerSetsAgent {
            text += "User-Agent: \(configuration.userAgent)\r\n"
        }
        text += "Connection: close\r\n"
        for (name, value) in headers {
            text += "\(name): \(value)\r\n"
        }
        if let body = method.body {
            text += "Content-Type: \(body.contentType)\r\nContent-Length: \(body.bytes.count)\r\n"
        }
        text += "\r\n"
        // Validated to be free of control characters; non-ASCII values go out as UTF-8.
        return Array(text.utf8) + (method.body?.bytes ?? [])
    }
}

// MARK: - Arguments

extension PinnedHTTPSClient {
    private static func validate(_ configuration: Configuration) throws(HTTPSError) {
        let timeouts = [
            ("connectTimeout", configuration.connectTimeout), ("ioTimeout", configuration.ioTimeout),
            ("totalDeadline", configuration.totalDeadline),
        ]
        for (name, value) in timeouts where !(value.isFinite && value > 0 && value <= 86400) {
            throw HTTPSError.invalidConfiguration(reason: "\(name) \(value) s (expected more than 0 and at most 86400)")
        }
        guard configuration.maxResponseBytes >= 0 else {
            throw HTTPSError.invalidConfiguration(reason: "maxResponseBytes \(configuration.maxResponseBytes) < 0")
        }
        guard (0...20).contains(configuration.maxRedirects) else {
            throw HTTPSError.invalidConfiguration(
                reason: "maxRedirects \(configuration.maxRedirects) (expected 0 to 20)")
        }
        guard configuration.userAgent.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else {
            throw HTTPSError.invalidConfiguration(reason: "userAgent is not printable ASCII")
        }
        if let caFile = configuration.caFile, caFile.isEmpty || caFile.utf8.contains(0) {
            throw HTTPSError.invalidConfiguration(reason: "caFile is empty or contains a NUL byte")
        }
    }

    /// RFC 9110 §5.1 field names (tokens) and §5.5 values without control characters.
    private static func validate(_ headers: [(String, String)]) throws(HTTPSError) {
        let reserved: Set<String> = ["host", "connection", "content-length", "transfer-encoding"]
        for (name, value) in headers {
            guard !name.isEmpty, name.utf8.allSatisfy(HTTPSyntax.isTokenByte) else {
                throw HTTPSError.invalidHeader(name: name, reason: "not an RFC 9110 token")
            }
            guard !reserved.contains(name.lowercased()) else {
                throw HTTPSError.invalidHeader(name: name, reason: "set by the client")
            }
            guard value.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7f) }) else {
                throw HTTPSError.invalidHeader(name: name, reason: "value contains control characters")
            }
        }
    }

    /// The `connectTo` host: brackets of an IPv6 literal removed, no NUL, not empty.
    private static func dialAddress(_ host: String) throws(HTTPSError) -> String {
        var address = host
        if address.hasPrefix("["), address.hasSuffix("]"), address.count > 2 {
            address = String(address.dropFirst().dropLast())
        }
        guard !address.isEmpty, !address.utf8.contains(0), address.utf8.count <= 1024 else {
            throw HTTPSError.invalidURL(url: host, reason: "connectTo host is empty or contains a NUL byte")
        }
        return address
    }
}

// MARK: - OpenSSL context

extension PinnedHTTPSClient {
    /// Loads a PEM bundle of trust anchors the way every connection will (`--witness-ca`), so
    /// a bad file is refused once, before any connection, instead of once per host.
    ///
    /// - Parameter caFile: the PEM file.
    /// - Throws: `HTTPSError.caFileUnreadable` when it cannot be read or holds no PEM
    ///   certificate; `.tlsSetupFailed` when OpenSSL cannot set up a client.
    public static func checkTrustAnchors(caFile: String) throws(HTTPSError) {
        _ = try makeContext(caFile: caFile)
    }

    /// Returns a new `SSL_CTX *`, owned: TLS 1.2+, peer verification on, no
    /// session resumption.
    private static func makeContext(caFile: String?) throws(HTTPSError) -> OwnedSSLContext {
        do throws(TLSClientSetup.Failure) {
            // Verification failures abort the handshake; the pin check only ever sees
            // chains that passed.
            return try TLSClientSetup.makeContext(caFile: caFile, verification: .abortHandshake)
        } catch {
            switch error {
            case .caFileUnreadable(let path, let detail): throw HTTPSError.caFileUnreadable(path: path, detail: detail)
            case .setupFailed(let detail): throw HTTPSError.tlsSetupFailed(detail: detail)
            }
        }
    }
}

// MARK: - Connection

/// One TLS connection: socket, `SSL *` and the response parser its bytes go to. Used by
/// one thread.
private final class HTTPSConnection {
    private let session: OwnedSSL
    /// The `SSL *`, alive as long as this connection.
    private var ssl: OpaquePointer { session.pointer }
    private let descriptor: Int32
    private let host: String
    private let port: UInt16
    private let ioTimeout: Double
    private let deadline: IODeadline
    /// Received bytes not yet consumed, and the response read from them.
    private var parser: HTTPResponseParser
    private var readBuffer = [UInt8](repeating: 0, count: 16384)
    private var ended = false
    private var endedWithCloseNotify = false

    private init(
        session: OwnedSSL, descriptor: Int32, host: String, port: UInt16, ioTimeout: Double, deadline: IODeadline,
        limits: HTTPResponseParser.Limits
    ) {
        self.parser = HTTPResponseParser(limits: limits)
        self.session = session
        self.descriptor = descriptor
        self.host = host
        self.port = port
        self.ioTimeout = ioTimeout
        self.deadline = deadline
    }

    // No SSL_shutdown: nothing more is to be sent, and after a refusal not even an alert. The
    // SSL is freed with `session`; its socket BIO never touches the descriptor when freed.
    deinit { close(descriptor) }

    /// Connects, sets up names and completes the handshake with verification.
    static func open(
        target: HTTPSTarget, dialHost: String, dialPort: UInt16, context: OwnedSSLContext,
        configuration: PinnedHTTPSClient.Configuration, deadline: IODeadline
    ) throws(HTTPSError) -> HTTPSConnection {
        let descriptor = try connectSocket(
            address: dialHost, port: dialPort, timeout: configuration.connectTimeout, deadline: deadline)
        ERR_clear_error()
        // The SSL takes its own reference to the context.
        guard let session = OwnedSSL(taking: context.withPointer({ SSL_new($0) })) else {
            close(descriptor)
            throw HTTPSError.tlsSetupFailed(detail: OpenSSLSupport.errorText())
        }
        let connection = HTTPSConnection(
            session: session, descriptor: descriptor, host: target.host, port: target.port,
            ioTimeout: configuration.ioTimeout, deadline: deadline,
            limits: HTTPResponseParser.Limits(maxBodyBytes: configuration.maxResponseBytes))
        guard pinion_https_set_socket(connection.ssl, descriptor) == 1 else {
            throw HTTPSError.tlsSetupFailed(detail: OpenSSLSupport.errorText())
        }
        try connection.configureNames(target)
        try connection.handshake()
        return connection
    }

    private func configureNames(_ target: HTTPSTarget) throws(HTTPSError) {
        let name = target.checkedName
        guard TLSClientSetup.setPeerName(ssl, name, isIPLiteral: target.isIPLiteral) else {
            throw HTTPSError.tlsSetupFailed(
                detail: target.isIPLiteral
                    ? "cannot set IP address \(name) for verification" : "cannot set host name \(name)")
        }
    }

    // MARK: Network

    /// Resolves `address` and returns a connected non-blocking TCP socket.
    private static func connectSocket(
        address: String, port: UInt16, timeout: Double, deadline: IODeadline
    ) throws(HTTPSError) -> Int32 {
        do throws(SocketSupport.ConnectFailure) {
            return try SocketSupport.connectTCP(
                address: address, port: port, attemptTimeout: timeout, deadline: deadline)
        } catch {
            switch error {
            case .resolutionFailed(let detail): throw HTTPSError.resolutionFailed(host: address, detail: detail)
            case .refused: throw HTTPSError.connectionRefused(host: address, port: port)
            case .failed(let code):
                throw HTTPSError.connectionFailed(
                    host: address, port: port, errno: code, detail: String(cString: strerror(code)))
            case .timedOut(let deadlinePassed):
                throw HTTPSError.timedOut(host: address, port: port, phase: deadlinePassed ? .deadline : .connect)
            }
        }
    }

    /// Waits for readiness or throws the timeout of `phase` (`.deadline` when the total
    /// deadline is what ran out).
    private func wait(for events: Int16, until limit: IODeadline, phase: HTTPSError.Phase) throws(HTTPSError) {
        guard SocketSupport.waitReady(descriptor, for: events, until: limit) else {
            throw HTTPSError.timedOut(host: host, port: port, phase: deadline.hasPassed ? .deadline : phase)
        }
    }

    private func handshake() throws(HTTPSError) {
        let limit = deadline.capping(seconds: ioTimeout)
        while true {
            ERR_clear_error()
            errno = 0
            let status = SSL_connect(ssl)
            if status == 1 { break }
            let savedErrno = errno
            let reason = SSL_get_error(ssl, status)
            switch reason {
            case SSL_ERROR_WANT_READ:
                try wait(for: Int16(POLLIN), until: limit, phase: .handshake)
            case SSL_ERROR_WANT_WRITE:
                try wait(for: Int16(POLLOUT), until: limit, phase: .handshake)
            default:
                try checkVerification()
                // Only SSL_ERROR_SYSCALL leaves a meaningful errno.
                let detail =
                    reason == SSL_ERROR_ZERO_RETURN
                    ? "connection closed by peer"
                    : OpenSSLSupport.ioFailureText(savedErrno: reason == SSL_ERROR_SYSCALL ? savedErrno : 0)
                throw HTTPSError.handshakeFailed(host: host, port: port, detail: detail)
            }
        }
        // SSL_VERIFY_PEER already aborted on failure; checked again so that nothing but a
        // verified server certificate ever reaches the pin check.
        guard SSL_get0_peer_certificate(ssl) != nil else {
            throw HTTPSError.certificateVerificationFailed(
                host: host, port: port, reason: "server presented no certificate")
        }
        try checkVerification()
    }

    private func checkVerification() throws(HTTPSError) {
        let code = SSL_get_verify_result(ssl)
        guard code != Int(X509_V_OK) else { return }
        let text = X509_verify_cert_error_string(code).map { String(cString: $0) } ?? "verify error \(code)"
        ERR_clear_error()
        throw HTTPSError.certificateVerificationFailed(host: host, port: port, reason: text)
    }

    // MARK: Certificates

    /// The verified and served chains; throws `.emptyVerifiedChain` when OpenSSL has no
    /// verified chain.
    func peerChain() throws(HTTPSError) -> PeerChain {
        let verified = try certificates(SSL_get0_verified_chain(ssl), withDigests: true)
        guard !verified.der.isEmpty else {
            throw HTTPSError.emptyVerifiedChain(host: host, port: port)
        }
        let served = try certificates(SSL_get_peer_cert_chain(ssl), withDigests: false)
        return PeerChain(
            host: host, port: port, verifiedSPKISHA256: verified.digests, verifiedChainDER: verified.der,
            servedChainDER: served.der)
    }

    private func certificates(_ stack: OpaquePointer?, withDigests: Bool) throws(HTTPSError)
        -> (der: [[UInt8]], digests: [[UInt8]])
    {
        guard let stack else { return ([], []) }
        let count = pinion_sk_X509_num(stack)
        guard count > 0 else { return ([], []) }
        var ders: [[UInt8]] = []
        var digests: [[UInt8]] = []
        for index in 0..<count {
            guard let x509 = pinion_sk_X509_value(stack, index), let der = OpenSSLSupport.certificateDER(of: x509)
            else {
                throw HTTPSError.certificateVerificationFailed(
                    host: host, port: port, reason: "certificate #\(index) of the chain cannot be encoded")
            }
            ders.append(der)
            if withDigests {
                // The one pin computation of every platform: SHA-256 of the SubjectPublicKeyInfo
                // exactly as the certificate carries it (PinionCore's strict DER walk), never
                // OpenSSL's re-encoding of the key.
                let pin: CertificateSPKI
                do { pin = try CertificateSPKI.fromCertificateDER(der, hasher: SodiumSHA256()) } catch {
                    throw HTTPSError.certificateVerificationFailed(
                        host: host, port: port, reason: "certificate #\(index) is not strict DER: \(error)")
                }
                digests.append(pin.sha256)
            }
        }
        return (ders, digests)
    }

    // MARK: I/O

    /// Writes all of `bytes` (the context accepts a moving write buffer on retries).
    func send(_ bytes: [UInt8]) throws(HTTPSError) {
        var offset = 0
        var limit = deadline.capping(seconds: ioTimeout)
        while offset < bytes.count {
            ERR_clear_error()
            errno = 0
            let written = bytes[offset...].withUnsafeBytes { buffer in
                SSL_write(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
            }
            if written > 0 {
                offset += Int(written)
                limit = deadline.capping(seconds: ioTimeout)
                continue
            }
            let savedErrno = errno
            switch SSL_get_error(ssl, written) {
            case SSL_ERROR_WANT_READ: try wait(for: Int16(POLLIN), until: limit, phase: .request)
            case SSL_ERROR_WANT_WRITE: try wait(for: Int16(POLLOUT), until: limit, phase: .request)
            default:
                throw HTTPSError.connectionLost(
                    host: host, port: port, detail: OpenSSLSupport.ioFailureText(savedErrno: savedErrno))
            }
        }
    }

    /// Hands more bytes to the parser; false at the end of the stream (then
    /// `endedWithCloseNotify` says whether the peer closed TLS properly).
    private func receive() throws(HTTPSError) -> Bool {
        if ended { return false }
        let limit = deadline.capping(seconds: ioTimeout)
        while true {
            ERR_clear_error()
            errno = 0
            let count = readBuffer.withUnsafeMutableBytes { buffer in
                SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
            }
            if count > 0 {
                parser.append(readBuffer[0..<Int(count)])
                return true
            }
            let savedErrno = errno
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ:
                try wait(for: Int16(POLLIN), until: limit, phase: .response)
            case SSL_ERROR_WANT_WRITE:
                try wait(for: Int16(POLLOUT), until: limit, phase: .response)
            case SSL_ERROR_ZERO_RETURN:
                ended = true
                endedWithCloseNotify = true
                return false
            case SSL_ERROR_SYSCALL where ERR_peek_error() == 0 && savedErrno == 0:
                ended = true
                return false
            case SSL_ERROR_SSL where pinion_https_is_unexpected_eof(ERR_peek_error()) == 1:
                ERR_clear_error()
                ended = true
                return false
            default:
                throw HTTPSError.connectionLost(
                    host: host, port: port, detail: OpenSSLSupport.ioFailureText(savedErrno: savedErrno))
            }
        }
    }

    // MARK: HTTP/1.1 (RFC 9112, PinionTrust's HTTPResponseParser)

    /// Reads the final response head (interim 1xx heads skipped).
    func readHead() throws(HTTPSError) -> HTTPResponseHead {
        while true {
            do throws(HTTPResponseParseError) {
                if let head = try parser.head() { return head }
            } catch {
                throw failure(error)
            }
            try receiveMore()
        }
    }

    /// Reads the body as framed by the head (RFC 9112 §6.3), stopping as soon as it would
    /// exceed the configured limit.
    func readBody(for head: HTTPResponseHead) throws(HTTPSError) -> [UInt8] {
        while true {
            do throws(HTTPResponseParseError) {
                if let body = try parser.body(for: head) { return body }
            } catch {
                throw failure(error)
            }
            try receiveMore()
        }
    }

    /// Hands received bytes to the parser, or tells it the stream ended.
    private func receiveMore() throws(HTTPSError) {
        if try !receive() { parser.endOfStream(closeNotify: endedWithCloseNotify) }
    }

    private func failure(_ error: HTTPResponseParseError) -> HTTPSError {
        switch error {
        case .malformed(let detail): return HTTPSError.malformedResponse(host: host, port: port, detail: detail)
        case .bodyTooLarge(let limit): return HTTPSError.responseTooLarge(host: host, port: port, limit: limit)
        case .closedBeforeResponse, .closedWithoutCloseNotify:
            return HTTPSError.connectionLost(host: host, port: port, detail: error.description)
        }
    }
}

// MARK: - The SDK's transport

extension PinnedHTTPSClient: HTTPSTransport {
    /// `get` with the total deadline capped at `totalDeadline` seconds when given.
    public func get(
        _ url: URL, headers: [(String, String)], connectTo: (host: String, port: UInt16)?, totalDeadline: Double?,
        pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse {
        var limited = configuration
        if let totalDeadline { limited.totalDeadline = min(limited.totalDeadline, totalDeadline) }
        return try PinnedHTTPSClient(configuration: limited).get(
            url, headers: headers, connectTo: connectTo, pinCheck: pinCheck)
    }

    /// `get` reading at most `maxResponseBytes` of the body (and at most the configured limit).
    public func get(
        _ url: URL, headers: [(String, String)], connectTo: (host: String, port: UInt16)?, totalDeadline: Double?,
        maxResponseBytes: Int?, pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse {
        var limited = configuration
        if let totalDeadline { limited.totalDeadline = min(limited.totalDeadline, totalDeadline) }
        if let maxResponseBytes { limited.maxResponseBytes = min(limited.maxResponseBytes, maxResponseBytes) }
        return try PinnedHTTPSClient(configuration: limited).get(
            url, headers: headers, connectTo: connectTo, pinCheck: pinCheck)
    }

    /// `post` with no extra headers, dialling the URL's host.
    public func post(
        _ url: URL, body: [UInt8], contentType: String, pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse {
        try post(url, body: body, contentType: contentType, headers: [], connectTo: nil, pinCheck: pinCheck)
    }
}
