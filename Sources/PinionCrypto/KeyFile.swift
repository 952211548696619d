// Pinion key files (docs/DESIGN.md §2): NAME.key as encrypted PKCS#8 PEM (RFC 5958, RFC 8410)
// and NAME.pub as SubjectPublicKeyInfo PEM, read and written with OpenSSL.

import COpenSSL
import CPinionShims

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a key file could not be read or written. Every description names the file.
///
/// Callers map the kinds to exit codes: `isIOError` (the operating system failed: exit 3),
/// `isUsageError` (the wrong file, an existing file, no passphrase: exit 2), anything else
/// is about the file's content (exit 1).
public enum KeyFileError: Error, Equatable, CustomStringConvertible {
    /// The operating system refused an operation on the file: not found, unreadable,
    /// disk full... `operation` is a verb ("open", "read", "create", "write", "sync",
    /// "close", "inspect"); `errno` is the C error number.
    case io(path: String, operation: String, errno: Int32)
    /// `writeKeyPair` found the file already there and refused to overwrite it.
    case alreadyExists(path: String)
    /// An encrypted secret key did not decrypt: the passphrase is wrong, or the encrypted
    /// bytes were altered (the two cannot be told apart).
    case wrongPassphrase(path: String)
    /// The file is not a well-formed key file: empty, truncated, bad base64, bad DER.
    case corrupt(path: String, reason: String)
    /// A public key file was given where a secret key is needed.
    case publicKeyFileGiven(path: String)
    /// A secret key file was given where a public key is expected.
    case secretKeyFileGiven(path: String)
    /// The file holds something that is not a key at all (a certificate, for example);
    /// `found` names it.
    case notAKeyFile(path: String, found: String)
    /// The file holds a key of another algorithm; `type` names it ("RSA", "EC (prime256v1)").
    case unsupportedKeyType(path: String, type: String)
    /// The secret key is encrypted with a scheme this OpenSSL build cannot decrypt (a legacy
    /// PKCS#5 v1 cipher, for example); `detail` is OpenSSL's reason.
    case unsupportedEncryption(path: String, detail: String)
    /// The secret key is encrypted and the passphrase source returned none.
    case passphraseRequired(path: String)
    /// The passphrase cannot protect a key file: empty, longer than
    /// `KeyFile.maximumPassphraseLength` bytes, or holding a NUL byte.
    case unusablePassphrase(path: String, reason: String)
    /// The PBKDF2 iteration count is outside `KeyFile.minimumKDFIterations ... Int32.max`.
    case invalidKDFIterations(path: String, iterations: Int)
    /// The encrypted secret key asks for a key derivation costlier than Pinion attempts
    /// (`KeyFile.maximumPBKDF2Iterations`, `.maximumScryptBlocks`, `.maximumScryptParallelism`):
    /// a hostile file could otherwise keep the reader busy for hours. Refused before any
    /// passphrase is asked for; `detail` names the parameters.
    case kdfTooCostly(path: String, detail: String)
    /// OpenSSL failed where it should not (memory, an internal error); `detail` is its reason.
    case openSSLFailure(path: String, operation: String, detail: String)

    /// `true` when the operating system failed (CLI exit code 3).
    public var isIOError: Bool {
        if case .io = self { return true }
        return false
    }

    /// `true` when the user named the wrong thing: a public key where a secret key is needed
    /// or the reverse, a file that is no key, an existing output file, no passphrase
    /// available, an unusable passphrase or iteration count (CLI exit code 2).
    public var isUsageError: Bool {
        switch self {
        case .publicKeyFileGiven, .secretKeyFileGiven, .notAKeyFile, .alreadyExists,
            .passphraseRequired,
            .unusablePassphrase, .invalidKDFIterations:
            return true
        case .io, .wrongPassphrase, .corrupt, .unsupportedKeyType, .unsupportedEncryption,
            .kdfTooCostly, .openSSLFailure:
            return false
        }
    }

