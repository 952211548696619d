// The decision of the debug proxy override: a verified chain ending in a proxy CA the app names explicitly
// bypasses the pins of the domains it lists; every other chain gets the client's verdict unchanged.

import PinionCore

/// An explicit, debug-only bypass of the pins for connections through an intercepting proxy
/// (Charles, Proxyman, mitmproxy), the counterpart of Android's `<debug-overrides>`.
///
/// The override names the proxy's CA by its SPKI pin (RFC 7469 §2.4, `sha256/<base64>`), never
/// "any user-installed CA": a corporate MDM CA on a tester's device must not bypass pins. A
/// connection is bypassed only when the client's verdict is a pin failure (`.rejected` or
/// `.reportOnly`), its VERIFIED chain (after the platform's X.509 evaluation) ends in a named CA,
/// and the host is one of the override's domains. A pinned domain's real chain does not end in the
/// proxy CA, so it is never bypassed and keeps its verdict, as does every chain through another CA.
/// The SDK cannot tell a debug build by itself: the app must create an override only in its own
/// debug configuration (`#if DEBUG`), and every use is reported (`Use`) so it cannot go unnoticed.
public struct DebugProxyOverride: Sendable, Equatable {
    /// Which hosts the override covers.
    public enum Domains: Sendable, Equatable {
        /// Every host.
        case all
        /// These names and their subdomains (normalised as pinned names are: lower case, no trailing dot).
        case only([String])
    }

    /// Why an override could not be made.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// No proxy CA was named.
        case noProxyCA
        /// `.only` with no name.
        case noDomains
        /// A domain is empty or an IP literal (pins are matched by name).
        case invalidDomain(String)

        /// A sentence for the developer.
        public var description: String {
            switch self {
            case .noProxyCA: return "the debug proxy override names no proxy CA (give its certificate or SPKI pin)"
            case .noDomains: return "the debug proxy override lists no domain (use .all to cover every host)"
            case .invalidDomain(let name): return "the debug proxy override's domain \"\(name)\" is not a host name"
            }
        }
    }

    /// One bypassed connection: the host, the proxy CA's pin the chain ended in, and the verdict
    /// the pins gave (what an app without the override would have seen).
    public struct Use: Sendable, Equatable, CustomStringConvertible {
        /// The host connected to.
        public let host: String
        /// The named proxy CA the verified chain ends in.
        public let proxyCA: Pin
        /// The client's verdict that was overridden (`.rejected` or `.reportOnly`).
        public let overridden: ConnectionVerdict

        /// The log line for this use.
        public var description: String {
            "Pinion UNSAFE debug proxy override: pins bypassed for \(host) (verified chain ends in proxy CA \(proxyCA))"
        }
    }

    /// What to do with one connection.
    public enum Decision: Sendable, Equatable {
        /// The client's verdict stands.
        case unchanged(ConnectionVerdict)
        /// The pins are bypassed; the caller allows the connection and reports the use.
        case bypassed(Use)

        /// Whether the connection may proceed.
        public var allowsConnection: Bool {
            switch self {
            case .bypassed: return true
            case .unchanged(.rejected): return false
            case .unchanged: return true
            }
        }
    }

    /// The named proxy CAs' SPKI pins.
    public let proxyCAs: Set<Pin>
    /// The hosts covered.
    public let domains: Domains

    /// - Parameters:
    ///   - proxyCAs: SPKI pins of the proxy's CA certificates (at least one).
    ///   - domains: the hosts covered.
    /// - Throws: `Failure` for no CA, an empty domain list, or a domain that is not a host name.
    public init(proxyCAs: [Pin], domains: Domains) throws(Failure) {
        guard !proxyCAs.isEmpty else { throw .noProxyCA }
        self.proxyCAs = Set(proxyCAs)
        switch domains {
        case .all:
            self.domains = .all
        case .only(let names):
            guard !names.isEmpty else { throw .noDomains }
            var normalised: [String] = []
            for name in names {
                guard let host = MergedPolicy.normalizedHost(name) else { throw .invalidDomain(name) }
                normalised.append(host)
            }
            self.domains = .only(normalised)
        }
    }

    /// Whether `host` is covered by ``domains``.
    public func covers(host: String) -> Bool {
        switch domains {
        case .all: return true
        case .only(let names):
            guard let host = MergedPolicy.normalizedHost(host) else { return false }
            return names.contains { host == $0 || host.hasSuffix("." + $0) }
        }
    }

    /// Decides one connection after the client's verdict.
    ///
    /// - Parameters:
    ///   - host: the host connected to.
    ///   - verifiedChainPins: SPKI pins of the VERIFIED chain, leaf first, trust anchor last.
    ///   - verdict: the client's verdict on that chain (`PinningClient.verdict`).
    /// - Returns: `.bypassed` only for a pin failure whose verified chain ends in a named proxy CA
    ///   on a covered host; `.unchanged(verdict)` otherwise.
    public func decide(host: String, verifiedChainPins: [Pin], verdict: ConnectionVerdict) -> Decision {
        switch verdict {
        case .trusted, .notPinned: return .unchanged(verdict)
        case .rejected, .reportOnly: break
        }
        guard let anchor = verifiedChainPins.last, proxyCAs.contains(anchor), covers(host: host) else {
            return .unchanged(verdict)
        }
        return .bypassed(Use(host: host, proxyCA: anchor, overridden: verdict))
    }
}
