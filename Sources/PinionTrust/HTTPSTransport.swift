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
public enum HTTPSError: Error, Equatable, CustomStringConvertible {
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

    /// The URL has no host, carries credentials, has a bad port or a request target that
    /// cannot be sent; `reason` says which.
    case invalidURL(url: String, reason: String)
    /// The URL's scheme is not `https`.
    case unsupportedScheme(String)
    /// A request header the caller gave is malformed or one the client sets itself
    /// (Host, Connection, Content-Length, Transfer-Encoding).
    case invalidHeader(name: String, reason: String)
    /// A configuration value is out of range; `reason` names it.
    case invalidConfiguration(reason: String)
    /// The CA file could not be read or holds no certificate.
    case caFileUnreadable(path: String, detail: String)
    /// OpenSSL could not set up the TLS client (allocation, configuration).
    case tlsSetupFailed(detail: String)
    /// Name resolution (`getaddrinfo`) failed; `detail` is its error text.
    case resolutionFailed(host: String, detail: String)
    /// Every address refused the TCP connection.
    case connectionRefused(host: String, port: UInt16)
    /// The TCP connection failed for another reason; `errno` is the system error number and
    /// `detail` the platform's text for it.
    case connectionFailed(host: String, port: UInt16, errno: Int32, detail: String)
    /// A step took longer than its timeout, or the total deadline passed.
    case timedOut(host: String, port: UInt16, phase: Phase)
    /// The TLS handshake failed for a reason other than certificate verification (no
    /// common protocol or cipher, not a TLS server, peer closed or reset).
    case handshakeFailed(host: String, port: UInt16, detail: String)
    /// X.509 validation failed (chain, validity, purpose or host name); `reason` is
    /// OpenSSL's `X509_verify_cert_error_string` text, such as `certificate has expired`,
    /// `hostname mismatch` or `unable to get local issuer certificate`. The pin check did
    /// not run.
    case certificateVerificationFailed(host: String, port: UInt16, reason: String)
    /// The handshake passed but OpenSSL reports no verified chain; refused without calling
    /// the pin check (docs/DESIGN.md §8.3).
    case emptyVerifiedChain(host: String, port: UInt16)
    /// The pin check refused the connection; no request byte was sent.
    case pinningRefused(host: String, port: UInt16, reason: String)
    /// The connection failed after the handshake (reset, TLS error, or a close without
    /// close_notify that leaves a body delimited by the close possibly truncated).
    case connectionLost(host: String, port: UInt16, detail: String)
    /// The response is not HTTP/1.x as RFC 9112 defines it, exceeds the header limits
    /// (8192 bytes, 100 fields), or ends before its declared length.
    case malformedResponse(host: String, port: UInt16, detail: String)
    /// The body is larger than `maxResponseBytes` (`limit`); reading stopped there.
    case responseTooLarge(host: String, port: UInt16, limit: Int)
    /// More than `maxRedirects` (`limit`) redirects.
    case tooManyRedirects(limit: Int)
    /// A redirect pointed to a URL that is not https; it was not followed.
    case redirectToNonHTTPS(location: String)

    /// True when the server could not be reached or did not deliver a usable HTTP
    /// response (resolution, connect, timeout, handshake, connection lost, malformed or
    /// over-size response, too many redirects): trying again later may help. False for
    /// trust failures (certificate verification, empty verified chain, pinning refusal,
    /// redirect to a non-https URL) and for bad arguments or configuration (including an
    /// unreadable CA file).
    public var isNetworkError: Bool {
        switch self {
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
        switch self {
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
