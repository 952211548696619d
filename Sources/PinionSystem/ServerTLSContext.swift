// The publisher's OpenSSL server context: certificate chain and key loaded from PEM files,
// TLS 1.2 and 1.3 only with modern cipher suites, replaceable at run time (SIGHUP).

import COpenSSL
import CPinionShims
import PinionCrypto
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One loaded `SSL_CTX`. Connections made from it keep it alive (OpenSSL counts
/// references), so replacing the current context never disturbs them.
final class ServerTLSContext: @unchecked Sendable {
    // @unchecked: an SSL_CTX is safe to share between threads once configured; it is
    // configured completely in init and never changed after.
    private let context: OwnedSSLContext
    /// The `SSL_CTX *`, alive as long as this object.
    var pointer: OpaquePointer { context.pointer }

    /// TLS 1.2 suites: ECDHE with AES-GCM or ChaCha20-Poly1305 only (forward secrecy,
    /// AEAD), as Mozilla's "intermediate" server profile. TLS 1.3 uses OpenSSL's defaults.
    static let tls12Ciphers =
        "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
        + "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

    /// Loads and checks the credentials.
    ///
    /// - Parameters:
    ///   - certificateChainFile: PEM, leaf first, then intermediates.
    ///   - privateKeyFile: PEM private key (unencrypted; an encrypted one is refused).
    /// - Throws: `HTTPServerError.tlsCredentials` naming the file and OpenSSL's reason.
    init(certificateChainFile: String, privateKeyFile: String) throws(HTTPServerError) {
        // OpenSSL opens the files blocking: a FIFO there would stall start-up or a reload.
        for path in [certificateChainFile, privateKeyFile] {
            var info = stat()
            guard stat(path, &info) == 0 else {
                throw .tlsCredentials(detail: "\(path): \(String(cString: strerror(errno)))")
            }
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw .tlsCredentials(detail: "\(path): not a regular file")
            }
        }
        ERR_clear_error()
        guard let owner = OwnedSSLContext(taking: SSL_CTX_new(TLS_server_method())) else {
            throw .tlsCredentials(detail: "cannot create a TLS context: \(OpenSSLSupport.errorText())")
        }
        let context = owner.pointer  // `owner` lives until the end of init, where it is stored
        guard pinion_server_configure_context(context) == 1,
            SSL_CTX_set_cipher_list(context, Self.tls12Ciphers) == 1
        else {
            throw .tlsCredentials(detail: "cannot configure TLS: \(OpenSSLSupport.errorText())")
        }
        guard SSL_CTX_use_certificate_chain_file(context, certificateChainFile) == 1 else {
            let detail = OpenSSLSupport.errorText()
            throw .tlsCredentials(detail: "\(certificateChainFile): not a readable PEM certificate chain (\(detail))")
        }
        guard SSL_CTX_use_PrivateKey_file(context, privateKeyFile, SSL_FILETYPE_PEM) == 1 else {
            let detail = OpenSSLSupport.errorText()
            if detail.contains("key values mismatch") {
                throw .tlsCredentials(
                    detail: "\(privateKeyFile) is not the key of the certificate in \(certificateChainFile)")
            }
            throw .tlsCredentials(
                detail: "\(privateKeyFile): not a readable unencrypted PEM private key (\(detail))")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw .tlsCredentials(
                detail: "\(privateKeyFile) is not the key of the certificate in \(certificateChainFile)")
        }
        ServerALPN.install(on: context)
        self.context = owner
    }
}

/// The context new connections use; `replace` swaps it atomically.
final class CurrentTLSContext: Sendable {
    private let current: Mutex<ServerTLSContext>

    init(_ context: ServerTLSContext) { current = Mutex(context) }

    /// A new server-side `SSL` from the current context, made while the context is held, so
    /// a concurrent `replace(with:)` cannot free it between reading it and `SSL_new` taking
    /// its own reference; nil when OpenSSL cannot allocate one.
    func makeSSL() -> OwnedSSL? {
        OwnedSSL(taking: current.withLock { context in SSL_new(context.pointer) })
    }

    /// Makes `context` the one for new connections; connections already open keep theirs.
    func replace(with context: ServerTLSContext) { current.withLock { $0 = context } }
}
