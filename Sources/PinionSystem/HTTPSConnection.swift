// One TLS connection of `PinnedHTTPSClient`: connect, handshake with X.509 validation, the pin
// check on the verified chain, and one HTTP/1.1 exchange (RFC 9112) over non-blocking OpenSSL.

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

/// One TLS connection: socket, `SSL *` and the response parser its bytes go to. It opens with
/// X.509 validation, shows the verified chain to the pin check, then carries one HTTP/1.1
/// request and its response. Used by one thread.
final class HTTPSConnection {
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

    // MARK: Pin check

    /// Shows the verified chain to `pinCheck`, before any request byte is sent.
    ///
    /// - Throws: `.emptyVerifiedChain` when OpenSSL has no verified chain (`pinCheck` is not
    ///   called), `.pinningRefused` when `pinCheck` refuses.
    func checkPins(_ pinCheck: @Sendable (PeerChain) -> PinDecision) throws(HTTPSError) {
        if case .refuse(let reason) = pinCheck(try peerChain()) {
            throw HTTPSError.pinningRefused(host: host, port: port, reason: reason)
        }
    }

    // MARK: Certificates

    /// The verified and served chains; throws `.emptyVerifiedChain` when OpenSSL has no
    /// verified chain.
    private func peerChain() throws(HTTPSError) -> PeerChain {
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
    private func send(_ bytes: [UInt8]) throws(HTTPSError) {
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

    /// Sends one request: `GET` or `POST` of the target, Host, User-Agent (unless empty or
    /// given in `headers`), `Connection: close`, `headers`, then for a body its Content-Type,
    /// Content-Length and bytes.
    func send(
        _ request: PinnedHTTPSClient.Request, for target: HTTPSTarget, headers: [(String, String)],
        userAgent: String
    ) throws(HTTPSError) {
        var text = "\(request.method) \(target.requestTarget) HTTP/1.1\r\nHost: \(target.hostHeader)\r\n"
        let callerSetsAgent = headers.contains { $0.0.lowercased() == "user-agent" }
        if !userAgent.isEmpty, !callerSetsAgent {
            text += "User-Agent: \(userAgent)\r\n"
        }
        text += "Connection: close\r\n"
        for (name, value) in headers {
            text += "\(name): \(value)\r\n"
        }
        if let body = request.body {
            text += "Content-Type: \(body.contentType)\r\nContent-Length: \(body.bytes.count)\r\n"
        }
        text += "\r\n"
        // Validated to be free of control characters; non-ASCII values go out as UTF-8.
        try send(Array(text.utf8) + (request.body?.bytes ?? []))
    }

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
