// The auditor's consistency checks of the publisher's checkpoint against `--since` and each witness's latest checkpoint.

import PinionCore
import PinionLog
import PinionTrust

/// How another checkpoint of the same log relates to the publisher's, judged from the tiles.
enum CheckpointRelation: Equatable {
    /// The same tree, or an older one the publisher's extends (consistency proof verified).
    case consistent
    /// A larger tree whose hash the tiles reproduce (tiles written ahead of the checkpoint).
    case aheadInTiles
    /// Another tree of the same size, or a larger one whose hash the tiles contradict, or an
    /// older one whose consistency proof fails: two views of one log.
    case conflicting(String)
    /// A larger tree the tiles do not contain: nothing here proves or refutes that it extends
    /// the publisher's; signed by the log key, it holds entries the publisher never published.
    case beyondTiles(String)
}

extension AuditRun {
    /// Compares `other` with the publisher's `checkpoint` using proofs computed from the
    /// (already verified) tiles.
    func relation(of other: Checkpoint, to checkpoint: Checkpoint, hasher: MerkleHasher) -> CheckpointRelation {
        let reader = SourceTileReader(source: source)
        if other.size == checkpoint.size {
            return other.rootHash == checkpoint.rootHash
                ? .consistent
                : .conflicting(
                    "the same size \(other.size) with another root hash (\(Base64.encode(other.rootHash)) vs \(Base64.encode(checkpoint.rootHash)))"
                )
        }
        if other.size < checkpoint.size {
            do {
                let proof = try MerkleProofs.consistencyProof(
                    oldSize: other.size, newSize: checkpoint.size,
                    source: TileHashSource(treeSize: checkpoint.size, reader: reader, hasher: hasher), hasher: hasher)
                try MerkleProofs.verifyConsistency(
                    oldSize: other.size, newSize: checkpoint.size, oldRoot: other.rootHash,
                    newRoot: checkpoint.rootHash, proof: proof, hasher: hasher)
                return .consistent
            } catch {
                return .conflicting(
                    "size \(other.size) is not a prefix of the publisher's tree of size \(checkpoint.size): \(error)")
            }
        }
        do {
            let hash = try MerkleProofs.treeHash(
                size: other.size, source: TileHashSource(treeSize: other.size, reader: reader, hasher: hasher),
                hasher: hasher)
            if hash == other.rootHash { return .aheadInTiles }
            return .conflicting(
                "size \(other.size), beyond the publisher's \(checkpoint.size), with a root hash the tiles do not give")
        } catch {
            return .beyondTiles(
                "size \(other.size), beyond the publisher's \(checkpoint.size), a tree the tiles do not contain (\(error))"
            )
        }
    }

    // MARK: - --since

    /// The log must be consistent with a checkpoint seen before: not smaller, not another
    /// tree of the same size, and an extension of it (a violation otherwise). A smaller log
    /// that a listed witness cosigned together with the `--since` checkpoint is a rollback
    /// (`log-rollback`); every other failure is `log-since`.
    mutating func checkSince(
        _ bytes: [UInt8], policy: LogPolicy, checkpoint: Checkpoint, hasher: MerkleHasher,
        summary: inout LogAuditSummary
    ) {
        let file = TreeFile.logCheckpoint
        let since: Checkpoint
        let note: SignedNote
        do {
            note = try SignedNote.parse(bytes)
            guard !(try note.verify(keys: [policy.logKey], verifier: crypto.verifier)).isEmpty else {
                violation(.logSince, nil, file, "the --since checkpoint is not signed by the root's log key")
                return
            }
            since = try Checkpoint.parse(note.text, hasher: hasher)
        } catch {
            violation(.logSince, nil, file, "the --since checkpoint is unusable: \(error)")
            return
        }
        guard since.origin == policy.origin else {
            violation(
                .logSince, nil, file,
                "the --since checkpoint is for origin \"\(since.origin)\", the root's log is \"\(policy.origin)\"")
            return
        }
        summary.sinceSize = since.size
        if since.size > checkpoint.size {
            if case .conflicting(let reason) = relation(of: since, to: checkpoint, hasher: hasher) {
                violation(.logSince, nil, file, "not consistent with the --since checkpoint: \(reason) (equivocation)")
                return
            }
            // A listed witness that cosigned both checkpoints checked, as C2SP tlog-witness
            // requires, that the larger one extends the smaller: the tree went back to an
            // older state of the same log (a rollback), not to another branch.
            let common = policy.witnesses.filter { witness in
                summary.cosigners.contains(witness.name)
                    && ((try? note.verify(keys: [witness.key], verifier: crypto.verifier))?.isEmpty == false)
            }
            if let witness = common.first {
                violation(
                    .logRollback, nil, file,
                    "ROLLBACK: the published log has size \(checkpoint.size), the --since checkpoint \(since.size) entries, and witness \(witness.name) cosigned both: the tree went back to an older state of the log (a stale copy, an old backup, a frozen mirror)"
                )
            } else {
                violation(
                    .logSince, nil, file,
                    "the log shrank: size \(checkpoint.size), the --since checkpoint has \(since.size) entries, and no listed witness cosigned both, so a rollback cannot be told from another branch"
                )
            }
            return
        }
        switch relation(of: since, to: checkpoint, hasher: hasher) {
        case .conflicting(let reason), .beyondTiles(let reason):
            violation(.logSince, nil, file, "not consistent with the --since checkpoint: \(reason) (equivocation)")
        case .consistent:
            checkOlderPartialTiles(size: since.size, checkpoint: checkpoint, of: "the --since checkpoint")
        case .aheadInTiles: break
        }
    }