    /// A one-line message for the user that names the file and what to do.
    public var description: String {
        switch self {
        case .io(let path, let operation, let code):
            return "cannot \(operation) \(path): \(Self.errorText(code))"
        case .alreadyExists(let path):
            return
                "\(path) already exists; refusing to overwrite it (move it away or choose another name)"
        case .wrongPassphrase(let path):
            return "cannot decrypt \(path): wrong passphrase (or corrupt encrypted key)"
        case .corrupt(let path, let reason):
            return "\(path) is not a valid key file: \(reason)"
        case .publicKeyFileGiven(let path):
            return "\(path) is a public key file; a secret key (.key) is needed"
        case .secretKeyFileGiven(let path):
            return "\(path) is a secret key file; a public key (.pub) is expected"
        case .notAKeyFile(let path, let found):
            return "\(path) holds \(found), not a key"
        case .unsupportedKeyType(let path, let type):
            return "\(path) holds a key of type \(type); Pinion keys are Ed25519"
        case .unsupportedEncryption(let path, let detail):
            return "\(path) is encrypted with a scheme this OpenSSL cannot decrypt (\(detail)); "
                + "re-encrypt it with PBES2 (openssl pkcs8 -topk8 -v2 aes-256-cbc)"
        case .passphraseRequired(let path):
            return "\(path) is encrypted and no passphrase is available: "
                + "use --passphrase-file, PINION_PASSPHRASE or run on a terminal"
        case .unusablePassphrase(let path, let reason):
            return "cannot encrypt \(path): \(reason)"
        case .invalidKDFIterations(let path, let iterations):
            return "cannot encrypt \(path): \(iterations) PBKDF2 iterations is outside "
                + "\(KeyFile.minimumKDFIterations) ... \(Int32.max)"
        case .kdfTooCostly(let path, let detail):
            return "\(path) asks for a key derivation too costly to attempt (\(detail)); "
                + "re-encrypt it with PBES2 (openssl pkcs8 -topk8 -v2 aes-256-cbc -iter 600000)"
        case .openSSLFailure(let path, let operation, let detail):
            return "\(path): OpenSSL failed to \(operation): \(detail)"
        }
    }

    private static func errorText(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }
}

/// Reading and writing Pinion's key files (docs/DESIGN.md §2).
///
/// - `NAME.key`: the Ed25519 secret key as PKCS#8 (RFC 5958 `OneAsymmetricKey`, RFC 8410
///   §7), encrypted with PBES2 (RFC 8018): PBKDF2-HMAC-SHA256 with a random 16-byte salt,
///   AES-256-CBC with a random IV; PEM label `ENCRYPTED PRIVATE KEY`; mode 0600.
///   `openssl pkey -in NAME.key` opens it with the passphrase.
/// - `NAME.pub`: the public key as SubjectPublicKeyInfo (RFC 8410 §4), PEM label `PUBLIC KEY`.
///
/// Secret bytes read or decrypted here stay in `SecureBytes` or in OpenSSL buffers released
/// with its clearing free functions.
public enum KeyFile {
    /// PBKDF2 iterations used when none are given (OWASP 2023 for PBKDF2-HMAC-SHA256).
    public static let defaultKDFIterations = 600_000
    /// Fewest PBKDF2 iterations `writeKeyPair` accepts (NIST SP 800-132 §5.2).
    public static let minimumKDFIterations = 1_000
    /// Longest passphrase in bytes: OpenSSL's PEM passphrase buffer (`PEM_BUFSIZE`).
    public static let maximumPassphraseLength = 1024
    /// Largest key file read, in bytes; a key file is a few hundred bytes.
    static let maximumFileSize = 16 * 1024
    /// PBES2 salt length in bytes (RFC 8018 §4.1 asks for at least 8; 16 follows SP 800-132).
    static let saltLength: Int32 = 16

    /// Most PBKDF2 iterations (RFC 8018 §5.2) an encrypted key may ask for, also the cap for
    /// the iteration count of PBES1 and PKCS#12 PBE: about 17 times the default, seconds of
    /// work. A key asking for more is refused before decryption (`.kdfTooCostly`).
    public static let maximumPBKDF2Iterations = 10_000_000
    /// Most scrypt blocks N × r (RFC 7914 §2) an encrypted key may ask for: 2^22, i.e.
    /// 128 × N × r = 512 MiB of memory. A key asking for more is refused before decryption.
    public static let maximumScryptBlocks = 1 << 22
    /// Highest scrypt parallelization parameter p (RFC 7914 §2) an encrypted key may ask for;
    /// the work grows linearly with it.
    public static let maximumScryptParallelism = 16

