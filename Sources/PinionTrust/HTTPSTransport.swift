// The transport seam of the SDK: what a TLS stack hands the trust logic (the verified
// chain), what it returns (a response or a typed error), and the protocol a platform's
// HTTPS client implements (OpenSSL on Linux, URLSession on Apple, OkHttp on the JVM).

import Foundation
import PinionCore

/// The certificates of one TLS connection as the pin check sees them, after X.509
/// validation (chain and host name) has passed.
public struct PeerChain: Sendable, Equatable {
    /// The host of the URL being fetched, exactly as the URL gives it (case and a trailing
    /// dot kept; an IPv6 literal without brackets). This is the name SNI and the
    /// certificate check used (lowercased, one trailing dot removed); normalising it for
    /// pin matching (docs/DESIGN.md §8.2) is the policy's job.
    public let host: String
    /// The URL's port (443 when the URL names none), also when `connectTo` dialled another
    /// address.
    public let port: UInt16
    /// SPKI SHA-256 digests (RFC 7469 §2.4, 32 bytes each) of the chain OpenSSL verified
    /// (`SSL_get0_verified_chain`), leaf first, trust anchor last. Never empty: an empty
    /// verified chain is refused before the pin check runs. Only these count for pinning.
    public let verifiedSPKISHA256: [[UInt8]]
    /// DER certificates of the verified chain, in the order of `verifiedSPKISHA256`
    /// (RFC 7469 §3 validated-certificate-chain).
    public let verifiedChainDER: [[UInt8]]
    /// DER certificates as the server sent them (`SSL_get_peer_cert_chain`, leaf first),
    /// including any it appended that are not on the verified path (RFC 7469 §3
    /// served-certificate-chain). For reports only, never for pinning.
    public let servedChainDER: [[UInt8]]

    /// Creates a chain description (the client builds these; tests of a policy may too).
    ///
    /// - Parameters:
    ///   - host: the URL host as given.
    ///   - port: the URL port.
    ///   - verifiedSPKISHA256: SPKI SHA-256 digests of the verified chain, leaf first.
    ///   - verifiedChainDER: DER certificates of the verified chain, leaf first.
    ///   - servedChainDER: DER certificates the server sent, in its order.
    public init(
        host: String, port: UInt16, verifiedSPKISHA256: [[UInt8]], verifiedChainDER: [[UInt8]],
        servedChainDER: [[UInt8]]
    ) {
        self.host = host
        self.port = port
        self.verifiedSPKISHA256 = verifiedSPKISHA256
        self.verifiedChainDER = verifiedChainDER
        self.servedChainDER = servedChainDER
    }
}

/// What the caller's pin check decided for one connection.
public enum PinDecision: Sendable, Equatable {
    /// Send the request on this connection (trusted, not pinned, or a report-only failure).
    case proceed
    /// Close the connection without sending a byte; `get` throws
    /// `HTTPSError.pinningRefused` with this reason.
    case refuse(reason: String)
}

/// A complete HTTP response (any status, including 4xx and 5xx).
public struct HTTPSResponse: Sendable {
    /// The URL that produced this response: the requested one, or the last redirect target.
    public let url: URL
    /// The status code, 100-599 (never 1xx: interim responses are skipped).
    public let status: Int
    /// Header fields in the order received; names lowercased, values with surrounding
    /// white space removed and bytes mapped one-to-one to Unicode (ISO 8859-1).
    public let headers: [(String, String)]
    /// The body after removing chunked transfer coding; at most `maxResponseBytes` bytes.
    public let body: [UInt8]

    /// Creates a response (the client builds these; fakes of a fetcher may too).
    ///
    /// - Parameters:
    ///   - url: the URL that produced the response.
    ///   - status: the status code.
    ///   - headers: header fields, names lowercased.
    ///   - body: the body bytes.
    public init(url: URL, status: Int, headers: [(String, String)], body: [UInt8]) {
        self.url = url
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of a header field.
    ///
    /// - Parameter name: the field name, compared case-insensitively.
    /// - Returns: the value, or nil when the field is absent.
    public func value(forHeader name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.0 == lowered }?.1
    }
}

