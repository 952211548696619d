// The SubjectPublicKeyInfo of an X.509 certificate and its SHA-256 pin (RFC 7469 §2.4), taken from
// the certificate's DER with PinionCore's strict DER reader: one pin computation on every platform.

/// Why a certificate yields no SubjectPublicKeyInfo.
public enum CertificateSPKIError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No bytes.
    case empty
    /// More than `CertificateSPKI.maximumCertificateBytes`; carries the size in bytes.
    case tooLarge(Int)
    /// Not strict DER, or not the shape of RFC 5280 §4.1 `Certificate`.
    case malformed(DERError)
    /// The SubjectPublicKeyInfo is not `SEQUENCE { AlgorithmIdentifier, BIT STRING }` with a
    /// DER BIT STRING (an unused-bits octet of 0 to 7, 0 when the string is empty, and the
    /// unused bits of the last octet zero, X.690 §11.2.1).
    case malformedSubjectPublicKeyInfo

    /// A one-line, human-readable explanation.
    public var description: String {
        switch self {
        case .empty: return "the certificate is empty"
        case .tooLarge(let size):
            return "the certificate is \(size) bytes, over the limit of \(CertificateSPKI.maximumCertificateBytes)"
        case .malformed(let error): return "not a DER X.509 certificate: \(error)"
        case .malformedSubjectPublicKeyInfo: return "the certificate's SubjectPublicKeyInfo is malformed"
        }
    }
}

/// A certificate's DER SubjectPublicKeyInfo (RFC 5280 §4.1.2.7) and its SHA-256 digest, the pin
/// of RFC 7469 §2.4 and of Pinion manifests (DESIGN.md §5).
///
/// The SPKI bytes are copied verbatim from the certificate, so no per-algorithm header table is
/// needed (the source of TrustKit bugs #241, #328 and #352): RSA, EC, Ed25519 and any other key
/// type give the pin OpenSSL computes with `X509_get_X509_PUBKEY` + `i2d_X509_PUBKEY`.
public struct CertificateSPKI: Sendable, Equatable {
    /// Certificates larger than this are refused, in bytes (real ones are a few KiB).
    public static let maximumCertificateBytes = 256 * 1024

    /// The DER SubjectPublicKeyInfo, as it appears in the certificate.
    public let spkiDER: [UInt8]
    /// SHA-256 of `spkiDER`, 32 bytes.
    public let sha256: [UInt8]

    /// Walks Certificate -> tbsCertificate -> subjectPublicKeyInfo (RFC 5280 §4.1).
    ///
    /// The whole certificate must be strict DER: definite, minimal lengths, no byte after any
    /// element at any level (nor after the certificate), every constructed element well-formed.
    /// Inside the SubjectPublicKeyInfo the DER value rules apply too (`DERError.wrongConstruction`,
    /// `.nonCanonicalValue`), because a re-encoding such as OpenSSL's would change those bytes
    /// and so the pin.
    /// The tbsCertificate fields are checked by tag and order (version [0], serialNumber,
    /// signature, issuer, validity, subject, subjectPublicKeyInfo, then optional [1], [2], [3]).
    /// Signatures, names, times and extensions are not interpreted: a pin names a key, it does
    /// not say whether to trust the certificate.
    ///
    /// - Parameters:
    ///   - der: the DER certificate, at most `maximumCertificateBytes`.
    ///   - hasher: the SHA-256 to use (libsodium or OpenSSL on Linux, CryptoKit on Apple).
    /// - Returns: the SPKI bytes and their digest.
    /// - Throws: `CertificateSPKIError`.
    public static func fromCertificateDER(_ der: [UInt8], hasher: any SHA256Hasher) throws -> CertificateSPKI {
        let spki = try subjectPublicKeyInfo(ofCertificateDER: der)
        return CertificateSPKI(spkiDER: spki, sha256: hasher.sha256(spki))
    }

