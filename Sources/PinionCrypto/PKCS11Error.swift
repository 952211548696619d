// Errors of PKCS#11 signing (docs/DESIGN.md §13): what the module, the token or the PIN refused.

import PinionCore

/// A PKCS#11 return value (CK_RV) with its name from the standard (PKCS#11 v2.40 §11.1).
public struct PKCS11ReturnValue: Sendable, Equatable, CustomStringConvertible {
    /// The CK_RV number.
    public let code: UInt

    /// Wraps a CK_RV.
    public init(_ code: UInt) { self.code = code }

    private static let names: [UInt: String] = [
        0x00: "CKR_OK", 0x01: "CKR_CANCEL", 0x02: "CKR_HOST_MEMORY", 0x03: "CKR_SLOT_ID_INVALID",
        0x05: "CKR_GENERAL_ERROR", 0x06: "CKR_FUNCTION_FAILED", 0x07: "CKR_ARGUMENTS_BAD",
        0x10: "CKR_ATTRIBUTE_READ_ONLY", 0x11: "CKR_ATTRIBUTE_SENSITIVE", 0x12: "CKR_ATTRIBUTE_TYPE_INVALID",
        0x13: "CKR_ATTRIBUTE_VALUE_INVALID", 0x20: "CKR_DATA_INVALID", 0x21: "CKR_DATA_LEN_RANGE",
        0x30: "CKR_DEVICE_ERROR", 0x31: "CKR_DEVICE_MEMORY", 0x32: "CKR_DEVICE_REMOVED",
        0x50: "CKR_FUNCTION_CANCELED", 0x54: "CKR_FUNCTION_NOT_SUPPORTED", 0x60: "CKR_KEY_HANDLE_INVALID",
        0x63: "CKR_KEY_TYPE_INCONSISTENT", 0x68: "CKR_KEY_FUNCTION_NOT_PERMITTED",
        0x70: "CKR_MECHANISM_INVALID", 0x71: "CKR_MECHANISM_PARAM_INVALID", 0x82: "CKR_OBJECT_HANDLE_INVALID",
        0x90: "CKR_OPERATION_ACTIVE", 0x91: "CKR_OPERATION_NOT_INITIALIZED", 0xA0: "CKR_PIN_INCORRECT",
        0xA1: "CKR_PIN_INVALID", 0xA2: "CKR_PIN_LEN_RANGE", 0xA3: "CKR_PIN_EXPIRED", 0xA4: "CKR_PIN_LOCKED",
        0xB0: "CKR_SESSION_CLOSED", 0xB1: "CKR_SESSION_COUNT", 0xB3: "CKR_SESSION_HANDLE_INVALID",
        0xB5: "CKR_SESSION_READ_ONLY", 0xC0: "CKR_SIGNATURE_INVALID", 0xC1: "CKR_SIGNATURE_LEN_RANGE",
        0xD0: "CKR_TEMPLATE_INCOMPLETE", 0xD1: "CKR_TEMPLATE_INCONSISTENT", 0xE0: "CKR_TOKEN_NOT_PRESENT",
        0xE1: "CKR_TOKEN_NOT_RECOGNIZED", 0xE2: "CKR_TOKEN_WRITE_PROTECTED", 0x100: "CKR_USER_ALREADY_LOGGED_IN",
        0x101: "CKR_USER_NOT_LOGGED_IN", 0x102: "CKR_USER_PIN_NOT_INITIALIZED", 0x103: "CKR_USER_TYPE_INVALID",
        0x150: "CKR_BUFFER_TOO_SMALL", 0x190: "CKR_CRYPTOKI_NOT_INITIALIZED",
        0x191: "CKR_CRYPTOKI_ALREADY_INITIALIZED", 0x1A0: "CKR_MUTEX_BAD", 0x0A: "CKR_CANT_LOCK",
    ]

    /// `CKR_NAME (0xNN)`, or `CK_RV 0xNN` for a code the table does not know.
    public var description: String {
        let hex = "0x" + String(code, radix: 16, uppercase: true)
        return Self.names[code].map { "\($0) (\(hex))" } ?? "CK_RV \(hex)"
    }

    /// The token went away (removed, powered off, or the session died with it).
    public var isDeviceGone: Bool { [0x30, 0x32, 0xB0, 0xB3, 0xE0, 0xE1].contains(code) }
}