/// Why `PinnedHTTPSClient.get` produced no response. Host and port name the URL being
/// fetched, except for resolution and connect failures, which name the address dialled.
///
/// A struct over a `package` code, as async-http-client's `HTTPClientError`: a new kind of
/// failure is a new static member, never a new enum case that breaks a caller's exhaustive
/// `switch`. Compare with `==` (`error == .tooManyRedirects(limit: 3)`), read a payload
/// through its accessor (`host`, `port`, `detail`, `path`, `phase`, `limit`), branch on
/// `isNetworkError` or the stable `reasonCode`.
public struct HTTPSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The step that ran out of time.
    public enum Phase: String, Sendable, Equatable {
        /// A TCP connect attempt (`connectTimeout`).
        case connect
        /// The TLS handshake (`ioTimeout` for the whole handshake).
        case handshake
        /// Writing the request (`ioTimeout` without progress).
        case request
        /// Reading the response (`ioTimeout` without a byte).
        case response
        /// The total deadline of the call (`totalDeadline`), whatever step was running.
        case deadline
    }

    /// The kinds of failure and their payloads. Package-wide so that the SDK's own modules
    /// match kinds the compiler checks (and classify every kind in exhaustive switches),
    /// while an app cannot switch over them.
    package enum Code: Sendable, Hashable {
        case invalidURL(url: String, reason: String)
        case unsupportedScheme(String)
        case invalidHeader(name: String, reason: String)
        case invalidConfiguration(reason: String)
        case caFileUnreadable(path: String, detail: String)
        case tlsSetupFailed(detail: String)
        case resolutionFailed(host: String, detail: String)
        case connectionRefused(host: String, port: UInt16)
        case connectionFailed(host: String, port: UInt16, errno: Int32, detail: String)
        case timedOut(host: String, port: UInt16, phase: Phase)
        case handshakeFailed(host: String, port: UInt16, detail: String)
        case certificateVerificationFailed(host: String, port: UInt16, reason: String)
        case emptyVerifiedChain(host: String, port: UInt16)
        case pinningRefused(host: String, port: UInt16, reason: String)
        case connectionLost(host: String, port: UInt16, detail: String)
        case malformedResponse(host: String, port: UInt16, detail: String)
        case responseTooLarge(host: String, port: UInt16, limit: Int)
        case tooManyRedirects(limit: Int)
        case redirectToNonHTTPS(location: String)
    }

    /// The kind of failure and its payload.
    package let code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// The URL has no host, carries credentials, has a bad port or a request target that
    /// cannot be sent; `reason` says which.
    ///
    /// - Parameters:
    ///   - url: the URL as given.
    ///   - reason: what is wrong with it.
    /// - Returns: the error.
    public static func invalidURL(url: String, reason: String) -> HTTPSError {
        HTTPSError(.invalidURL(url: url, reason: reason))
    }

    /// The URL's scheme is not `https`.
    ///
    /// - Parameter scheme: the scheme given.
    /// - Returns: the error.
    public static func unsupportedScheme(_ scheme: String) -> HTTPSError { HTTPSError(.unsupportedScheme(scheme)) }

    /// A request header the caller gave is malformed or one the client sets itself
    /// (Host, Connection, Content-Length, Transfer-Encoding).
    ///
    /// - Parameters:
    ///   - name: the field name.
    ///   - reason: what is wrong with it.
    /// - Returns: the error.
    public static func invalidHeader(name: String, reason: String) -> HTTPSError {
        HTTPSError(.invalidHeader(name: name, reason: reason))
    }

    /// A configuration value is out of range; `reason` names it.
    ///
    /// - Parameter reason: the value and its allowed range.
    /// - Returns: the error.
    public static func invalidConfiguration(reason: String) -> HTTPSError {
        HTTPSError(.invalidConfiguration(reason: reason))
    }

    /// The CA file could not be read or holds no certificate.
    ///
    /// - Parameters:
    ///   - path: the CA file's path.
    ///   - detail: why it cannot be used.
    /// - Returns: the error.
    public static func caFileUnreadable(path: String, detail: String) -> HTTPSError {
        HTTPSError(.caFileUnreadable(path: path, detail: detail))
    }

    /// OpenSSL could not set up the TLS client (allocation, configuration).
    ///
    /// - Parameter detail: OpenSSL's error text.
    /// - Returns: the error.
    public static func tlsSetupFailed(detail: String) -> HTTPSError { HTTPSError(.tlsSetupFailed(detail: detail)) }

    /// Name resolution (`getaddrinfo`) failed; `detail` is its error text.
    ///
    /// - Parameters:
    ///   - host: the name resolved.
    ///   - detail: the resolver's error text.
    /// - Returns: the error.
    public static func resolutionFailed(host: String, detail: String) -> HTTPSError {
        HTTPSError(.resolutionFailed(host: host, detail: detail))
    }

    /// Every address refused the TCP connection.
    ///
    /// - Parameters:
    ///   - host: the address dialled.
    ///   - port: the port dialled.
    /// - Returns: the error.
    public static func connectionRefused(host: String, port: UInt16) -> HTTPSError {
        HTTPSError(.connectionRefused(host: host, port: port))
    }

    /// The TCP connection failed for another reason; `errno` is the system error number and
    /// `detail` the platform's text for it.
    ///
    /// - Parameters:
    ///   - host: the address dialled.
    ///   - port: the port dialled.
    ///   - errno: the system error number.
    ///   - detail: the platform's text for it.
    /// - Returns: the error.
    public static func connectionFailed(host: String, port: UInt16, errno: Int32, detail: String) -> HTTPSError {
        HTTPSError(.connectionFailed(host: host, port: port, errno: errno, detail: detail))
    }

    /// A step took longer than its timeout, or the total deadline passed.
    ///
    /// - Parameters:
    ///   - host: the URL's host (the address dialled for a connect).
    ///   - port: the port.
    ///   - phase: the step that ran out of time.
    /// - Returns: the error.
    public static func timedOut(host: String, port: UInt16, phase: Phase) -> HTTPSError {
        HTTPSError(.timedOut(host: host, port: port, phase: phase))
    }

    /// The TLS handshake failed for a reason other than certificate verification (no
    /// common protocol or cipher, not a TLS server, peer closed or reset).
    ///
    /// - Parameters:
    ///   - host: the URL's host.
    ///   - port: the URL's port.
    ///   - detail: OpenSSL's error text.
    /// - Returns: the error.
    public static func handshakeFailed(host: String, port: UInt16, detail: String) -> HTTPSError {
        HTTPSError(.handshakeFailed(host: host, port: port, detail: detail))
    }

    /// X.509 validation failed (chain, validity, purpose or host name); `reason` is
    /// OpenSSL's `X509_verify_cert_error_string` text, such as `certificate has expired`,
    /// `hostname mismatch` or `unable to get local issuer certificate`. The pin check did
    /// not run.
    ///
    /// - Parameters:
    ///   - host: the URL's host.
    ///   - port: the URL's port.
    ///   - reason: the verifier's error text.
    /// - Returns: the error.
    public static func certificateVerificationFailed(host: String, port: UInt16, reason: String) -> HTTPSError {
        HTTPSError(.certificateVerificationFailed(host: host, port: port, reason: reason))
    }

    /// The handshake passed but OpenSSL reports no verified chain; refused without calling
    /// the pin check (docs/DESIGN.md §8.3).
    ///
    /// - Parameters:
    ///   - host: the URL's host.
    ///   - port: the URL's port.
    /// - Returns: the error.
    public static func emptyVerifiedChain(host: String, port: UInt16) -> HTTPSError {
        HTTPSError(.emptyVerifiedChain(host: host, port: port))
    }

    /// The pin check refused the connection; no request byte was sent.
    ///
    /// - Parameters:
    ///   - host: the URL's host.
    ///   - port: the URL's port.
    ///   - reason: the pin check's `PinDecision.refuse` reason.
    /// - Returns: the error.
    public static func pinningRefused(host: String, port: UInt16, reason: String) -> HTTPSError {
        HTTPSError(.pinningRefused(host: host, port: port, reason: reason))
    }

    /// The connection failed after the handshake (reset, TLS error, or a close without
    /// close_notify that leaves a body delimited by the close possibly truncated).
    ///
    /// - Parameters:
    ///   - host: the URL's host.
    ///   - port: the URL's port.
    ///   - detail: what failed.
    /// - Returns: the error.
    public static func connectionLost(host: String, port: UInt16, detail: String) -> HTTPSError {
        HTTPSError(.connectionLost(host: host, port: port, detail: detail))
    }

    /// The response is not HTTP/1.x as RFC 9112 defines it, exceeds the header limits
    /// (8192 bytes, 100 fields), or ends before its declared length.
    ///
    /// - Parameters:
    ///   - host: the URL's host.
    ///   - port: the URL's port.
    ///   - detail: the rule broken.
    /// - Returns: the error.
    public static func malformedResponse(host: String, port: UInt16, detail: String) -> HTTPSError {
        HTTPSError(.malformedResponse(host: host, port: port, detail: detail))
    }

    /// The body is larger than `maxResponseBytes` (`limit`); reading stopped there.
    ///
    /// - Parameters:
    ///   - host: the URL's host.
    ///   - port: the URL's port.
    ///   - limit: the largest body accepted, in bytes.
    /// - Returns: the error.
    public static func responseTooLarge(host: String, port: UInt16, limit: Int) -> HTTPSError {
        HTTPSError(.responseTooLarge(host: host, port: port, limit: limit))
    }

    /// More than `maxRedirects` (`limit`) redirects.
    ///
    /// - Parameter limit: the most redirects followed.
    /// - Returns: the error.
    public static func tooManyRedirects(limit: Int) -> HTTPSError { HTTPSError(.tooManyRedirects(limit: limit)) }

    /// A redirect pointed to a URL that is not https; it was not followed.
    ///
    /// - Parameter location: the redirect's target as the server sent it.
    /// - Returns: the error.
    public static func redirectToNonHTTPS(location: String) -> HTTPSError {
        HTTPSError(.redirectToNonHTTPS(location: location))
    }

    /// The host the failure concerns (the URL's host, or the address dialled for resolution
    /// and connect failures); nil for failures before or outside a connection (URL, header,
    /// configuration, CA file, TLS set-up, redirects).
    public var host: String? {
        switch code {
        case .resolutionFailed(let host, _), .connectionRefused(let host, _), .connectionFailed(let host, _, _, _),
            .timedOut(let host, _, _), .handshakeFailed(let host, _, _), .certificateVerificationFailed(let host, _, _),
            .emptyVerifiedChain(let host, _), .pinningRefused(let host, _, _), .connectionLost(let host, _, _),
            .malformedResponse(let host, _, _), .responseTooLarge(let host, _, _):
            return host
        case .invalidURL, .unsupportedScheme, .invalidHeader, .invalidConfiguration, .caFileUnreadable,
            .tlsSetupFailed, .tooManyRedirects, .redirectToNonHTTPS:
            return nil
        }
    }

    /// The port the failure concerns, when `host` names an endpoint (not for resolution
    /// failures); nil otherwise.
    public var port: UInt16? {
        switch code {
        case .connectionRefused(_, let port), .connectionFailed(_, let port, _, _), .timedOut(_, let port, _),
            .handshakeFailed(_, let port, _), .certificateVerificationFailed(_, let port, _),
            .emptyVerifiedChain(_, let port), .pinningRefused(_, let port, _), .connectionLost(_, let port, _),
            .malformedResponse(_, let port, _), .responseTooLarge(_, let port, _):
            return port
        case .invalidURL, .unsupportedScheme, .invalidHeader, .invalidConfiguration, .caFileUnreadable,
            .tlsSetupFailed, .resolutionFailed, .tooManyRedirects, .redirectToNonHTTPS:
            return nil
        }
    }

    /// The failure's free text: the `reason` or `detail` payload (for `pinningRefused` the
    /// pin check's reason, for `certificateVerificationFailed` the verifier's text), the
    /// scheme of `unsupportedScheme`, the location of `redirectToNonHTTPS`; nil for failures
    /// whose payload is typed (`connectionRefused`, `timedOut`, `emptyVerifiedChain`,
    /// `responseTooLarge`, `tooManyRedirects`).
    public var detail: String? {
        switch code {
        case .invalidURL(_, let text), .unsupportedScheme(let text), .invalidHeader(_, let text),
            .invalidConfiguration(let text), .caFileUnreadable(_, let text), .tlsSetupFailed(let text),
            .resolutionFailed(_, let text), .connectionFailed(_, _, _, let text), .handshakeFailed(_, _, let text),
            .certificateVerificationFailed(_, _, let text), .pinningRefused(_, _, let text),
            .connectionLost(_, _, let text), .malformedResponse(_, _, let text), .redirectToNonHTTPS(let text):
            return text
        case .connectionRefused, .timedOut, .emptyVerifiedChain, .responseTooLarge, .tooManyRedirects:
            return nil
        }
    }

    /// The CA file's path, for `caFileUnreadable`; nil otherwise.
    public var path: String? {
        if case .caFileUnreadable(let path, _) = code { return path }
        return nil
    }

    /// The step that ran out of time, for `timedOut`; nil otherwise.
    public var phase: Phase? {
        if case .timedOut(_, _, let phase) = code { return phase }
        return nil
    }

    /// The limit passed: bytes for `responseTooLarge`, redirects for `tooManyRedirects`;
    /// nil otherwise.
    public var limit: Int? {
        switch code {
        case .responseTooLarge(_, _, let limit), .tooManyRedirects(let limit): return limit
        case .invalidURL, .unsupportedScheme, .invalidHeader, .invalidConfiguration, .caFileUnreadable,
            .tlsSetupFailed, .resolutionFailed, .connectionRefused, .connectionFailed, .timedOut, .handshakeFailed,
            .certificateVerificationFailed, .emptyVerifiedChain, .pinningRefused, .connectionLost,
            .malformedResponse, .redirectToNonHTTPS:
            return nil
        }
    }

    /// A stable kebab-case name of the kind of failure, the static member's name spelled
    /// out: `invalid-url`, `unsupported-scheme`, `invalid-header`, `invalid-configuration`,
    /// `ca-file-unreadable`, `tls-setup-failed`, `resolution-failed`, `connection-refused`,
    /// `connection-failed`, `timed-out`, `handshake-failed`,
    /// `certificate-verification-failed`, `empty-verified-chain`, `pinning-refused`,
    /// `connection-lost`, `malformed-response`, `response-too-large`, `too-many-redirects`,
    /// `redirect-to-non-https`. New kinds add names; existing names do not change.
    public var reasonCode: String {
        switch code {
        case .invalidURL: return "invalid-url"
        case .unsupportedScheme: return "unsupported-scheme"
        case .invalidHeader: return "invalid-header"
        case .invalidConfiguration: return "invalid-configuration"
        case .caFileUnreadable: return "ca-file-unreadable"
        case .tlsSetupFailed: return "tls-setup-failed"
        case .resolutionFailed: return "resolution-failed"
        case .connectionRefused: return "connection-refused"
        case .connectionFailed: return "connection-failed"
        case .timedOut: return "timed-out"
        case .handshakeFailed: return "handshake-failed"
        case .certificateVerificationFailed: return "certificate-verification-failed"
        case .emptyVerifiedChain: return "empty-verified-chain"
        case .pinningRefused: return "pinning-refused"
        case .connectionLost: return "connection-lost"
        case .malformedResponse: return "malformed-response"
        case .responseTooLarge: return "response-too-large"
        case .tooManyRedirects: return "too-many-redirects"
        case .redirectToNonHTTPS: return "redirect-to-non-https"
        }
    }

    /// True when the server could not be reached or did not deliver a usable HTTP
    /// response (resolution, connect, timeout, handshake, connection lost, malformed or
    /// over-size response, too many redirects): trying again later may help. False for
    /// trust failures (certificate verification, empty verified chain, pinning refusal,
    /// redirect to a non-https URL) and for bad arguments or configuration (including an
    /// unreadable CA file).
    public var isNetworkError: Bool {
        switch code {
        case .resolutionFailed, .connectionRefused, .connectionFailed, .timedOut, .handshakeFailed,
            .connectionLost, .malformedResponse, .responseTooLarge, .tooManyRedirects:
            return true
        case .invalidURL, .unsupportedScheme, .invalidHeader, .invalidConfiguration, .caFileUnreadable,
            .tlsSetupFailed, .certificateVerificationFailed, .emptyVerifiedChain, .pinningRefused,
            .redirectToNonHTTPS:
            return false
        }
    }

    /// One line naming the endpoint (or URL, file) and what failed.
    public var description: String {
        switch code {
        case .invalidURL(let url, let reason): return "invalid URL \"\(TerminalText.escape(url))\": \(reason)"
        case .unsupportedScheme(let scheme): return "unsupported URL scheme \"\(scheme)\" (only https)"
        case .invalidHeader(let name, let reason): return "invalid request header \"\(name)\": \(reason)"
        case .invalidConfiguration(let reason): return "invalid HTTPS client configuration: \(reason)"
        case .caFileUnreadable(let path, let detail): return "\(path): cannot load CA certificates: \(detail)"
        case .tlsSetupFailed(let detail): return "cannot set up the TLS client: \(detail)"
        case .resolutionFailed(let host, let detail): return "\(host): cannot resolve: \(detail)"
        case .connectionRefused(let host, let port): return "\(Self.endpoint(host, port)): connection refused"
        case .connectionFailed(let host, let port, _, let detail):
            return "\(Self.endpoint(host, port)): cannot connect: \(detail)"
        case .timedOut(let host, let port, let phase):
            let what: String
            switch phase {
            case .connect: what = "connect timed out"
            case .handshake: what = "TLS handshake timed out"
            case .request: what = "sending the request timed out"
            case .response: what = "waiting for the response timed out"
            case .deadline: what = "total deadline exceeded"
            }
            return "\(Self.endpoint(host, port)): \(what)"
        case .handshakeFailed(let host, let port, let detail):
            return "\(Self.endpoint(host, port)): TLS handshake failed: \(detail)"
        case .certificateVerificationFailed(let host, let port, let reason):
            return "\(Self.endpoint(host, port)): certificate verification failed: \(reason)"
        case .emptyVerifiedChain(let host, let port):
            return "\(Self.endpoint(host, port)): refused: no verified certificate chain to check pins against"
        case .pinningRefused(let host, let port, let reason):
            return "\(Self.endpoint(host, port)): refused by pin check: \(reason)"
        case .connectionLost(let host, let port, let detail):
            return "\(Self.endpoint(host, port)): connection lost: \(detail)"
        case .malformedResponse(let host, let port, let detail):
            return "\(Self.endpoint(host, port)): malformed HTTP response: \(detail)"
        case .responseTooLarge(let host, let port, let limit):
            return "\(Self.endpoint(host, port)): response body larger than \(limit) bytes"
        case .tooManyRedirects(let limit): return "more than \(limit) redirects"
        case .redirectToNonHTTPS(let location):
            return "refused redirect to non-https URL \"\(TerminalText.escape(location))\""
        }
    }

    private static func endpoint(_ host: String, _ port: UInt16) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// An HTTPS client the SDK fetches with (TUF's ngclient calls it a fetcher): X.509
