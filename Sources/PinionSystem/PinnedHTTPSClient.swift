// Pinned HTTPS GET and POST on OpenSSL: configuration, the request API and redirects; each hop is
// one `HTTPSConnection` (X.509 validation, then the caller's pin check on the verified chain,
// before one request byte is sent; docs/DESIGN.md §6 update channel, §8).

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
    struct Request {
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
            try connection.checkPins(pinCheck)
            try connection.send(method, for: target, headers: requestHeaders, userAgent: configuration.userAgent)
            let head = try connection.readHead()

            if method.body == nil, let location = Self.redirectLocation(head) {
                guard redirects < configuration.maxRedirects else {
                    throw HTTPSError.tooManyRedirects(limit: configuration.maxRedirects)
                }
                target = try Self.redirectTarget(location, from: target)
                redirects += 1
                continue  // the redirect's body is never read: the connection just closes
            }
            let body = try connection.readBody(for: head)
            return HTTPSResponse(url: target.url, status: head.status, headers: head.fields, body: body)
        }
    }
}

// MARK: - Redirects

extension PinnedHTTPSClient {
    /// The Location of a 301, 302, 303, 307 or 308 response; nil for any other response.
    private static func redirectLocation(_ head: HTTPResponseHead) -> String? {
        guard [301, 302, 303, 307, 308].contains(head.status) else { return nil }
        return head.value("location")
    }

    /// The next hop: `location` resolved against the current URL, https only.
    private static func redirectTarget(_ location: String, from target: HTTPSTarget) throws(HTTPSError)
        -> HTTPSTarget
    {
        guard let next = URL(string: location, relativeTo: target.url)?.absoluteURL else {
            throw HTTPSError.malformedResponse(
                host: target.host, port: target.port, detail: "invalid Location \"\(location)\"")
        }
        guard next.scheme?.lowercased() == "https" else {
            throw HTTPSError.redirectToNonHTTPS(location: next.absoluteString)
        }
        do {
            return try HTTPSTarget(next)
        } catch {
            throw HTTPSError.malformedResponse(
                host: target.host, port: target.port, detail: "unusable Location: \(error)")
        }
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
