// Pinion key files (docs/DESIGN.md §2): NAME.key as encrypted PKCS#8 PEM (RFC 5958, RFC 8410)
// and NAME.pub as SubjectPublicKeyInfo PEM, read and written with OpenSSL.

import COpenSSL
import CPinionShims

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
        let publicPEM = try encodePublicKey(key, path: publicPath)

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
    static func refuseExisting(_ path: String) throws {
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
    static func writeNewFile(
        path: String, contents: OwnedBIO, ownerOnly: Bool, created: inout [String]
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
        try contents.withPointer { bio in
            var data: UnsafeMutablePointer<CChar>? = nil
            let length = pinion_BIO_get_mem_data(bio, &data)
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
    static func syncDirectory(containing path: String) {
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
    static func readFile(path: String) throws -> SecureBytes {
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

}
