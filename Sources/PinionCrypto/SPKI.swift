// SPKI SHA-256 pins (RFC 7469 §2.4) of certificates, CSRs and keys read from PEM or DER.

import COpenSSL
import CPinionShims
import PinionCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Public types

/// How a pin (the SHA-256 digest of a DER SubjectPublicKeyInfo) is written out.
public enum PinFormat: String, Sendable, CaseIterable {
    /// `sha256/<base64>`: the pin spelling of Pinion manifests (docs/DESIGN.md §5).
    case sha256
    /// `<base64>`: canonical padded base64 (RFC 4648 §4) of the digest.
    case base64
    /// `pin-sha256="<base64>"`: the Public-Key-Pins directive of RFC 7469 §2.1.1.
    case hpkp
    /// Lowercase hexadecimal, two digits per byte.
    case hex

    /// Renders a digest in this format.
    ///
    /// - Parameter digest: the digest bytes (32 for an SPKI SHA-256 pin; other lengths are
    ///   rendered as given).
    /// - Returns: the text, without a line end.
    public func render(_ digest: [UInt8]) -> String {
        switch self {
        case .sha256: return "sha256/" + SPKIEncoding.base64(digest)
        case .base64: return SPKIEncoding.base64(digest)
        case .hpkp: return "pin-sha256=\"" + SPKIEncoding.base64(digest) + "\""
        case .hex: return SPKIEncoding.hex(digest)
        }
    }
}

/// One object found in an input (a certificate, CSR or key) with its SubjectPublicKeyInfo
/// and RFC 7469 §2.4 pin.
public struct SPKIObject: Sendable, Equatable {
    /// What kind of object the SubjectPublicKeyInfo was taken from.
    public enum Kind: Sendable, Equatable {
        /// An X.509 certificate (RFC 5280).
        case certificate
        /// A PKCS#10 certificate signing request (RFC 2986).
        case certificateRequest
        /// A public key (SubjectPublicKeyInfo, or a PKCS#1 RSA public key).
        case publicKey
        /// A private key (PKCS#8 plain or encrypted, or a traditional RSA/EC key).
        case privateKey
    }

    /// The kind of object.
    public let kind: Kind
    /// One line for humans: certificates give their subject as an RFC 2253 string with
    /// UTF-8 text (`openssl x509 -noout -subject -nameopt RFC2253,-esc_msb`; control,
    /// format and line separator characters escaped as `\XX` per UTF-8 byte; an empty
    /// subject is `(empty subject)`); CSRs give
    /// `CSR ` + subject; keys give `public key (<keyType>)` or `private key (<keyType>)`.
    public let label: String
    /// The key algorithm and size: `RSA 2048`, `RSA-PSS 3072`, `EC P-256`, `EC P-384`,
    /// `EC P-521`, `Ed25519`, `Ed448`, ...; `unknown (<algorithm OID or name>)` when OpenSSL
    /// cannot decode the key (the pin is still computed over the SPKI bytes).
    public let keyType: String
    /// The DER encoding of the SubjectPublicKeyInfo (RFC 5280 §4.1.2.7).
    public let spkiDER: [UInt8]
    /// SHA-256 of `spkiDER`: the RFC 7469 §2.4 pin, 32 bytes.
    public let spkiSHA256: [UInt8]
}

