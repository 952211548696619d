// One publish step under the tree's lock: every check against the published tree, then the
// writes in the order that never shows a reader a narrowing state (docs/DESIGN.md §9).

import Foundation
import PinionCore
import PinionLog
import PinionLogWriter
import PinionSystem
import PinionTrust

/// The checks and writes of one `Publisher.publish` call. `check()` reads the tree and
/// refuses; only `write()` changes it.
struct PublishStep {
    let tree: PublishTree
    let batch: Batch
    let now: Timestamp
    let allowLift: Bool
    /// The log key and witnesses, when given (`--log-key`).
    let logContext: LogPublishContext?

    /// The published chain extended by the batch's new roots (nil: no root at all).
    private var chain: RootChain?
    /// index.json with this step's entries appended.
    private var index: PublishedIndex
    /// Whether index.json must be written.
    private var indexChanged = false
    /// New roots to write last: version and bytes.
    private var newRoots: [(version: Int64, bytes: [UInt8])] = []
    /// History files this step writes, by version (the batch's manifests not yet on disk).
    private var newHistory: [Int64: [UInt8]] = [:]
    /// The manifest manifest.json must hold afterwards, when the batch has one.
    private var served: [UInt8]?
    private var steps: [PublishOutcome.Step] = []
    private var lifted: [Pin] = []
    private let sequence: Int64
    /// The log work, when the newest root after the step lists a log.
    private var logPlan: LogPlan?

    init(tree: PublishTree, batch: Batch, now: Timestamp, allowLift: Bool, logContext: LogPublishContext? = nil)
        throws(PublishError)
    {
        self.tree = tree
        self.batch = batch
        self.now = now
        self.allowLift = allowLift
        self.logContext = logContext
        self.chain = try tree.rootChain()
        self.index = try tree.index()
        self.sequence = index.nextSequence
    }

    var crypto: CryptoProvider { tree.crypto }

    // MARK: - checks

    mutating func check() throws(PublishError) {
        try checkRoots()
        try checkManifests()
        try checkLatestUnderNewest()
        if let chain {
            logPlan = try LogPlan.make(tree: tree, newest: chain.newest, index: index, context: logContext)
        }
    }

    /// Whether index.json lists `root` as root version 1 with its payload SHA-256: the root
    /// of a first publish that wrote history and index.json but died before root/1.json.
    private func isUnfinishedFirstPublish(of root: Batch.Root) -> Bool {
        root.payload.version == 1 && index.roots.contains { $0.version == 1 && $0.payloadSHA256 == root.payloadSHA256 }
    }

    private mutating func checkRoots() throws(PublishError) {
        for root in batch.roots {
            let version = root.payload.version
            let path = tree.rootPath(version)
            if let existing = try tree.read(path) {
                guard existing == root.bytes else {
                    throw .refused(
                        input: root.input, reason: "root version \(version) is already published with other bytes")
                }
                steps.append(.root(version: version, path: path, alreadyPublished: true))
                continue
            }
            if var existing = chain {
                do { try existing.append(root.bytes, crypto: crypto, limits: tree.limits) } catch {
                    throw .refused(input: root.input, reason: error.description)
                }
                chain = existing
            } else {
                // A first publish (root 1 with its first manifests) that died before its
                // last write, root/1.json, left history and an index.json listing this very
                // root: publishing the same envelopes again completes it. Any other history
                // without roots is a tree whose roots were lost.
                if try tree.hasHistory(), !isUnfinishedFirstPublish(of: root) {
                    throw .refused(
                        input: nil,
                        reason:
                            "\(tree.scopeDirectory): manifests are published but root/ is empty; restore the published roots instead of starting a new chain"
                    )
                }
                guard version == 1 else {
                    throw .refused(
                        input: root.input,
                        reason: "the first root published must be version 1 (self-signed), not \(version)")
                }
                do { chain = try RootChain(anchor: root.bytes, crypto: crypto, limits: tree.limits) } catch {
                    throw .refused(input: root.input, reason: error.description)
                }
            }
            newRoots.append((version, root.bytes))
            steps.append(.root(version: version, path: path, alreadyPublished: false))
        }
        guard let chain else { return }
        // A root index.json lists beyond root/ is a publish that died before its last write.
        for entry in index.roots where entry.version > chain.newest.version {
            throw .refused(
                input: nil,
                reason:
                    "\(tree.rootPath(entry.version)) is an unfinished publish (index.json lists it); run pinion publish with that root and its manifest again"
            )
        }
        if !newRoots.isEmpty {
            do { try chain.checkNewestCurrent(at: now) } catch {
                throw .refused(input: batch.roots.last?.input, reason: error.description)
            }
        }
        // index.json lists every root: earlier trees listed manifests only, so the roots
        // already published are listed (without a sequence number) before this step's.
        let listed = Set(index.roots.map(\.version))
        for root in chain.roots where !listed.contains(root.version) {
            let isNew = newRoots.contains { $0.version == root.version }
            index.roots.append(
                PublishedIndex.RootEntry(
                    sequence: isNew ? sequence : nil, version: root.version, payloadSHA256: root.payloadSHA256,
                    expiresAt: root.payload.expiresAt))
            indexChanged = true
        }
        for entry in index.roots {
            guard let root = chain.root(version: entry.version), root.payloadSHA256 == entry.payloadSHA256 else {
                throw .refused(
                    input: nil,
                    reason:
                        "\(tree.indexPath): root version \(entry.version) does not match root/\(entry.version).json; repair the tree before publishing"
                )
            }
        }
        index.roots.sort { $0.version < $1.version }
    }