    // MARK: - Writing

    /// Writes a key pair as `basePath + ".key"` (secret) and `basePath + ".pub"` (public).
    ///
    /// Neither file may exist beforehand: both are checked first, then each is created with
    /// `O_CREAT | O_EXCL` (the secret key with mode 0600 from creation, the public key with
    /// 0644 less the umask), written, and `fsync`ed. On any failure the files this call
    /// created are removed again, so no partial key pair is left behind.
    ///
    /// - Parameters:
    ///   - key: the key pair to store.
    ///   - basePath: the path without extension.
    ///   - passphrase: encrypts the secret key (1 ... 1024 bytes, no NUL byte). `nil` writes
    ///     an UNENCRYPTED `PRIVATE KEY` PEM: only for an explicit insecure flag (tests).
    ///   - kdfIterations: PBKDF2 iterations, `minimumKDFIterations ... Int32.max`; ignored
    ///     when `passphrase` is `nil`.
    /// - Throws: `KeyFileError.alreadyExists` (nothing written), `.unusablePassphrase`,
    ///   `.invalidKDFIterations`, `.io`, `.openSSLFailure`.
    public static func writeKeyPair(
        _ key: Ed25519SecretKey, basePath: String, passphrase: SecureBytes?,
        kdfIterations: Int = KeyFile.defaultKDFIterations
    ) throws {
        let secretPath = basePath + ".key"
        let publicPath = basePath + ".pub"
        if let passphrase {
            try checkUsable(passphrase: passphrase, path: secretPath)
            guard kdfIterations >= minimumKDFIterations, kdfIterations <= Int(Int32.max) else {
                throw KeyFileError.invalidKDFIterations(path: secretPath, iterations: kdfIterations)
            }
        }
        try refuseExisting(secretPath)
        try refuseExisting(publicPath)

        ERR_clear_error()
        defer { ERR_clear_error() }
        // Both encodings are made before any file exists, so an encoding failure leaves nothing.
        let secretPEM = try encodeSecretKey(
            key, passphrase: passphrase, iterations: Int32(clamping: kdfIterations), path: secretPath)
        defer { BIO_free(secretPEM) }
        let publicPEM = try encodePublicKey(key, path: publicPath)
        defer { BIO_free(publicPEM) }

        var created: [String] = []
        do {
            try writeNewFile(path: secretPath, contents: secretPEM, ownerOnly: true, created: &created)
            try writeNewFile(path: publicPath, contents: publicPEM, ownerOnly: false, created: &created)
        } catch {
            for path in created { _ = unlink(path) }
            throw error
        }
        syncDirectory(containing: secretPath)
    }

    // MARK: - Reading

    /// Reads an Ed25519 public key: PEM `PUBLIC KEY` or a raw DER SubjectPublicKeyInfo
    /// (RFC 8410 §4; parameters absent).
    ///
    /// - Parameter path: the `.pub` file.
    /// - Returns: the public key.
    /// - Throws: `KeyFileError.io`, `.corrupt`, `.secretKeyFileGiven`, `.notAKeyFile`,
    ///   `.unsupportedKeyType`; `SodiumError` if guarded memory cannot be allocated.
    public static func readPublicKey(path: String) throws -> Ed25519PublicKey {
        ERR_clear_error()
        defer { ERR_clear_error() }
        let file = try readFile(path: path)
        return try withKeyBlock(in: file, path: path) { encoding, der in
            switch encoding {
            case .pem(label: "PUBLIC KEY"):
                return try publicKey(fromSPKI: der, path: path)
            case .pem(let label):
                throw misplacedBlock(label: label, path: path, wantSecretKey: false)
            case .der:
                switch derKind(der) {
                case .publicKey: return try publicKey(fromSPKI: der, path: path)
                case .privateKey, .encryptedPrivateKey: throw KeyFileError.secretKeyFileGiven(path: path)
                case .unknown:
                    throw KeyFileError.corrupt(path: path, reason: "DER that is no SubjectPublicKeyInfo")
                }
            }
        }
    }

