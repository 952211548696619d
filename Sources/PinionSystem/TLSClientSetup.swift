// The one TLS client set-up every Pinion connection uses (the SDK's pinned client, the update
// channel, reports, `check-host`, `lint --live`, `spki --connect`, the audit's HTTPS source),
// so the rules for names and trust cannot drift apart between them.

import COpenSSL
import CPinionShims
import PinionCrypto

/// Context and peer-name configuration shared by `PinnedHTTPSClient` and `TLSProbe`.
package enum TLSClientSetup {
    /// Why no context could be made.
    package enum Failure: Error, Equatable {
        /// The CA file could not be read or holds no certificate.
        case caFileUnreadable(path: String, detail: String)
        /// OpenSSL could not set up the client; `detail` is its error text.
        case setupFailed(detail: String)
    }

    /// What a verification failure does to the handshake.
    package enum Verification {
        /// `SSL_VERIFY_PEER`: the handshake aborts, so nothing unverified reaches a pin check.
        case abortHandshake
        /// `SSL_VERIFY_NONE`: the handshake completes and the result is read afterwards with
        /// `SSL_get_verify_result`, so that a probe can show the chain of a failing server.
        case recordOnly
    }

    /// Host-name check flags: RFC 6125 (no partial wildcards such as `f*.example.com`) and
    /// never the subject common name, only subjectAltName (RFC 6125 §6.4.4; CA/Browser Forum
    /// Baseline Requirements). Every client uses these, so a pre-rollout check passes exactly
    /// the certificates the SDK accepts.
    package static let hostFlags = UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS | X509_CHECK_FLAG_NEVER_CHECK_SUBJECT)

    /// A new `SSL_CTX *`, owned: TLS 1.2 or 1.3, no session tickets, no session
    /// cache (a resumed session carries no verified chain), no compression or renegotiation,
    /// trust anchors from `caFile` or OpenSSL's default verify paths.
    ///
    /// - Parameters:
    ///   - caFile: PEM trust anchors; nil for the system store.
    ///   - verification: whether a failed verification aborts the handshake.
    /// - Throws: `Failure`.
    package static func makeContext(caFile: String?, verification: Verification) throws(Failure) -> OwnedSSLContext {
        ERR_clear_error()
        guard let owner = OwnedSSLContext(taking: SSL_CTX_new(TLS_client_method())) else {
            throw .setupFailed(detail: OpenSSLSupport.errorText())
        }
        try owner.withPointer { context throws(Failure) in
            guard pinion_x509_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1,
                pinion_https_configure_context(context) == 1
            else {
                throw .setupFailed(detail: OpenSSLSupport.errorText())
            }
            do throws(OpenSSLSupport.TrustStoreFailure) {
                try OpenSSLSupport.loadTrustAnchors(into: context, caFile: caFile)
            } catch {
                switch error {
                case .caFileUnreadable(let path, let detail): throw .caFileUnreadable(path: path, detail: detail)
                case .defaultPathsUnavailable(let detail): throw .setupFailed(detail: detail)
                }
            }
            switch verification {
            case .abortHandshake: SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            case .recordOnly: SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            }
        }
        return owner
    }

    /// Sets the name the certificate must match: an IP address check for an IP literal;
    /// otherwise SNI (RFC 6066 §3) and the host-name check with `hostFlags`.
    ///
    /// - Parameters:
    ///   - ssl: the `SSL *` before its handshake.
    ///   - name: the checked name (lowercase, no trailing dot, no brackets).
    ///   - isIPLiteral: whether `name` is an IPv4 or IPv6 literal.
    /// - Returns: false when OpenSSL refuses the name (the caller names its own error).
    package static func setPeerName(_ ssl: OpaquePointer, _ name: String, isIPLiteral: Bool) -> Bool {
        if isIPLiteral {
            guard let parameters = SSL_get0_param(ssl) else { return false }
            return X509_VERIFY_PARAM_set1_ip_asc(parameters, name) == 1
        }
        SSL_set_hostflags(ssl, hostFlags)
        guard SSL_set1_host(ssl, name) == 1, pinion_x509_SSL_set_tlsext_host_name(ssl, name) == 1 else {
            ERR_clear_error()
            return false
        }
        return true
    }
}