    private mutating func checkManifests() throws(PublishError) {
        guard !batch.manifests.isEmpty else { return }
        guard let chain else {
            throw .refused(
                input: nil,
                reason:
                    "\(tree.scopeDirectory): no root is published for scope \(tree.scope); publish root version 1 first"
            )
        }
        for manifest in batch.manifests {
            try checkManifest(manifest, chain: chain)
        }
        served = batch.manifests.last?.bytes
    }

    private mutating func checkManifest(_ manifest: Batch.Manifest, chain: RootChain) throws(PublishError) {
        let input = manifest.input
        let bytes = manifest.bytes
        let verified: VerifiedManifest
        do {
            verified = try ManifestVerifier.verify(bytes, under: chain.newest, crypto: crypto, limits: tree.limits)
            try chain.checkNewestCurrent(at: now)
            try verified.checkCurrent(at: now)
        } catch {
            throw .manifest(input: input, error: error, chain: chain)
        }
        let payload = verified.payload
        // A future issuedAt binds every later version to be at least as late (issuedAt never
        // goes back), so a signer's clock error would stall the channel until then.
        if payload.issuedAt.secondsSince1970 > now.secondsSince1970 + Publisher.issuedAtTolerance {
            throw .refused(
                input: input,
                reason:
                    "issuedAt \(payload.issuedAt) is more than an hour after the publish time \(now); every later version would have to be at least as late (check the signer's clock, or give the publish time with --at)"
            )
        }
        let historyPath = tree.historyPath(payload.version)
        let onDisk = try tree.read(historyPath)
        if let onDisk, onDisk != bytes {
            throw .refused(
                input: input,
                reason:
                    "version \(payload.version) is already published with other bytes (\(historyPath)); a version is never published twice"
            )
        }
        let indexed = index.manifests.first { $0.version == payload.version }
        if let indexed, indexed.payloadSHA256 != verified.payloadSHA256 {
            throw .refused(
                input: input,
                reason:
                    "index.json lists version \(payload.version) with another payload; a version is never published twice"
            )
        }
        if index.manifests.isEmpty, try tree.hasHistory(), onDisk == nil {
            throw .refused(
                input: nil,
                reason:
                    "\(tree.historyDirectory) holds manifests index.json does not list: re-run the publish that died, or repair the tree"
            )
        }
        if let latest = index.manifests.last, indexed == nil {
            // A history file beyond the index is a publish that died mid-way: finish it first.
            let nextPath = tree.historyPath(latest.version + 1)
            if newHistory[latest.version + 1] == nil, let unfinished = try tree.read(nextPath), unfinished != bytes {
                throw .refused(
                    input: nil,
                    reason: "\(nextPath) is an unfinished publish; run pinion publish with that envelope first")
            }
            let latestPath = tree.historyPath(latest.version)
            guard let latestBytes = try history(latest.version) else {
                throw .refused(input: nil, reason: "\(latestPath) is missing although index.json lists it")
            }
            let latestPayload: ManifestPayload
            let latestEnvelope: Envelope
            do {
                latestEnvelope = try Envelope.parse(latestBytes, limits: tree.limits)
                latestPayload = try ManifestPayload.parse(latestEnvelope.payload, limits: tree.limits)
            } catch {
                throw .refused(input: nil, reason: "\(latestPath): \(error)")
            }
            guard crypto.hasher.sha256(latestEnvelope.payload) == latest.payloadSHA256 else {
                throw .refused(
                    input: nil,
                    reason: "\(latestPath) does not match its index.json entry; repair the tree before publishing")
            }
            do {
                try HistoryRules.checkSuccessor(
                    payload, of: latestPayload, latestPayloadSHA256: latest.payloadSHA256, allowLift: allowLift)
            } catch {
                throw .refused(input: input, reason: error.description)
            }
            lifted += HistoryRules.liftedRevocations(payload, of: latestPayload)
        } else if indexed != nil, index.manifests.last?.version != payload.version {
            throw .refused(
                input: input,
                reason:
                    "version \(payload.version) is already published and older than the latest (version \(index.manifests.last?.version ?? 0)); serving it again would be a rollback"
            )
        }
        if onDisk == nil { newHistory[payload.version] = bytes }
        if indexed == nil {
            index.manifests.append(
                PublishedIndex.Entry(
                    version: payload.version, rootVersion: payload.rootVersion, payloadSHA256: verified.payloadSHA256,
                    issuedAt: payload.issuedAt, expiresAt: payload.expiresAt, sequence: sequence))
            indexChanged = true
        }
        let served = try tree.read(tree.manifestPath)
        let complete = onDisk != nil && indexed != nil && served == bytes
        steps.append(
            .manifest(
                version: payload.version, rootVersion: payload.rootVersion, expiresAt: payload.expiresAt,
                alreadyPublished: complete))
    }