/// Reads certificates, CSRs and keys and returns the SubjectPublicKeyInfo and RFC 7469
/// §2.4 pin of each, for `pinion spki`.
///
/// Accepted inputs:
/// - PEM (RFC 7468), LF or CRLF line ends, with or without a final line end, with any
///   number of blocks in any order; text outside blocks is ignored. Labels:
///   `CERTIFICATE`, `X509 CERTIFICATE`, `TRUSTED CERTIFICATE`, `CERTIFICATE REQUEST`,
///   `NEW CERTIFICATE REQUEST`, `PUBLIC KEY`, `RSA PUBLIC KEY` (PKCS#1), `PRIVATE KEY`
///   (PKCS#8), `ENCRYPTED PRIVATE KEY` (PKCS#8, RFC 5958), and the traditional
///   `RSA PRIVATE KEY` / `EC PRIVATE KEY` (also with legacy `Proc-Type`/`DEK-Info`
///   encryption). Blocks that carry no public key (`EC PARAMETERS`, `DH PARAMETERS`,
///   `X9.42 DH PARAMETERS`, `DSA PARAMETERS`, `PARAMETERS`, `X509 CRL`) are skipped
///   silently; any other label is an error naming it (`unsupportedPEMLabel`), so nothing
///   in a file is ignored by accident.
/// - A single DER object: certificate, CSR, SubjectPublicKeyInfo, PKCS#8 private key
///   (plain or encrypted), traditional RSA or EC private key.
///
/// Certificate pins hash the SubjectPublicKeyInfo as encoded in the certificate, taken by
/// PinionCore's strict DER walk (`CertificateSPKI`, the same on every platform; a certificate
/// that is not strict DER is refused); CSR pins use `X509_REQ_get_X509_PUBKEY` +
/// `i2d_X509_PUBKEY`. Neither is `X509_pubkey_digest` (which hashes only the key BIT STRING). Key pins hash `i2d_PUBKEY`, as
/// `openssl pkey -pubout -outform DER | openssl dgst -sha256` does. Signatures (of CSRs,
/// certificates) are not checked: a pin says which key, not whether to trust it.
///
/// Secrets: a file is read into libsodium guarded memory, private-key DER is decoded
/// into it too, and passphrases are handed to OpenSSL from a NUL-terminated copy in
/// guarded memory; OpenSSL frees key material with its clearing free functions.
public enum SPKIReader {
    /// The largest input accepted, in bytes (16 MiB).
    public static let maximumInputSize = 16 * 1024 * 1024

    /// Reads a file and returns its objects in file order.
    ///
    /// - Parameters:
    ///   - path: the file to read (regular file, or a pipe such as `/dev/stdin`).
    ///   - passphrase: called at most once per call, and only when an encrypted private
    ///     key is found; the one passphrase serves every encrypted key of the file.
    ///     Return nil when there is none. Its errors are rethrown unchanged.
    /// - Returns: one `SPKIObject` per certificate, CSR or key, at least one.
    /// - Throws: `SPKIError` naming `path`, or whatever `passphrase` throws.
    public static func objects(inFile path: String, passphrase: () throws -> SecureBytes?) throws
        -> [SPKIObject]
    {
        let contents = try readFile(path)
        return try contents.withUnsafeBytes { raw in
            try objects(in: raw, source: path, passphrase: passphrase)
        }
    }

    /// Parses bytes already in memory and returns their objects in order.
    ///
    /// - Parameters:
    ///   - bytes: PEM text or one DER object, at most `maximumInputSize` bytes.
    ///   - source: the name used in errors (a file name, `<stdin>`, ...).
    ///   - passphrase: as for `objects(inFile:passphrase:)`.
    /// - Returns: one `SPKIObject` per certificate, CSR or key, at least one.
    /// - Throws: `SPKIError` naming `source`, or whatever `passphrase` throws.
    public static func objects(
        in bytes: [UInt8], source: String, passphrase: () throws -> SecureBytes?
    ) throws -> [SPKIObject] {
        try bytes.withUnsafeBytes { raw in
            try objects(in: raw, source: source, passphrase: passphrase)
        }
    }
}

// MARK: - Input dispatch

