// Encoding and decoding of key files with OpenSSL: PKCS#8 (encrypted and plain), SPKI, PEM
// blocks, key-derivation costs and OpenSSL error drains, for KeyFile.

import COpenSSL
import CPinionShims

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension KeyFile {
    // MARK: - Encoding

    static func checkUsable(passphrase: SecureBytes, path: String) throws {
        guard passphrase.count > 0 else {
            throw KeyFileError.unusablePassphrase(path: path, reason: "the passphrase is empty")
        }
        guard passphrase.count <= maximumPassphraseLength else {
            throw KeyFileError.unusablePassphrase(
                path: path, reason: "the passphrase is longer than \(maximumPassphraseLength) bytes")
        }
        // OpenSSL's tools read passphrases as C strings: a NUL byte would end them early
        // and `openssl pkey` could never open the key.
        let hasNUL = passphrase.withUnsafeBytes { $0.contains(0) }
        guard !hasNUL else {
            throw KeyFileError.unusablePassphrase(
                path: path, reason: "the passphrase contains a NUL byte")
        }
    }

    /// The secret key as PKCS#8 `PrivateKeyInfo` (RFC 5208, RFC 8410 §7): algorithm
    /// id-Ed25519 without parameters, private key = DER OCTET STRING of the 32-byte seed.
    ///
    /// Built here rather than with `EVP_PKEY2PKCS8`, which in OpenSSL 3.0 passes the key
    /// through a DER buffer it releases with plain `OPENSSL_free`, leaving the seed in freed
    /// heap. This buffer belongs to the result, which `PKCS8_PRIV_KEY_INFO_free` wipes.
    ///
    /// - Parameter allocate: OpenSSL's heap allocator; tests pass a failing one.
    static func makePKCS8(
        _ key: Ed25519SecretKey, path: String,
        allocate: (Int) -> UnsafeMutableRawPointer? = { pinion_OPENSSL_malloc($0) }
    ) throws -> OpenSSLObject<PrivateKeyInfoKind> {
        let encodedLength = 2 + Ed25519Size.seed
        guard let owner = OpenSSLObject<PrivateKeyInfoKind>(taking: PKCS8_PRIV_KEY_INFO_new()) else {
            throw KeyFileError.openSSLFailure(
                path: path, operation: "allocate PKCS#8", detail: OpenSSLErrors.drain().text)
        }
        guard let buffer = allocate(encodedLength) else {
            throw KeyFileError.openSSLFailure(
                path: path, operation: "allocate PKCS#8", detail: OpenSSLErrors.drain().text)
        }
        let encoded = buffer.assumingMemoryBound(to: UInt8.self)
        encoded[0] = 0x04  // OCTET STRING
        encoded[1] = UInt8(Ed25519Size.seed)
        key.withUnsafeSeed { seed in
            UnsafeMutableRawBufferPointer(start: encoded + 2, count: Ed25519Size.seed).copyMemory(
                from: seed)
        }
        // On success the structure owns the buffer; on failure it is still ours to wipe.
        guard
            owner.withPointer({ info in
                PKCS8_pkey_set0(
                    info, OBJ_nid2obj(NID_ED25519), 0, V_ASN1_UNDEF, nil, encoded, Int32(encodedLength))
            }) == 1
        else {
            pinion_OPENSSL_clear_free(buffer, encodedLength)
            throw KeyFileError.openSSLFailure(
                path: path, operation: "encode PKCS#8", detail: OpenSSLErrors.drain().text)
        }
        return owner
    }

    /// The secret key as PEM in a secure-heap memory BIO (whose free wipes it).
    static func encodeSecretKey(
        _ key: Ed25519SecretKey, passphrase: SecureBytes?, iterations: Int32, path: String
    ) throws -> OwnedBIO {
        func failure(_ operation: String) -> KeyFileError {
            .openSSLFailure(path: path, operation: operation, detail: OpenSSLErrors.drain().text)
        }
        let owner = try makePKCS8(key, path: path)
        guard let bio = OwnedBIO(taking: BIO_new(BIO_s_secmem())) else { throw failure("allocate a buffer") }
        try owner.withPointer { info in
            if let passphrase {
                // PBES2 with an explicit PRF; NULL salt and IV make OpenSSL draw them from its
                // CSPRNG. PKCS8_set0_pbe wipes the DER it encrypts.
                guard
                    let algorithm = PKCS5_pbe2_set_iv(
                        EVP_aes_256_cbc(), iterations, nil, saltLength, nil, NID_hmacWithSHA256)
                else { throw failure("set up PBES2") }
                let encrypted = passphrase.withUnsafeBytes { bytes -> OpaquePointer? in
                    guard let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self) else {
                        return nil
                    }
                    return PKCS8_set0_pbe(base, Int32(bytes.count), info, algorithm)
                }
                guard let encrypted = OpenSSLObject<X509SigKind>(taking: encrypted) else {
                    X509_ALGOR_free(algorithm)  // owned by the result only on success
                    throw failure("encrypt the key")
                }
                let status = bio.withPointer { bio in
                    encrypted.withPointer { encrypted in PEM_write_bio_PKCS8(bio, encrypted) }
                }
                guard status == 1 else { throw failure("write PEM") }
            } else {
                guard bio.withPointer({ PEM_write_bio_PKCS8_PRIV_KEY_INFO($0, info) }) == 1 else {
                    throw failure("write PEM")
                }
            }
        }
        return bio
    }

    /// The public key as SubjectPublicKeyInfo PEM in a memory BIO.
    ///
    /// OpenSSL derives the public key from the seed itself (`EVP_PKEY_new_raw_private_key`
    /// copies the seed into its secure heap and wipes it in `EVP_PKEY_free`); it must equal
    /// libsodium's, so that `openssl pkey -pubout` on the `.key` reproduces the `.pub`.
    static func encodePublicKey(_ key: Ed25519SecretKey, path: String) throws -> OwnedBIO {
        func failure(_ operation: String) -> KeyFileError {
            .openSSLFailure(path: path, operation: operation, detail: OpenSSLErrors.drain().text)
        }
        let loaded = key.withUnsafeSeed { seed -> OpaquePointer? in
            guard let base = seed.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
            return EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, base, seed.count)
        }
        guard let owner = OwnedEVPKey(taking: loaded) else { throw failure("load the Ed25519 key") }
        return try owner.withPointer { evpKey in
            try publicKeyPEM(evpKey, matching: key, path: path, failure: failure)
        }
    }

    /// `evpKey`'s public key as PEM, after checking that it is `key`'s.
    private static func publicKeyPEM(
        _ evpKey: OpaquePointer, matching key: Ed25519SecretKey, path: String,
        failure: (String) -> KeyFileError
    ) throws -> OwnedBIO {
        var derived = [UInt8](repeating: 0, count: Ed25519Size.publicKey)
        var length = derived.count
        guard EVP_PKEY_get_raw_public_key(evpKey, &derived, &length) == 1, length == derived.count
        else {
            throw failure("derive the public key")
        }
        guard derived == key.publicKey.raw else {
            throw KeyFileError.openSSLFailure(
                path: path, operation: "derive the public key", detail: "OpenSSL and libsodium disagree")
        }
        guard let bio = OwnedBIO(taking: BIO_new(BIO_s_mem())) else { throw failure("allocate a buffer") }
        guard bio.withPointer({ PEM_write_bio_PUBKEY($0, evpKey) }) == 1 else { throw failure("write PEM") }
        return bio
    }

    // MARK: - Decoding

    /// How the key is encoded: a PEM block with its label, or bare DER.
    enum Encoding {
        case pem(label: String)
        case der
    }

    /// PEM blocks that may precede a key (`openssl ecparam -genkey` writes one) and carry none.
    private static let parameterLabels: Set<String> = [
        "EC PARAMETERS", "DH PARAMETERS", "DSA PARAMETERS",
    ]

    /// Calls `body` with the first key-bearing PEM block's label and DER bytes, or with the
    /// whole file when it is DER. PEM bodies are decoded into OpenSSL's secure heap and
    /// wiped when `body` returns.
    static func withKeyBlock<R>(
        in file: SecureBytes, path: String, _ body: (Encoding, UnsafeRawBufferPointer) throws -> R
    ) throws -> R {
        try file.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else {
                throw KeyFileError.corrupt(path: path, reason: "the file is empty")
            }
            if !containsPEMBeginLine(bytes) {
                // DER starts with a SEQUENCE; anything else is neither form.
                guard bytes[0] == 0x30 else {
                    throw KeyFileError.corrupt(path: path, reason: "neither PEM nor DER")
                }
                return try body(.der, bytes)
            }
            // BIO_new_mem_buf does not copy: `bytes` outlives the BIO within this closure.
            guard let owner = OwnedBIO(taking: BIO_new_mem_buf(base, Int32(clamping: bytes.count))) else {
                throw KeyFileError.openSSLFailure(
                    path: path, operation: "allocate a buffer", detail: OpenSSLErrors.drain().text)
            }
            return try owner.withPointer { bio in try readKeyBlock(in: bio, path: path, body) }
        }
    }

    /// The first key-bearing PEM block of `bio` handed to `body` (see `withKeyBlock`).
    private static func readKeyBlock<R>(
        in bio: OpaquePointer, path: String, _ body: (Encoding, UnsafeRawBufferPointer) throws -> R
    ) throws -> R {
        var skippedBlocks = 0
        while true {
            let step = try nextPEMBlock(in: bio) { label, block -> R? in
                if parameterLabels.contains(label) {
                    skippedBlocks += 1
                    return nil
                }
                guard let block, block.count > 0 else {
                    throw KeyFileError.corrupt(path: path, reason: "the PEM block \"\(label)\" is empty")
                }
                // Before anything is decrypted: with two keys in one file, which one signs
                // would depend on which the reading tool happens to take.
                try refuseFurtherBlocks(in: bio, path: path)
                return try body(.pem(label: label), block)
            }
            switch step {
            case .block(let result?): return result
            case .block(nil): continue
            case .end(let errors):
                if skippedBlocks > 0, errors.contains(library: ERR_LIB_PEM, reason: PEM_R_NO_START_LINE) {
                    throw KeyFileError.corrupt(path: path, reason: "the PEM file holds parameters but no key")
                }
                if errors.contains(library: ERR_LIB_PEM, reason: PEM_R_NO_START_LINE) {
                    throw KeyFileError.corrupt(path: path, reason: "no complete PEM BEGIN line (truncated?)")
                }
                if errors.contains(library: ERR_LIB_PEM, reason: PEM_R_BAD_END_LINE) {
                    throw KeyFileError.corrupt(path: path, reason: "the PEM block has no END line (truncated?)")
                }
                throw KeyFileError.corrupt(path: path, reason: "malformed PEM (\(errors.text))")
            }
        }
    }

    /// The outcome of reading one PEM block: what `body` made of it, or the OpenSSL errors
    /// that ended reading (`PEM_R_NO_START_LINE` at the end of the input).
    enum PEMStep<R> {
        case block(R)
        case end(OpenSSLErrors)
    }

    /// Reads the next PEM block of `bio` into OpenSSL's secure heap, hands its label and
    /// body to `body`, and wipes and frees it when `body` returns.
    static func nextPEMBlock<R>(
        in bio: OpaquePointer, _ body: (String, UnsafeRawBufferPointer?) throws -> R
    ) rethrows -> PEMStep<R> {
        var name: UnsafeMutablePointer<CChar>? = nil
        var header: UnsafeMutablePointer<CChar>? = nil
        var data: UnsafeMutablePointer<UInt8>? = nil
        var length = 0
        ERR_clear_error()
        let flags = UInt32(PEM_FLAG_SECURE | PEM_FLAG_EAY_COMPATIBLE)
        guard PEM_read_bio_ex(bio, &name, &header, &data, &length, flags) == 1 else {
            return .end(OpenSSLErrors.drain())
        }
        defer {
            pinion_OPENSSL_secure_free(name)
            pinion_OPENSSL_secure_free(header)
            pinion_OPENSSL_secure_clear_free(data, length)
        }
        let label = name.map { String(cString: $0) } ?? ""
        return .block(try body(label, data.map { UnsafeRawBufferPointer(start: $0, count: length) }))
    }

    /// Reads the rest of a PEM file after its key block: text and parameter blocks may
    /// follow, another key or any other PEM block may not.
    static func refuseFurtherBlocks(in bio: OpaquePointer, path: String) throws {
        while true {
            let step = try nextPEMBlock(in: bio) { label, _ in
                if parameterLabels.contains(label) { return }
                if label.hasSuffix("KEY") {
                    throw KeyFileError.corrupt(path: path, reason: "the file holds more than one key")
                }
                throw KeyFileError.corrupt(path: path, reason: "the file holds a PEM block \"\(label)\" after the key")
            }
            if case .end(let errors) = step {
                if errors.contains(library: ERR_LIB_PEM, reason: PEM_R_NO_START_LINE) { return }
                throw KeyFileError.corrupt(path: path, reason: "malformed PEM after the key (\(errors.text))")
            }
        }
    }

    static func containsPEMBeginLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let marker = Array("-----BEGIN ".utf8)
        guard bytes.count >= marker.count else { return false }
        for start in 0...(bytes.count - marker.count) where bytes[start] == marker[0] {
            var matches = true
            for offset in 1..<marker.count where bytes[start + offset] != marker[offset] {
                matches = false
                break
            }
            if matches { return true }
        }
        return false
    }

    /// The error for a PEM block that is not the kind of key wanted.
    static func misplacedBlock(label: String, path: String, wantSecretKey: Bool)
        -> KeyFileError
    {
        switch label {
        case "PUBLIC KEY":
            return wantSecretKey ? .publicKeyFileGiven(path: path) : .secretKeyFileGiven(path: path)
        case "PRIVATE KEY", "ENCRYPTED PRIVATE KEY":
            return .secretKeyFileGiven(path: path)
        case "RSA PUBLIC KEY":
            return wantSecretKey
                ? .publicKeyFileGiven(path: path) : .unsupportedKeyType(path: path, type: "RSA")
        case "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY":
            if !wantSecretKey { return .secretKeyFileGiven(path: path) }
            let type = String(label.dropLast(" PRIVATE KEY".count))
            return .unsupportedKeyType(
                path: path, type: type == "OPENSSH" ? "OpenSSH (not PKCS#8)" : type)
        case "CERTIFICATE", "TRUSTED CERTIFICATE", "X509 CERTIFICATE":
            return .notAKeyFile(path: path, found: "an X.509 certificate")
        case "CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST":
            return .notAKeyFile(path: path, found: "a certificate signing request")
        default:
            return .notAKeyFile(path: path, found: "a PEM block \"\(label)\"")
        }
    }

    /// What a bare DER file holds, decided by a complete parse (no trailing bytes).
    enum DERKind {
        case encryptedPrivateKey, privateKey, publicKey, unknown
    }

    static func derKind(_ der: UnsafeRawBufferPointer) -> DERKind {
        defer { ERR_clear_error() }
        if decodeDER(der, as: X509SigKind.self, { d2i_X509_SIG(nil, $0, $1) }) != nil {
            return .encryptedPrivateKey
        }
        if decodeDER(der, as: PrivateKeyInfoKind.self, { d2i_PKCS8_PRIV_KEY_INFO(nil, $0, $1) }) != nil {
            return .privateKey
        }
        if decodeDER(der, as: X509PublicKeyKind.self, { d2i_X509_PUBKEY(nil, $0, $1) }) != nil {
            return .publicKey
        }
        return .unknown
    }

    /// Runs an OpenSSL `d2i_*` function; the owned object, or `nil` unless it succeeds AND
    /// consumes every byte.
    static func decodeDER<Kind: OpenSSLObjectKind>(
        _ der: UnsafeRawBufferPointer, as kind: Kind.Type,
        _ decode: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?
    ) -> OpenSSLObject<Kind>? {
        guard let base = der.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var cursor: UnsafePointer<UInt8>? = base
        guard let value = OpenSSLObject<Kind>(taking: decode(&cursor, der.count)) else { return nil }
        guard cursor == base + der.count else { return nil }
        return value
    }

    static func secretKey(
        fromEncryptedPKCS8 der: UnsafeRawBufferPointer, path: String,
        passphrase: () throws -> SecureBytes?
    ) throws -> Ed25519SecretKey {
        guard let owner = decodeDER(der, as: X509SigKind.self, { d2i_X509_SIG(nil, $0, $1) }) else {
            throw KeyFileError.corrupt(path: path, reason: "malformed EncryptedPrivateKeyInfo (PKCS#8)")
        }
        return try owner.withPointer { encrypted in
            try secretKey(fromDecryptable: encrypted, path: path, passphrase: passphrase)
        }
    }

    /// The Ed25519 key inside a decoded EncryptedPrivateKeyInfo, decrypted with the
    /// passphrase after the key derivation's cost is checked.
    private static func secretKey(
        fromDecryptable encrypted: OpaquePointer, path: String, passphrase: () throws -> SecureBytes?
    ) throws -> Ed25519SecretKey {
        switch KDFCost.verdict(encrypted) {
        case .acceptable: break
        case .tooCostly(let detail): throw KeyFileError.kdfTooCostly(path: path, detail: detail)
        case .malformed:
            throw KeyFileError.corrupt(path: path, reason: "malformed password-based encryption parameters")
        case .unknownScheme:
            throw KeyFileError.unsupportedEncryption(
                path: path, detail: "a password-based encryption scheme or key derivation OpenSSL does not know")
        }
        guard let secret = try passphrase() else { throw KeyFileError.passphraseRequired(path: path) }
        guard secret.count <= Int(Int32.max) else { throw KeyFileError.wrongPassphrase(path: path) }
        ERR_clear_error()
        // The passphrase goes to OpenSSL as pointer and length straight from guarded memory;
        // PKCS8_decrypt wipes its decrypted buffer before freeing it.
        let decrypted = secret.withUnsafeBytes { bytes -> OpenSSLObject<PrivateKeyInfoKind>? in
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self) else { return nil }
            return OpenSSLObject(taking: PKCS8_decrypt(encrypted, base, Int32(bytes.count)))
        }
        guard let decrypted else {
            let errors = OpenSSLErrors.drain()
            // A wrong passphrase fails the CBC padding check (bad decrypt) or, about once in
            // 256 tries, passes it and yields bytes that do not decode: both mean this.
            if errors.contains(library: ERR_LIB_EVP, reason: EVP_R_BAD_DECRYPT)
                || errors.contains(library: ERR_LIB_PKCS12, reason: PKCS12_R_PKCS12_CIPHERFINAL_ERROR)
                || errors.contains(library: ERR_LIB_PKCS12, reason: PKCS12_R_DECODE_ERROR)
            {
                throw KeyFileError.wrongPassphrase(path: path)
            }
            throw KeyFileError.unsupportedEncryption(path: path, detail: errors.text)
        }
        return try decrypted.withPointer { info in try secretKey(fromPKCS8: info, path: path) }
    }

    static func secretKey(fromPlainPKCS8 der: UnsafeRawBufferPointer, path: String) throws
        -> Ed25519SecretKey
    {
        guard let owner = decodeDER(der, as: PrivateKeyInfoKind.self, { d2i_PKCS8_PRIV_KEY_INFO(nil, $0, $1) })
        else {
            throw KeyFileError.corrupt(path: path, reason: "malformed PrivateKeyInfo (PKCS#8)")
        }
        return try owner.withPointer { info in try secretKey(fromPKCS8: info, path: path) }
    }

    /// The Ed25519 key inside a decoded PKCS#8 structure (RFC 8410 §7).
    ///
    /// The seed is copied from the structure (which `PKCS8_PRIV_KEY_INFO_free` wipes)
    /// straight into `SecureBytes`. `EVP_PKCS82PKEY` is not used: OpenSSL 3.0's decoder
    /// frees an intermediate DER copy of the key without wiping it.
    static func secretKey(fromPKCS8 info: OpaquePointer, path: String) throws
        -> Ed25519SecretKey
    {
        var algorithm: OpaquePointer? = nil
        var encoded: UnsafePointer<UInt8>? = nil
        var encodedLength: Int32 = 0
        var parameters: UnsafePointer<X509_ALGOR>? = nil
        guard PKCS8_pkey_get0(&algorithm, &encoded, &encodedLength, &parameters, info) == 1 else {
            throw KeyFileError.corrupt(path: path, reason: "PKCS#8 without an algorithm")
        }
        let nid = OBJ_obj2nid(algorithm)
        guard nid == NID_ED25519 else {
            throw KeyFileError.unsupportedKeyType(
                path: path, type: keyTypeName(nid: nid, algorithm: algorithm, parameters: parameters))
        }
        var parameterType: Int32 = 0
        X509_ALGOR_get0(nil, &parameterType, nil, parameters)
        // CurvePrivateKey ::= OCTET STRING of 32 bytes; parameters MUST be absent (RFC 8410 §3).
        guard parameterType == V_ASN1_UNDEF, encodedLength == Int32(2 + Ed25519Size.seed), let encoded,
            encoded[0] == 0x04, encoded[1] == UInt8(Ed25519Size.seed)
        else {
            throw KeyFileError.corrupt(path: path, reason: "malformed Ed25519 private key (RFC 8410)")
        }
        let seed = try SecureBytes(capacity: Ed25519Size.seed)
        seed.withUnsafeMutableBytes { bytes in
            bytes.copyMemory(from: UnsafeRawBufferPointer(start: encoded + 2, count: Ed25519Size.seed))
        }
        return try Ed25519SecretKey(seed: seed)
    }

    /// The Ed25519 key inside a DER SubjectPublicKeyInfo (RFC 8410 §4).
    static func publicKey(fromSPKI der: UnsafeRawBufferPointer, path: String) throws
        -> Ed25519PublicKey
    {
        guard let owner = decodeDER(der, as: X509PublicKeyKind.self, { d2i_X509_PUBKEY(nil, $0, $1) }) else {
            throw KeyFileError.corrupt(path: path, reason: "malformed SubjectPublicKeyInfo")
        }
        return try owner.withPointer { spki in try publicKey(fromDecoded: spki, path: path) }
    }

    /// The Ed25519 key inside a decoded SubjectPublicKeyInfo; `X509_PUBKEY_get0` lends the
    /// `EVP_PKEY`, which lives as long as `spki`.
    private static func publicKey(fromDecoded spki: OpaquePointer, path: String) throws -> Ed25519PublicKey {
        var algorithm: OpaquePointer? = nil
        var parameters: UnsafeMutablePointer<X509_ALGOR>? = nil
        guard X509_PUBKEY_get0_param(&algorithm, nil, nil, &parameters, spki) == 1 else {
            throw KeyFileError.corrupt(path: path, reason: "SubjectPublicKeyInfo without an algorithm")
        }
        let nid = OBJ_obj2nid(algorithm)
        guard nid == NID_ED25519 else {
            throw KeyFileError.unsupportedKeyType(
                path: path,
                type: keyTypeName(nid: nid, algorithm: algorithm, parameters: UnsafePointer(parameters)))
        }
        // NULL when OpenSSL rejected the key itself (parameters present, wrong length).
        guard let evpKey = X509_PUBKEY_get0(spki) else {
            throw KeyFileError.corrupt(path: path, reason: "malformed Ed25519 public key (RFC 8410)")
        }
        var raw = [UInt8](repeating: 0, count: Ed25519Size.publicKey)
        var length = raw.count
        guard EVP_PKEY_get_raw_public_key(evpKey, &raw, &length) == 1, length == Ed25519Size.publicKey
        else {
            throw KeyFileError.corrupt(path: path, reason: "the Ed25519 public key is not 32 bytes")
        }
        do {
            return try Ed25519PublicKey(raw: raw)
        } catch {
            throw KeyFileError.corrupt(path: path, reason: "\(error)")
        }
    }

    /// A readable name for a key algorithm OpenSSL decoded but Pinion does not use.
    static func keyTypeName(
        nid: Int32, algorithm: OpaquePointer?, parameters: UnsafePointer<X509_ALGOR>?
    ) -> String {
        switch nid {
        case NID_rsaEncryption: return "RSA"
        case NID_rsassaPss: return "RSA-PSS"
        case NID_dsa: return "DSA"
        case NID_ED448: return "Ed448"
        case NID_X25519: return "X25519"
        case NID_X448: return "X448"
        case NID_dhKeyAgreement, NID_dhpublicnumber: return "DH"
        case NID_X9_62_id_ecPublicKey:
            var parameterType: Int32 = 0
            var value: UnsafeRawPointer? = nil
            X509_ALGOR_get0(nil, &parameterType, &value, parameters)
            if parameterType == V_ASN1_OBJECT, let value,
                let name = OBJ_nid2sn(OBJ_obj2nid(OpaquePointer(value)))
            {
                return "EC (\(String(cString: name)))"
            }
            return "EC"
        default:
            var text = [CChar](repeating: 0, count: 96)
            guard let algorithm, OBJ_obj2txt(&text, Int32(text.count), algorithm, 1) > 0 else {
                return "unknown algorithm"
            }
            return
                "OID \(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))"
        }
    }
}

