// `pinion log refresh` (docs/DESIGN.md §12): completes a pending publish, or re-cosigns the current checkpoint and rewrites manifest.proof.

import PinionCore
import PinionLog
import PinionSystem
import PinionTrust

/// What `Publisher.refreshLog` did for one scope.
public enum LogRefreshOutcome: Sendable, Equatable {
    /// A publish that had stopped below the quorum was completed.
    case completed(scope: String, outcome: PublishOutcome)
    /// The current checkpoint was re-cosigned and manifest.proof rewritten.
    case refreshed(scope: String, log: LogStepOutcome)
    /// Nothing to do for the scope: no log, another log key, or nothing logged yet.
    case skipped(scope: String, reason: String)
    /// The scope could not be refreshed (`.refused` below the quorum, a tree that does not
    /// verify, an I/O error); what it serves is unchanged. The other scopes were still tried.
    case failed(scope: String, error: PublishError)
}

extension Publisher {
    /// Refreshes every scope of `repo` whose newest root lists a log with `log.signer`'s key.
    ///
    /// A scope with a pending publish (`{repo}/pending/{scope}/`, left by a publish below the
    /// quorum) is published again from the saved envelopes, which completes it once a quorum
    /// cosigns. Otherwise the current checkpoint is re-submitted (same size, C2SP
    /// tlog-witness re-cosign), and with a quorum `manifest.proof` then `log/checkpoint` are
    /// rewritten with the fresh cosignatures (the old ones are dropped).
    ///
    /// - Parameters:
    ///   - repo: the tree's directory.
    ///   - now: the time for the expiry checks of a completed publish.
    ///   - crypto: Ed25519 and SHA-256.
    ///   - limits: size limits.
    ///   - log: the log key and witness client.
    /// - Returns: one outcome per scope, by scope name: every scope is tried, and a scope
    ///   that fails is a `.failed` outcome naming it (the others still complete).
    /// - Throws: `.usage` when no scope lists this log key with a started log and none
    ///   failed; `.file` when the tree's `v1/` cannot be listed.
    public static func refreshLog(
        repo: String, at now: Timestamp, crypto: CryptoProvider, limits: Limits = .standard, log: LogPublishContext
    ) throws(PublishError) -> [LogRefreshOutcome] {
        let scopes = try PublishTree.file { () throws(PublishFileError) in try PublishFiles.list(repo + "/v1") }
            .filter { (try? Scope.validate($0)) != nil }.sorted()
        guard !scopes.isEmpty else { throw .usage("\(repo) holds no published scope (no v1/SCOPE directory)") }
        var outcomes: [LogRefreshOutcome] = []
        for scope in scopes {
            do throws(PublishError) {
                outcomes.append(
                    try refresh(scope: scope, repo: repo, at: now, crypto: crypto, limits: limits, log: log))
            } catch {
                outcomes.append(.failed(scope: scope, error: error))
            }
        }
        guard outcomes.contains(where: { if case .skipped = $0 { return false } else { return true } }) else {
            throw .usage(
                "no scope of \(repo) lists this log key with a started log: "
                    + outcomes.map {
                        if case .skipped(let scope, let reason) = $0 { "\(scope): \(reason)" } else { "" }
                    }
                    .joined(separator: "; "))
        }
        return outcomes
    }

    private static func refresh(
        scope: String, repo: String, at now: Timestamp, crypto: CryptoProvider, limits: Limits,
        log: LogPublishContext
    ) throws(PublishError) -> LogRefreshOutcome {
        let tree = PublishTree(repo: repo, scope: scope, crypto: crypto, limits: limits)
        let files = LogFiles(tree: tree)
        let pending = try files.pendingEnvelopes()
        if !pending.isEmpty {
            let outcome = try publish(pending, into: repo, at: now, crypto: crypto, limits: limits, log: log)
            return .completed(scope: scope, outcome: outcome)
        }
        let lock = try PublishTree.file { () throws(PublishFileError) in try PublishFiles.lock(repo) }
        defer { withExtendedLifetime(lock) {} }
        try tree.checkKinds()
        guard let chain = try tree.rootChain() else { return .skipped(scope: scope, reason: "no root published") }
        guard let policy = chain.newest.payload.log else {
            return .skipped(scope: scope, reason: "root version \(chain.newest.version) lists no log")
        }
        guard policy.logKey.publicKey == log.signer.publicKey else {
            return .skipped(scope: scope, reason: "its log key is \(policy.logKey.text)")
        }
        guard
            let plan = try LogPlan.make(tree: tree, newest: chain.newest, index: try tree.index(), context: log),
            let current = plan.current
        else { return .skipped(scope: scope, reason: "nothing is logged yet (publish a manifest first)") }
        guard plan.heads.isEmpty else {
            throw .refused(
                input: nil,
                reason:
                    "\(files.checkpointPath): the log lacks \(plan.heads.count) head(s) index.json lists (a publish died before it reached the witnesses): run pinion publish with the same envelopes again"
            )
        }
        guard let (note, outcome) = try plan.reCosignCurrent(crypto: crypto) else {
            return .skipped(scope: scope, reason: "nothing is logged yet")
        }
        let proof: TlogProof
        do {
            proof = try LogPublishing.lastEntryProof(
                cosigned: note, checkpoint: current.checkpoint, reader: LogTileFiles(files: files),
                hasher: MerkleHasher(crypto.hasher))
        } catch {
            throw .refused(input: nil, reason: "\(files.directory): \(error)")
        }
        try PublishTree.file { () throws(PublishFileError) in
            try PublishFiles.writeAtomically(proof.bytes, to: files.proofPath, replace: true)
            try PublishFiles.writeAtomically(note.bytes, to: files.checkpointPath, replace: true)
        }
        return .refreshed(scope: scope, log: outcome)
    }
}
