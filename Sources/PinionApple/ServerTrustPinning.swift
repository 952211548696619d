// The pin check of one server trust on Apple platforms: SecTrust's X.509 evaluation first, then the
// client's verdict on the verified chain; every URLSession delegate and Alamofire adapter calls it.
// Apple-only glue, type-checked against Tests/AppleStubs only (see scripts/typecheck-apple).

#if canImport(Security) && canImport(CryptoKit)
    import Foundation
    import PinionCore
    import PinionTrust
    import Security

    /// Why a server trust was refused before its pins were consulted.
    public enum ServerTrustError: Error, Sendable, Equatable {
        /// `SecTrustEvaluateWithError` failed (chain, validity or host name); `reason` is its error.
        case x509Failed(reason: String)
        /// The evaluation passed but the trust holds no certificate to check pins against.
        case emptyVerifiedChain
    }

    /// The decision on one server trust: pinning only tightens what X.509 validation allows.
    public enum ServerTrustDecision: Sendable, Equatable {
        /// X.509 validation refused the trust; the pins were not consulted.
        case refused(ServerTrustError)
        /// X.509 validation passed; the policy's verdict on the verified chain (docs/DESIGN.md §8).
        case verdict(ConnectionVerdict)

        /// True only for `.trusted`, `.notPinned` and `.reportOnly` verdicts.
        public var allowsConnection: Bool {
            switch self {
            case .refused, .verdict(.rejected): return false
            case .verdict(.trusted), .verdict(.notPinned), .verdict(.reportOnly): return true
            }
        }
    }

    /// The server-trust pin check shared by `PinionURLSessionDelegate`, an app's own delegate, the
    /// update channel's `URLSessionTransport` and an Alamofire `ServerTrustEvaluating` adapter.
    public enum PinionServerTrust {
        /// Runs `SecTrustEvaluateWithError` (the system's or a managed device's trust anchors decide,
        /// as OpenSSL's store does on Linux), then copies the evaluated chain.
        ///
        /// - Parameter trust: the challenge's `protectionSpace.serverTrust`.
        /// - Returns: DER certificates of the VERIFIED chain (`SecTrustCopyCertificateChain`), leaf first.
        /// - Throws: `ServerTrustError` when X.509 validation fails or the chain is empty.
        public static func verifiedChainDER(of trust: SecTrust) throws(ServerTrustError) -> [[UInt8]] {
            var error: CFError?
            guard SecTrustEvaluateWithError(trust, &error) else {
                throw .x509Failed(reason: error.map { String(describing: $0) } ?? "not trusted")
            }
            let certificates = (SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? []
            let chain = certificates.map { [UInt8](SecCertificateCopyData($0) as Data) }
            guard !chain.isEmpty else { throw .emptyVerifiedChain }
            return chain
        }

        /// X.509 validation, then `client.verdict(for:port:verifiedChainDER:)`, which reports a
        /// failure as the client is configured to (docs/DESIGN.md §14).
        ///
        /// - Parameters:
        ///   - trust: the server trust to decide.
        ///   - host: the host name the connection is for.
        ///   - port: the port, for reports.
        ///   - client: the pinning client whose policy applies now.
        /// - Returns: the decision; connect only when `allowsConnection` is true.
        public static func evaluate(_ trust: SecTrust, host: String, port: UInt16 = 443, client: PinningClient)
            -> ServerTrustDecision
        {
            do {
                let chain = try verifiedChainDER(of: trust)
                return .verdict(client.verdict(for: host, port: port, verifiedChainDER: chain))
            } catch {
                return .refused(error)
            }
        }

        /// The answer to a URLSession authentication challenge, for an app's own delegate to pass
        /// to its completion handler: `.performDefaultHandling` for anything but server trust,
        /// `.useCredential` only when `evaluate` allows the connection, else
        /// `.cancelAuthenticationChallenge` (also for a server-trust challenge without a trust).
        ///
        /// - Parameters:
        ///   - challenge: the challenge URLSession handed the delegate.
        ///   - client: the pinning client whose policy applies now.
        /// - Returns: the disposition and, with `.useCredential`, the credential for the trust.
        public static func disposition(for challenge: URLAuthenticationChallenge, client: PinningClient)
            -> (URLSession.AuthChallengeDisposition, URLCredential?)
        {
            let space = challenge.protectionSpace
            guard space.authenticationMethod == NSURLAuthenticationMethodServerTrust else {
                return (.performDefaultHandling, nil)
            }
            guard let trust = space.serverTrust else { return (.cancelAuthenticationChallenge, nil) }
            let port = UInt16(exactly: space.port).flatMap { $0 == 0 ? nil : $0 } ?? 443
            guard evaluate(trust, host: space.host, port: port, client: client).allowsConnection else {
                return (.cancelAuthenticationChallenge, nil)
            }
            return (.useCredential, URLCredential(trust: trust))
        }
    }

    /// A URLSession delegate that pins every server trust with `PinionServerTrust.disposition`.
    /// Apps with their own delegate call that function from their challenge method instead.
    public final class PinionURLSessionDelegate: NSObject, URLSessionDelegate {
        /// The client whose policy decides each connection.
        public let client: PinningClient

        /// - Parameter client: the pinning client (usually `PinningClient.apple(configuration:)`).
        public init(client: PinningClient) {
            self.client = client
        }

        /// Answers a challenge as `PinionServerTrust.disposition(for:client:)` decides.
        public func urlSession(
            _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            let (disposition, credential) = PinionServerTrust.disposition(for: challenge, client: client)
            completionHandler(disposition, credential)
        }
    }
#endif
