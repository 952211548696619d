// C2SP signed-note keys: key names, key IDs, verifier key strings (name+keyhash+base64), and the signer protocol.

/// Why a note, a verifier key or a note signature was refused (C2SP signed-note).
public enum NoteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// More bytes than the limit; carries the limit, in bytes.
    case tooLarge(limit: Int)
    /// Not valid UTF-8.
    case notUTF8
    /// An ASCII control character other than newline.
    case controlCharacter
    /// No blank line followed by signature lines, or text that does not end in a newline.
    case malformedNote(String)
    /// A signature line that is not `— <name> <base64>`; carries the line, 1-based in the signature block.
    case malformedSignatureLine(Int)
    /// More signature lines than the limit; carries the limit.
    case tooManySignatures(limit: Int)
    /// A key name that is empty or holds a space, a control character or `+`.
    case invalidKeyName(String)
    /// A verifier key string that is not `name+hex8+base64(type||key)`; carries the reason.
    case malformedVerifierKey(String)
    /// A verifier key of a type this build does not verify; carries the type byte.
    case unsupportedKeyType(UInt8)
    /// A signature line from a known key (name and key ID match) that does not verify: the
    /// whole note is refused (C2SP signed-note "Signatures").
    case badSignature(keyName: String)
    /// No signature by the expected key.
    case missingSignature(keyName: String)

    public var description: String {
        switch self {
        case .tooLarge(let limit): return "the note is larger than \(limit) bytes"
        case .notUTF8: return "the note is not valid UTF-8"
        case .controlCharacter: return "the note holds a control character other than newline"
        case .malformedNote(let reason): return "malformed note: \(reason)"
        case .malformedSignatureLine(let line): return "signature line \(line) is not '— <name> <base64>'"
        case .tooManySignatures(let limit): return "the note has more than \(limit) signature lines"
        case .invalidKeyName(let name):
            return "invalid key name '\(name)' (empty, or holds a space, a control character or '+')"
        case .malformedVerifierKey(let reason): return "malformed verifier key: \(reason)"
        case .unsupportedKeyType(let type): return "unsupported note key type 0x\(Hex.encode([type]))"
        case .badSignature(let name): return "the signature by \(name) does not verify"
        case .missingSignature(let name): return "the note is not signed by \(name)"
        }
    }
}

/// Signature type identifier bytes (C2SP signed-note "Signature types").
public enum NoteKeyType: UInt8, Sendable, Equatable {
    /// Ed25519 over the note text (RFC 8032).
    case ed25519 = 0x01
    /// Timestamped Ed25519 checkpoint cosignature (C2SP tlog-cosignature/v1).
    case cosignatureV1 = 0x04
}

/// The one comparison rule for the text of signed notes in both SDKs (key names, origins):
/// byte for byte over UTF-8, never Swift's `String ==`, which compares by canonical
/// equivalence (NFC and NFD forms, KELVIN SIGN and `K`, are `==` there, but not in Java).
public enum NoteText {
    /// Whether `a` and `b` have the same UTF-8 bytes.
    public static func equal(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }
}

/// A note verifier key: key name, key type and 32-byte Ed25519 public key, with its key ID
/// SHA-256(name || 0x0A || type || public key)[:4] (C2SP signed-note, tlog-cosignature).
/// Two keys are equal when their names have the same UTF-8 bytes (`NoteText.equal`), and
/// their types and public keys are equal.
public struct NoteVerifierKey: Sendable, Equatable, Hashable {
    /// The key name (for a log, normally its origin).
    public let name: String
    /// The signature type the key verifies.
    public let type: NoteKeyType
    /// The raw Ed25519 public key, 32 bytes.
    public let publicKey: [UInt8]
    /// The 4-byte key ID, big-endian.
    public let keyID: UInt32

