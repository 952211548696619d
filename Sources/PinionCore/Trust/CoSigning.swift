// Co-signing a DSSE envelope in turn: each key signs once, and a signature that does not verify
// under its key id is replaced rather than kept beside the new one (docs/DESIGN.md §3).

/// What adding one key's signature to an envelope did.
public enum CoSigningOutcome: Sendable, Equatable {
    /// A signature listed under the key id verifies: nothing was signed or added.
    case alreadySigned
    /// The key had no signature: the new one was appended.
    case appended
    /// Every signature listed under the key id failed verification (corrupted, or planted to
    /// block this signer): `count` of them were removed and the new one appended.
    case replacedInvalid(count: Int)
}

/// Why a signature could not be added.
public enum CoSigningError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The envelope already holds the most signatures an envelope may carry
    /// (`Limits.maxSignatures`); adding one would make it unreadable to every client.
    case signatureLimit(Int)

    public var description: String {
        switch self {
        case .signatureLimit(let limit): return "the envelope already has \(limit) signatures (the limit)"
        }
    }
}

extension Envelope {
    /// Adds the signature of one key over `signingInput` (DSSE v1 PAE), by the co-signing rule:
    /// a key whose signature already verifies is not signed with again; signatures listed under
    /// the key id that do not verify are removed before the new one is appended, so a planted
    /// or corrupted entry cannot block a signer or make the key appear twice. Signatures under
    /// other key ids are never touched, and the payload bytes never change.
    ///
    /// - Parameters:
    ///   - keyID: the key id of `publicKey` (64 lowercase hex, `Ed25519PublicKey.keyID`).
    ///   - publicKey: the signer's 32-byte Ed25519 public key, to verify its existing signatures.
    ///   - verifier: Ed25519 verification (RFC 8032, the client's strict rules).
    ///   - limits: `maxSignatures` caps the envelope's signatures.
    ///   - sign: makes the 64-byte signature over `signingInput`; called only when a signature
    ///     is added, after the limit was checked.
    /// - Returns: what was done.
    /// - Throws: `CoSigningError.signatureLimit` when the envelope is full (it is left with any
    ///   invalid signatures of the key removed), or what `sign` throws (likewise).
    public mutating func coSign(
        keyID: String, publicKey: [UInt8], verifier: any Ed25519Verifier, limits: Limits = .standard,
        sign: () throws -> [UInt8]
    ) throws -> CoSigningOutcome {
        let message = signingInput
        let existing = signatures.indices.filter { signatures[$0].keyID == keyID }
        let valid = existing.contains { index in
            verifier.isValidSignature(signatures[index].signature, of: message, publicKey: publicKey)
        }
        if valid { return .alreadySigned }
        for index in existing.reversed() { signatures.remove(at: index) }
        guard signatures.count < limits.maxSignatures else {
            throw CoSigningError.signatureLimit(limits.maxSignatures)
        }
        signatures.append(Signature(keyID: keyID, signature: try sign()))
        return existing.isEmpty ? .appended : .replacedInvalid(count: existing.count)
    }
}
