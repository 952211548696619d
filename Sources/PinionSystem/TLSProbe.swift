// TLS probe for `pinion spki --connect`: the chain a server presents, each certificate's
// pin, and which certificates are on the path OpenSSL verified.

import COpenSSL
import CPinionShims
import PinionCrypto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a TLS server presented and what OpenSSL made of it.
public struct TLSProbeResult: Sendable {
    /// One certificate: presented by the server, on the verified path, or both.
    public struct Entry: Sendable {
        /// The certificate's subject, SubjectPublicKeyInfo and pin (`kind == .certificate`).
        public let object: SPKIObject
        /// True when the server sent this certificate (`SSL_get_peer_cert_chain`).
        public let presented: Bool
        /// True when verification succeeded and this certificate is on the path OpenSSL
        /// verified (`SSL_get0_verified_chain`, compared by DER). Only these certificates
        /// count for pinning (docs/DESIGN.md §8.3); always false when `verified` is false.
        public let onVerifiedPath: Bool
    }

    /// The presented chain in the order the server sent it (leaf first), followed, when
    /// verification succeeded, by the verified-path certificates the server did not send
    /// (typically the trust anchor from the CA file or system store), in path order.
    public let entries: [Entry]
    /// True when X.509 verification (chain to a trusted root, validity, purpose, and the
    /// host name or IP address) succeeded.
    public let verified: Bool
    /// Why verification failed: OpenSSL's `X509_verify_cert_error_string` text (such as
    /// `hostname mismatch` or `unable to get local issuer certificate`), or a note when
    /// the server presented no certificate; nil when `verified` is true.
    public let verifyError: String?
    /// The negotiated protocol, as OpenSSL names it: `TLSv1.2` or `TLSv1.3`.
    public let protocolVersion: String
}

/// Why a probe produced no result. Verification failures are not errors: they are
/// reported in `TLSProbeResult` together with the presented chain.
public enum TLSProbeError: Error, Equatable, CustomStringConvertible {
    /// The step that ran out of time.
    public enum Phase: Sendable, Equatable {
        /// The TCP connect to one address.
        case connect
        /// The TLS handshake.
        case handshake
    }

    /// The host is empty, contains a NUL byte or is otherwise unusable.
    case invalidHost(String)
    /// The server name (SNI and name checked) is empty or contains a NUL byte.
    case invalidServerName(String)
    /// The timeout is not a number of seconds in (0, 86400].
    case invalidTimeout(Double)
    /// Name resolution (`getaddrinfo`) failed; `detail` is its error text.
    case resolutionFailed(host: String, detail: String)
    /// Every address of the host refused the TCP connection.
    case connectionRefused(host: String, port: UInt16)
    /// The TCP connection failed for another reason; `errno` is the system error number.
    case connectionFailed(host: String, port: UInt16, errno: Int32)
    /// The connect or the handshake took longer than the timeout.
    case timedOut(host: String, port: UInt16, phase: Phase)
    /// The TLS handshake failed (no common protocol or cipher, not a TLS server, peer
    /// closed or reset); `detail` is OpenSSL's error text or the system error.
    case handshakeFailed(host: String, port: UInt16, detail: String)
    /// The CA file could not be read or holds no certificate; `detail` says why.
    case caFileUnreadable(path: String, detail: String)
    /// OpenSSL could not set up the TLS client (allocation, configuration).
    case tlsSetupFailed(detail: String)
    /// A certificate the server sent could not be re-encoded (position 0 = leaf).
    case invalidPeerCertificate(host: String, port: UInt16, position: Int)

    /// True for failures of the network, the peer or the CA file (CLI exit code 3,
    /// docs/DESIGN.md §11); false for bad arguments and internal failures.
    public var isIOError: Bool {
        switch self {
        case .resolutionFailed, .connectionRefused, .connectionFailed, .timedOut, .handshakeFailed,
            .caFileUnreadable, .invalidPeerCertificate:
            return true
        case .invalidHost, .invalidServerName, .invalidTimeout, .tlsSetupFailed:
            return false
        }
    }

