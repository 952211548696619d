// The log half of a publish step (docs/TRANSPARENCY.md "Publishing steps"): plan the heads, ask the witnesses, write tiles, proof and checkpoint.

import Foundation
import PinionCore
import PinionLog
import PinionSystem
import PinionTrust
import Synchronization

/// What `Publisher.publish` and `Publisher.refreshLog` need to extend or re-cosign a
/// scope's transparency log (docs/DESIGN.md §12): the log key and a way to reach witnesses.
public struct LogPublishContext {
    /// The log's Ed25519 key (its public key must be the one the newest root lists).
    public let signer: any NoteSigner
    /// The witness transport (`HTTPSWitnessClient`, or a fake in tests).
    public let witnesses: any WitnessClient
    /// Tests only: the number of file writes after which the publish stops as if killed.
    var crashAfterWrites: CrashGate?

    /// - Parameters:
    ///   - signer: the log key.
    ///   - witnesses: how add-checkpoint requests reach the witnesses.
    public init(signer: any NoteSigner, witnesses: any WitnessClient) {
        self.signer = signer
        self.witnesses = witnesses
    }
}

/// Stops a publish after a number of writes, as SIGKILL between two atomic writes would.
final class CrashGate {
    private(set) var remaining: Int
    init(afterWrites: Int) { remaining = afterWrites }
    func tick() throws(PublishError) {
        guard remaining > 0 else { throw PublishError.refused(input: nil, reason: "simulated crash") }
        remaining -= 1
    }
}

/// What a publish or refresh did to the log.
public struct LogStepOutcome: Sendable, Equatable {
    /// The log's size after the step (the checkpoint's tree size), in entries.
    public var size: UInt64
    /// Heads appended by this step (more than one when backfilling).
    public var appended: Int
    /// The witnesses whose cosignature the new checkpoint carries.
    public var cosigners: [String]
    /// Witnesses that did not cosign, each with the reason.
    public var failures: [String]
    /// Each cosigner's cosignature timestamp (C2SP tlog-cosignature/v1), POSIX seconds, by
    /// witness name: what `pinion publish` and `pinion log refresh` compare with the clock.
    public var cosignedAt: [String: UInt64] = [:]
}

/// The log's files under `v1/{scope}/`, and the pending checkpoint outside the served tree.
struct LogFiles {
    let tree: PublishTree

    var directory: String { tree.scopeDirectory + "/log" }
    var checkpointPath: String { directory + "/checkpoint" }
    var proofPath: String { tree.scopeDirectory + "/manifest.proof" }
    /// `{repo}/pending/{scope}/`: outside `v1/`, so `pinion serve` (which serves `/v1/`
    /// only) and mirrors of `v1/` never publish a checkpoint no quorum cosigned.
    var pendingDirectory: String { tree.repo + "/pending/" + tree.scope }
    var pendingCheckpointPath: String { pendingDirectory + "/checkpoint" }
    func pendingEnvelopePath(_ position: Int) -> String { pendingDirectory + "/envelope-\(position).json" }
    func tilePath(_ tile: TileID) -> String { directory + "/" + tile.path }

    /// Largest checkpoint note read (the note limit).
    static let noteLimit = NoteLimits.standard.maxBytes

    /// A note file (checkpoint or pending), or nil when absent.
    func readNote(_ path: String) throws(PublishError) -> SignedNote? {
        guard
            let bytes = try PublishTree.file({ () throws(PublishFileError) in
                try PublishFiles.readRegularIfPresent(path, limit: LogFiles.noteLimit)
            })
        else { return nil }
        do { return try SignedNote.parse(bytes) } catch {
            throw .refused(input: nil, reason: "\(path): \(error)")
        }
    }

    /// The pending envelopes saved by a publish that stopped below the quorum.
    func pendingEnvelopes() throws(PublishError) -> [[UInt8]] {
        var envelopes: [[UInt8]] = []
        while let bytes = try tree.read(pendingEnvelopePath(envelopes.count)) { envelopes.append(bytes) }
        return envelopes
    }
}

/// Reads stored tiles from `v1/{scope}/log/`.
struct LogTileFiles: TileReader {
    let files: LogFiles