    /// The SubjectPublicKeyInfo bytes of a DER certificate (the walk of
    /// `fromCertificateDER(_:hasher:)`, without the digest).
    ///
    /// - Parameter der: the DER certificate.
    /// - Returns: the DER SubjectPublicKeyInfo, copied from the certificate.
    /// - Throws: `CertificateSPKIError`.
    public static func subjectPublicKeyInfo(ofCertificateDER der: [UInt8]) throws -> [UInt8] {
        guard !der.isEmpty else { throw CertificateSPKIError.empty }
        guard der.count <= maximumCertificateBytes else { throw CertificateSPKIError.tooLarge(der.count) }
        do {
            var outer = DERReader(der, range: 0..<der.count)
            let certificate = try outer.next(tag: 0x30)
            try outer.expectEnd()
            try DERReader.validate(der, range: certificate.content, depth: 1)
            var fields = DERReader(der, range: certificate.content)
            let tbs = try fields.next(tag: 0x30)
            _ = try fields.next(tag: 0x30)  // signatureAlgorithm
            _ = try fields.next(tag: 0x03)  // signatureValue
            try fields.expectEnd()
            let spki = try subjectPublicKeyInfoElement(der, tbsCertificate: tbs)
            try checkSubjectPublicKeyInfo(der, spki)
            return Array(der[spki.element])
        } catch let error as DERError {
            throw CertificateSPKIError.malformed(error)
        }
    }

    /// The subjectPublicKeyInfo element of a tbsCertificate, after checking every field's tag.
    private static func subjectPublicKeyInfoElement(_ der: [UInt8], tbsCertificate: DERElement) throws -> DERElement {
        var tbs = DERReader(der, range: tbsCertificate.content)
        _ = try tbs.nextIfPresent(tag: 0xa0)  // version [0] EXPLICIT
        _ = try tbs.next(tag: 0x02)  // serialNumber
        _ = try tbs.next(tag: 0x30)  // signature
        _ = try tbs.next(tag: 0x30)  // issuer
        _ = try tbs.next(tag: 0x30)  // validity
        _ = try tbs.next(tag: 0x30)  // subject
        let spki = try tbs.next(tag: 0x30)
        _ = try tbs.nextIfPresent(tag: 0x81)  // issuerUniqueID [1] IMPLICIT
        _ = try tbs.nextIfPresent(tag: 0x82)  // subjectUniqueID [2] IMPLICIT
        _ = try tbs.nextIfPresent(tag: 0xa3)  // extensions [3] EXPLICIT
        try tbs.expectEnd()
        return spki
    }

    /// SubjectPublicKeyInfo ::= SEQUENCE { algorithm AlgorithmIdentifier, subjectPublicKey BIT STRING },
    /// AlgorithmIdentifier ::= SEQUENCE { algorithm OBJECT IDENTIFIER, parameters ANY OPTIONAL }.
    private static func checkSubjectPublicKeyInfo(_ der: [UInt8], _ spki: DERElement) throws {
        var fields = DERReader(der, range: spki.content)
        let algorithm = try fields.next(tag: 0x30)
        let key = try fields.next(tag: 0x03)
        try fields.expectEnd()
        var identifier = DERReader(der, range: algorithm.content)
        let oid = try identifier.next(tag: 0x06)
        if !identifier.isAtEnd { _ = try identifier.next() }
        try identifier.expectEnd()
        guard !oid.content.isEmpty, !key.content.isEmpty else {
            throw CertificateSPKIError.malformedSubjectPublicKeyInfo
        }
        let unusedBits = der[key.contentStart]
        guard unusedBits <= 7, key.content.count > 1 || unusedBits == 0 else {
            throw CertificateSPKIError.malformedSubjectPublicKeyInfo
        }
        // X.690 §11.2.1: the unused bits are zero in DER. OpenSSL clears them when it re-encodes
        // the SPKI, so a key with one set would otherwise get two different pins (found by fuzzing).
        guard der[key.end - 1] & (UInt8(1 << unusedBits) &- 1) == 0 else {
            throw CertificateSPKIError.malformedSubjectPublicKeyInfo
        }
        try DERReader.validateCanonical(der, range: spki.content, depth: 2)
    }
}