/// What the PIN retry flags of a token say (PKCS#11 v2.40 §5.5 CK_TOKEN_INFO): PKCS#11
/// reports these three flags, not a count of the tries left.
public struct PKCS11PINState: Sendable, Equatable, CustomStringConvertible {
    /// CKF_USER_PIN_COUNT_LOW: a wrong PIN was entered since the last successful login.
    public let countLow: Bool
    /// CKF_USER_PIN_FINAL_TRY: one more wrong PIN locks the token.
    public let finalTry: Bool
    /// CKF_USER_PIN_LOCKED: the user PIN is locked (only the security officer can unlock it).
    public let locked: Bool

    /// Wraps the three flags.
    public init(countLow: Bool, finalTry: Bool, locked: Bool) {
        self.countLow = countLow
        self.finalTry = finalTry
        self.locked = locked
    }

    /// The flags in words, or "" when none is set.
    public var description: String {
        if locked { return "the user PIN is now LOCKED (CKF_USER_PIN_LOCKED): the security officer must unlock it" }
        if finalTry {
            return "the next wrong PIN LOCKS the token (CKF_USER_PIN_FINAL_TRY)"
        }
        if countLow { return "wrong PINs have been counted (CKF_USER_PIN_COUNT_LOW): few tries are left" }
        return ""
    }
}

/// Why PKCS#11 signing, key generation or a key lookup failed. Every case names the
/// module, the token or the URI it concerns.
public enum PKCS11Error: Error, Equatable, CustomStringConvertible {
    /// No module given (neither --pkcs11-module nor PINION_PKCS11_MODULE).
    case noModule
    /// The module path is not a path to a file (no `/`), or dlopen failed; carries dlerror.
    case moduleLoad(path: String, detail: String)
    /// The module has no C_GetFunctionList, or it failed, or a function Pinion needs is NULL.
    case moduleBroken(path: String, detail: String)
    /// A PKCS#11 call failed; carries the function name and return value.
    case call(function: String, value: PKCS11ReturnValue)
    /// The token went away during the command (CKR_DEVICE_REMOVED and kin).
    case deviceRemoved(function: String, value: PKCS11ReturnValue)
    /// No token matches the URI; carries the URI and the tokens present ("label (serial)").
    case noToken(uri: String, present: [String])
    /// Several tokens match the URI; carries the URI and the matches.
    case ambiguousToken(uri: String, matches: [String])
    /// The URI names no object (`object=` or `id=` is required).
    case noObjectInURI(uri: String)
    /// No key of the needed class matches the URI in the token.
    case keyNotFound(uri: String, token: String, keyClass: String)
    /// Several keys match; the URI must name one (add `id=` or a unique `object=`).
    case ambiguousKey(uri: String, count: Int)
    /// The key is not Ed25519 (for example an ECDSA P-256 or RSA key); carries what it is.
    case notEd25519(uri: String, found: String)
    /// The public key read from the token is malformed (CKA_EC_POINT neither a DER OCTET
    /// STRING of 32 bytes nor 32 raw bytes, or not a valid Ed25519 point).
    case malformedPublicKey(uri: String, detail: String)
    /// An attribute length the module reported is impossible (CK_UNAVAILABLE_INFORMATION
    /// aside, longer than Pinion's limit or than the buffer given).
    case badLength(function: String, detail: String)
    /// The message is over `--pkcs11-max-message`; carries its size and the limit (bytes).
    case messageTooLarge(uri: String, size: Int, limit: Int)
    /// The token refused the message size itself (CKR_DATA_LEN_RANGE); carries its size.
    case tokenRefusedMessageSize(uri: String, size: Int)
    /// The signature the token returned does not verify under its public key (libsodium).
    case badSignature(uri: String)
    /// The token returned a signature that is not 64 bytes.
    case badSignatureLength(uri: String, length: Int)
    /// The PIN was refused (CKR_PIN_INCORRECT); the flags read afterwards. Pinion does not
    /// try again.
    case pinIncorrect(token: String, state: PKCS11PINState)
    /// The user PIN is locked (CKR_PIN_LOCKED or CKF_USER_PIN_LOCKED before any try).
    case pinLocked(token: String)
    /// No PIN could be obtained; carries why (source and reason).
    case pinUnavailable(token: String, reason: String)
    /// A key with this label already exists in the token (keygen refuses to add a second).
    case labelExists(token: String, label: String)
    /// The URI given to keygen names an object; the label comes from --label only.
    case keygenURINamesObject(uri: String)
    /// The module a URI names (`module-path=`, RFC 7512 §2.3) is not the one the command
    /// uses (--pkcs11-module, PINION_PKCS11_MODULE, or another URI's module-path).
    case moduleMismatch(uri: String, named: String, used: String)
    /// A `module-path=` that is not an absolute path (RFC 7512 §2.3 requires one).
    case relativeModulePath(uri: String, path: String)