    func readTile(_ tile: TileID) throws -> [UInt8] {
        let path = files.tilePath(tile)
        // A full hash tile is 8 KiB; a full entry bundle at most 256 head records of 512 bytes plus prefixes.
        guard let bytes = try PublishFiles.readRegularIfPresent(path, limit: 256 * (HeadRecord.maxBytes + 2)) else {
            throw TileError.missingTile(tile.path)
        }
        return bytes
    }
}

/// One round of add-checkpoint requests to every listed witness.
enum WitnessRound {
    /// Posts `body` to each witness (one retry from the witness's size after a 409) and
    /// merges the valid cosignatures into the log-signed `note`.
    ///
    /// A witness that refuses (a 409 above this log's size, or a 422) is then asked for its
    /// checkpoint (C2SP tlog-witness monitoring path): a log-signed one that this log never
    /// published is `evidence`, which must stop the step; anything else counts against the
    /// witness as a failure naming what was found.
    ///
    /// - Parameter pending: the publisher's pending checkpoint, which a witness may hold
    ///   without it being evidence.
    /// - Returns: the cosigned note, the cosigners, the reasons of the others, the
    ///   cosignature times and the signed evidence found.
    static func collect(
        note: SignedNote, checkpoint: Checkpoint, body: [UInt8], policy: LogPolicy, client: any WitnessClient,
        reader: any TileReader, crypto: CryptoProvider, pending: Checkpoint? = nil
    ) -> Round {
        // Every witness is asked at once (one connection each), so a slow or unreachable
        // witness costs its timeout once, not once per witness before it; results are taken
        // in the root's witness order.
        let witnesses = policy.witnesses
        var answers = ask(witnesses.map { ($0.url, body) }, client: client)
        // A 409 names the size the witness holds: one retry from there (the proof is built
        // here, from the tiles), again all at once.
        var retries: [(index: Int, body: [UInt8])] = []
        var failures: [String?] = Array(repeating: nil, count: witnesses.count)
        var suspects: [Int] = []
        for (index, answer) in answers.enumerated() {
            guard case .success(let first) = answer, let size = first.conflictSize else { continue }
            let witness = witnesses[index]
            guard size <= checkpoint.size else {
                failures[index] = "\(witness.name): holds size \(size), above this log's \(checkpoint.size)"
                suspects.append(index)
                continue
            }
            do {
                let retry = try LogPublishing.addCheckpointBody(
                    note: note, checkpoint: checkpoint, fromWitnessSize: size, reader: reader,
                    hasher: MerkleHasher(crypto.hasher))
                retries.append((index, retry))
            } catch {
                failures[index] = "\(witness.name): \(error)"
            }
        }
        let retried = ask(retries.map { (witnesses[$0.index].url, $0.body) }, client: client)
        for (retry, answer) in zip(retries, retried) { answers[retry.index] = answer }
        var responses: [(witness: LogPolicy.Witness, body: [UInt8])] = []
        for (index, witness) in witnesses.enumerated() where failures[index] == nil {
            switch answers[index] {
            case .success(let answer) where answer.status == 200:
                responses.append((witness, answer.body))
            case .success(let answer):
                failures[index] = "\(witness.name): answered \(answer.status) \(printable(answer.body))"
                if answer.status == 422 { suspects.append(index) }
            case .failure(let error):
                failures[index] = "\(witness.name): \(error.reason)"
            }
        }
        let hasher = MerkleHasher(crypto.hasher)
        let fetched = fetch(
            suspects.map {
                WitnessCheckpointPath.url(base: witnesses[$0].url, origin: policy.origin, hasher: crypto.hasher)
            },
            client: client)
        var evidence: [Evidence] = []
        for (index, answer) in zip(suspects, fetched) {
            let witness = witnesses[index]
            let place = WitnessCheckpointPath.url(base: witness.url, origin: policy.origin, hasher: crypto.hasher)
            let verdict: WitnessCheckpointVerdict
            var noteBytes: [UInt8] = []
            switch answer {
            case .success(let answer) where answer.status == 200:
                noteBytes = answer.body
                verdict = WitnessEvidence.verdict(
                    note: answer.body, logKey: policy.logKey, published: checkpoint, pending: pending,
                    ourRoot: { size in
                        try MerkleProofs.treeHash(
                            size: size,
                            source: TileHashSource(treeSize: checkpoint.size, reader: reader, hasher: hasher),
                            hasher: hasher)
                    }, crypto: crypto)
            case .success(let answer):
                verdict = .unverifiable("\(place) answered \(answer.status)")
            case .failure(let error):
                verdict = .unverifiable("\(place): \(error.reason)")
            }
            if verdict.isEvidence {
                evidence.append(Evidence(witness: witness.name, url: place, verdict: verdict, note: noteBytes))
            } else {
                failures[index] = (failures[index] ?? witness.name) + "; its checkpoint is \(verdict)"
            }
        }
        var failureTexts = failures.compactMap { $0 }
        let merged = LogPublishing.mergeCosignatures(
            note: note, logKey: policy.logKey, responses: responses, crypto: crypto)
        for (witness, _) in responses where !merged.cosigners.contains(witness.name) {
            failureTexts.append("\(witness.name): answered 200 without a valid cosignature")
        }
        var times: [String: UInt64] = [:]
        for witness in policy.witnesses where merged.cosigners.contains(witness.name) {
            if let time = (try? merged.note.verify(keys: [witness.key], verifier: crypto.verifier))?.first?.timestamp {
                times[witness.name] = time
            }
        }
        return Round(
            note: merged.note, cosigners: merged.cosigners, failures: failureTexts, cosignedAt: times,
            evidence: evidence)
    }

