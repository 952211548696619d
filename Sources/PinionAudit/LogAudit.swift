// The auditor's transparency-log checks (docs/DESIGN.md §12): heads from the documents, tiles, checkpoint signatures, manifest.proof.

import PinionCore
import PinionLog
import PinionTrust

/// Reads the log's tiles from the tree; a missing tile is `TileError.missingTile`, any other
/// failure is carried as `TreeSourceError` (I/O ends the audit, the rest are findings).
struct SourceTileReader: TileReader {
    let source: any TreeSource

    /// Largest tile read: a full entry bundle of head records (each at most 512 bytes
    /// plus its 2-byte length), which is larger than a full hash tile (8,192 bytes).
    static let limit = TileID.fullWidth * (2 + HeadRecord.maxBytes)

    func readTile(_ tile: TileID) throws -> [UInt8] {
        guard let bytes = try source.read(.logTile(tile), limit: Self.limit) else {
            throw TileError.missingTile(tile.path)
        }
        return bytes
    }
}

extension AuditRun {
    /// The `log` member of the newest usable root (the given root when the tree has none).
    var logPolicy: LogPolicy? {
        guard let newest = roots.keys.max(), let root = roots[newest] else { return anchor.newest.payload.log }
        return root.payload.log
    }

    /// Runs every log check when the newest root has a `log` member.
    mutating func auditLog() throws(AuditError) {
        guard let policy = logPolicy else { return }
        var summary = LogAuditSummary(origin: policy.origin)
        defer { report.log = summary }
        let hasher = MerkleHasher(crypto.hasher)
        let expected = expectedHeads()
        summary.expectedHeads = expected.count

        guard let (note, checkpoint) = try readCheckpoint(policy: policy, hasher: hasher) else {
            for (position, head) in expected.enumerated() {
                violation(
                    .logDocumentNotLogged, head.manifestVersion, .index,
                    "index.json lists version \(head.manifestVersion) at position \(position), but the log has no readable checkpoint"
                )
            }
            return
        }
        summary.checkpoint = checkpoint
        summary.checkpointNote = note.bytes
        let signed = checkSignatures(note: note, policy: policy, summary: &summary)
        let tilesHold = try checkTiles(checkpoint: checkpoint, expected: expected, hasher: hasher, summary: &summary)
        summary.checkpointVerified = signed && tilesHold
        try checkProof(policy: policy, checkpoint: checkpoint)
        if let since = options.since {
            checkSince(since, policy: policy, checkpoint: checkpoint, hasher: hasher, summary: &summary)
        }
        for witness in policy.witnesses {
            summary.witnesses.append(
                checkWitness(
                    witness, policy: policy, checkpoint: checkpoint, cosigners: summary.cosigners,
                    tilesHold: tilesHold, hasher: hasher))
        }
    }

    // MARK: - Heads from the documents

    /// One head per index.json manifest entry, in order (as `pinion publish` appends them):
    /// sequence = the entry's position, root = the newest root index.json lists with a
    /// sequence number not above the entry's (an absent number counts as 0), manifest = the
    /// entry. An entry with no such root is reported and ends the list (later heads could
    /// not be placed).
    mutating func expectedHeads() -> [HeadRecord] {
        guard let index else { return [] }
        var heads: [HeadRecord] = []
        for (position, entry) in index.manifests.enumerated() {
            let step = entry.sequence ?? 0
            guard
                let root = index.roots.filter({ ($0.sequence ?? 0) <= step }).max(by: { $0.version < $1.version })
            else {
                violation(
                    .logDocumentNotLogged, entry.version, .index,
                    "the head of position \(position) cannot be recomputed: index.json lists no root published at or before the step of version \(entry.version)"
                )
                return heads
            }
            do {
                heads.append(
                    try HeadRecord(
                        scope: report.scope, sequence: Int64(position), rootVersion: root.version,
                        rootPayloadSHA256: root.payloadSHA256, manifestRootVersion: entry.rootVersion,
                        manifestVersion: entry.version, manifestPayloadSHA256: entry.payloadSHA256))
            } catch {
                violation(
                    .logDocumentNotLogged, entry.version, .index,
                    "the head of position \(position) cannot be recomputed: \(error)")
                return heads
            }
        }
        return heads
    }

    // MARK: - The checkpoint

