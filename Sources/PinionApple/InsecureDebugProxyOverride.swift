// Debugging through an intercepting proxy on Apple platforms: the app names the proxy's CA and the domains,
// the decision is PinionTrust's DebugProxyOverride, and every use is reported and logged.
// Apple-only glue, type-checked against Tests/AppleStubs only (see scripts/typecheck-apple).

#if canImport(Security) && canImport(CryptoKit)
    import Foundation
    import PinionCore
    import PinionTrust
    import Security

    /// An UNSAFE (insecure by design) bypass of the pins for connections through a debugging proxy (Charles,
    /// Proxyman, mitmproxy). Create it only in the app's debug configuration (`#if DEBUG`): the
    /// SDK cannot tell a debug build by itself, and an override in a release build would let
    /// that proxy's CA read the app's traffic on every device that trusts it.
    ///
    /// The proxy's CA is named explicitly (its certificate or SPKI pin); a chain through any
    /// other CA, including one an MDM profile installed, keeps the pins' verdict, and so does
    /// every pinned domain's real chain (docs/APPLE.md "Debugging through a proxy"). Every
    /// bypassed connection calls `onUse` and writes a log line (`NSLog`).
    public struct InsecureDebugProxyOverride: Sendable {
        /// The decision (PinionTrust, tested on Linux).
        public let decision: DebugProxyOverride
        /// Called on every bypassed connection, on the thread of the trust evaluation.
        public let onUse: @Sendable (DebugProxyOverride.Use) -> Void

        /// - Parameters:
        ///   - proxyCA: the proxy's root certificate, as exported from Charles, Proxyman or mitmproxy.
        ///   - domains: the hosts whose pins it bypasses (`.all` for every host).
        ///   - onUse: called on every bypassed connection.
        /// - Throws: `CertificateSPKI`'s error for a certificate whose SPKI cannot be read;
        ///   `DebugProxyOverride.Failure` for no domain or a domain that is not a host name.
        public init(
            proxyCA: SecCertificate, domains: DebugProxyOverride.Domains,
            onUse: @escaping @Sendable (DebugProxyOverride.Use) -> Void
        ) throws {
            let spki = try CertificatePins.spki(of: proxyCA, hasher: CryptoKitProvider.provider.hasher)
            try self.init(proxyCAPins: [try Pin(digest: spki.sha256)], domains: domains, onUse: onUse)
        }

        /// - Parameters:
        ///   - proxyCAPins: SPKI pins (`sha256/<base64>`) of the proxy's CA certificates.
        ///   - domains: the hosts whose pins it bypasses (`.all` for every host).
        ///   - onUse: called on every bypassed connection.
        /// - Throws: `DebugProxyOverride.Failure` for no pin, no domain or a domain that is not a host name.
        public init(
            proxyCAPins: [Pin], domains: DebugProxyOverride.Domains,
            onUse: @escaping @Sendable (DebugProxyOverride.Use) -> Void
        ) throws {
            decision = try DebugProxyOverride(proxyCAs: proxyCAPins, domains: domains)
            self.onUse = onUse
        }
    }

    extension PinionServerTrust {
        /// `evaluate(_:host:port:client:)` with an UNSAFE debug proxy override: a pin failure whose
        /// verified chain ends in the override's proxy CA, on one of its domains, is allowed,
        /// reported to `onUse` and logged; every other connection gets the client's verdict.
        ///
        /// - Parameters:
        ///   - trust: the server trust of the challenge.
        ///   - host: the host connected to.
        ///   - port: its port.
        ///   - client: the pinning client.
        ///   - unsafeDebugProxyOverride: the override; nil behaves as `evaluate(_:host:port:client:)`.
        /// - Returns: the decision, `.verdict(.notPinned)` for a bypassed connection.
        public static func evaluate(
            _ trust: SecTrust, host: String, port: UInt16 = 443, client: PinningClient,
            unsafeDebugProxyOverride: InsecureDebugProxyOverride?
        ) -> ServerTrustDecision {
            let chain: [[UInt8]]
            do { chain = try verifiedChainDER(of: trust) } catch { return .refused(error) }
            let verdict = client.verdict(for: host, port: port, verifiedChainDER: chain)
            guard let unsafeDebugProxyOverride else { return .verdict(verdict) }
            let hasher = CryptoKitProvider.provider.hasher
            var pins: [Pin] = []
            for der in chain {
                guard let spki = try? CertificateSPKI.fromCertificateDER(der, hasher: hasher),
                    let pin = try? Pin(digest: spki.sha256)
                else { return .verdict(verdict) }
                pins.append(pin)
            }
            switch unsafeDebugProxyOverride.decision.decide(host: host, verifiedChainPins: pins, verdict: verdict) {
            case .unchanged(let verdict):
                return .verdict(verdict)
            case .bypassed(let use):
                NSLog("%@", use.description)
                unsafeDebugProxyOverride.onUse(use)
                return .verdict(.notPinned)
            }
        }

        /// `disposition(for:client:)` with an UNSAFE debug proxy override (see
        /// `evaluate(_:host:port:client:unsafeDebugProxyOverride:)`).
        ///
        /// - Parameters:
        ///   - challenge: the URLSession challenge.
        ///   - client: the pinning client.
        ///   - unsafeDebugProxyOverride: the override, or nil.
        /// - Returns: the disposition and credential to pass to the completion handler.
        public static func disposition(
            for challenge: URLAuthenticationChallenge, client: PinningClient,
            unsafeDebugProxyOverride: InsecureDebugProxyOverride?
        ) -> (URLSession.AuthChallengeDisposition, URLCredential?) {
            let space = challenge.protectionSpace
            guard space.authenticationMethod == NSURLAuthenticationMethodServerTrust else {
                return (.performDefaultHandling, nil)
            }
            guard let trust = space.serverTrust else { return (.cancelAuthenticationChallenge, nil) }
            let port = UInt16(exactly: space.port).flatMap { $0 == 0 ? nil : $0 } ?? 443
            let decision = evaluate(
                trust, host: space.host, port: port, client: client, unsafeDebugProxyOverride: unsafeDebugProxyOverride)
            guard decision.allowsConnection else { return (.cancelAuthenticationChallenge, nil) }
            return (.useCredential, URLCredential(trust: trust))
        }
    }
#endif