    /// What one round gave.
    struct Round {
        /// The note with the valid cosignatures merged in.
        let note: SignedNote
        /// The witnesses whose cosignature it carries.
        let cosigners: [String]
        /// The other witnesses, each with the reason.
        let failures: [String]
        /// Each cosigner's cosignature time, POSIX seconds.
        let cosignedAt: [String: UInt64]
        /// Log-signed checkpoints this log never published, as witnesses hold them.
        let evidence: [Evidence]
    }

    /// A witness's log-signed checkpoint that conflicts with this log.
    struct Evidence {
        /// The witness's name.
        let witness: String
        /// Where its checkpoint was fetched.
        let url: String
        /// What it is (a fork or an unpublished extension).
        let verdict: WitnessCheckpointVerdict
        /// The note as fetched.
        let note: [UInt8]
    }

    /// The text of a step stopped by signed evidence: each witness's note, ours, and the
    /// runbook, on one line (the CLI prints an error as one line): a note's lines are
    /// separated by ` | `.
    static func evidenceReport(_ evidence: [Evidence], ours: SignedNote, unchanged: String) -> String {
        var parts = ["the log key signed a checkpoint this log never published (\(unchanged))"]
        for item in evidence {
            parts.append("witness \(item.witness) holds \(item.verdict); its note (\(item.url)): \(oneLine(item.note))")
        }
        parts.append("our checkpoint note: \(oneLine(ours.bytes))")
        parts.append(
            "treat the log key and the pins key as stolen: follow \"Incident runbook: stolen keys\" in docs/TRANSPARENCY.md (rotate both through the root role; keep the witnesses' notes as evidence)"
        )
        return parts.joined(separator: ". ")
    }

    /// A note on one line: its lines joined by ` | `, other control characters dropped.
    private static func oneLine(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes.prefix(LogFiles.noteLimit), as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })
        }
        return lines.joined(separator: " | ")
    }

    /// GETs each URL's checkpoint, all at once, in the order given.
    static func fetch(_ urls: [String], client: any WitnessClient) -> [Result<WitnessAnswer, ExchangeFailure>] {
        concurrently(urls.count) { try client.fetchCheckpoint(url: urls[$0]) }
    }

    /// Why one exchange with a witness failed (its error's description).
    struct ExchangeFailure: Error {
        let reason: String
    }

    /// Posts each body to its URL, all at once (one thread each), and returns the answers in
    /// the order given.
    static func ask(_ requests: [(url: String, body: [UInt8])], client: any WitnessClient)
        -> [Result<WitnessAnswer, ExchangeFailure>]
    {
        concurrently(requests.count) { try client.addCheckpoint(url: requests[$0].url, body: requests[$0].body) }
    }

    /// Runs `exchange` for indices 0..<count, one thread each, and returns the results in
    /// index order.
    private static func concurrently(_ count: Int, _ exchange: @escaping @Sendable (Int) throws -> WitnessAnswer)
        -> [Result<WitnessAnswer, ExchangeFailure>]
    {
        guard count > 0 else { return [] }
        // One thread per witness: the exchanges block on the network, so a pool sized to the
        // CPUs (concurrentPerform) would still ask them a few at a time. A root lists few
        // witnesses.
        let results = Mutex<[Result<WitnessAnswer, ExchangeFailure>?]>(Array(repeating: nil, count: count))
        let done = DispatchGroup()
        for index in 0..<count {
            done.enter()
            let thread = Thread {
                let result: Result<WitnessAnswer, ExchangeFailure>
                do {
                    result = .success(try exchange(index))
                } catch {
                    result = .failure(ExchangeFailure(reason: "\(error)"))
                }
                results.withLock { $0[index] = result }
                done.leave()
            }
            thread.start()
        }
        done.wait()
        return results.withLock { $0 }.map { $0 ?? .failure(ExchangeFailure(reason: "no answer")) }
    }

    private static func printable(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(200), as: UTF8.self)
        return String(text.unicodeScalars.map { $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : " " })
    }
}