    /// Reads an Ed25519 secret key from PKCS#8: encrypted (`ENCRYPTED PRIVATE KEY`, as
    /// written by `writeKeyPair` or `openssl genpkey -algorithm ed25519 -aes256`) or not
    /// (`PRIVATE KEY`), PEM or DER. Same as `readSecretKeyFile(path:passphrase:)` without
    /// saying whether the file was encrypted.
    ///
    /// - Parameters:
    ///   - path: the `.key` file.
    ///   - passphrase: called once, and only when the key is encrypted; returning `nil`
    ///     means no passphrase is available. Errors it throws propagate unchanged.
    /// - Returns: the secret key; its seed is copied from OpenSSL's decoded PKCS#8 structure
    ///   (wiped when freed) straight into `SecureBytes`.
    /// - Throws: as `readSecretKeyFile(path:passphrase:)`.
    public static func readSecretKey(path: String, passphrase: () throws -> SecureBytes?) throws
        -> Ed25519SecretKey
    {
        try readSecretKeyFile(path: path, passphrase: passphrase).key
    }

    /// Reads an Ed25519 secret key from PKCS#8 (RFC 5958, RFC 8410 §7), PEM or DER, and says
    /// whether the file was encrypted, so that callers can warn about an unencrypted key.
    ///
    /// The file must hold exactly one key: text before the PEM block and parameter blocks
    /// (`EC PARAMETERS`...) are allowed, a second key or other PEM block is refused. The
    /// cost of an encrypted key's key derivation is checked before the passphrase is asked
    /// for (`maximumPBKDF2Iterations`, `maximumScryptBlocks`, `maximumScryptParallelism`).
    ///
    /// - Parameters:
    ///   - path: the `.key` file.
    ///   - passphrase: called once, and only when the key is encrypted; returning `nil`
    ///     means no passphrase is available. Errors it throws propagate unchanged.
    /// - Returns: `key`, the secret key (its seed copied from OpenSSL's decoded PKCS#8
    ///   structure, wiped when freed, straight into `SecureBytes`); `encrypted`, `true` for an
    ///   `EncryptedPrivateKeyInfo` (PEM `ENCRYPTED PRIVATE KEY` or DER), `false` for a plain
    ///   `PrivateKeyInfo`.
    /// - Throws: `KeyFileError.io`, `.corrupt`, `.wrongPassphrase`, `.publicKeyFileGiven`,
    ///   `.notAKeyFile`, `.unsupportedKeyType`, `.unsupportedEncryption`, `.kdfTooCostly`,
    ///   `.passphraseRequired`; `SodiumError`; whatever `passphrase` throws.
    public static func readSecretKeyFile(path: String, passphrase: () throws -> SecureBytes?) throws
        -> (key: Ed25519SecretKey, encrypted: Bool)
    {
        ERR_clear_error()
        defer { ERR_clear_error() }
        let file = try readFile(path: path)
        return try withKeyBlock(in: file, path: path) { encoding, der in
            switch encoding {
            case .pem(label: "ENCRYPTED PRIVATE KEY"):
                return (try secretKey(fromEncryptedPKCS8: der, path: path, passphrase: passphrase), true)
            case .pem(label: "PRIVATE KEY"):
                return (try secretKey(fromPlainPKCS8: der, path: path), false)
            case .pem(let label):
                throw misplacedBlock(label: label, path: path, wantSecretKey: true)
            case .der:
                switch derKind(der) {
                case .encryptedPrivateKey:
                    return (try secretKey(fromEncryptedPKCS8: der, path: path, passphrase: passphrase), true)
                case .privateKey: return (try secretKey(fromPlainPKCS8: der, path: path), false)
                case .publicKey: throw KeyFileError.publicKeyFileGiven(path: path)
                case .unknown: throw KeyFileError.corrupt(path: path, reason: "DER that is no PKCS#8 key")
                }
            }
        }
    }