/// validation (chain, validity, host name; no subject common name fallback) runs first,
/// then `pinCheck` sees the VERIFIED chain and decides before one request byte is sent
/// (docs/DESIGN.md §6 update channel, §8). Implementations never resume TLS sessions (a resumed
/// session carries no verified chain) and never reuse a connection across calls.
public protocol HTTPSTransport: Sendable {
    /// GET `url`, following https redirects under the same checks.
    ///
    /// - Parameters:
    ///   - url: an `https` URL.
    ///   - headers: extra request header fields.
    ///   - connectTo: an address and port to dial instead of the URL's (SNI, the
    ///     certificate check and `pinCheck` still use the URL's host).
    ///   - totalDeadline: seconds the whole call may take at most, or nil for the
    ///     transport's own deadline.
    ///   - pinCheck: called once per connection after X.509 validation passed.
    /// - Returns: the final response (4xx and 5xx are responses).
    /// - Throws: `HTTPSError`.
    func get(
        _ url: URL, headers: [(String, String)], connectTo: (host: String, port: UInt16)?, totalDeadline: Double?,
        pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse

    /// `get` reading at most `maxResponseBytes` of the body (`HTTPSError.responseTooLarge`
    /// past it), for small documents such as manifest.proof (docs/DESIGN.md §12: limits while
    /// reading). The default implementation calls `get` with the transport's own limit; the
    /// caller still refuses a longer body.
    ///
    /// - Parameters:
    ///   - maxResponseBytes: the largest body accepted, in bytes, or nil for the transport's
    ///     own limit.
    /// - Returns: the final response.
    /// - Throws: `HTTPSError`.
    func get(
        _ url: URL, headers: [(String, String)], connectTo: (host: String, port: UInt16)?, totalDeadline: Double?,
        maxResponseBytes: Int?, pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse

    /// POST `body` under the checks of `get`; redirects are returned, not followed.
    ///
    /// - Parameters:
    ///   - url: an `https` URL.
    ///   - body: the request body.
    ///   - contentType: its Content-Type.
    ///   - pinCheck: called after X.509 validation passed, before the body is sent.
    /// - Returns: the response.
    /// - Throws: `HTTPSError`.
    func post(
        _ url: URL, body: [UInt8], contentType: String, pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse
}

extension HTTPSTransport {
    /// The transport's own response limit applies; callers check the body's size.
    public func get(
        _ url: URL, headers: [(String, String)], connectTo: (host: String, port: UInt16)?, totalDeadline: Double?,
        maxResponseBytes: Int?, pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse {
        try get(url, headers: headers, connectTo: connectTo, totalDeadline: totalDeadline, pinCheck: pinCheck)
    }
}
