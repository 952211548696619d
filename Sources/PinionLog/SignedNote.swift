// C2SP signed notes: strict parsing with limits, verification by key name + key ID, Ed25519 and cosignature/v1 signing.

import PinionCore

/// Limits applied while reading a note.
public struct NoteLimits: Sendable, Equatable {
    /// Largest note, in bytes (default 16 KiB: a checkpoint with 32 Ed25519 signatures is under 6 KiB).
    public var maxBytes: Int
    /// Most signature lines (default 32; the spec asks verifiers to accept at least 16).
    public var maxSignatures: Int

    /// - Parameters:
    ///   - maxBytes: largest note, in bytes.
    ///   - maxSignatures: most signature lines.
    public init(maxBytes: Int = 16 * 1024, maxSignatures: Int = 32) {
        self.maxBytes = maxBytes
        self.maxSignatures = maxSignatures
    }

    /// The defaults.
    public static let standard = NoteLimits()
}

/// One signature line: `— <key name> base64(key ID || signature)`. Equal when the names
/// have the same UTF-8 bytes (`NoteText.equal`) and the key IDs and signatures are equal.
public struct NoteSignature: Sendable, Equatable, Hashable {
    /// The signing key's name.
    public let keyName: String
    /// The 4-byte key ID, big-endian.
    public let keyID: UInt32
    /// The signature bytes after the key ID (64 for Ed25519, 72 for a cosignature/v1).
    public let signature: [UInt8]

    /// A signature line's parts (the key name is not checked here).
    public init(keyName: String, keyID: UInt32, signature: [UInt8]) {
        self.keyName = keyName
        self.keyID = keyID
        self.signature = signature
    }

    public static func == (lhs: NoteSignature, rhs: NoteSignature) -> Bool {
        NoteText.equal(lhs.keyName, rhs.keyName) && lhs.keyID == rhs.keyID && lhs.signature == rhs.signature
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(Array(keyName.utf8))
        hasher.combine(keyID)
        hasher.combine(signature)
    }

    /// The line, with its final newline.
    public var line: String {
        "\u{2014} " + keyName + " " + Base64.encode(NoteVerifierKey.bigEndian(keyID) + signature) + "\n"
    }
}

/// A signature that verified, with the cosignature's timestamp when it is one.
public struct VerifiedNoteSignature: Sendable, Equatable {
    /// The key that verified it.
    public let key: NoteVerifierKey
    /// For a cosignature/v1: its POSIX timestamp, in seconds; nil for an Ed25519 (0x01) signature.
    public let timestamp: UInt64?

    /// A verified signature by `key`, with the cosignature time if any.
    public init(key: NoteVerifierKey, timestamp: UInt64?) {
        self.key = key
        self.timestamp = timestamp
    }
}

/// A signed note (C2SP signed-note): text ending in a newline, a blank line, signature lines.
/// Equal when the texts have the same UTF-8 bytes and the signature lines are equal.
public struct SignedNote: Sendable, Equatable {
    /// The note text, including its final newline (the signed bytes for type 0x01).
    public let text: String
    /// The signature lines, in note order (unverified until `verify`).
    public let signatures: [NoteSignature]

    /// A note from its text (ending in a newline) and signature lines.
    public init(text: String, signatures: [NoteSignature]) {
        self.text = text
        self.signatures = signatures
    }

    public static func == (lhs: SignedNote, rhs: SignedNote) -> Bool {
        NoteText.equal(lhs.text, rhs.text) && lhs.signatures == rhs.signatures
    }

    /// The note's bytes: text, blank line, signature lines.
    public var bytes: [UInt8] { Array((text + "\n" + signatures.map(\.line).joined()).utf8) }