    /// The history file of `version`: this step's, else the one on disk.
    private func history(_ version: Int64) throws(PublishError) -> [UInt8]? {
        if let pending = newHistory[version] { return pending }
        return try tree.read(tree.historyPath(version))
    }

    /// After this step the latest manifest must verify under the newest root: a root that
    /// would cut off the published manifest (a changed pins role, a lowered cap, a moved
    /// `pinsRoleSince`) is published only together with a manifest signed under it.
    private func checkLatestUnderNewest() throws(PublishError) {
        guard !newRoots.isEmpty, let chain, let latest = index.manifests.last else { return }
        let path = tree.historyPath(latest.version)
        guard let bytes = try history(latest.version) else {
            throw .refused(input: nil, reason: "\(path) is missing although index.json lists it")
        }
        do { _ = try ManifestVerifier.verify(bytes, under: chain.newest, crypto: crypto, limits: tree.limits) } catch {
            throw .refused(
                input: batch.roots.last?.input,
                reason:
                    "root version \(chain.newest.version) would cut clients off: the latest manifest (version \(latest.version), rootVersion \(latest.rootVersion)) does not verify under it (\(error)); publish the root together with a manifest signed under it"
            )
        }
    }

    // MARK: - writes

    /// One atomic write; a test's crash gate may stop the step before it.
    private func put(_ bytes: [UInt8], _ path: String, replace: Bool) throws(PublishError) {
        try logContext?.crashAfterWrites?.tick()
        try PublishTree.file { () throws(PublishFileError) in
            try PublishFiles.writeAtomically(bytes, to: path, replace: replace)
        }
    }

    /// With a log: the current checkpoint re-cosigned first (below the quorum nothing is
    /// written). Then history, index.json; with a log the new tiles, the pending
    /// checkpoint, the witnesses (below the quorum: stop, pending), manifest.proof and
    /// log/checkpoint; then manifest.json, then the new roots.
    mutating func write() throws(PublishError) -> PublishOutcome {
        let tree = self.tree
        var refreshed: (note: SignedNote, outcome: LogStepOutcome)?
        if let logPlan, logPlan.pending == nil || logPlan.heads.isEmpty {
            refreshed = try logPlan.reCosignCurrent(crypto: crypto)
        }
        try PublishTree.file { () throws(PublishFileError) in
            try PublishFiles.createDirectories([tree.rootDirectory, tree.historyDirectory])
        }
        for version in newHistory.keys.sorted() {
            guard let bytes = newHistory[version] else { continue }
            try put(bytes, tree.historyPath(version), replace: false)
        }
        if indexChanged {
            try put(index.serialized(), tree.indexPath, replace: true)
        }
        var logOutcome = refreshed?.outcome
        if let logPlan {
            logOutcome = try writeLog(logPlan, refreshed: refreshed?.note) ?? logOutcome
        }
        if let served, try tree.read(tree.manifestPath) != served {
            try put(served, tree.manifestPath, replace: true)
        }
        for root in newRoots {
            try put(root.bytes, tree.rootPath(root.version), replace: false)
        }
        if let logPlan {
            try? FileManager.default.removeItem(atPath: logPlan.files.pendingDirectory)
        }
        return PublishOutcome(
            scope: tree.scope, steps: steps, liftedRevocations: lifted, sequence: indexChanged ? sequence : nil,
            log: logOutcome, logOrigin: logPlan?.policy.origin)
    }