extension SPKIReader {
    static func objects(
        in raw: UnsafeRawBufferPointer, source: String, passphrase: () throws -> SecureBytes?
    ) throws -> [SPKIObject] {
        guard raw.count <= maximumInputSize else {
            throw SPKIError.tooLarge(file: source, limit: maximumInputSize)
        }
        guard raw.contains(where: { !isSpace($0) }) else { throw SPKIError.empty(file: source) }
        // The closure is only kept for the duration of this call.
        return try withoutActuallyEscaping(passphrase) { provider in
            var passphraseSource = PassphraseSource(provider: provider)
            if isSingleDERObject(raw) {
                return [try derObject(raw, source: source, passphrase: &passphraseSource)]
            }
            let blocks = try PEMScanner.blocks(in: raw, source: source)
            guard !blocks.isEmpty else { throw SPKIError.unrecognized(file: source) }
            var result: [SPKIObject] = []
            for block in blocks {
                if let object = try pemObject(
                    block, raw: raw, source: source, passphrase: &passphraseSource)
                {
                    result.append(object)
                }
            }
            guard !result.isEmpty else { throw SPKIError.noObjects(file: source) }
            return result
        }
    }

    /// True when `raw` is exactly one DER SEQUENCE (tag 0x30, definite length covering
    /// the whole input). PEM text cannot be: its first byte would be '0' and its second a
    /// valid length that happens to match the file size.
    static func isSingleDERObject(_ raw: UnsafeRawBufferPointer) -> Bool {
        guard raw.count >= 2, raw[0] == 0x30 else { return false }
        let first = Int(raw[1])
        if first < 0x80 { return 2 + first == raw.count }
        let octets = first & 0x7f
        guard octets >= 1, octets <= 4, raw.count >= 2 + octets else { return false }
        var length = 0
        for index in 0..<octets { length = (length << 8) | Int(raw[2 + index]) }
        return 2 + octets + length == raw.count
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d
    }

    private static let skippedLabels: Set<String> = [
        "EC PARAMETERS", "DH PARAMETERS", "X9.42 DH PARAMETERS", "DSA PARAMETERS", "PARAMETERS",
        "X509 CRL",
    ]

    static func pemObject(
        _ block: PEMBlock, raw: UnsafeRawBufferPointer, source: String,
        passphrase: inout PassphraseSource
    ) throws -> SPKIObject? {
        let label = block.label
        if skippedLabels.contains(label) { return nil }
        let place = Place(file: source, label: label, line: block.line)
        let isTraditionalKey = label == "RSA PRIVATE KEY" || label == "EC PRIVATE KEY"
        guard isTraditionalKey || block.headers.isEmpty else {
            throw SPKIError.malformedPEM(
                file: source, label: label, line: block.line, problem: .unexpectedHeaders)
        }
        let der = try PEMScanner.decodeBody(raw, block: block, source: source)
        switch label {
        case "CERTIFICATE", "X509 CERTIFICATE":
            return try der.withUnsafeBytes { try certificate($0, aux: false, place: place) }
        case "TRUSTED CERTIFICATE":
            return try der.withUnsafeBytes { try certificate($0, aux: true, place: place) }
        case "CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST":
            return try der.withUnsafeBytes { try certificateRequest($0, place: place) }
        case "PUBLIC KEY":
            return try der.withUnsafeBytes { try publicKey($0, place: place) }
        case "RSA PUBLIC KEY":
            return try der.withUnsafeBytes { try pkcs1PublicKey($0, place: place) }
        case "PRIVATE KEY":
            return try der.withUnsafeBytes { try pkcs8PrivateKey($0, place: place) }
        case "ENCRYPTED PRIVATE KEY":
            return try der.withUnsafeBytes {
                try encryptedPKCS8PrivateKey($0, place: place, passphrase: &passphrase)
            }
        case "RSA PRIVATE KEY", "EC PRIVATE KEY":
            let type = label == "RSA PRIVATE KEY" ? EVP_PKEY_RSA : EVP_PKEY_EC
            if !block.headers.isEmpty {
                try decryptLegacy(
                    der, headers: block.headers, line: block.line, place: place, passphrase: &passphrase)
                do {
                    return try der.withUnsafeBytes { try traditionalPrivateKey($0, type: type, place: place) }
                } catch SPKIError.invalidDER {
                    // Legacy PEM encryption has no integrity check: a wrong passphrase often
                    // yields padding that happens to be valid and garbage DER.
                    throw SPKIError.decryptionFailed(file: source, label: label, line: block.line)
                }
            }
            return try der.withUnsafeBytes { try traditionalPrivateKey($0, type: type, place: place) }
        default:
            throw SPKIError.unsupportedPEMLabel(file: source, label: label, line: block.line)
        }
    }