    /// Reads and parses `log/checkpoint`; nil after reporting why it is unusable.
    mutating func readCheckpoint(policy: LogPolicy, hasher: MerkleHasher) throws(AuditError) -> (
        SignedNote, Checkpoint
    )? {
        let file = TreeFile.logCheckpoint
        let bytes: [UInt8]
        switch try read(file, limit: NoteLimits.standard.maxBytes, version: nil) {
        case .bytes(let read): bytes = read
        case .absent:
            violation(.logCheckpoint, nil, file, "missing, but the newest root has a log (origin \(policy.origin))")
            return nil
        case .refused: return nil
        }
        let note: SignedNote
        let checkpoint: Checkpoint
        do { note = try SignedNote.parse(bytes) } catch {
            violation(.logCheckpoint, nil, file, "not a signed note: \(error)")
            return nil
        }
        do { checkpoint = try Checkpoint.parse(note.text, hasher: hasher) } catch {
            violation(.logCheckpoint, nil, file, error.description)
            return nil
        }
        guard checkpoint.origin == policy.origin else {
            violation(
                .logCheckpoint, nil, file,
                "is for origin \"\(checkpoint.origin)\", the root's log is \"\(policy.origin)\"")
            return nil
        }
        return (note, checkpoint)
    }

    /// The log signature and the cosignatures (quorum, t_q, freshness).
    ///
    /// - Returns: true when the log signature verifies and a quorum of listed witnesses cosigned.
    mutating func checkSignatures(note: SignedNote, policy: LogPolicy, summary: inout LogAuditSummary) -> Bool {
        let file = TreeFile.logCheckpoint
        var signed = false
        do {
            signed = !(try note.verify(keys: [policy.logKey], verifier: crypto.verifier)).isEmpty
            if !signed {
                violation(.logSignature, nil, file, "carries no signature by the log key \(policy.logKey.name)")
            }
        } catch {
            violation(.logSignature, nil, file, "the log key's signature does not verify")
        }
        var times: [(name: String, time: Int64)] = []
        for witness in policy.witnesses {
            do {
                if let time = try note.verify(keys: [witness.key], verifier: crypto.verifier).first?.timestamp {
                    times.append((witness.name, Int64(clamping: time)))
                }
            } catch {
                violation(.logCosignature, nil, file, "witness \(witness.name)'s cosignature does not verify")
            }
        }
        summary.cosigners = times.map(\.name)
        let futureLimit = options.at.secondsSince1970.addingReportingOverflow(LogFreshness.allowedFutureSkew)
            .partialValue
        for (name, time) in times where time > futureLimit {
            warning(
                .logCosignatureFuture, nil, file.path,
                "witness \(name)'s cosignature is dated \(time - options.at.secondsSince1970) s after the audit time (more than \(LogFreshness.allowedFutureSkew) s): its clock is wrong; clients report futureCosignatures and count t_q's age as 0 only once"
            )
        }
        guard times.count >= policy.quorum else {
            violation(
                .logQuorum, nil, file,
                "\(times.count) valid cosignature(s) by distinct listed witnesses, the root requires \(policy.quorum)")
            return false
        }
        let quorumTime = times.map(\.time).sorted(by: >)[policy.quorum - 1]
        let freshness = LogFreshness.evaluate(
            quorumTime: quorumTime, now: options.at.secondsSince1970, policy: policy)
        summary.quorumTime = quorumTime
        summary.freshness = freshness
        switch freshness {
        case .stale(let age):
            warning(
                .logCheckpointStale, nil, file.path,
                "t_q is \(age) s old, past maxCheckpointAge \(policy.maxCheckpointAge) s: clients raise staleCheckpoint (run pinion log refresh)"
            )
        case .expired(let age):
            violation(
                .logCheckpointExpired, nil, file,
                "t_q is \(age) s old, past maxCheckpointAge + checkpointGrace (\(policy.maxCheckpointAge) + \(policy.checkpointGrace) s): clients treat the manifest as expired"
            )
        case .unchecked, .fresh: break
        }
        return signed
    }

    // MARK: - Tiles and heads

    /// Rechecks every tile against the checkpoint and every entry against the head
    /// recomputed from the documents.
    ///
    /// - Returns: true when the tiles reproduce the checkpoint.
    mutating func checkTiles(
        checkpoint: Checkpoint, expected: [HeadRecord], hasher: MerkleHasher, summary: inout LogAuditSummary
    ) throws(AuditError) -> Bool {
        var mismatches: [(UInt64, String)] = []
        do {
            try TileAudit.verify(
                size: checkpoint.size, rootHash: checkpoint.rootHash, reader: SourceTileReader(source: source),
                hasher: hasher
            ) { position, entry in
                guard mismatches.count < 100 else { return }
                if position < UInt64(expected.count) {
                    let head = expected[Int(position)]
                    if entry != head.bytes {
                        mismatches.append((position, Self.describeMismatch(entry, expected: head)))
                    }
                } else {
                    mismatches.append(
                        (
                            position,
                            "entry \(position) (\(Self.describeEntry(entry))) has no published step: index.json lists \(expected.count) manifest(s)"
                        ))
                }
            }
        } catch let error as TreeSourceError {
            guard error.isTreeProperty else { throw .io(error) }
            violation(.logTile, nil, .logCheckpoint, "a tile is refused: \(error)")
            return false
        } catch {
            violation(
                .logTile, nil, .logCheckpoint,
                "the tiles do not reproduce the checkpoint of size \(checkpoint.size): \(error)")
            return false
        }
        summary.loggedEntries = checkpoint.size
        for (position, message) in mismatches {
            let version = position < UInt64(expected.count) ? expected[Int(position)].manifestVersion : nil
            violation(.logHeadWithoutDocuments, version, .logCheckpoint, message)
        }
        if checkpoint.size < UInt64(expected.count) {
            for head in expected[Int(checkpoint.size)...] {
                violation(
                    .logDocumentNotLogged, head.manifestVersion, .index,
                    "version \(head.manifestVersion) (position \(head.sequence) of index.json) has no head: the checkpoint covers \(checkpoint.size) entries"
                )
            }
        }
        if let newest = roots.keys.max(), let lastHead = expected.last, newest > lastHead.rootVersion {
            violation(
                .logDocumentNotLogged, newest, .root(newest),
                "root \(newest) is published, but the last head names root \(lastHead.rootVersion)")
        }
        return true
    }

