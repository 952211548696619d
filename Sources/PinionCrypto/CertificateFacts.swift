// What lint and the Apple export need to know about a certificate beyond its pin: whether it
// is a CA (leaf or CA identity) and who issued it (one issuer for every pin is no backup).

import COpenSSL
import CPinionShims

/// One certificate's pin with its CA flag and issuer.
public struct CertificateFacts: Sendable, Equatable {
    /// The certificate's subject, key type and RFC 7469 §2.4 pin.
    public let object: SPKIObject
    /// True when the certificate is a CA (`X509_check_ca`: basicConstraints cA, or a v1
    /// self-signed certificate).
    public let isCA: Bool
    /// The issuer name, RFC 2253 with UTF-8 text, controls escaped (as `SPKIObject.label`).
    public let issuer: String

    /// The certificates in a PEM bundle (every `CERTIFICATE` block; other blocks are skipped)
    /// or a single DER certificate.
    ///
    /// - Parameter bytes: the file contents, at most `SPKIReader.maximumInputSize` bytes.
    /// - Returns: the certificates in file order; empty when there is none (a CSR or key file).
    public static func certificates(in bytes: [UInt8]) -> [CertificateFacts] {
        guard !bytes.isEmpty, bytes.count <= SPKIReader.maximumInputSize else { return [] }
        ERR_set_mark()
        defer { ERR_pop_to_mark() }
        var found: [CertificateFacts] = []
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            // The BIO reads `raw` in place; its owner ends before `raw` goes out of scope.
            OwnedBIO(taking: BIO_new_mem_buf(base, Int32(raw.count)))?.withPointer { bio in
                while found.count < 1000, let x509 = OwnedX509(taking: PEM_read_bio_X509(bio, nil, nil, nil)) {
                    if let facts = x509.withPointer({ CertificateFacts($0) }) { found.append(facts) }
                }
            }
            if found.isEmpty {
                var cursor: UnsafePointer<UInt8>? = base.assumingMemoryBound(to: UInt8.self)
                if let x509 = OwnedX509(taking: d2i_X509(nil, &cursor, raw.count)),
                    let facts = x509.withPointer({ CertificateFacts($0) })
                {
                    found.append(facts)
                }
            }
        }
        return found
    }

    private init?(_ x509: OpaquePointer) {
        guard let object = SPKIObject(certificate: x509) else { return nil }
        self.object = object
        self.isCA = X509_check_ca(x509) > 0
        self.issuer = SPKIEncoding.subject(X509_get_issuer_name(x509))
    }
}