    /// - Parameters:
    ///   - name: a key name: non-empty, no Unicode spaces, no `+`.
    ///   - type: the signature type.
    ///   - publicKey: the 32-byte Ed25519 public key.
    ///   - hasher: SHA-256, for the key ID.
    /// - Throws: `NoteError.invalidKeyName`, `.malformedVerifierKey` for a key that is not 32 bytes.
    public init(name: String, type: NoteKeyType, publicKey: [UInt8], hasher: any SHA256Hasher) throws(NoteError) {
        try NoteVerifierKey.validateName(name)
        guard publicKey.count == 32 else { throw .malformedVerifierKey("an Ed25519 key is 32 bytes") }
        self.name = name
        self.type = type
        self.publicKey = publicKey
        self.keyID = NoteVerifierKey.keyID(name: name, type: type.rawValue, key: publicKey, hasher: hasher)
    }

    /// Parses a verifier key string `<name>+<hex key ID>+<base64(type || public key)>`, and
    /// refuses one whose key ID is not the one its name, type and key give.
    ///
    /// - Throws: `NoteError.malformedVerifierKey`, `.invalidKeyName`, `.unsupportedKeyType`.
    public init(parsing text: String, hasher: any SHA256Hasher) throws(NoteError) {
        // The name holds no '+' and the key hash is hex, but base64 may hold '+': split twice.
        let parts = text.split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else { throw .malformedVerifierKey("expected name+keyhash+key") }
        guard parts[1].utf8.count == 8, let idBytes = Hex.decodeLowercase(parts[1]) else {
            throw .malformedVerifierKey("the key hash is not 8 lowercase hex digits")
        }
        guard let material = Base64.decodeCanonical(parts[2]), let typeByte = material.first else {
            throw .malformedVerifierKey("the key is not canonical base64")
        }
        guard let type = NoteKeyType(rawValue: typeByte) else { throw .unsupportedKeyType(typeByte) }
        try self.init(name: parts[0], type: type, publicKey: Array(material.dropFirst()), hasher: hasher)
        guard keyID == idBytes.reduce(0, { $0 << 8 | UInt32($1) }) else {
            throw .malformedVerifierKey("the key hash does not match the name and key")
        }
    }

    /// The verifier key string, `<name>+<hex key ID>+<base64(type || public key)>`.
    public var text: String {
        name + "+" + Hex.encode(NoteVerifierKey.bigEndian(keyID)) + "+" + Base64.encode([type.rawValue] + publicKey)
    }

    /// Checks a key name: non-empty, no Unicode white space, no `+` (C2SP signed-note), and no
    /// control character: a name is printed and pasted, and a control character would make the
    /// printed key string differ from the one its key ID was computed over.
    ///
    /// - Throws: `NoteError.invalidKeyName`.
    public static func validateName(_ name: String) throws(NoteError) {
        guard !name.isEmpty, !name.contains("+"),
            !name.unicodeScalars.contains(where: {
                $0.properties.isWhitespace || $0.properties.generalCategory == .control
            })
        else { throw .invalidKeyName(name) }
    }

    /// SHA-256(name || 0x0A || type || key)[:4] as a big-endian integer (C2SP signed-note key ID).
    public static func keyID(name: String, type: UInt8, key: [UInt8], hasher: any SHA256Hasher) -> UInt32 {
        let digest = hasher.sha256(Array(name.utf8) + [0x0A, type] + key)
        return digest.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    public static func == (lhs: NoteVerifierKey, rhs: NoteVerifierKey) -> Bool {
        NoteText.equal(lhs.name, rhs.name) && lhs.type == rhs.type && lhs.publicKey == rhs.publicKey
            && lhs.keyID == rhs.keyID
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(Array(name.utf8))
        hasher.combine(type)
        hasher.combine(publicKey)
    }

    /// The 4 bytes of `value`, big-endian (key IDs in signature lines).
    public static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

/// Signs note messages with an Ed25519 key the caller holds (PinionCrypto's `Ed25519SecretKey`
/// or a hardware key); the pure code only sees the public key and the signatures.
public protocol NoteSigner {
    /// The raw 32-byte Ed25519 public key.
    var publicKey: [UInt8] { get }
    /// - Parameter message: the bytes to sign.
    /// - Returns: the 64-byte Ed25519 signature (RFC 8032).
    /// - Throws: the signer's own error.
    func sign(_ message: [UInt8]) throws -> [UInt8]
}
