// SPKI pins of a SecCertificate on Apple platforms: SecCertificateCopyData's DER through PinionCore's
// CertificateSPKI, with no per-algorithm header table. Apple-only glue, type-checked against
// Tests/AppleStubs only (see scripts/typecheck-apple).

#if canImport(Security) && canImport(CryptoKit)
    import Foundation
    import PinionCore
    import Security

    /// Pins of certificates handed over by Security (a trust's chain, `SecTrustCopyCertificateChain`).
    public enum CertificatePins {
        /// The SPKI and its SHA-256 pin (RFC 7469 §2.4) of one certificate.
        ///
        /// - Parameters:
        ///   - certificate: a certificate from Security.
        ///   - hasher: SHA-256; `CryptoKitProvider.provider.hasher` in an app.
        /// - Returns: the pin computed as on every other platform (`CertificateSPKI`).
        /// - Throws: `CertificateSPKIError` when the certificate's DER is not strict DER.
        public static func spki(of certificate: SecCertificate, hasher: any SHA256Hasher) throws -> CertificateSPKI {
            let der = SecCertificateCopyData(certificate) as Data
            return try CertificateSPKI.fromCertificateDER([UInt8](der), hasher: hasher)
        }
    }
#endif
