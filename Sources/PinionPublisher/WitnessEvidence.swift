// What a witness's latest checkpoint proves about the log, set against the publisher's own tree: a fork, an unpublished extension, or nothing.

import PinionCore
import PinionLog

/// The verdict on a checkpoint a witness holds, compared with the publisher's log. Only a
/// checkpoint that carries a valid signature by the log key is evidence: a witness's
/// status code or an unsigned note is not, since a hostile witness could forge either.
public enum WitnessCheckpointVerdict: Sendable, Equatable, CustomStringConvertible {
    /// The log key signed another tree at a size the publisher's log has (the witness's
    /// size, its root hash, and ours at that size): a fork of the publisher's log.
    case fork(size: UInt64, theirs: [UInt8], ours: [UInt8])
    /// The log key signed a tree larger than the published log that is not the publisher's
    /// pending checkpoint: entries the publisher never published. Whoever signed it holds
    /// the log key; treat the log key and the pins key as stolen.
    case unpublishedExtension(size: UInt64, published: UInt64)
    /// The witness holds the publisher's own pending checkpoint (a publish that stopped
    /// below the quorum): not a compromise; `pinion log refresh` completes it.
    case pendingPublish(size: UInt64)
    /// The witness's checkpoint is one of the publisher's trees (no conflict).
    case consistent(size: UInt64)
    /// Nothing verifiable: malformed, another origin, or no valid log signature. It counts
    /// against the witness, never as evidence about the log.
    case unverifiable(String)

    /// Whether the verdict is signed evidence that the log key signed a tree the publisher
    /// never published (a fork or an unpublished extension): a publish must stop.
    public var isEvidence: Bool {
        switch self {
        case .fork, .unpublishedExtension: return true
        case .pendingPublish, .consistent, .unverifiable: return false
        }
    }

    public var description: String {
        switch self {
        case .fork(let size, let theirs, let ours):
            return
                "a fork of ours: the log key signed another tree of size \(size) (root \(Base64.encode(theirs)), ours \(Base64.encode(ours)))"
        case .unpublishedExtension(let size, let published):
            return
                "an extension we never published: the log key signed size \(size), the published log has \(published) (likely stolen keys: the log key and the pins key)"
        case .pendingPublish(let size):
            return "our own pending checkpoint of size \(size) (a publish below the quorum: run pinion log refresh)"
        case .consistent(let size): return "consistent with our log at size \(size)"
        case .unverifiable(let reason): return "nothing we can verify (\(reason))"
        }
    }
}

/// Compares a witness's checkpoint note with the publisher's log (docs/DESIGN.md §12;
/// docs/TRANSPARENCY.md "Running a log"). Pure: the caller fetches the note (C2SP tlog-witness
/// `GET <prefix>/<origin hash>/checkpoint`) and reads the tiles.
public enum WitnessEvidence {
    /// The verdict on `note`.
    ///
    /// - Parameters:
    ///   - note: the witness's checkpoint note, as fetched (unverified).
    ///   - logKey: the log key the newest root lists (the note must carry its signature).
    ///   - published: the publisher's current (published) checkpoint, nil for a log not started.
    ///   - pending: the publisher's pending checkpoint (log-signed, not yet cosigned by a quorum), if any.
    ///   - ourRoot: the root hash of the publisher's tree at a size not above the published
    ///     size (computed from its tiles).
    ///   - crypto: Ed25519 and SHA-256.
    public static func verdict(
        note bytes: [UInt8], logKey: NoteVerifierKey, published: Checkpoint?, pending: Checkpoint?,
        ourRoot: (UInt64) throws -> [UInt8], crypto: CryptoProvider
    ) -> WitnessCheckpointVerdict {
        let note: SignedNote
        do { note = try SignedNote.parse(bytes) } catch { return .unverifiable("not a signed note: \(error)") }
        let signed: Bool
        do { signed = !(try note.verify(keys: [logKey], verifier: crypto.verifier)).isEmpty } catch {
            return .unverifiable("\(error)")
        }
        guard signed else { return .unverifiable("no valid signature by the log key \(logKey.name)") }
        let theirs: Checkpoint
        do { theirs = try Checkpoint.parse(note.text, hasher: MerkleHasher(crypto.hasher)) } catch {
            return .unverifiable("not a checkpoint: \(error)")
        }
        guard NoteText.equal(theirs.origin, logKey.name) else {
            return .unverifiable("another origin, \(theirs.origin)")
        }
        let size = published?.size ?? 0
        if theirs.size <= size {
            let ours: [UInt8]
            do { ours = try ourRoot(theirs.size) } catch {
                return .unverifiable("our tiles do not give the root at size \(theirs.size): \(error)")
            }
            return ours == theirs.rootHash
                ? .consistent(size: theirs.size) : .fork(size: theirs.size, theirs: theirs.rootHash, ours: ours)
        }
        if let pending, pending.size == theirs.size, pending.rootHash == theirs.rootHash {
            return .pendingPublish(size: theirs.size)
        }
        return .unpublishedExtension(size: theirs.size, published: size)
    }
}