/// The key-derivation cost of a PKCS#8 `EncryptedPrivateKeyInfo`, judged from its
/// algorithm parameters before `PKCS8_decrypt` runs the derivation (shared with SPKI.swift).
enum KDFCost: Equatable {
    /// Within `KeyFile.maximumPBKDF2Iterations`, `.maximumScryptBlocks` and
    /// `.maximumScryptParallelism`.
    case acceptable
    /// Over a cap; the text names the parameters and the cap.
    case tooCostly(String)
    /// The parameters are absent or do not decode (OpenSSL would fail as well).
    case malformed
    /// A scheme or key derivation OpenSSL has no implementation for: nothing to run.
    case unknownScheme

    /// Reads the parameters of `encrypted` (an `X509_SIG *`) as OpenSSL would and judges them.
    static func verdict(_ encrypted: OpaquePointer) -> KDFCost {
        var kind: Int32 = 0
        var iterations: UInt64 = 0
        var n: UInt64 = 0
        var r: UInt64 = 0
        var p: UInt64 = 0
        guard pinion_pkcs8_kdf_cost(encrypted, &kind, &iterations, &n, &r, &p) == 1 else { return .malformed }
        switch kind {
        case PINION_KDF_PBKDF2, PINION_KDF_PBES1:
            let name = kind == PINION_KDF_PBKDF2 ? "PBKDF2" : "PBES1/PKCS#12 PBE"
            guard iterations <= UInt64(KeyFile.maximumPBKDF2Iterations) else {
                return .tooCostly(
                    "\(name) with \(iterations) iterations; at most \(KeyFile.maximumPBKDF2Iterations) are accepted")
            }
            return .acceptable
        case PINION_KDF_SCRYPT:
            let (blocks, overflow) = n.multipliedReportingOverflow(by: r)
            guard !overflow, blocks <= UInt64(KeyFile.maximumScryptBlocks) else {
                return .tooCostly(
                    "scrypt with N=\(n), r=\(r); N × r at most \(KeyFile.maximumScryptBlocks) is accepted")
            }
            guard p <= UInt64(KeyFile.maximumScryptParallelism) else {
                return .tooCostly("scrypt with p=\(p); at most \(KeyFile.maximumScryptParallelism) is accepted")
            }
            return .acceptable
        default:
            return .unknownScheme
        }
    }
}

/// OpenSSL's thread-local error queue, drained into codes and one line of text.
struct OpenSSLErrors {
    private var codes: [(library: Int32, reason: Int32)] = []
    /// The reasons, in order, joined with "; ".
    private(set) var text = ""

    /// Takes every entry off the calling thread's error queue.
    static func drain() -> OpenSSLErrors {
        var errors = OpenSSLErrors()
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            errors.codes.append((pinion_ERR_GET_LIB(code), pinion_ERR_GET_REASON(code)))
            if let reason = ERR_reason_error_string(code) {
                reasons.append(String(cString: reason))
            } else {
                reasons.append("error \(code)")
            }
        }
        errors.text = reasons.isEmpty ? "no detail" : reasons.joined(separator: "; ")
        return errors
    }

    func contains(library: Int32, reason: Int32) -> Bool {
        codes.contains { $0.library == library && $0.reason == reason }
    }
}