    /// One line for the operator naming the host (or file) and what failed.
    public var description: String {
        switch self {
        case .invalidHost(let host): return "invalid host \"\(host)\""
        case .invalidServerName(let name): return "invalid server name \"\(name)\""
        case .invalidTimeout(let seconds):
            return "invalid timeout \(seconds) s (expected more than 0 and at most 86400)"
        case .resolutionFailed(let host, let detail): return "\(host): cannot resolve: \(detail)"
        case .connectionRefused(let host, let port):
            return "\(Self.endpoint(host, port)): connection refused"
        case .connectionFailed(let host, let port, let code):
            return "\(Self.endpoint(host, port)): cannot connect: \(String(cString: strerror(code)))"
        case .timedOut(let host, let port, let phase):
            return
                "\(Self.endpoint(host, port)): \(phase == .connect ? "connect" : "TLS handshake") timed out"
        case .handshakeFailed(let host, let port, let detail):
            return "\(Self.endpoint(host, port)): TLS handshake failed: \(detail)"
        case .caFileUnreadable(let path, let detail):
            return "\(path): cannot load CA certificates: \(detail)"
        case .tlsSetupFailed(let detail): return "cannot set up the TLS client: \(detail)"
        case .invalidPeerCertificate(let host, let port, let position):
            return "\(Self.endpoint(host, port)): presented certificate #\(position) cannot be encoded"
        }
    }

    private static func endpoint(_ host: String, _ port: UInt16) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// Connects to a TLS server and reports the certificate chain it presents, with pins.
public enum TLSProbe {
    /// Connects with TLS 1.2 or 1.3, completes the handshake without sending any
    /// application data, and returns the presented chain, the verified path and the X.509
    /// verification result. Verification failures do not throw: the chain is returned
    /// with `verified == false` so that the operator sees it.
    ///
    /// Verification: the CA file if given, else OpenSSL's default verify paths (the
    /// system store); RFC 6125 name check with `SSL_set1_host` (no partial wildcards), or
    /// an IP address check when the checked name is an IP literal. SNI (RFC 6066 §3) is
    /// sent unless the checked name is an IP literal.
    ///
    /// - Parameters:
    ///   - host: DNS name, IPv4 literal or IPv6 literal (brackets allowed) to connect to;
    ///     resolved with `getaddrinfo` (its own resolver timeouts apply), addresses tried
    ///     in order.
    ///   - port: TCP port.
    ///   - serverName: the name sent as SNI and checked against the certificate; nil
    ///     means `host`. One trailing dot is removed.
    ///   - caFile: PEM file of trusted certificates; nil means the system store.
    ///   - timeout: seconds, more than 0 and at most 86400, allowed for each TCP connect
    ///     attempt and, separately, for the TLS handshake.
    ///   - family: offer only this family's signature algorithms (RFC 8446 §4.2.3), so that
    ///     a server holding one key of each type presents that type's certificate; nil
    ///     offers OpenSSL's default list. A server without a key of the family fails the
    ///     handshake (`handshakeFailed`).
    /// - Returns: the presented chain and verification result.
    /// - Throws: `TLSProbeError` for bad arguments, resolution, connect, timeout,
    ///   handshake or CA file failures.
    public static func chain(
        host: String, port: UInt16, serverName: String?, caFile: String?, timeout: Double,
        offering family: SignatureFamily? = nil
    ) throws -> TLSProbeResult {
        guard timeout.isFinite, timeout > 0, timeout <= 86400 else {
            throw TLSProbeError.invalidTimeout(timeout)
        }
        let address = try normalizedHost(host)
        let checkedName: String
        if let serverName {
            guard let name = normalizedName(serverName) else {
                throw TLSProbeError.invalidServerName(serverName)
            }
            checkedName = name
        } else {
            checkedName = normalizedName(address) ?? address
        }

        let context = try makeContext(caFile: caFile)
        // The SSL takes its own reference to the context.
        guard let session = OwnedSSL(taking: context.withPointer({ SSL_new($0) })) else {
            throw TLSProbeError.tlsSetupFailed(detail: OpenSSLSupport.errorText())
        }
        return try session.withPointer { ssl in
            try probe(
                ssl, address: address, host: host, port: port, checkedName: checkedName, timeout: timeout,
                offering: family)
        }
    }

