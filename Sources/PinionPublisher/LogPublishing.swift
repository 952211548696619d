// The publisher's log steps as pure functions: append heads, sign the checkpoint, ask witnesses, merge cosignatures, build manifest.proof.

import PinionCore
import PinionLog
import PinionLogWriter

/// Why a publishing step was refused.
public enum LogPublishingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A head's sequence is not the index it would get in the log.
    case sequenceGap(expected: Int64, got: Int64)
    /// Nothing to append.
    case noHeads
    /// The stored tiles do not give the current checkpoint's root hash: refuse to extend them.
    case tilesDisagreeWithCheckpoint

    public var description: String {
        switch self {
        case .sequenceGap(let expected, let got): return "the next head must have sequence \(expected), got \(got)"
        case .noHeads: return "no head records to append"
        case .tilesDisagreeWithCheckpoint: return "the log's tiles do not match its current checkpoint"
        }
    }
}

/// The result of appending heads: files to write, then the log-signed checkpoint to take
/// to the witnesses.
public struct LogAppend: Sendable {
    /// New tile and bundle files; write them (they never replace an existing file's content)
    /// before anything else.
    public let writes: [TileWrite]
    /// The new checkpoint and its note, signed by the log key only.
    public let checkpoint: Checkpoint
    /// The checkpoint note with the log's signature only.
    public let note: SignedNote
    /// The size before the append (the witnesses' expected old size).
    public let oldSize: UInt64
    /// The consistency proof from `oldSize` (empty when it is 0).
    public let consistencyProof: [[UInt8]]
    /// The last appended head and its inclusion proof in the new tree.
    public let lastHead: HeadRecord
    /// Inclusion proof of `lastHead` at index size - 1 (32-byte hashes).
    public let lastInclusionProof: [[UInt8]]

    /// The tlog-witness add-checkpoint body from `oldSize`.
    public var addCheckpointBody: [UInt8] {
        AddCheckpointRequest(oldSize: oldSize, consistencyProof: consistencyProof, note: note).bytes
    }
}

/// The publisher's log operations (docs/DESIGN.md §12, "Publishing with a log"). They do no I/O:
/// the caller reads tiles through a `TileReader`, writes `LogAppend.writes`, posts bodies to
/// witnesses, and writes `checkpoint` and `manifest.proof` once a quorum cosigned.
public enum LogPublishing {
    /// Appends heads (one per publish step, or all earlier steps when backfilling) to the
    /// log whose current checkpoint is `current` (nil for a new log), and signs the new
    /// checkpoint. O(log n) per head in hashing and in files read and written.
    ///
    /// - Parameters:
    ///   - heads: the heads, in order; the first has sequence `current.size`.
    ///   - current: the current (cosigned) checkpoint, or nil for an empty log.
    ///   - reader: the log's stored tiles.
    ///   - origin: the log's origin (also the log key's name).
    ///   - logSigner: the log key.
    ///   - crypto: SHA-256 (and Ed25519 verification).
    /// - Throws: `LogPublishingError`, `TileError` for missing or malformed tiles, the signer's error.
    public static func append(
        heads: [HeadRecord], current: Checkpoint?, reader: any TileReader, origin: String, logSigner: some NoteSigner,
        crypto: CryptoProvider
    ) throws -> LogAppend {
        let hasher = MerkleHasher(crypto.hasher)
        guard let lastHead = heads.last else { throw LogPublishingError.noHeads }
        let oldSize = current?.size ?? 0
        var appender = try TileLogAppender(size: oldSize, reader: reader, hasher: hasher)
        guard appender.rootHash == (current?.rootHash ?? hasher.emptyRoot) else {
            throw LogPublishingError.tilesDisagreeWithCheckpoint
        }
        for head in heads {
            guard head.sequence >= 0, UInt64(head.sequence) == appender.size else {
                throw LogPublishingError.sequenceGap(expected: Int64(appender.size), got: head.sequence)
            }
            try appender.append(head.bytes)
        }
        let writes = appender.writes
        let checkpoint = try Checkpoint(origin: origin, size: appender.size, rootHash: appender.rootHash)
        let signature = try SignedNote.sign(
            text: checkpoint.text, keyName: origin, signer: logSigner, hasher: crypto.hasher)
        let source = TileHashSource(
            treeSize: appender.size, reader: OverlayTileReader(writes: writes, base: reader), hasher: hasher)
        return LogAppend(
            writes: writes, checkpoint: checkpoint, note: SignedNote(text: checkpoint.text, signatures: [signature]),
            oldSize: oldSize,
            consistencyProof: try MerkleProofs.consistencyProof(
                oldSize: oldSize, newSize: appender.size, source: source, hasher: hasher),
            lastHead: lastHead,
            lastInclusionProof: try MerkleProofs.inclusionProof(
                index: appender.size - 1, size: appender.size, source: source, hasher: hasher))
    }