    static func derObject(
        _ raw: UnsafeRawBufferPointer, source: String, passphrase: inout PassphraseSource
    ) throws -> SPKIObject {
        func attempt(_ label: String, _ body: (Place) throws -> SPKIObject) throws -> SPKIObject? {
            do {
                return try body(Place(file: source, label: label, line: nil))
            } catch SPKIError.invalidDER {
                return nil
            }
        }
        if let object = try attempt("DER certificate", { try certificate(raw, aux: false, place: $0) }) {
            return object
        }
        if let object = try attempt(
            "DER certificate request", { try certificateRequest(raw, place: $0) })
        {
            return object
        }
        if let object = try attempt("DER public key", { try publicKey(raw, place: $0) }) {
            return object
        }
        if let object = try attempt("DER private key", { try pkcs8PrivateKey(raw, place: $0) }) {
            return object
        }
        if let object = try attempt(
            "DER encrypted private key",
            { try encryptedPKCS8PrivateKey(raw, place: $0, passphrase: &passphrase) })
        {
            return object
        }
        if let object = try attempt(
            "DER RSA private key", { try traditionalPrivateKey(raw, type: EVP_PKEY_RSA, place: $0) })
        {
            return object
        }
        if let object = try attempt(
            "DER EC private key", { try traditionalPrivateKey(raw, type: EVP_PKEY_EC, place: $0) })
        {
            return object
        }
        throw SPKIError.unrecognized(file: source)
    }
}

// MARK: - Objects

/// Where an object came from, for errors.
struct Place {
    let file: String
    let label: String
    let line: Int?

    /// `invalidDER` with `detail`, or OpenSSL's error queue as the detail.
    func invalidDER(detail: String? = nil) -> SPKIError {
        .invalidDER(
            file: file, label: label, line: line, detail: detail ?? OpenSSLSupport.errorText())
    }

    func failure() -> SPKIError {
        .openSSLFailure(file: file, detail: OpenSSLSupport.errorText())
    }
}

/// The caller's passphrase closure, called at most once.
struct PassphraseSource {
    let provider: () throws -> SecureBytes?
    var cached: SecureBytes?
    var asked = false

    /// The passphrase as a NUL-terminated copy in guarded memory (`count` excludes the
    /// NUL), or nil when the caller has none.
    mutating func get() throws -> SecureBytes? {
        if !asked {
            asked = true
            if let given = try provider() {
                let copy = try SecureBytes(capacity: given.count + 1)
                given.withUnsafeBytes { source in
                    copy.withUnsafeMutableBytes { target in
                        if let base = source.baseAddress, source.count > 0 {
                            target.baseAddress?.copyMemory(from: base, byteCount: source.count)
                        }
                        target[source.count] = 0
                    }
                }
                copy.truncate(to: given.count)
                cached = copy
            }
        }
        return cached
    }
}

