// The live probe of `lint --live` and `publish --check-live`: one `HOST:PORT` target probed
// at every address its name resolves to, once offering RSA and once ECDSA signature
// algorithms, so that every key a server may present is seen. A probe is a TLS handshake
// only (no request), with the X.509 verification of `pinion spki --connect`.

import PinionCore
import PinionCrypto
import PinionSystem

/// What one target presented at each address, per signature family.
struct LiveTargetProbe {
    /// One handshake: an address, a family and what came of it.
    struct Attempt {
        /// `ADDRESS:PORT` (`[IPv6]:PORT`) dialled.
        let endpoint: String
        /// The signature algorithms offered.
        let family: TLSProbe.SignatureFamily
        /// The chain and verification, or the network or handshake failure.
        let result: Result<TLSProbeResult, TLSProbeError>
    }

    /// `HOST:PORT` as given.
    let target: String
    /// HOST: the name sent as SNI and checked against the certificate.
    let host: String
    /// Every handshake tried, by address, then family.
    let attempts: [Attempt]
    /// The addresses probed, as `ADDRESS:PORT`.
    let endpoints: [String]
    /// Why an address (or the name) could not be checked: resolution, connect or timeout
    /// failures, or no handshake with either family. Empty when every address completed a
    /// handshake with at least one family.
    let failures: [TLSProbeError]

    /// The handshakes that completed.
    var completed: [(endpoint: String, family: TLSProbe.SignatureFamily, result: TLSProbeResult)] {
        attempts.compactMap { attempt in
            guard case .success(let result) = attempt.result else { return nil }
            return (attempt.endpoint, attempt.family, result)
        }
    }

    /// Lines for the operator: each handshake's outcome and chain, leaf first.
    var lines: [String] {
        var lines: [String] = []
        for attempt in attempts {
            let label = "live \(target) at \(attempt.endpoint) (\(attempt.family.rawValue))"
            switch attempt.result {
            case .success(let result):
                lines.append("\(label): \(result.verified ? "verified" : "NOT verified") (\(result.protocolVersion))")
                lines += LiveProbe.chainLines(result)
            case .failure(let error):
                lines.append("\(label): no handshake: \(error)")
            }
        }
        return lines
    }
}

/// A `HOST:PORT` to probe, optionally connecting to another address (tests use 127.0.0.1).
enum LiveProbe {
    /// Seconds allowed for each TCP connect and, separately, each handshake.
    static let timeout = 10.0

    /// Probes `target` at every address of HOST (or of `address`), once per signature family.
    ///
    /// - Parameters:
    ///   - target: `HOST:PORT`; HOST is the name checked and sent as SNI.
    ///   - address: where to connect instead of HOST (`ADDRESS[:PORT]`, a name resolved to
    ///     every address too), if given.
    ///   - caFile: PEM trust anchors; nil for the system store.
    /// - Returns: every handshake and what could not be checked.
    /// - Throws: `CLIError.usage` for a malformed target or address; `TLSProbeError` for a
    ///   CA file that cannot be loaded or a TLS set-up failure (nothing to do with the server).
    static func probeAll(_ target: String, address: String?, caFile: String?) throws -> LiveTargetProbe {
        let (host, targetPort) = try SPKICommand.splitHostPort(target, option: "--live")
        let (dial, port) =
            try address.map { (text) throws(CLIError) in
                try ConnectTo.parse(text, option: "--connect-to", defaultPort: targetPort)
            } ?? (host, targetPort)
        let addresses: [String]
        do { addresses = try TLSProbe.addresses(of: dial, port: port) } catch let error as TLSProbeError {
            return LiveTargetProbe(target: target, host: host, attempts: [], endpoints: [], failures: [error])
        }
        var attempts: [LiveTargetProbe.Attempt] = []
        var failures: [TLSProbeError] = []
        for address in addresses {
            let endpoint = address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
            var here: [LiveTargetProbe.Attempt] = []
            for family in TLSProbe.SignatureFamily.allCases {
                do {
                    let result = try TLSProbe.chain(
                        host: address, port: port, serverName: host, caFile: caFile, timeout: timeout,
                        offering: family)
                    here.append(.init(endpoint: endpoint, family: family, result: .success(result)))
                } catch let error as TLSProbeError where error.isIOError && !error.isCAFileFailure {
                    here.append(.init(endpoint: endpoint, family: family, result: .failure(error)))
                    // Not reachable at all: the other family would only wait as long again.
                    if !error.isHandshakeFailure { break }
                }
            }
            attempts += here
            if !here.contains(where: { if case .success = $0.result { true } else { false } }),
                case .failure(let error)? = here.last?.result
            {
                failures.append(error)
            }
        }
        return LiveTargetProbe(
            target: target, host: host, attempts: attempts,
            endpoints: addresses.map { $0.contains(":") ? "[\($0)]:\(port)" : "\($0):\(port)" }, failures: failures)
    }

    /// Lines describing a probed chain, leaf first: mark, pin, subject.
    static func chainLines(_ result: TLSProbeResult) -> [String] {
        result.entries.map { entry in
            let mark = entry.onVerifiedPath ? (entry.presented ? "*" : "+") : " "
            return "  \(mark) sha256/\(Base64.encode(entry.object.spkiSHA256))  \(entry.object.label)"
        }
    }

    /// The pins of the certificates on the verified path, leaf first (empty when not verified).
    static func verifiedChain(_ result: TLSProbeResult) -> [Pin] {
        result.entries.filter(\.onVerifiedPath).compactMap { try? Pin(digest: $0.object.spkiSHA256) }
    }
}

extension TLSProbeError {
    /// The CA file, not the server, failed.
    fileprivate var isCAFileFailure: Bool {
        if case .caFileUnreadable = self { return true }
        return false
    }

    /// The server was reached but no handshake completed (for a probe offering one family:
    /// the server holds no key of that type, or is not a TLS server).
    fileprivate var isHandshakeFailure: Bool {
        if case .handshakeFailed = self { return true }
        return false
    }
}
