// Why a key file could not be read or written, with the file named (docs/DESIGN.md §2).

import COpenSSL

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