extension SPKIReader {
    /// Runs a `d2i_*` function over the whole buffer and returns the owned object; throws
    /// `invalidDER` when it fails or leaves trailing bytes.
    static func decode<Kind: OpenSSLObjectKind>(
        _ raw: UnsafeRawBufferPointer, place: Place,
        _ d2i: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?
    ) throws -> OpenSSLObject<Kind> {
        ERR_clear_error()
        let bytes = raw.bindMemory(to: UInt8.self)
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw place.invalidDER(detail: "no bytes")
        }
        var cursor: UnsafePointer<UInt8>? = UnsafePointer(base)
        guard let object = OpenSSLObject<Kind>(taking: d2i(&cursor, bytes.count)) else { throw place.invalidDER() }
        let consumed = cursor.map { $0 - UnsafePointer(base) } ?? 0
        guard consumed == bytes.count else {
            ERR_clear_error()
            throw place.invalidDER(detail: "\(bytes.count - consumed) bytes after the DER object")
        }
        return object
    }

    static func certificate(_ raw: UnsafeRawBufferPointer, aux: Bool, place: Place) throws
        -> SPKIObject
    {
        let owner: OwnedX509 = try decode(
            raw, place: place, { aux ? d2i_X509_AUX(nil, $0, $1) : d2i_X509(nil, $0, $1) })
        return try owner.withPointer { x509 in try certificateObject(x509, place: place) }
    }

    /// The pin object of a decoded certificate (`X509 *`).
    private static func certificateObject(_ x509: OpaquePointer, place: Place) throws -> SPKIObject {
        guard let object = SPKIObject(certificate: x509) else {
            // OpenSSL parses some BER that the pin's DER walk refuses: say why, not "OpenSSL failed".
            if let der = OpenSSLSupport.certificateDER(of: x509) {
                do { _ = try CertificateSPKI.subjectPublicKeyInfo(ofCertificateDER: der) } catch {
                    throw place.invalidDER(detail: "not strict DER, so no pin: \(error)")
                }
            }
            throw place.failure()
        }
        return object
    }

    static func certificateRequest(_ raw: UnsafeRawBufferPointer, place: Place) throws
        -> SPKIObject
    {
        let owner: OpenSSLObject<X509RequestKind> = try decode(raw, place: place) { d2i_X509_REQ(nil, $0, $1) }
        return try owner.withPointer { request in try requestObject(request, place: place) }
    }

    /// The pin object of a decoded certificate request (`X509_REQ *`).
    private static func requestObject(_ request: OpaquePointer, place: Place) throws -> SPKIObject {
        guard let pubkey = X509_REQ_get_X509_PUBKEY(request) else { throw place.invalidDER() }
        guard let spki = OpenSSLSupport.spkiDER(of: pubkey) else { throw place.failure() }
        let subject = SPKIEncoding.subject(X509_REQ_get_subject_name(request))
        guard
            let object = SPKIObject(
                kind: .certificateRequest, label: "CSR " + subject,
                keyType: SPKIEncoding.keyType(ofSPKI: pubkey), spkiDER: spki)
        else { throw place.failure() }
        return object
    }

    static func publicKey(_ raw: UnsafeRawBufferPointer, place: Place) throws -> SPKIObject {
        let owner: OpenSSLObject<X509PublicKeyKind> = try decode(raw, place: place) { d2i_X509_PUBKEY(nil, $0, $1) }
        return try owner.withPointer { pubkey in try publicKeyObject(pubkey, place: place) }
    }

    /// The pin object of a decoded SubjectPublicKeyInfo (`X509_PUBKEY *`).
    private static func publicKeyObject(_ pubkey: OpaquePointer, place: Place) throws -> SPKIObject {
        guard let spki = OpenSSLSupport.spkiDER(of: pubkey) else { throw place.failure() }
        let keyType = SPKIEncoding.keyType(ofSPKI: pubkey)
        guard
            let object = SPKIObject(
                kind: .publicKey, label: "public key (\(keyType))", keyType: keyType, spkiDER: spki)
        else { throw place.failure() }
        return object
    }

    static func pkcs1PublicKey(_ raw: UnsafeRawBufferPointer, place: Place) throws
        -> SPKIObject
    {
        let owner: OwnedEVPKey = try decode(raw, place: place) { d2i_PublicKey(EVP_PKEY_RSA, nil, $0, $1) }
        return try owner.withPointer { key in try keyObject(key, kind: .publicKey, place: place) }
    }

    static func pkcs8PrivateKey(_ raw: UnsafeRawBufferPointer, place: Place) throws
        -> SPKIObject
    {
        let owner: OpenSSLObject<PrivateKeyInfoKind> = try decode(raw, place: place) {
            d2i_PKCS8_PRIV_KEY_INFO(nil, $0, $1)
        }
        return try owner.withPointer { info in try privateKeyObject(info, place: place) }
    }

    static func privateKeyObject(_ info: OpaquePointer, place: Place) throws -> SPKIObject {
        guard let owner = OwnedEVPKey(taking: EVP_PKCS82PKEY(info)) else { throw place.invalidDER() }
        return try owner.withPointer { key in try keyObject(key, kind: .privateKey, place: place) }
    }

    static func encryptedPKCS8PrivateKey(
        _ raw: UnsafeRawBufferPointer, place: Place, passphrase: inout PassphraseSource
    ) throws -> SPKIObject {
        let owner: OpenSSLObject<X509SigKind> = try decode(raw, place: place) { d2i_X509_SIG(nil, $0, $1) }
        return try owner.withPointer { sig in try encryptedPrivateKeyObject(sig, place: place, passphrase: &passphrase)
        }
    }

    /// The pin object of a decoded EncryptedPrivateKeyInfo (`X509_SIG *`), decrypted once its
    /// scheme and key derivation cost are accepted.
    private static func encryptedPrivateKeyObject(
        _ sig: OpaquePointer, place: Place, passphrase: inout PassphraseSource
    ) throws -> SPKIObject {
        // Only a password-based encryption scheme (PKCS#5 PBES1/PBES2, PKCS#12 PBE) makes
        // this an encrypted private key; anything else of the same shape is not one.
        var algorithm: UnsafePointer<X509_ALGOR>?
        X509_SIG_get0(sig, &algorithm, nil)
        var oid: OpaquePointer?
        if let algorithm { X509_ALGOR_get0(&oid, nil, nil, algorithm) }
        let nid = oid.map { OBJ_obj2nid($0) } ?? NID_undef
        guard nid != NID_undef, EVP_PBE_find(EVP_PBE_TYPE_OUTER, nid, nil, nil, nil) == 1 else {
            throw place.invalidDER(detail: "not a password-based encryption algorithm")
        }
        // A hostile iteration count or scrypt cost would keep PKCS8_decrypt busy for hours.
        switch KDFCost.verdict(sig) {
        case .acceptable: break
        case .tooCostly(let detail):
            throw SPKIError.kdfTooCostly(file: place.file, label: place.label, line: place.line, detail: detail)
        case .malformed:
            throw place.invalidDER(detail: "malformed password-based encryption parameters")
        case .unknownScheme:
            throw SPKIError.decryptionFailed(file: place.file, label: place.label, line: place.line)
        }
        guard let pass = try passphrase.get() else {
            throw SPKIError.passphraseRequired(file: place.file, label: place.label, line: place.line)
        }
        ERR_clear_error()
        let decrypted: OpaquePointer? = pass.withUnsafeBytes { bytes in
            guard let length = Int32(exactly: bytes.count) else { return nil }
            return PKCS8_decrypt(sig, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), length)
        }
        guard let owner = OpenSSLObject<PrivateKeyInfoKind>(taking: decrypted) else {
            ERR_clear_error()
            throw SPKIError.decryptionFailed(file: place.file, label: place.label, line: place.line)
        }
        return try owner.withPointer { info in try privateKeyObject(info, place: place) }
    }

    static func traditionalPrivateKey(
        _ raw: UnsafeRawBufferPointer, type: Int32, place: Place
    ) throws
        -> SPKIObject
    {
        let owner: OwnedEVPKey = try decode(raw, place: place) { d2i_PrivateKey(type, nil, $0, $1) }
        return try owner.withPointer { key in try keyObject(key, kind: .privateKey, place: place) }
    }

    /// Decrypts a legacy encrypted PEM body in place (RFC 1421 `Proc-Type: 4,ENCRYPTED`).
    /// Its key derivation (`EVP_BytesToKey`, MD5, one iteration) has a fixed, negligible
    /// cost, so it needs no cap.
    static func decryptLegacy(
        _ der: SecureBytes, headers: [String], line: Int, place: Place,
        passphrase: inout PassphraseSource
    ) throws {
        guard let pass = try passphrase.get() else {
            throw SPKIError.passphraseRequired(file: place.file, label: place.label, line: line)
        }
        var header = Array((headers.joined(separator: "\n") + "\n").utf8CString)
        ERR_clear_error()
        var length = der.count
        let status: Int32 = pass.withUnsafeBytes { passBytes in
            der.withUnsafeMutableBytes { data in
                header.withUnsafeMutableBufferPointer { headerBuffer in
                    guard let passLength = Int32(exactly: passBytes.count) else { return -1 }
                    return pinion_x509_pem_decrypt_legacy(
                        headerBuffer.baseAddress, data.baseAddress?.assumingMemoryBound(to: UInt8.self),
                        &length,
                        passBytes.baseAddress?.assumingMemoryBound(to: CChar.self), passLength)
                }
            }
        }
        ERR_clear_error()
        switch status {
        case 1:
            der.truncate(to: length)
        case 0:
            throw SPKIError.malformedPEM(
                file: place.file, label: place.label, line: line, problem: .unsupportedEncryption)
        default:
            throw SPKIError.decryptionFailed(file: place.file, label: place.label, line: line)
        }
    }

    static func keyObject(_ key: OpaquePointer, kind: SPKIObject.Kind, place: Place) throws
        -> SPKIObject
    {
        guard let spki = OpenSSLSupport.publicKeyDER(of: key) else { throw place.failure() }
        let keyType = SPKIEncoding.keyType(ofKey: key)
        let prefix = kind == .privateKey ? "private key" : "public key"
        guard
            let object = SPKIObject(
                kind: kind, label: "\(prefix) (\(keyType))", keyType: keyType, spkiDER: spki)
        else { throw place.failure() }
        return object
    }
}