    /// Sets up `ssl`, connects it and completes the handshake.
    private static func probe(
        _ ssl: OpaquePointer, address: String, host: String, port: UInt16, checkedName: String, timeout: Double,
        offering family: SignatureFamily?
    ) throws -> TLSProbeResult {
        try configure(ssl, checkedName: checkedName)
        if let family {
            guard pinion_x509_SSL_set1_sigalgs_list(ssl, family.signatureAlgorithms) == 1 else {
                throw TLSProbeError.tlsSetupFailed(detail: OpenSSLSupport.errorText())
            }
        }

        let descriptor = try openConnection(
            address: address, displayHost: host, port: port, timeout: timeout)
        defer { close(descriptor) }
        guard SSL_set_fd(ssl, descriptor) == 1 else {
            throw TLSProbeError.tlsSetupFailed(detail: OpenSSLSupport.errorText())
        }
        try handshake(ssl, descriptor: descriptor, host: host, port: port, timeout: timeout)
        return try result(of: ssl, host: host, port: port)
    }
}

extension TLSProbe {
    /// The key type a probe asks the server's certificate for, by the signature algorithms
    /// it offers (RFC 8446 §4.2.3; RFC 5246 §7.4.1.4.1 for TLS 1.2).
    public enum SignatureFamily: String, Sendable, CaseIterable {
        /// RSA-PSS and PKCS #1 v1.5 signatures with SHA-256, SHA-384 or SHA-512.
        case rsa = "RSA"
        /// ECDSA signatures on P-256, P-384 or P-521 with their hashes.
        case ecdsa = "ECDSA"

        /// The list in OpenSSL's `SSL_set1_sigalgs_list` syntax.
        var signatureAlgorithms: String {
            switch self {
            case .rsa:
                return
                    "rsa_pss_rsae_sha256:rsa_pss_rsae_sha384:rsa_pss_rsae_sha512:rsa_pss_pss_sha256:rsa_pss_pss_sha384:rsa_pss_pss_sha512:RSA+SHA256:RSA+SHA384:RSA+SHA512"
            case .ecdsa:
                return "ECDSA+SHA256:ECDSA+SHA384:ECDSA+SHA512"
            }
        }
    }

    /// Every address `host` resolves to for TCP (`getaddrinfo`), as numeric literals
    /// without brackets, each once, so that a caller can probe each server behind a name.
    ///
    /// - Parameters:
    ///   - host: DNS name or IP literal (brackets allowed).
    ///   - port: the TCP port (named in errors).
    /// - Returns: one or more addresses.
    /// - Throws: `TLSProbeError.invalidHost` or `.resolutionFailed`.
    public static func addresses(of host: String, port: UInt16) throws -> [String] {
        let name = try normalizedHost(host)
        do throws(SocketSupport.ConnectFailure) {
            return try SocketSupport.resolveAll(name, port: port)
        } catch {
            if case .resolutionFailed(let detail) = error {
                throw TLSProbeError.resolutionFailed(host: host, detail: detail)
            }
            throw TLSProbeError.resolutionFailed(host: host, detail: "\(error)")
        }
    }
}

// MARK: - Names

extension TLSProbe {
    private static func normalizedHost(_ host: String) throws -> String {
        var address = host
        if address.hasPrefix("["), address.hasSuffix("]"), address.count > 2 {
            address = String(address.dropFirst().dropLast())
        }
        guard !address.isEmpty, !address.utf8.contains(0), address.utf8.count <= 1024 else {
            throw TLSProbeError.invalidHost(host)
        }
        return address
    }

    /// A name for SNI and the certificate check: non-empty, no NUL, one trailing dot
    /// removed (docs/DESIGN.md §8.2).
    private static func normalizedName(_ name: String) -> String? {
        var result = name
        if result.hasSuffix("."), !result.hasSuffix("..") { result.removeLast() }
        guard !result.isEmpty, !result.utf8.contains(0), result.utf8.count <= 1024 else { return nil }
        return result
    }
}

// MARK: - OpenSSL setup

extension TLSProbe {
    /// Returns a new `SSL_CTX *`, owned. The handshake must finish even when
    /// verification fails, so that the chain can be shown; the result is read from
    /// `SSL_get_verify_result` afterwards.
    private static func makeContext(caFile: String?) throws -> OwnedSSLContext {
        do throws(TLSClientSetup.Failure) {
            return try TLSClientSetup.makeContext(caFile: caFile, verification: .recordOnly)
        } catch {
            switch error {
            case .caFileUnreadable(let path, let detail):
                throw TLSProbeError.caFileUnreadable(path: path, detail: detail)
            case .setupFailed(let detail): throw TLSProbeError.tlsSetupFailed(detail: detail)
            }
        }
    }