/// The log work one publish step must do, decided under the lock before anything is written.
struct LogPlan {
    let policy: LogPolicy
    let context: LogPublishContext
    let files: LogFiles
    /// The stored checkpoint (verified under the log key), nil for a log not started.
    let current: (note: SignedNote, checkpoint: Checkpoint)?
    /// Heads for index.json's manifests the log does not hold yet (backfill, then this step's).
    let heads: [HeadRecord]
    /// The log-signed checkpoint of a publish that stopped below the quorum.
    let pending: SignedNote?
    /// The heads appended (tiles to write, the log-signed checkpoint), nil without heads.
    let append: LogAppend?

    /// The plan for a tree whose newest root is `newest`, with `index` as this step leaves it.
    ///
    /// - Returns: nil when the newest root lists no log.
    /// - Throws: `.usage` without a log key or with another key; `.refused` for a stored
    ///   checkpoint that is not the log's, a log longer than index.json, or a newest root
    ///   published after the latest manifest (the head must name both).
    static func make(
        tree: PublishTree, newest: VerifiedRoot, index: PublishedIndex, context: LogPublishContext?
    ) throws(PublishError) -> LogPlan? {
        guard let policy = newest.payload.log else { return nil }
        guard let context else {
            throw .usage(
                "root version \(newest.version) of scope \(tree.scope) lists a transparency log (\(policy.origin)): give --log-key LOG.key"
            )
        }
        guard context.signer.publicKey == policy.logKey.publicKey else {
            throw .usage("--log-key is not the log key root version \(newest.version) lists (\(policy.logKey.text))")
        }
        let files = LogFiles(tree: tree)
        var current: (note: SignedNote, checkpoint: Checkpoint)?
        if let note = try files.readNote(files.checkpointPath) {
            current = (note, try verifiedCheckpoint(note, policy: policy, path: files.checkpointPath, tree: tree))
        }
        let size = current?.checkpoint.size ?? 0
        guard size <= UInt64(index.manifests.count) else {
            throw .refused(
                input: nil,
                reason:
                    "\(files.checkpointPath): the log holds \(size) heads but index.json lists \(index.manifests.count) manifests; repair the tree before publishing"
            )
        }
        var heads: [HeadRecord] = []
        for position in Int(size)..<index.manifests.count {
            heads.append(try head(position: position, index: index, scope: tree.scope))
        }
        if let last = index.manifests.indices.last {
            let lastHead: HeadRecord
            if let appended = heads.last {
                lastHead = appended
            } else {
                lastHead = try head(position: last, index: index, scope: tree.scope)
            }
            guard lastHead.rootVersion == newest.version else {
                throw .refused(
                    input: nil,
                    reason:
                        "root version \(newest.version) would not be named by the log's last head (root \(lastHead.rootVersion)): with a log, publish a new root together with a manifest"
                )
            }
        }
        var pending = try files.readNote(files.pendingCheckpointPath)
        if pending != nil, current != nil, heads.isEmpty {
            pending = nil  // a completed publish whose pending file was not removed yet
        }
        var append: LogAppend?
        if !heads.isEmpty {
            do {
                append = try LogPublishing.append(
                    heads: heads, current: current?.checkpoint, reader: LogTileFiles(files: files),
                    origin: policy.origin, logSigner: context.signer, crypto: tree.crypto)
            } catch {
                throw .refused(input: nil, reason: "\(files.directory): \(error)")
            }
            if let pending, let note = append?.note, !NoteText.equal(pending.text, note.text) {
                throw .refused(
                    input: nil,
                    reason:
                        "\(files.pendingCheckpointPath) is another checkpoint than the log index.json gives; repair the tree (or remove the pending file if no witness cosigned it)"
                )
            }
        }
        return LogPlan(
            policy: policy, context: context, files: files, current: current, heads: heads, pending: pending,
            append: append)
    }