extension SPKIObject {
    /// Builds the object and its pin from the SPKI bytes; nil when SHA-256 fails.
    fileprivate init?(kind: Kind, label: String, keyType: String, spkiDER: [UInt8]) {
        guard let digest = OpenSSLSupport.sha256(spkiDER) else { return nil }
        self.kind = kind
        self.label = label
        self.keyType = keyType
        self.spkiDER = spkiDER
        self.spkiSHA256 = digest
    }

    /// The certificate object of an `X509 *` (not consumed); nil when OpenSSL cannot
    /// encode the certificate or its DER is refused by `CertificateSPKI` (not strict DER).
    ///
    /// The SPKI and pin come from PinionCore's DER walk (`CertificateSPKI.fromCertificateDER`),
    /// the one pin computation shared with the other platforms' SDKs; OpenSSL supplies only the
    /// certificate's DER (`i2d_X509`), its subject and the key type for the label.
    package init?(certificate x509: OpaquePointer) {
        guard let der = OpenSSLSupport.certificateDER(of: x509),
            let pin = try? CertificateSPKI.fromCertificateDER(der, hasher: SodiumSHA256()),
            let pubkey = X509_get_X509_PUBKEY(x509)
        else { return nil }
        self.kind = .certificate
        self.label = SPKIEncoding.subject(X509_get_subject_name(x509))
        self.keyType = SPKIEncoding.keyType(ofSPKI: pubkey)
        self.spkiDER = pin.spkiDER
        self.spkiSHA256 = pin.sha256
    }
}

// MARK: - Files

extension SPKIReader {
    /// Reads a whole file into guarded memory (`maximumInputSize` at most).
    static func readFile(_ path: String) throws -> SecureBytes {
        do {
            return try SecureBytes.readFile(path: path, limit: maximumInputSize)
        } catch let error as SecureFileReadError {
            switch error {
            case .open(let code), .read(let code): throw SPKIError.unreadable(file: path, errno: code)
            case .tooLarge: throw SPKIError.tooLarge(file: path, limit: maximumInputSize)
            }
        }
    }
}