    /// The partial tiles an older checkpoint of this log still needs must be served and hold
    /// the start of the current tiles (C2SP tlog-tiles); a flipped one is `log-tile`, naming it.
    mutating func checkOlderPartialTiles(size: UInt64, checkpoint: Checkpoint, of what: String) {
        do {
            try TileAudit.verifyOlderPartialTiles(
                size: size, currentSize: checkpoint.size, reader: SourceTileReader(source: source))
        } catch {
            violation(
                .logTile, nil, .logCheckpoint,
                "a partial tile that \(what) (size \(size)) still needs is refused: \(error)")
        }
    }

    // MARK: - Witnesses

    /// Fetches a witness's latest checkpoint and compares it with the publisher's. An
    /// unreachable witness or one whose answer it did not cosign is a warning; a checkpoint it
    /// cosigned, signed by the log key and not consistent with the publisher's, is a split view;
    /// a larger one the tiles do not contain is `log-unpublished-entries`, unless it is the
    /// publisher's pending checkpoint (a stalled publish) or cosigned within the publish
    /// grace (a publish in progress), which are warnings.
    mutating func checkWitness(
        _ witness: LogPolicy.Witness, policy: LogPolicy, checkpoint: Checkpoint, cosigners: [String],
        tilesHold: Bool, hasher: MerkleHasher
    ) -> WitnessView {
        var view = WitnessView(name: witness.name, url: witness.url, state: .notChecked)
        guard let fetcher = options.witnesses else { return view }
        let place = WitnessCheckpointPath.url(base: witness.url, origin: policy.origin, hasher: hasher.hasher)
        func unavailable(_ reason: String) -> WitnessView {
            warning(.logWitnessUnavailable, nil, place, "witness \(witness.name): \(reason)")
            view.state = .unavailable(reason)
            return view
        }
        let bytes: [UInt8]
        do {
            bytes = try fetcher.latestCheckpoint(
                of: witness, origin: policy.origin, limit: NoteLimits.standard.maxBytes)
        } catch { return unavailable(error.description) }
        let note: SignedNote
        let theirs: Checkpoint
        do {
            note = try SignedNote.parse(bytes)
            theirs = try Checkpoint.parse(note.text, hasher: hasher)
        } catch {
            return unavailable("answered no checkpoint note: \(error)")
        }
        guard theirs.origin == policy.origin else {
            return unavailable("answered a checkpoint of origin \"\(theirs.origin)\"")
        }
        do {
            guard let time = try note.verify(keys: [witness.key], verifier: crypto.verifier).first?.timestamp else {
                return unavailable("the checkpoint it answered carries no cosignature by its key")
            }
            view.cosignedAt = Int64(clamping: time)
            let futureLimit = options.at.secondsSince1970.addingReportingOverflow(LogFreshness.allowedFutureSkew)
                .partialValue
            if Int64(clamping: time) > futureLimit {
                // Such a witness refuses every publish (its clock is behind the cosignature it
                // gave) until that time passes.
                warning(
                    .logCosignatureFuture, nil, place,
                    "witness \(witness.name)'s latest cosignature is dated \(Int64(clamping: time) - options.at.secondsSince1970) s after the audit time (more than \(LogFreshness.allowedFutureSkew) s): its clock was wrong when it cosigned; it refuses to cosign earlier times, so publishes get 503 from it until then"
                )
            }
            guard !(try note.verify(keys: [policy.logKey], verifier: crypto.verifier)).isEmpty else {
                return unavailable("the checkpoint it answered carries no log signature")
            }
        } catch {
            return unavailable("a signature on the checkpoint it answered does not verify: \(error)")
        }
        guard tilesHold else {
            // Without tiles that reproduce the publisher's checkpoint there is nothing to prove
            // consistency with; only an outright fork is certain.
            if theirs.size == checkpoint.size, theirs.rootHash != checkpoint.rootHash {
                return splitView(witness, theirs, checkpoint, "the same size with another root hash", place, &view)
            }
            return unavailable("not compared: the tiles do not reproduce the publisher's checkpoint")
        }
        switch relation(of: theirs, to: checkpoint, hasher: hasher) {
        case .consistent:
            view.state = .consistent(size: theirs.size)
            checkOlderPartialTiles(
                size: theirs.size, checkpoint: checkpoint, of: "witness \(witness.name)'s checkpoint")
        case .aheadInTiles:
            view.state = .ahead(size: theirs.size)
            warning(
                .logWitnessAhead, nil, place,
                "witness \(witness.name) cosigned size \(theirs.size), beyond log/checkpoint's \(checkpoint.size), and the tiles contain it: \(aheadKind(theirs, cosignedAt: view.cosignedAt, hasher: hasher) ?? "publish stalled: run pinion log refresh")"
            )
        case .conflicting(let reason):
            return splitView(witness, theirs, checkpoint, reason, place, &view)
        case .beyondTiles(let reason):
            if let kind = aheadKind(theirs, cosignedAt: view.cosignedAt, hasher: hasher) {
                view.state = .ahead(size: theirs.size)
                warning(
                    .logWitnessAhead, nil, place,
                    "witness \(witness.name) cosigned size \(theirs.size), beyond log/checkpoint's \(checkpoint.size): \(kind)"
                )
                return view
            }
            let vouched =
                cosigners.contains(witness.name)
                ? "; the witness also cosigned the published checkpoint, so its tree extends the published log"
                : ""
            violation(
                .logUnpublishedEntries, nil, .logCheckpoint,
                "UNPUBLISHED ENTRIES: witness \(witness.name) (\(place)) cosigned a checkpoint of size \(theirs.size) signed by the log key, the published log has \(checkpoint.size) entries and its tiles do not contain the rest (\(reason))\(vouched). The log key signed entries the publisher never published: treat the pins key and the log key as stolen. First steps (docs/TRANSPARENCY.md, \"Incident runbook: stolen keys\"): keep this witness's note as evidence; stop publishing with the old keys; rotate the pins key and the log key through the root role (pinion root rotate, signed by a threshold of root keys), then publish the new root with a manifest"
            )
            view.state = .unpublished(size: theirs.size)
            return view
        }
        return view
    }