    /// The checkpoint of a stored note, which must carry a valid signature by the log key.
    static func verifiedCheckpoint(_ note: SignedNote, policy: LogPolicy, path: String, tree: PublishTree)
        throws(PublishError) -> Checkpoint
    {
        do {
            guard !(try note.verify(keys: [policy.logKey], verifier: tree.crypto.verifier)).isEmpty else {
                throw PublishError.refused(
                    input: nil, reason: "\(path): not signed by the log key the newest root lists")
            }
            let checkpoint = try Checkpoint.parse(note.text, hasher: MerkleHasher(tree.crypto.hasher))
            guard checkpoint.origin == policy.origin else {
                throw PublishError.refused(
                    input: nil,
                    reason:
                        "\(path): the log's origin is \(checkpoint.origin), the newest root lists \(policy.origin); a log keeps its origin"
                )
            }
            return checkpoint
        } catch let error as PublishError {
            throw error
        } catch {
            throw .refused(input: nil, reason: "\(path): \(error)")
        }
    }

    /// The head of index.json's manifest at `position`: that manifest, and the newest root
    /// listed with a sequence (absent counts as 0) not above the manifest's (absent: 0).
    static func head(position: Int, index: PublishedIndex, scope: String) throws(PublishError) -> HeadRecord {
        let manifest = index.manifests[position]
        let step = manifest.sequence ?? 0
        guard let root = index.roots.filter({ ($0.sequence ?? 0) <= step }).max(by: { $0.version < $1.version })
        else {
            throw .refused(input: nil, reason: "index.json lists no root published before manifest \(manifest.version)")
        }
        do {
            return try HeadRecord(
                scope: scope, sequence: Int64(position), rootVersion: root.version,
                rootPayloadSHA256: root.payloadSHA256, manifestRootVersion: manifest.rootVersion,
                manifestVersion: manifest.version, manifestPayloadSHA256: manifest.payloadSHA256)
        } catch {
            throw .refused(input: nil, reason: "index.json manifest \(manifest.version): \(error)")
        }
    }

    /// Step 1: re-submits the current checkpoint; below the quorum nothing may be written.
    ///
    /// - Returns: the freshly cosigned current note, or nil for a log not started.
    func reCosignCurrent(crypto: CryptoProvider) throws(PublishError) -> (note: SignedNote, outcome: LogStepOutcome)? {
        guard let current else { return nil }
        let round = WitnessRound.collect(
            note: current.note, checkpoint: current.checkpoint,
            body: LogPublishing.reCosignBody(note: current.note, checkpoint: current.checkpoint), policy: policy,
            client: context.witnesses, reader: LogTileFiles(files: files), crypto: crypto)
        guard round.evidence.isEmpty else {
            throw .refused(
                input: nil,
                reason: WitnessRound.evidenceReport(
                    round.evidence, ours: current.note, unchanged: "nothing was written"))
        }
        guard round.cosigners.count >= policy.quorum else {
            throw .refused(input: nil, reason: belowQuorum(round.cosigners, round.failures, pending: false))
        }
        return (
            round.note,
            LogStepOutcome(
                size: current.checkpoint.size, appended: 0, cosigners: round.cosigners, failures: round.failures,
                cosignedAt: round.cosignedAt)
        )
    }

    func belowQuorum(_ cosigners: [String], _ failures: [String], pending: Bool) -> String {
        let what =
            pending
            ? "the publish is pending (\(files.pendingCheckpointPath)); checkpoint, manifest.proof and manifest.json are unchanged: run pinion log refresh once the witnesses are back"
            : "nothing was written"
        return
            "\(cosigners.count) of the \(policy.witnesses.count) witnesses cosigned, the quorum is \(policy.quorum) (\(failures.joined(separator: "; "))); \(what)"
    }
}