    /// The add-checkpoint body for a witness that answered 409 with its own size: a
    /// consistency proof from that size (or an empty one to re-cosign the same size).
    ///
    /// - Throws: `MerkleError` when `witnessSize` is above the checkpoint's size; tile errors.
    public static func addCheckpointBody(
        note: SignedNote, checkpoint: Checkpoint, fromWitnessSize witnessSize: UInt64, reader: any TileReader,
        hasher: MerkleHasher
    ) throws -> [UInt8] {
        let source = TileHashSource(treeSize: checkpoint.size, reader: reader, hasher: hasher)
        let proof = try MerkleProofs.consistencyProof(
            oldSize: witnessSize, newSize: checkpoint.size, source: source, hasher: hasher)
        return AddCheckpointRequest(oldSize: witnessSize, consistencyProof: proof, note: note).bytes
    }

    /// Adds witnesses' 200 response bodies to the log-signed note, keeping only valid
    /// cosignatures by the listed witness that answered (and dropping cosignatures the note
    /// already had from a previous round, so `log refresh` replaces them with fresh ones).
    ///
    /// - Parameters:
    ///   - note: the checkpoint note as signed by the log (other signatures are dropped).
    ///   - logKey: the log's verifier key.
    ///   - responses: each answering witness with its response body.
    ///   - crypto: Ed25519 verification.
    /// - Returns: the cosigned note and the names of the witnesses whose cosignature was kept.
    public static func mergeCosignatures(
        note: SignedNote, logKey: NoteVerifierKey, responses: [(witness: LogPolicy.Witness, body: [UInt8])],
        crypto: CryptoProvider
    ) -> (note: SignedNote, cosigners: [String]) {
        var signatures = note.signatures.filter { NoteText.equal($0.keyName, logKey.name) && $0.keyID == logKey.keyID }
        var cosigners = [String]()
        for (witness, body) in responses where !cosigners.contains(witness.name) {
            guard let lines = try? SignedNote.parseSignatureLines(body) else { continue }
            for line in lines where NoteText.equal(line.keyName, witness.key.name) && line.keyID == witness.key.keyID {
                let single = SignedNote(text: note.text, signatures: [line])
                if let valid = try? single.verify(keys: [witness.key], verifier: crypto.verifier), !valid.isEmpty {
                    signatures.append(line)
                    cosigners.append(witness.name)
                    break
                }
            }
        }
        return (SignedNote(text: note.text, signatures: signatures), cosigners)
    }

    /// manifest.proof for the last head of a cosigned checkpoint.
    ///
    /// - Parameters:
    ///   - cosigned: the checkpoint note with the log signature and the witnesses' cosignatures.
    ///   - append: the append it is for (its last head and inclusion proof).
    public static func manifestProof(cosigned: SignedNote, append: LogAppend) -> TlogProof {
        TlogProof(
            extra: append.lastHead.bytes, index: append.checkpoint.size - 1, inclusionProof: append.lastInclusionProof,
            checkpointNote: cosigned)
    }

    /// The add-checkpoint body that asks a witness to re-cosign the current checkpoint
    /// (`log refresh` when nothing was published, and publish's first step): old size =
    /// size, no proof.
    public static func reCosignBody(note: SignedNote, checkpoint: Checkpoint) -> [UInt8] {
        AddCheckpointRequest(oldSize: checkpoint.size, consistencyProof: [], note: note).bytes
    }

    /// manifest.proof for the last entry of the stored log, read from its tiles (for
    /// `log refresh`, which re-cosigns without appending).
    ///
    /// - Parameters:
    ///   - cosigned: the freshly cosigned note of `checkpoint`.
    ///   - checkpoint: the current checkpoint (size > 0).
    ///   - reader: the stored tiles.
    ///   - hasher: the Merkle hasher.
    /// - Throws: `MerkleError` for an empty log, `TileError` for missing or malformed tiles,
    ///   `HeadRecordError` when the last entry is not a head record.
    public static func lastEntryProof(
        cosigned: SignedNote, checkpoint: Checkpoint, reader: any TileReader, hasher: MerkleHasher
    ) throws -> TlogProof {
        guard checkpoint.size > 0 else { throw MerkleError.indexOutOfRange(index: 0, size: 0) }
        let index = checkpoint.size - 1
        let width = Int(index % 256) + 1
        let bundle = try TileID(entriesIndex: index / 256, width: width)
        let entries = try TileCodec.decodeEntryBundle(try reader.readTile(bundle), tile: bundle)
        let head = try HeadRecord.parse(entries[width - 1])
        let source = TileHashSource(treeSize: checkpoint.size, reader: reader, hasher: hasher)
        let proof = try MerkleProofs.inclusionProof(index: index, size: checkpoint.size, source: source, hasher: hasher)
        try MerkleProofs.verifyInclusion(
            leafHash: hasher.leafHash(head.bytes), index: index, size: checkpoint.size, proof: proof,
            root: checkpoint.rootHash, hasher: hasher)
        return TlogProof(extra: head.bytes, index: index, inclusionProof: proof, checkpointNote: cosigned)
    }
}
