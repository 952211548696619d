// The update channel on Apple platforms: `HTTPSTransport` over an ephemeral URLSession per call (no
// cookies, cache, reused connection or resumed TLS session), X.509 by SecTrust, then the caller's pin
// check. Apple-only glue, type-checked against Tests/AppleStubs only (see scripts/typecheck-apple).

#if canImport(Security) && canImport(CryptoKit)
    import Foundation
    import PinionCore
    import PinionTrust
    import Security

    /// `HTTPSTransport` with URLSession. The pin check is the caller's: `PinningClient` passes the
    /// app's publisher pins only, never manifest pins (docs/DESIGN.md §6). Each call runs on a new
    /// ephemeral session invalidated at its end, and blocks its thread (the client calls it off
    /// the caller's actor). https redirects only, at most `maxRedirects`; POST redirects are returned.
    public struct URLSessionTransport: HTTPSTransport {
        /// SHA-256 for the pins of the verified chain.
        public let hasher: any SHA256Hasher
        /// `ClientConfiguration.caFile`: custom anchors are not supported here, so a non-nil value
        /// fails every call (`.caFileUnreadable`) rather than silently trusting the system store.
        public let caFile: String?
        /// Seconds without progress (`timeoutIntervalForRequest`), and for a whole call by default.
        public let ioTimeout: Double
        public let totalDeadline: Double
        /// Longest body accepted, in bytes; a longer one fails with `.responseTooLarge`.
        public let maxResponseBytes: Int
        public let maxRedirects: Int

        /// - Parameters: as the properties of the same names.
        public init(
            hasher: any SHA256Hasher, caFile: String? = nil, ioTimeout: Double = 30, totalDeadline: Double = 60,
            maxResponseBytes: Int, maxRedirects: Int = 5
        ) {
            (self.hasher, self.caFile, self.ioTimeout) = (hasher, caFile, ioTimeout)
            (self.totalDeadline, self.maxResponseBytes, self.maxRedirects) = (
                totalDeadline, maxResponseBytes, maxRedirects
            )
        }

        public func get(
            _ url: URL, headers: [(String, String)], connectTo: (host: String, port: UInt16)?, totalDeadline: Double?,
            pinCheck: @Sendable (PeerChain) -> PinDecision
        ) throws(HTTPSError) -> HTTPSResponse {
            guard connectTo == nil else {
                throw .invalidConfiguration(reason: "connectTo is not supported by URLSession")
            }
            let request = try makeRequest(url, method: "GET", headers: headers)
            return try run(request, url: url, follow: true, deadline: totalDeadline ?? self.totalDeadline, pinCheck)
        }

        public func post(
            _ url: URL, body: [UInt8], contentType: String, pinCheck: @Sendable (PeerChain) -> PinDecision
        ) throws(HTTPSError) -> HTTPSResponse {
            var request = try makeRequest(url, method: "POST", headers: [("Content-Type", contentType)])
            request.httpBody = Data(body)
            return try run(request, url: url, follow: false, deadline: totalDeadline, pinCheck)
        }

        private func makeRequest(_ url: URL, method: String, headers: [(String, String)]) throws(HTTPSError)
            -> URLRequest
        {
            if let caFile {
                throw .caFileUnreadable(path: caFile, detail: "custom CA files are not supported on Apple")
            }
            guard url.scheme?.lowercased() == "https" else { throw .unsupportedScheme(url.scheme ?? "") }
            guard let host = url.host, !host.isEmpty, UInt16(exactly: url.port ?? 443) != nil, url.user == nil else {
                throw .invalidURL(url: url.absoluteString, reason: "no host, a bad port or credentials")
            }
            var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: ioTimeout)
            request.httpMethod = method
            // URLSession would ask for gzip and decode it; the client refuses any coding but identity.
            request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            for (name, value) in headers {
                let reserved = ["host", "connection", "content-length", "transfer-encoding"]
                guard !reserved.contains(name.lowercased()), !(name + value).contains(where: \.isNewline) else {
                    throw .invalidHeader(name: name, reason: "set by the transport, or a line break")
                }
                request.setValue(value, forHTTPHeaderField: name)
            }
            return request
        }

        private func run(
            _ request: URLRequest, url: URL, follow: Bool, deadline: Double, _ pinCheck: (PeerChain) -> PinDecision
        ) throws(HTTPSError) -> HTTPSResponse {
            let host = url.host ?? ""
            let port = UInt16(exactly: url.port ?? 443) ?? 443
            let exchange = TransportExchange(
                host: host, port: port, hasher: hasher, maxBytes: maxResponseBytes,
                maxRedirects: follow ? maxRedirects : nil)
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            configuration.httpCookieStorage = nil
            configuration.httpShouldSetCookies = false
            configuration.timeoutIntervalForRequest = ioTimeout
            configuration.timeoutIntervalForResource = deadline
            let session = URLSession(configuration: configuration, delegate: exchange, delegateQueue: nil)
            defer { session.invalidateAndCancel() }
            session.dataTask(with: request).resume()
            let end = DispatchTime.now() + max(deadline, 0.001)
            while true {
                guard exchange.signal.wait(timeout: end) == .success else {
                    throw .timedOut(host: host, port: port, phase: .deadline)
                }
                switch exchange.next() {
                case .challenge(let chain, let reply):
                    // The pin check runs here, on the caller's thread, while the handshake waits.
                    let decision = pinCheck(chain)
                    if case .refuse(let reason) = decision {
                        exchange.fail(.pinningRefused(host: chain.host, port: chain.port, reason: reason))
                    }
                    reply(decision == .proceed)
                case .finished(let result): return try result.get()
                case nil: continue
                }
            }
        }
    }
#endif