    /// A warning when a secret key file can be accessed by anyone but its owner.
    ///
    /// - Parameter path: the `.key` file (symbolic links are followed).
    /// - Returns: the warning text, without a "warning:" prefix (the caller adds its own), or
    ///   `nil` when the mode grants nothing to group and others, when the path is not a
    ///   regular file (a directory, FIFO or device: reading it reports the real error), or
    ///   when it cannot be inspected (reading it reports that).
    public static func insecurePermissionsWarning(path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        let permissions = info.st_mode & 0o777
        guard permissions & 0o077 != 0 else { return nil }
        let octal = String(permissions, radix: 8)
        let access = permissions & 0o044 != 0 ? "readable" : "accessible"
        return "secret key file \(path) is \(access) by other users (mode 0\(octal)); "
            + "restrict it with: chmod 600 \(path)"
    }

    // MARK: - Files

    /// Throws `.alreadyExists` if anything (even a dangling symbolic link) is at `path`.
    private static func refuseExisting(_ path: String) throws {
        var info = stat()
        if lstat(path, &info) == 0 { throw KeyFileError.alreadyExists(path: path) }
        let code = errno
        guard code == ENOENT else {
            throw KeyFileError.io(path: path, operation: "inspect", errno: code)
        }
    }

    /// Creates `path` exclusively and writes the memory BIO's contents to it.
    ///
    /// - Parameter ownerOnly: mode exactly 0600 (secret key); otherwise 0644 less the umask.
    private static func writeNewFile(
        path: String, contents: OpaquePointer, ownerOnly: Bool, created: inout [String]
    ) throws {
        let mode: mode_t = ownerOnly ? 0o600 : 0o644
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            let code = errno
            if code == EEXIST { throw KeyFileError.alreadyExists(path: path) }
            throw KeyFileError.io(path: path, operation: "create", errno: code)
        }
        created.append(path)
        var isOpen = true
        defer { if isOpen { _ = close(descriptor) } }
        // The umask can only remove bits, but an odd one (say 0200) would leave the owner
        // unable to read the key; set the exact mode.
        if ownerOnly, fchmod(descriptor, mode) != 0 {
            throw KeyFileError.io(path: path, operation: "set the mode of", errno: errno)
        }
        var data: UnsafeMutablePointer<CChar>? = nil
        let length = pinion_BIO_get_mem_data(contents, &data)
        guard length > 0, let data else {
            throw KeyFileError.openSSLFailure(
                path: path, operation: "encode the key", detail: "empty output")
        }
        var written = 0
        while written < length {
            let count = write(descriptor, data + written, length - written)
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                throw KeyFileError.io(path: path, operation: "write", errno: code)
            }
            written += count
        }
        guard fsync(descriptor) == 0 else {
            throw KeyFileError.io(path: path, operation: "sync", errno: errno)
        }
        isOpen = false
        guard close(descriptor) == 0 else {
            throw KeyFileError.io(path: path, operation: "close", errno: errno)
        }
    }

    /// Makes the new directory entries durable. Best effort: the files themselves are
    /// already synced, and a failure here cannot be undone meaningfully.
    private static func syncDirectory(containing path: String) {
        let directory: String
        if let slash = path.lastIndex(of: "/") {
            directory = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            directory = "."
        }
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        _ = close(descriptor)
    }

    /// Reads the whole file into guarded memory, since it may hold an unencrypted secret key.
    private static func readFile(path: String) throws -> SecureBytes {
        do {
            return try SecureBytes.readFile(path: path, limit: maximumFileSize)
        } catch let error as SecureFileReadError {
            switch error {
            case .open(let code): throw KeyFileError.io(path: path, operation: "open", errno: code)
            case .read(let code): throw KeyFileError.io(path: path, operation: "read", errno: code)
            case .tooLarge:
                throw KeyFileError.corrupt(path: path, reason: "larger than \(maximumFileSize / 1024) KiB")
            }
        }
    }

    // MARK: - Encoding

    private static func checkUsable(passphrase: SecureBytes, path: String) throws {
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
    ) throws -> OpaquePointer {
        let encodedLength = 2 + Ed25519Size.seed
        guard let info = PKCS8_PRIV_KEY_INFO_new() else {
            throw KeyFileError.openSSLFailure(
                path: path, operation: "allocate PKCS#8", detail: OpenSSLErrors.drain().text)
        }
        guard let buffer = allocate(encodedLength) else {
            PKCS8_PRIV_KEY_INFO_free(info)
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
        guard
            PKCS8_pkey_set0(
                info, OBJ_nid2obj(NID_ED25519), 0, V_ASN1_UNDEF, nil, encoded, Int32(encodedLength)) == 1
        else {
            pinion_OPENSSL_clear_free(buffer, encodedLength)
            PKCS8_PRIV_KEY_INFO_free(info)
            throw KeyFileError.openSSLFailure(
                path: path, operation: "encode PKCS#8", detail: OpenSSLErrors.drain().text)
        }
        return info
    }

    /// The secret key as PEM in a secure-heap memory BIO (freed by the caller with `BIO_free`,
    /// which wipes it).
    private static func encodeSecretKey(
        _ key: Ed25519SecretKey, passphrase: SecureBytes?, iterations: Int32, path: String
    ) throws -> OpaquePointer {
        func failure(_ operation: String) -> KeyFileError {
            .openSSLFailure(path: path, operation: operation, detail: OpenSSLErrors.drain().text)
        }
        let info = try makePKCS8(key, path: path)
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        guard let bio = BIO_new(BIO_s_secmem()) else { throw failure("allocate a buffer") }
        do {
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
                guard let encrypted else {
                    X509_ALGOR_free(algorithm)  // owned by the result only on success
                    throw failure("encrypt the key")
                }
                defer { X509_SIG_free(encrypted) }
                guard PEM_write_bio_PKCS8(bio, encrypted) == 1 else { throw failure("write PEM") }
            } else {
                guard PEM_write_bio_PKCS8_PRIV_KEY_INFO(bio, info) == 1 else { throw failure("write PEM") }
            }
        } catch {
            BIO_free(bio)
            throw error
        }
        return bio
    }

    /// The public key as SubjectPublicKeyInfo PEM in a memory BIO (freed by the caller).
    ///
    /// OpenSSL derives the public key from the seed itself (`EVP_PKEY_new_raw_private_key`
    /// copies the seed into its secure heap and wipes it in `EVP_PKEY_free`); it must equal
    /// libsodium's, so that `openssl pkey -pubout` on the `.key` reproduces the `.pub`.
    private static func encodePublicKey(_ key: Ed25519SecretKey, path: String) throws -> OpaquePointer {
        func failure(_ operation: String) -> KeyFileError {
            .openSSLFailure(path: path, operation: operation, detail: OpenSSLErrors.drain().text)
        }
        let loaded = key.withUnsafeSeed { seed -> OpaquePointer? in
            guard let base = seed.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
            return EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, base, seed.count)
        }
        guard let evpKey = loaded else { throw failure("load the Ed25519 key") }
        defer { EVP_PKEY_free(evpKey) }
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
        guard let bio = BIO_new(BIO_s_mem()) else { throw failure("allocate a buffer") }
        guard PEM_write_bio_PUBKEY(bio, evpKey) == 1 else {
            BIO_free(bio)
            throw failure("write PEM")
        }
        return bio
    }

    // MARK: - Decoding

    /// How the key is encoded: a PEM block with its label, or bare DER.
    private enum Encoding {
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
    private static func withKeyBlock<R>(
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
            guard let bio = BIO_new_mem_buf(base, Int32(clamping: bytes.count)) else {
                throw KeyFileError.openSSLFailure(
                    path: path, operation: "allocate a buffer", detail: OpenSSLErrors.drain().text)
            }
            defer { BIO_free(bio) }
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
    }

    /// The outcome of reading one PEM block: what `body` made of it, or the OpenSSL errors
    /// that ended reading (`PEM_R_NO_START_LINE` at the end of the input).
    private enum PEMStep<R> {
        case block(R)
        case end(OpenSSLErrors)
    }

    /// Reads the next PEM block of `bio` into OpenSSL's secure heap, hands its label and
    /// body to `body`, and wipes and frees it when `body` returns.
    private static func nextPEMBlock<R>(
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
    private static func refuseFurtherBlocks(in bio: OpaquePointer, path: String) throws {
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

    private static func containsPEMBeginLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
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
    private static func misplacedBlock(label: String, path: String, wantSecretKey: Bool)
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
    private enum DERKind {
        case encryptedPrivateKey, privateKey, publicKey, unknown
    }

    private static func derKind(_ der: UnsafeRawBufferPointer) -> DERKind {
        defer { ERR_clear_error() }
        if let value = decodeDER(der, { d2i_X509_SIG(nil, $0, $1) }, free: { X509_SIG_free($0) }) {
            X509_SIG_free(value)
            return .encryptedPrivateKey
        }
        if let value = decodeDER(
            der, { d2i_PKCS8_PRIV_KEY_INFO(nil, $0, $1) }, free: { PKCS8_PRIV_KEY_INFO_free($0) })
        {
            PKCS8_PRIV_KEY_INFO_free(value)
            return .privateKey
        }
        if let value = decodeDER(der, { d2i_X509_PUBKEY(nil, $0, $1) }, free: { X509_PUBKEY_free($0) }) {
            X509_PUBKEY_free(value)
            return .publicKey
        }
        return .unknown
    }

    /// Runs an OpenSSL `d2i_*` function; `nil` unless it succeeds AND consumes every byte.
    private static func decodeDER(
        _ der: UnsafeRawBufferPointer,
        _ decode: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?,
        free: (OpaquePointer) -> Void
    ) -> OpaquePointer? {
        guard let base = der.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var cursor: UnsafePointer<UInt8>? = base
        guard let value = decode(&cursor, der.count) else { return nil }
        guard cursor == base + der.count else {
            free(value)
            return nil
        }
        return value
    }

    private static func secretKey(
        fromEncryptedPKCS8 der: UnsafeRawBufferPointer, path: String,
        passphrase: () throws -> SecureBytes?
    ) throws -> Ed25519SecretKey {
        guard let encrypted = decodeDER(der, { d2i_X509_SIG(nil, $0, $1) }, free: { X509_SIG_free($0) })
        else {
            throw KeyFileError.corrupt(path: path, reason: "malformed EncryptedPrivateKeyInfo (PKCS#8)")
        }
        defer { X509_SIG_free(encrypted) }
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
        let decrypted = secret.withUnsafeBytes { bytes -> OpaquePointer? in
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self) else { return nil }
            return PKCS8_decrypt(encrypted, base, Int32(bytes.count))
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
        defer { PKCS8_PRIV_KEY_INFO_free(decrypted) }
        return try secretKey(fromPKCS8: decrypted, path: path)
    }

    private static func secretKey(fromPlainPKCS8 der: UnsafeRawBufferPointer, path: String) throws
        -> Ed25519SecretKey
    {
        guard
            let info = decodeDER(
                der, { d2i_PKCS8_PRIV_KEY_INFO(nil, $0, $1) }, free: { PKCS8_PRIV_KEY_INFO_free($0) })
        else {
            throw KeyFileError.corrupt(path: path, reason: "malformed PrivateKeyInfo (PKCS#8)")
        }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        return try secretKey(fromPKCS8: info, path: path)
    }

    /// The Ed25519 key inside a decoded PKCS#8 structure (RFC 8410 §7).
    ///
    /// The seed is copied from the structure (which `PKCS8_PRIV_KEY_INFO_free` wipes)
    /// straight into `SecureBytes`. `EVP_PKCS82PKEY` is not used: OpenSSL 3.0's decoder
    /// frees an intermediate DER copy of the key without wiping it.
    private static func secretKey(fromPKCS8 info: OpaquePointer, path: String) throws
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
    private static func publicKey(fromSPKI der: UnsafeRawBufferPointer, path: String) throws
        -> Ed25519PublicKey
    {
        guard
            let spki = decodeDER(der, { d2i_X509_PUBKEY(nil, $0, $1) }, free: { X509_PUBKEY_free($0) })
        else {
            throw KeyFileError.corrupt(path: path, reason: "malformed SubjectPublicKeyInfo")
        }
        defer { X509_PUBKEY_free(spki) }
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
    private static func keyTypeName(
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
private struct OpenSSLErrors {
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