    /// Parses a note strictly: size and signature-count limits first, valid UTF-8, no
    /// control characters but newline, the text separated from the signatures by the last
    /// blank line, every signature line well formed with at least 4 + 1 bytes of signature.
    /// Lines are split on U+000A bytes only and signature lines parsed as bytes (the same
    /// rule as the Java SDK's `SignedNote`): no grapheme clustering, no Unicode line
    /// separators, no normalization.
    ///
    /// - Throws: `NoteError`.
    public static func parse(_ bytes: [UInt8], limits: NoteLimits = .standard) throws(NoteError) -> SignedNote {
        guard bytes.count <= limits.maxBytes else { throw .tooLarge(limit: limits.maxBytes) }
        guard !bytes.contains(where: { $0 < 0x20 && $0 != 0x0A }) else { throw .controlCharacter }
        guard String(validating: bytes, as: UTF8.self) != nil else { throw .notUTF8 }
        guard bytes.last == 0x0A else { throw .malformedNote("does not end in a newline") }
        let utf8 = bytes
        // The last "\n\n": the text ends at its first newline, the signatures start after it.
        var split: Int? = nil
        var index = utf8.count - 2
        while index >= 0 {
            if utf8[index] == 0x0A && utf8[index + 1] == 0x0A {
                split = index
                break
            }
            index -= 1
        }
        guard let separator = split else { throw .malformedNote("no blank line before the signatures") }
        let text = String(decoding: utf8[0...separator], as: UTF8.self)
        guard separator > 0 else { throw .malformedNote("empty text") }
        let block = utf8[(separator + 2)...]
        let lines = block.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast()
        guard !lines.isEmpty else { throw .malformedNote("no signature lines") }
        guard lines.count <= limits.maxSignatures else { throw .tooManySignatures(limit: limits.maxSignatures) }
        var signatures = [NoteSignature]()
        for (number, line) in lines.enumerated() {
            signatures.append(try parseSignatureLine(line, number: number + 1))
        }
        return SignedNote(text: text, signatures: signatures)
    }

    /// Parses signature lines alone (a tlog-witness add-checkpoint response body).
    ///
    /// - Throws: `NoteError.malformedSignatureLine`, `.tooManySignatures`, `.tooLarge`.
    public static func parseSignatureLines(_ bytes: [UInt8], limits: NoteLimits = .standard) throws(NoteError)
        -> [NoteSignature]
    {
        guard bytes.count <= limits.maxBytes else { throw .tooLarge(limit: limits.maxBytes) }
        guard String(validating: bytes, as: UTF8.self) != nil else { throw .notUTF8 }
        guard bytes.last == 0x0A else { throw .malformedSignatureLine(1) }
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast()
        guard lines.count <= limits.maxSignatures else { throw .tooManySignatures(limit: limits.maxSignatures) }
        var signatures = [NoteSignature]()
        for (number, line) in lines.enumerated() {
            signatures.append(try parseSignatureLine(line, number: number + 1))
        }
        return signatures
    }

    /// `— ` (U+2014 U+0020, bytes E2 80 94 20): the start of every signature line.
    private static let signaturePrefix: [UInt8] = [0xE2, 0x80, 0x94, 0x20]

    /// One signature line (without its newline), as bytes: the prefix, the name, one space
    /// (0x20), the base64 key ID and signature.
    private static func parseSignatureLine(_ line: ArraySlice<UInt8>, number: Int) throws(NoteError)
        -> NoteSignature
    {
        guard line.starts(with: signaturePrefix) else { throw .malformedSignatureLine(number) }
        let parts = line.dropFirst(signaturePrefix.count).split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 2, let name = String(validating: parts[0], as: UTF8.self),
            let encoded = String(validating: parts[1], as: UTF8.self)
        else { throw .malformedSignatureLine(number) }
        do { try NoteVerifierKey.validateName(name) } catch { throw .malformedSignatureLine(number) }
        guard let raw = Base64.decodeCanonical(encoded), raw.count >= 5 else {
            throw .malformedSignatureLine(number)
        }
        let keyID = raw.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return NoteSignature(keyName: name, keyID: keyID, signature: Array(raw.dropFirst(4)))
    }

    /// Verifies the signatures by the given keys, ignoring signatures from other keys.
    ///
    /// A signature whose key name and key ID both match a known key must verify, or the whole
    /// note is refused. The same key's signature is reported once (the first) even if repeated.
    ///
    /// - Parameters:
    ///   - keys: the known keys.
    ///   - verifier: strict Ed25519 verification.
    /// - Returns: the verified signatures, in note order, one per key.
    /// - Throws: `NoteError.badSignature` naming the key.
    public func verify(keys: [NoteVerifierKey], verifier: any Ed25519Verifier) throws(NoteError)
        -> [VerifiedNoteSignature]
    {
        var verified = [VerifiedNoteSignature]()
        for signature in signatures {
            for key in keys where NoteText.equal(key.name, signature.keyName) && key.keyID == signature.keyID {
                let result = try SignedNote.check(signature, text: text, key: key, verifier: verifier)
                if !verified.contains(where: { $0.key == key }) { verified.append(result) }
            }
        }
        return verified
    }

