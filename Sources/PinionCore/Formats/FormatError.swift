// Typed errors of the strict parser and the document schemas (docs/DESIGN.md §5, §11).

/// What rule an input broke. Stable cases that tests and callers can match on.
public enum FormatRule: Error, Sendable, Equatable, CustomStringConvertible {
    /// The rule in words.
    public var description: String { FormatError.explain(self) }

    // JSON syntax (RFC 8259) and size limits
    /// The bytes are not valid UTF-8 (byte offset of the first bad byte).
    case invalidUTF8(offset: Int)
    /// A JSON syntax error at a byte offset, with what was expected there.
    case syntax(offset: Int, expected: String)
    /// Non-whitespace bytes after the top-level value (byte offset).
    case trailingBytes(offset: Int)
    /// An object has the same member name twice.
    case duplicateKey(String)
    /// A `\uD800`-`\uDFFF` escape that is not part of a valid surrogate pair.
    case loneSurrogate
    /// A number with a leading zero, such as `007`.
    case leadingZero
    /// Arrays and objects nested deeper than the limit.
    case nestingTooDeep(limit: Int)
    /// The input is larger than the limit (bytes).
    case tooLarge(bytes: Int, limit: Int)
    /// An array has more elements than the limit.
    case tooManyElements(limit: Int)

    // Schema
    /// A required member is absent.
    case missingMember(String)
    /// A member that the schema does not define and that does not start with `x-`.
    case unknownMember(String)
    /// The value has the wrong JSON type.
    case wrongType(expected: String)
    /// A number where an integer is required has a fraction or an exponent.
    case notAnInteger
    /// An integer outside the allowed range (inclusive bounds).
    case integerOutOfRange(min: Int64, max: Int64)
    /// A time that is not RFC 3339 UTC with `Z` and whole seconds.
    case invalidTime(String)
    /// `specVersion` is newer than this build understands.
    case unsupportedSpecVersion(found: Int64, supported: Int64)
    /// The `type` member names another document type.
    case wrongDocumentType(expected: String, found: String)
    /// The envelope's `payloadType` is not one Pinion knows or not the one expected.
    case wrongPayloadType(expected: String, found: String)
    /// A scope outside `[a-z0-9._-]{1,128}` or equal to `.` or `..`.
    case invalidScope(String)
    /// A host name that is not a lowercase A-label name with two or more labels.
    case invalidHostName(String)
    /// A pin that is not `sha256/` plus canonical padded base64 of 32 bytes.
    case invalidPin(String)
    /// The same pin twice in one list.
    case duplicatePin(String)
    /// The same domain name twice in one manifest.
    case duplicateDomain(String)
    /// A list that must not be empty is empty.
    case empty
    /// Base64 that is not canonical padded RFC 4648 §4 base64.
    case invalidBase64
    /// A key id that is not 64 lowercase hex characters.
    case invalidKeyID(String)
    /// A root lists a key under an id that is not the SHA-256 of its public key.
    case keyIDMismatch(listed: String, actual: String)
    /// A key of a type other than `ed25519`, or a public key that is not 32 bytes.
    case invalidPublicKey(String)
    /// A role names a key id absent from `keys`, or the same key id twice.
    case invalidRoleKey(String)
    /// A threshold outside 1 ... number of keys in the role.
    case invalidThreshold(threshold: Int64, keys: Int)
    /// `expiresAt` is not after `issuedAt`.
    case expiresNotAfterIssued
    /// `previous` is not `sha256:` plus 64 lowercase hex characters.
    case invalidPreviousHash(String)
    /// A root's `log` member breaks a rule of docs/DESIGN.md §12 (a malformed note verifier
    /// key, a witness key listed twice, the log key as a witness, a quorum out of range).
    case invalidLog(String)
}