    /// Appends the plan's heads and has the witnesses cosign (or, with nothing to append,
    /// rewrites manifest.proof and the checkpoint from the re-cosigned note).
    private func writeLog(_ plan: LogPlan, refreshed: SignedNote?) throws(PublishError) -> LogStepOutcome? {
        let files = plan.files
        let reader = LogTileFiles(files: files)
        let hasher = MerkleHasher(crypto.hasher)
        guard !plan.heads.isEmpty else {
            guard let current = plan.current, let refreshed else { return nil }
            let proof: TlogProof
            do {
                proof = try LogPublishing.lastEntryProof(
                    cosigned: refreshed, checkpoint: current.checkpoint, reader: reader, hasher: hasher)
            } catch {
                throw .refused(input: nil, reason: "\(files.directory): \(error)")
            }
            try put(proof.bytes, files.proofPath, replace: true)
            try put(refreshed.bytes, files.checkpointPath, replace: true)
            return nil
        }
        guard let append = plan.append else { return nil }
        try PublishTree.file { () throws(PublishFileError) in
            try PublishFiles.createDirectories([files.directory])
        }
        for write in append.writes {
            try writeTile(write, files: files)
        }
        try PublishTree.file { () throws(PublishFileError) in
            try PublishFiles.createDirectories([files.pendingDirectory])
        }
        let envelopes = batch.roots.map(\.bytes) + batch.manifests.map(\.bytes)
        for (position, bytes) in envelopes.enumerated() {
            try put(bytes, files.pendingEnvelopePath(position), replace: true)
        }
        try put(append.note.bytes, files.pendingCheckpointPath, replace: true)
        let round = WitnessRound.collect(
            note: append.note, checkpoint: append.checkpoint, body: append.addCheckpointBody, policy: plan.policy,
            client: plan.context.witnesses, reader: reader, crypto: crypto)
        guard round.evidence.isEmpty else {
            throw .refused(
                input: nil,
                reason: WitnessRound.evidenceReport(
                    round.evidence, ours: append.note,
                    unchanged:
                        "checkpoint, manifest.proof and manifest.json are unchanged; the new tiles and \(files.pendingCheckpointPath) stay"
                ))
        }
        guard round.cosigners.count >= plan.policy.quorum else {
            throw .refused(input: nil, reason: plan.belowQuorum(round.cosigners, round.failures, pending: true))
        }
        try put(LogPublishing.manifestProof(cosigned: round.note, append: append).bytes, files.proofPath, replace: true)
        try put(round.note.bytes, files.checkpointPath, replace: true)
        return LogStepOutcome(
            size: append.checkpoint.size, appended: plan.heads.count, cosigners: round.cosigners,
            failures: round.failures, cosignedAt: round.cosignedAt)
    }

    /// A new tile: written once; found again with the same bytes (a re-run), it is kept.
    private func writeTile(_ write: TileWrite, files: LogFiles) throws(PublishError) {
        let path = files.tilePath(write.tile)
        if let existing = try PublishTree.file({ () throws(PublishFileError) in
            try PublishFiles.readRegularIfPresent(path, limit: write.bytes.count + 1)
        }) {
            guard existing == write.bytes else {
                throw .refused(
                    input: nil, reason: "\(path) exists with other bytes; log tiles never change: repair the tree")
            }
            return
        }
        try PublishTree.file { () throws(PublishFileError) in
            try PublishFiles.createDirectories([PathText.parent(of: path)])
        }
        try put(write.bytes, path, replace: false)
    }
}