    private static func check(
        _ signature: NoteSignature, text: String, key: NoteVerifierKey, verifier: any Ed25519Verifier
    )
        throws(NoteError) -> VerifiedNoteSignature
    {
        switch key.type {
        case .ed25519:
            guard signature.signature.count == 64,
                verifier.isValidSignature(signature.signature, of: Array(text.utf8), publicKey: key.publicKey)
            else { throw .badSignature(keyName: key.name) }
            return VerifiedNoteSignature(key: key, timestamp: nil)
        case .cosignatureV1:
            guard signature.signature.count == 72 else { throw .badSignature(keyName: key.name) }
            let timestamp = signature.signature.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard timestamp <= UInt64(Int64.max),
                verifier.isValidSignature(
                    Array(signature.signature.dropFirst(8)), of: Cosignature.message(text: text, timestamp: timestamp),
                    publicKey: key.publicKey)
            else { throw .badSignature(keyName: key.name) }
            return VerifiedNoteSignature(key: key, timestamp: timestamp)
        }
    }

    /// Signs note text with an Ed25519 (type 0x01) key.
    ///
    /// - Parameters:
    ///   - text: the note text, ending in a newline.
    ///   - keyName: the key's name.
    ///   - signer: the key.
    ///   - hasher: SHA-256, for the key ID.
    /// - Returns: the signature line's contents.
    /// - Throws: `NoteError.malformedNote` for text not ending in a newline, `.invalidKeyName`, the signer's error.
    public static func sign(text: String, keyName: String, signer: some NoteSigner, hasher: any SHA256Hasher)
        throws -> NoteSignature
    {
        guard text.hasSuffix("\n") else { throw NoteError.malformedNote("does not end in a newline") }
        let key = try NoteVerifierKey(name: keyName, type: .ed25519, publicKey: signer.publicKey, hasher: hasher)
        return NoteSignature(keyName: keyName, keyID: key.keyID, signature: try signer.sign(Array(text.utf8)))
    }
}

/// C2SP tlog-cosignature/v1: timestamped Ed25519 cosignatures (signature type 0x04).
public enum Cosignature {
    /// The signed message: `cosignature/v1\ntime <timestamp>\n` then the checkpoint's note text.
    ///
    /// - Parameters:
    ///   - text: the cosigned note's text, with its final newline.
    ///   - timestamp: POSIX seconds.
    public static func message(text: String, timestamp: UInt64) -> [UInt8] {
        Array("cosignature/v1\ntime \(timestamp)\n\(text)".utf8)
    }

    /// Cosigns note text at `timestamp`.
    ///
    /// - Parameters:
    ///   - text: the checkpoint note text.
    ///   - keyName: the cosigner's name.
    ///   - timestamp: POSIX seconds, at most 2^63 - 1.
    ///   - signer: the cosigner's key.
    ///   - hasher: SHA-256, for the key ID.
    /// - Returns: the signature: key ID, then 8-byte big-endian timestamp || 64-byte signature.
    /// - Throws: `NoteError.malformedNote` for a timestamp above 2^63 - 1 or text without a final
    ///   newline, `.invalidKeyName`, the signer's error.
    public static func sign(
        text: String, keyName: String, timestamp: UInt64, signer: some NoteSigner, hasher: any SHA256Hasher
    ) throws -> NoteSignature {
        guard timestamp <= UInt64(Int64.max) else { throw NoteError.malformedNote("timestamp above 2^63 - 1") }
        guard text.hasSuffix("\n") else { throw NoteError.malformedNote("does not end in a newline") }
        let key = try NoteVerifierKey(name: keyName, type: .cosignatureV1, publicKey: signer.publicKey, hasher: hasher)
        let stamp = (0..<8).map { UInt8(timestamp >> UInt64(56 - 8 * $0) & 0xFF) }
        let signature = try signer.sign(message(text: text, timestamp: timestamp))
        return NoteSignature(keyName: keyName, keyID: key.keyID, signature: stamp + signature)
    }
}
