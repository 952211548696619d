// OpenSSL and socket helpers shared by PinionCrypto's SPKI readers and PinionSystem's TLS code
// (the pinned HTTPS client, the probe, the server context) and PinionPublisher's file
// digests (`package` access: this package only).

import COpenSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - OpenSSL

/// OpenSSL error text, trust store loading, DER encodings and SHA-256.
package enum OpenSSLSupport {
    /// Empties the calling thread's OpenSSL error queue and returns its entries as text
    /// (`error:...:reason`), oldest first, separated by "; ".
    package static func errorText() -> String {
        var messages: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if messages.count < 8 {
                ERR_error_string_n(code, &buffer, buffer.count)
                messages.append(
                    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
        }
        return messages.isEmpty ? "no OpenSSL error detail" : messages.joined(separator: "; ")
    }

    /// Why an `SSL_connect`, `SSL_read` or `SSL_write` failed: the OpenSSL error queue when
    /// it has entries (emptied, see `errorText()`), else the system error `savedErrno`
    /// (the `errno` saved right after the call; pass 0 when it does not apply), else
    /// `connection closed by peer`.
    package static func ioFailureText(savedErrno: Int32) -> String {
        if ERR_peek_error() != 0 { return errorText() }
        if savedErrno != 0 { return String(cString: strerror(savedErrno)) }
        return "connection closed by peer"
    }

    /// Why `loadTrustAnchors(into:caFile:)` failed.
    package enum TrustStoreFailure: Error, Equatable {
        /// The CA file could not be opened (`detail` is the system's reason) or OpenSSL
        /// could not load it (`detail` is its error text).
        case caFileUnreadable(path: String, detail: String)
        /// OpenSSL could not load its default verify paths; `detail` is its error text.
        case defaultPathsUnavailable(detail: String)
    }

    /// Loads the trust anchors of a client `SSL_CTX *`: the PEM certificates of `caFile`,
    /// or OpenSSL's default verify paths (the system store) when `caFile` is nil.
    ///
    /// - Parameters:
    ///   - context: the `SSL_CTX *` to configure.
    ///   - caFile: PEM file of trusted certificates, or nil.
    /// - Throws: `TrustStoreFailure`.
    package static func loadTrustAnchors(into context: OpaquePointer, caFile: String?) throws(TrustStoreFailure) {
        if let caFile {
            // Checked first so that a missing file gets the system's reason, not OpenSSL's.
            let descriptor = open(caFile, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw TrustStoreFailure.caFileUnreadable(path: caFile, detail: String(cString: strerror(errno)))
            }
            close(descriptor)
            guard SSL_CTX_load_verify_file(context, caFile) == 1 else {
                throw TrustStoreFailure.caFileUnreadable(path: caFile, detail: errorText())
            }
        } else {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw TrustStoreFailure.defaultPathsUnavailable(detail: errorText())
            }
        }
    }

    /// SHA-256 (FIPS 180-4) with OpenSSL's EVP interface; 32 bytes, or nil when OpenSSL
    /// cannot allocate or its configuration provides no SHA-256. Over a DER
    /// SubjectPublicKeyInfo this is the RFC 7469 §2.4 pin.
    package static func sha256(_ bytes: [UInt8]) -> [UInt8]? {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let status = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { output in
                EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        guard status == 1, length == 32 else { return nil }
        return digest
    }

    /// `i2d_X509_PUBKEY`: the DER SubjectPublicKeyInfo; nil when OpenSSL cannot encode it.
    package static func spkiDER(of pubkey: OpaquePointer) -> [UInt8]? {
        encode { i2d_X509_PUBKEY(pubkey, $0) }
    }

    /// `i2d_PUBKEY`: the DER SubjectPublicKeyInfo of an `EVP_PKEY`'s public half.
    package static func publicKeyDER(of key: OpaquePointer) -> [UInt8]? {
        encode { i2d_PUBKEY(key, $0) }
    }

    /// `i2d_X509`: the DER certificate.
    package static func certificateDER(of x509: OpaquePointer) -> [UInt8]? {
        encode { i2d_X509(x509, $0) }
    }

    /// Runs an OpenSSL `i2d_*` function twice: for the length, then into a buffer; nil when
    /// OpenSSL reports no length or writes another length than it announced.
    package static func encode(_ i2d: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32)
        -> [UInt8]?
    {
        let length = Int(i2d(nil))
        guard length > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: length)
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d(&cursor)
        }
        guard Int(written) == length else { return nil }
        return out
    }
}