    /// Why a witness ahead of the published log is not (yet) a compromise, or nil when it
    /// is: the publisher's pending checkpoint (readable on the publisher host) is a stalled
    /// publish; a cosignature within the publish grace is a publish in progress (witnesses
    /// cosign before the publisher writes what it serves).
    func aheadKind(_ theirs: Checkpoint, cosignedAt: Int64?, hasher: MerkleHasher) -> String? {
        if let bytes = options.pendingCheckpoint, let note = try? SignedNote.parse(bytes),
            let pending = try? Checkpoint.parse(note.text, hasher: hasher), pending == theirs
        {
            return "publish stalled: run pinion log refresh (it is the publisher's pending checkpoint)"
        }
        if let cosignedAt, options.at.secondsSince1970 - cosignedAt < options.publishGrace {
            return
                "publish in progress (cosigned \(max(0, options.at.secondsSince1970 - cosignedAt)) s ago, within the publish grace of \(options.publishGrace) s)"
        }
        return nil
    }

    private mutating func splitView(
        _ witness: LogPolicy.Witness, _ theirs: Checkpoint, _ checkpoint: Checkpoint, _ reason: String,
        _ place: String, _ view: inout WitnessView
    ) -> WitnessView {
        violation(
            .logSplitView, nil, .logCheckpoint,
            "SPLIT VIEW: witness \(witness.name) (\(place)) cosigned a log-signed checkpoint not consistent with the publisher's (size \(checkpoint.size)): \(reason)"
        )
        view.state = .splitView(size: theirs.size)
        return view
    }
}