/// A strict-parser or schema error: where in the document (a path such as
/// `domains[3].pins[1]`) and which rule. `file` is filled in by callers that know it.
public struct FormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file or source the document came from, if known.
    public var file: String?
    /// Path to the offending value; empty for the whole document.
    public var path: String
    /// The rule that was broken.
    public var rule: FormatRule

    public init(file: String? = nil, path: String, rule: FormatRule) {
        self.file = file
        self.path = path
        self.rule = rule
    }

    /// The same error attributed to `file`.
    public func inFile(_ file: String) -> FormatError {
        var copy = self
        copy.file = file
        return copy
    }

    /// `file: path: rule`, for example
    /// `manifest.json: domains[3].pins[1]: not 32 bytes after base64 decoding (got 31)`.
    public var description: String {
        var parts: [String] = []
        if let file { parts.append(file) }
        if !path.isEmpty { parts.append(path) }
        parts.append(FormatError.explain(rule))
        return TerminalText.escape(parts.joined(separator: ": "))
    }

    static func explain(_ rule: FormatRule) -> String {
        switch rule {
        case .invalidUTF8(let offset): return "invalid UTF-8 at byte \(offset)"
        case .syntax(let offset, let expected):
            return "JSON syntax error at byte \(offset): expected \(expected)"
        case .trailingBytes(let offset):
            return "unexpected bytes after the JSON value at byte \(offset)"
        case .duplicateKey(let key): return "duplicate member \"\(key)\""
        case .loneSurrogate: return "lone UTF-16 surrogate in \\u escape"
        case .leadingZero: return "number with a leading zero"
        case .nestingTooDeep(let limit): return "nesting deeper than \(limit) levels"
        case .tooLarge(let bytes, let limit):
            return "\(bytes) bytes is over the limit of \(limit) bytes"
        case .tooManyElements(let limit): return "more than \(limit) elements"
        case .missingMember(let name): return "required member \"\(name)\" is missing"
        case .unknownMember(let name):
            return "unknown member \"\(name)\" (extensions must start with \"x-\")"
        case .wrongType(let expected): return "expected \(expected)"
        case .notAnInteger: return "expected an integer without fraction or exponent"
        case .integerOutOfRange(let min, let max): return "integer out of range \(min)...\(max)"
        case .invalidTime(let reason):
            return "not an RFC 3339 UTC time like 2026-11-30T09:00:00Z (\(reason))"
        case .unsupportedSpecVersion(let found, let supported):
            return "specVersion \(found) is not supported (this build supports \(supported))"
        case .wrongDocumentType(let expected, let found):
            return "type is \"\(found)\", expected \"\(expected)\""
        case .wrongPayloadType(let expected, let found):
            return "payloadType is \"\(found)\", expected \(expected)"
        case .invalidScope(let reason): return "invalid scope: \(reason)"
        case .invalidHostName(let reason): return "invalid host name: \(reason)"
        case .invalidPin(let reason): return "invalid pin: \(reason)"
        case .duplicatePin(let pin): return "duplicate pin \(pin)"
        case .duplicateDomain(let name): return "duplicate domain \(name)"
        case .empty: return "must not be empty"
        case .invalidBase64: return "not canonical padded base64"
        case .invalidKeyID(let id): return "key id \"\(id)\" is not 64 lowercase hex characters"
        case .keyIDMismatch(let listed, let actual):
            return "key listed as \(listed) has key id \(actual) (SHA-256 of its public key)"
        case .invalidPublicKey(let reason): return "invalid public key: \(reason)"
        case .invalidRoleKey(let reason): return "invalid role key: \(reason)"
        case .invalidThreshold(let threshold, let keys):
            return "threshold \(threshold) is outside 1...\(keys)"
        case .expiresNotAfterIssued: return "expiresAt is not after issuedAt"
        case .invalidPreviousHash(let value):
            return "\"\(value)\" is not sha256: plus 64 lowercase hex characters"
        case .invalidLog(let reason): return "invalid log: \(reason)"
        }
    }
}
