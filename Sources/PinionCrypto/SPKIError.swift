// Why `pinion spki` and the SPKI readers could not compute a pin, with the file named.

import COpenSSL

/// Why an input yields no pins. Every case names the file (or the `source` given to
/// `SPKIReader.objects(in:source:passphrase:)`); PEM problems also name the block label
/// and the 1-based line of its `-----BEGIN` line.
public enum SPKIError: Error, Equatable, CustomStringConvertible {
    /// Where a PEM block is malformed.
    public enum PEMProblem: Sendable, Equatable {
        /// The block ends with another `-----END` line than `-----END <label>-----`;
        /// `found` is that line (non-printable bytes as `?`).
        case mismatchedEnd(found: String)
        /// A `-----BEGIN` line appears before the open block's `-----END` line.
        case beginInsideBlock
        /// The `-----BEGIN` line is not `-----BEGIN <LABEL>-----` with a printable label.
        case malformedBeginLine
        /// The block has no base64 body.
        case emptyBody
        /// RFC 1421 header lines that are malformed, or on a label that takes none.
        case unexpectedHeaders
        /// Encryption headers (`Proc-Type`, `DEK-Info`) that OpenSSL does not understand.
        case unsupportedEncryption
    }

    /// The file could not be opened or read; `errno` is the system error number.
    case unreadable(file: String, errno: Int32)
    /// The input is larger than `SPKIReader.maximumInputSize` bytes.
    case tooLarge(file: String, limit: Int)
    /// The input is empty or only white space.
    case empty(file: String)
    /// The input is neither PEM nor a DER certificate, CSR, public key or private key.
    case unrecognized(file: String)
    /// A PEM block has no `-----END` line (the file is truncated).
    case truncatedPEM(file: String, label: String, line: Int)
    /// A PEM block is malformed.
    case malformedPEM(file: String, label: String, line: Int, problem: PEMProblem)
    /// A PEM block's body is not canonical padded base64 (RFC 4648 §4, RFC 7468 §3).
    case invalidBase64(file: String, label: String, line: Int)
    /// A PEM block whose label carries no public key Pinion can read.
    case unsupportedPEMLabel(file: String, label: String, line: Int)
    /// The DER inside a PEM block (or a DER file) does not decode as its label says, or
    /// has trailing bytes. `line` is nil for DER files. `detail` is OpenSSL's error text.
    case invalidDER(file: String, label: String, line: Int?, detail: String)
    /// An encrypted private key, but the passphrase source gave no passphrase.
    case passphraseRequired(file: String, label: String, line: Int?)
    /// An encrypted private key that does not decrypt: wrong passphrase or corrupt data.
    case decryptionFailed(file: String, label: String, line: Int?)
    /// An encrypted PKCS#8 private key whose key derivation costs more than Pinion attempts
    /// (the caps of `KeyFile.maximumPBKDF2Iterations`, `.maximumScryptBlocks` and
    /// `.maximumScryptParallelism`); refused before the passphrase is asked for. `detail`
    /// names the parameters. Legacy PEM encryption (`DEK-Info`) has a fixed, cheap cost.
    case kdfTooCostly(file: String, label: String, line: Int?, detail: String)
    /// PEM blocks were found but none carries a public key (only parameters or CRLs).
    case noObjects(file: String)
    /// OpenSSL failed where it should not (allocation, encoding); `detail` is its text.
    case openSSLFailure(file: String, detail: String)

    /// True when the input could not be read at all (CLI exit code 3, docs/DESIGN.md §11);
    /// false when it was read and is bad.
    public var isIOError: Bool {
        if case .unreadable = self { return true }
        return false
    }

    /// One line for the operator: `FILE[:LINE]: what is wrong`.
    public var description: String {
        switch self {
        case .unreadable(let file, let code):
            return "\(file): cannot read: \(String(cString: strerror(code)))"
        case .tooLarge(let file, let limit):
            return "\(file): larger than \(limit) bytes, not a certificate, CSR or key file"
        case .empty(let file):
            return "\(file): empty (expected a PEM or DER certificate, CSR, public key or private key)"
        case .unrecognized(let file):
            return "\(file): neither PEM nor a DER certificate, CSR, public key or private key"
        case .truncatedPEM(let file, let label, let line):
            return "\(file):\(line): PEM block \"\(label)\" has no END line (truncated file?)"
        case .malformedPEM(let file, let label, let line, let problem):
            let what: String
            switch problem {
            case .mismatchedEnd(let found):
                what = "ends with \"\(found)\" instead of \"-----END \(label)-----\""
            case .beginInsideBlock: what = "has a BEGIN line before its END line"
            case .malformedBeginLine: what = "has a malformed BEGIN line"
            case .emptyBody: what = "has no base64 body"
            case .unexpectedHeaders: what = "has malformed or unexpected header lines"
            case .unsupportedEncryption: what = "uses an unsupported encryption header"
            }
            return "\(file):\(line): PEM block \"\(label)\" \(what)"
        case .invalidBase64(let file, let label, let line):
            return "\(file):\(line): PEM block \"\(label)\": body is not valid base64"
        case .unsupportedPEMLabel(let file, let label, let line):
            return
                "\(file):\(line): PEM block \"\(label)\" is not a certificate, CSR, public key or private key"
        case .invalidDER(let file, let label, let line, let detail):
            return "\(Self.place(file, line)): \(label): invalid DER (\(detail))"
        case .passphraseRequired(let file, let label, let line):
            return "\(Self.place(file, line)): \(label) is encrypted and no passphrase was given"
        case .decryptionFailed(let file, let label, let line):
            return
                "\(Self.place(file, line)): \(label) does not decrypt (wrong passphrase or corrupt key)"
        case .kdfTooCostly(let file, let label, let line, let detail):
            return "\(Self.place(file, line)): \(label) asks for a key derivation too costly to attempt (\(detail))"
        case .noObjects(let file):
            return "\(file): no certificate, CSR, public key or private key in the PEM blocks"
        case .openSSLFailure(let file, let detail):
            return "\(file): OpenSSL failure: \(detail)"
        }
    }

    private static func place(_ file: String, _ line: Int?) -> String {
        guard let line else { return file }
        return "\(file):\(line)"
    }
}