    /// Whether the failure is the machine's or the device's (exit 3) rather than a refusal.
    public var isIOError: Bool {
        switch self {
        case .moduleLoad, .moduleBroken, .call, .deviceRemoved, .badLength: return true
        default: return false
        }
    }

    /// Whether the user named something wrong (exit 2).
    public var isUsageError: Bool {
        switch self {
        case .noModule, .noObjectInURI, .noToken, .ambiguousToken, .keyNotFound, .ambiguousKey, .notEd25519,
            .keygenURINamesObject, .labelExists, .pinUnavailable, .moduleMismatch, .relativeModulePath:
            return true
        default: return false
        }
    }

    /// A one-line message saying what failed and what to do.
    public var description: String {
        switch self {
        case .noModule:
            return
                "a PKCS#11 URI needs a module: give --pkcs11-module PATH, set PINION_PKCS11_MODULE, or add module-path=/ABSOLUTE/PATH to the URI"
        case .moduleMismatch(let uri, let named, let used):
            return "\(uri) names the module \(named), but this command uses \(used): give one module"
        case .relativeModulePath(let uri, let path):
            return "\(uri): module-path=\(path) is not an absolute path"
        case .moduleLoad(let path, let detail): return "cannot load the PKCS#11 module \(path): \(detail)"
        case .moduleBroken(let path, let detail): return "the PKCS#11 module \(path) is unusable: \(detail)"
        case .call(let function, let value): return "PKCS#11 \(function) failed: \(value)"
        case .deviceRemoved(let function, let value):
            return "the token went away during \(function) (\(value)); nothing was written"
        case .noToken(let uri, let present):
            let list = present.isEmpty ? "no token is present" : "tokens present: " + present.joined(separator: ", ")
            return "no token matches \(uri) (\(list))"
        case .ambiguousToken(let uri, let matches):
            return
                "\(matches.count) tokens match \(uri): \(matches.joined(separator: ", ")); add serial= to the URI to choose one"
        case .noObjectInURI(let uri): return "\(uri) names no key: add object=LABEL or id=%XX..."
        case .keyNotFound(let uri, let token, let keyClass):
            return "no \(keyClass) key matching \(uri) in token \(token) (pinion key list shows the keys)"
        case .ambiguousKey(let uri, let count): return "\(count) keys match \(uri): add id= to name one"
        case .notEd25519(let uri, let found):
            return
                "\(uri) is \(found), not an Ed25519 key: Pinion signs with Ed25519 (CKK_EC_EDWARDS, edwards25519) only"
        case .malformedPublicKey(let uri, let detail): return "\(uri): the token's public key is malformed: \(detail)"
        case .badLength(let function, let detail): return "PKCS#11 \(function) returned an impossible length: \(detail)"
        case .messageTooLarge(let uri, let size, let limit):
            return
                "the message to sign with \(uri) is \(size) bytes (the DSSE PAE of the payload) and --pkcs11-max-message is \(limit): Ed25519 sends the whole message to the token, and tokens cap it. Use a token with a higher limit (and raise --pkcs11-max-message), or a file key for this role (the pins role, for large manifests)"
        case .tokenRefusedMessageSize(let uri, let size):
            return
                "the token of \(uri) refused a \(size)-byte message (CKR_DATA_LEN_RANGE): lower --pkcs11-max-message to its limit, use a token with a higher limit, or a file key for this role"
        case .badSignature(let uri):
            return
                "the token of \(uri) returned a signature that does not verify under its public key; nothing was written"
        case .badSignatureLength(let uri, let length):
            return "the token of \(uri) returned a \(length)-byte signature (Ed25519 signatures are 64 bytes)"
        case .pinIncorrect(let token, let state):
            let flags = state.description
            return "wrong PIN for token \(token); not trying again" + (flags.isEmpty ? "" : ": " + flags)
        case .pinLocked(let token):
            return "the user PIN of token \(token) is LOCKED (CKF_USER_PIN_LOCKED): the security officer must unlock it"
        case .pinUnavailable(let token, let reason): return "no PIN for token \(token): \(reason)"
        case .labelExists(let token, let label):
            return "token \(token) already holds a key labelled \(label); choose another --label"
        case .keygenURINamesObject(let uri):
            return "\(uri) names an object; give the token only (pkcs11:token=...) and the key's label with --label"
        }
    }
}