    static func describeEntry(_ entry: [UInt8]) -> String {
        guard let head = try? HeadRecord.parse(entry) else { return "not a head record" }
        return
            "sequence \(head.sequence), root \(head.rootVersion), manifest \(head.manifestVersion) sha256:\(Hex.encode(head.manifestPayloadSHA256))"
    }

    static func describeMismatch(_ entry: [UInt8], expected head: HeadRecord) -> String {
        "entry \(head.sequence) (\(describeEntry(entry))) is not the head recomputed from the documents (sequence \(head.sequence), root \(head.rootVersion), manifest \(head.manifestVersion) sha256:\(Hex.encode(head.manifestPayloadSHA256)))"
    }

    // MARK: - manifest.proof

    /// manifest.proof as a client checks it, against the index's latest manifest and the
    /// newest root, and for the same checkpoint as `log/checkpoint`.
    mutating func checkProof(policy: LogPolicy, checkpoint: Checkpoint) throws(AuditError) {
        let file = TreeFile.manifestProof
        let bytes: [UInt8]
        switch try read(file, limit: TlogProofLimits.standard.maxBytes, version: nil) {
        case .bytes(let read): bytes = read
        case .absent:
            violation(.logProof, nil, file, "log-proof-missing: missing, but the newest root has a log")
            return
        case .refused: return
        }
        guard let latest = index?.manifests.last, let newest = roots.keys.max(), let root = roots[newest] else {
            return
        }
        do {
            let verified = try LogVerification.verify(
                proofBytes: bytes, policy: policy,
                manifest: ManifestIdentity(
                    scope: report.scope, rootVersion: latest.rootVersion, version: latest.version,
                    payloadSHA256: latest.payloadSHA256),
                newestRoot: RootIdentity(version: newest, payloadSHA256: root.payloadSHA256), stored: nil,
                now: options.at.secondsSince1970, crypto: crypto)
            let proved = verified.stored.checkpoint
            if proved.size != checkpoint.size || proved.rootHash != checkpoint.rootHash {
                violation(
                    .logProof, latest.version, file,
                    "is for the checkpoint of size \(proved.size), log/checkpoint is of size \(checkpoint.size) (another tree)"
                )
            }
        } catch {
            violation(.logProof, latest.version, file, "\(Self.reasonCode(error)): \(error)")
        }
    }

    /// The client refusal code of docs/TRANSPARENCY.md: `log-` + the case name in kebab case.
    static func reasonCode(_ error: LogVerificationError) -> String {
        let name: String
        switch error {
        case .malformedProof: name = "malformedProof"
        case .malformedCheckpoint: name = "malformedCheckpoint"
        case .wrongOrigin: name = "wrongOrigin"
        case .logSignatureMissing: name = "signatureMissing"
        case .logSignatureInvalid: name = "signatureInvalid"
        case .cosignatureInvalid: name = "cosignatureInvalid"
        case .quorumNotMet: name = "quorumNotMet"
        case .notLastEntry: name = "notLastEntry"
        case .headMissing: name = "headMissing"
        case .malformedHead: name = "malformedHead"
        case .inclusionFailed: name = "inclusionFailed"
        case .sequenceMismatch: name = "sequenceMismatch"
        case .scopeMismatch: name = "scopeMismatch"
        case .rootLoggedNotServed: name = "rootLoggedNotServed"
        case .rootMismatch: name = "rootMismatch"
        case .manifestNotLogged: name = "manifestNotLogged"
        case .checkpointShrank: name = "checkpointShrank"
        case .equivocation: name = "equivocation"
        }
        var code = "log-"
        for character in name {
            if character.isUppercase { code += "-" + character.lowercased() } else { code.append(character) }
        }
        return code
    }
}