    private static func configure(_ ssl: OpaquePointer, checkedName: String) throws {
        guard TLSClientSetup.setPeerName(ssl, checkedName, isIPLiteral: SocketSupport.isIPLiteral(checkedName)) else {
            throw TLSProbeError.invalidServerName(checkedName)
        }
    }
}

// MARK: - Network

extension TLSProbe {
    /// Resolves `address` and returns a connected non-blocking TCP socket.
    private static func openConnection(
        address: String, displayHost: String, port: UInt16, timeout: Double
    ) throws
        -> Int32
    {
        do throws(SocketSupport.ConnectFailure) {
            return try SocketSupport.connectTCP(address: address, port: port, attemptTimeout: timeout, deadline: nil)
        } catch {
            switch error {
            case .resolutionFailed(let detail):
                throw TLSProbeError.resolutionFailed(host: displayHost, detail: detail)
            case .refused: throw TLSProbeError.connectionRefused(host: displayHost, port: port)
            case .failed(let code): throw TLSProbeError.connectionFailed(host: displayHost, port: port, errno: code)
            case .timedOut: throw TLSProbeError.timedOut(host: displayHost, port: port, phase: .connect)
            }
        }
    }

    private static func handshake(
        _ ssl: OpaquePointer, descriptor: Int32, host: String, port: UInt16, timeout: Double
    ) throws {
        let deadline = IODeadline(seconds: timeout)
        while true {
            ERR_clear_error()
            errno = 0
            let status = SSL_connect(ssl)
            if status == 1 { return }
            let savedErrno = errno
            let reason = SSL_get_error(ssl, status)
            let events: Int16
            switch reason {
            case SSL_ERROR_WANT_READ: events = Int16(POLLIN)
            case SSL_ERROR_WANT_WRITE: events = Int16(POLLOUT)
            case SSL_ERROR_ZERO_RETURN:
                throw TLSProbeError.handshakeFailed(
                    host: host, port: port, detail: "connection closed by peer")
            case SSL_ERROR_SYSCALL:
                throw TLSProbeError.handshakeFailed(
                    host: host, port: port, detail: OpenSSLSupport.ioFailureText(savedErrno: savedErrno))
            default:
                throw TLSProbeError.handshakeFailed(
                    host: host, port: port, detail: OpenSSLSupport.errorText())
            }
            guard SocketSupport.waitReady(descriptor, for: events, until: deadline) else {
                throw TLSProbeError.timedOut(host: host, port: port, phase: .handshake)
            }
        }
    }
}

// MARK: - Result

extension TLSProbe {
    private static func certificates(
        _ stack: OpaquePointer?, host: String, port: UInt16
    ) throws -> [(object: SPKIObject, der: [UInt8])] {
        guard let stack else { return [] }
        var result: [(object: SPKIObject, der: [UInt8])] = []
        let count = pinion_sk_X509_num(stack)
        guard count > 0 else { return [] }
        for index in 0..<count {
            guard let x509 = pinion_sk_X509_value(stack, index),
                let object = SPKIObject(certificate: x509),
                let der = OpenSSLSupport.certificateDER(of: x509)
            else {
                throw TLSProbeError.invalidPeerCertificate(host: host, port: port, position: Int(index))
            }
            result.append((object, der))
        }
        return result
    }

    private static func result(of ssl: OpaquePointer, host: String, port: UInt16) throws
        -> TLSProbeResult
    {
        let presented = try certificates(SSL_get_peer_cert_chain(ssl), host: host, port: port)
        let path = try certificates(SSL_get0_verified_chain(ssl), host: host, port: port)
        let code = SSL_get_verify_result(ssl)

        let verifyError: String?
        if SSL_get0_peer_certificate(ssl) == nil || presented.isEmpty {
            verifyError = "server presented no certificate"
        } else if code != X509_V_OK {
            verifyError =
                X509_verify_cert_error_string(code).map { String(cString: $0) } ?? "verify error \(code)"
        } else if path.isEmpty {
            // Should not happen after a full handshake; never count it as verified.
            verifyError = "no verified chain"
        } else {
            verifyError = nil
        }
        let verified = verifyError == nil

        let pathDER = Set(path.map(\.der))
        var entries = presented.map {
            TLSProbeResult.Entry(
                object: $0.object, presented: true, onVerifiedPath: verified && pathDER.contains($0.der))
        }
        if verified {
            let presentedDER = Set(presented.map(\.der))
            for certificate in path where !presentedDER.contains(certificate.der) {
                entries.append(.init(object: certificate.object, presented: false, onVerifiedPath: true))
            }
        }
        let version = SSL_get_version(ssl).map { String(cString: $0) } ?? "unknown"
        return TLSProbeResult(
            entries: entries, verified: verified, verifyError: verifyError, protocolVersion: version)
    }
}
