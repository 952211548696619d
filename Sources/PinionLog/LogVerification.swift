// The client's check of manifest.proof (docs/DESIGN.md §12), as a pure function of bytes, identities, stored state and time.

import PinionCore

/// Why a refresh's log proof was refused. The refresh then fails with this reason and the
/// client's state is unchanged.
public enum LogVerificationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// manifest.proof is not a well-formed tlog-proof within the limits.
    case malformedProof(TlogProofError)
    /// The checkpoint text is not a well-formed checkpoint.
    case malformedCheckpoint(CheckpointError)
    /// The checkpoint names another log.
    case wrongOrigin(String)
    /// 1. No signature by the log key.
    case logSignatureMissing
    /// 1. The log key's signature does not verify.
    case logSignatureInvalid
    /// 2. A listed witness's cosignature does not verify.
    case cosignatureInvalid(witness: String)
    /// 2. Fewer valid cosignatures by distinct listed witnesses than the quorum.
    case quorumNotMet(valid: Int, quorum: Int)
    /// 3. The proof is not for the last entry (index size - 1): a stale or partial proof.
    case notLastEntry(index: UInt64, size: UInt64)
    /// 3. No head record in the proof's `extra`.
    case headMissing
    /// 3. The head record is malformed.
    case malformedHead(HeadRecordError)
    /// 3. The head record is not included at that index in the checkpoint's tree.
    case inclusionFailed(MerkleError)
    /// 4. The head's sequence is not its index in the log.
    case sequenceMismatch(sequence: Int64, index: UInt64)
    /// 4. The head is for another scope.
    case scopeMismatch(String)
    /// 4. The log's newest root is newer than the client's: "root N+1 is logged but not served".
    case rootLoggedNotServed(logged: Int64, newest: Int64)
    /// 4. The head names another newest root than the client's (older, or same version and
    ///    another payload).
    case rootMismatch(logged: Int64, newest: Int64)
    /// 4. The head names another manifest than the one served: the served one is not logged.
    case manifestNotLogged(loggedVersion: Int64, servedVersion: Int64)
    /// 5. The checkpoint is smaller than the stored one (rollback of the log).
    case checkpointShrank(stored: UInt64, received: UInt64)
    /// 5. The same size as the stored checkpoint with another root hash: the log showed two
    ///    views. Both notes are kept as evidence; report this loudly.
    case equivocation(Equivocation)

    public var description: String {
        switch self {
        case .malformedProof(let error): return "manifest.proof: \(error)"
        case .malformedCheckpoint(let error): return "manifest.proof: \(error)"
        case .wrongOrigin(let origin): return "the checkpoint is for another log (\(origin))"
        case .logSignatureMissing: return "the checkpoint is not signed by the log key"
        case .logSignatureInvalid: return "the log key's signature on the checkpoint does not verify"
        case .cosignatureInvalid(let witness): return "witness \(witness)'s cosignature does not verify"
        case .quorumNotMet(let valid, let quorum):
            return "\(valid) valid witness cosignatures, the root requires \(quorum)"
        case .notLastEntry(let index, let size):
            return "the proof is for entry \(index), not the last entry \(size - 1) of the log (stale proof)"
        case .headMissing: return "the proof carries no head record"
        case .malformedHead(let error): return "\(error)"
        case .inclusionFailed(let error): return "the head record is not in the log: \(error)"
        case .sequenceMismatch(let sequence, let index):
            return "the head record's sequence \(sequence) is not its log index \(index)"
        case .scopeMismatch(let scope): return "the head record is for scope \(scope)"
        case .rootLoggedNotServed(let logged, _): return "root \(logged) is logged but not served"
        case .rootMismatch(let logged, let newest):
            return "the log names root \(logged), the newest root here is \(newest) (another payload or stale proof)"
        case .manifestNotLogged(let logged, let served):
            if logged == served {
                return "the served manifest version \(served) is not the one the log holds as version \(logged) "
                    + "(another payload: a manifest left out of the log)"
            }
            return "the served manifest version \(served) is not the logged head (version \(logged))"
        case .checkpointShrank(let stored, let received):
            return "the log checkpoint shrank from \(stored) to \(received) entries"
        case .equivocation(let evidence):
            return "EQUIVOCATION: the log signed two different trees of size \(evidence.stored.size)"
        }
    }
}

/// Two checkpoints of one size with different root hashes, both signed by the log key.
public struct Equivocation: Sendable, Equatable {
    /// The checkpoint the client had verified before.
    public let stored: Checkpoint
    /// Its signed note bytes.
    public let storedNote: [UInt8]
    /// The conflicting checkpoint just received.
    public let received: Checkpoint
    /// Its signed note bytes.
    public let receivedNote: [UInt8]

    /// Restores the evidence from the client's persisted record of it.
    package init(stored: Checkpoint, storedNote: [UInt8], received: Checkpoint, receivedNote: [UInt8]) {
        self.stored = stored
        self.storedNote = storedNote
        self.received = received
        self.receivedNote = receivedNote
    }
}

/// The verified checkpoint a client keeps with its state.
public struct StoredCheckpoint: Sendable, Equatable {
    /// The verified checkpoint.
    public let checkpoint: Checkpoint
    /// The cosigned note's bytes, kept as evidence.
    public let note: [UInt8]
    /// t_q of that note, POSIX seconds.
    public let quorumTime: Int64

    /// Restores a stored checkpoint from the client's persisted state.
    public init(checkpoint: Checkpoint, note: [UInt8], quorumTime: Int64) {
        self.checkpoint = checkpoint
        self.note = note
        self.quorumTime = quorumTime
    }
}

/// The served manifest as the client identifies it.
public struct ManifestIdentity: Sendable, Equatable {
    /// The manifest's scope.
    public let scope: String
    /// The version of the root the manifest names.
    public let rootVersion: Int64
    /// The manifest's (or root's) version.
    public let version: Int64
    /// SHA-256 of the payload bytes, 32 bytes.
    public let payloadSHA256: [UInt8]

    /// The served manifest's identity, from its verified payload.
    public init(scope: String, rootVersion: Int64, version: Int64, payloadSHA256: [UInt8]) {
        self.scope = scope
        self.rootVersion = rootVersion
        self.version = version
        self.payloadSHA256 = payloadSHA256
    }
}

/// The client's newest verified root.
public struct RootIdentity: Sendable, Equatable {
    /// The manifest's (or root's) version.
    public let version: Int64
    /// SHA-256 of the payload bytes, 32 bytes.
    public let payloadSHA256: [UInt8]

    /// The newest root's identity, from its verified payload.
    public init(version: Int64, payloadSHA256: [UInt8]) {
        self.version = version
        self.payloadSHA256 = payloadSHA256
    }
}

/// How fresh the newest cosignatures are, evaluated at every connection.
public enum LogFreshness: Sendable, Equatable {
    /// Freshness is off (`maxCheckpointAge` 0).
    case unchecked
    /// Age at most maxCheckpointAge, in seconds.
    case fresh(age: Int64)
    /// Past maxCheckpointAge: a `staleCheckpoint` event fires.
    case stale(age: Int64)
    /// Past maxCheckpointAge + checkpointGrace: the manifest counts as expired (narrow only).
    case expired(age: Int64)

    /// Seconds a t_q may lie ahead of `now` and still be taken as clock skew.
    public static let allowedFutureSkew: Int64 = 300

    /// - Parameters:
    ///   - quorumTime: t_q, POSIX seconds.
    ///   - now: the client's time, POSIX seconds.
    ///   - policy: the root's log configuration.
    /// - Returns: the freshness; a t_q in the future counts as age 0.
    public static func evaluate(quorumTime: Int64, now: Int64, policy: LogPolicy) -> LogFreshness {
        guard policy.maxCheckpointAge > 0 else { return .unchecked }
        let age = quorumTime >= now ? 0 : now - quorumTime
        if age > policy.maxCheckpointAge.addingReportingOverflow(policy.checkpointGrace).partialValue {
            return .expired(age: age)
        }
        if age > policy.maxCheckpointAge { return .stale(age: age) }
        return .fresh(age: age)
    }
}

/// What a verified proof established.
public struct VerifiedLogProof: Sendable, Equatable {
    /// The checkpoint to store with the client's state (replacing the old one).
    public let stored: StoredCheckpoint
    /// The head record the proof carried.
    public let head: HeadRecord
    /// Names of the witnesses whose valid cosignatures counted, newest first.
    public let witnesses: [String]
    /// Witnesses whose cosignature time is more than 5 minutes ahead of `now` (reported).
    public let futureCosignatures: [String]
    /// Whether t_q itself is more than 5 minutes ahead of `now`: reported, counted as age 0,
    /// and stored as `now` (so a future time never extends freshness).
    public let quorumTimeInFuture: Bool
    /// Freshness at `now`.
    public let freshness: LogFreshness
}

/// The client's verification of manifest.proof, in the order of docs/DESIGN.md §12.
public enum LogVerification {
    /// - Parameters:
    ///   - proofBytes: manifest.proof as fetched (limits applied while reading).
    ///   - policy: the newest root's `log` member.
    ///   - manifest: the served (and otherwise verified) manifest.
    ///   - newestRoot: the client's newest verified root.
    ///   - stored: the checkpoint kept from the last refresh, if any. One of another origin
    ///     is not compared; when a root rotation changes the log's origin or key, the caller
    ///     drops the stored checkpoint (docs/DESIGN.md §12).
    ///   - now: the client's time, POSIX seconds (never moved by cosignature times).
    ///   - crypto: Ed25519 and SHA-256.
    ///   - limits: the proof's size and line limits.
    /// - Returns: the verified proof and the checkpoint to store.
    /// - Throws: `LogVerificationError` naming the first check that failed.
    public static func verify(
        proofBytes: [UInt8], policy: LogPolicy, manifest: ManifestIdentity, newestRoot: RootIdentity,
        stored: StoredCheckpoint?, now: Int64, crypto: CryptoProvider, limits: TlogProofLimits = .standard
    ) throws(LogVerificationError) -> VerifiedLogProof {
        let hasher = MerkleHasher(crypto.hasher)
        let proof: TlogProof
        do { proof = try TlogProof.parse(proofBytes, limits: limits) } catch { throw .malformedProof(error) }
        let note = proof.checkpointNote
        let checkpoint: Checkpoint
        do { checkpoint = try Checkpoint.parse(note.text, hasher: hasher) } catch { throw .malformedCheckpoint(error) }
        guard NoteText.equal(checkpoint.origin, policy.origin) else { throw .wrongOrigin(checkpoint.origin) }

        try checkLogSignature(note, policy: policy, crypto: crypto)
        let cosigned = try quorumCosignatures(note, policy: policy, crypto: crypto)
        let quorumTime = Int64(clamping: cosigned[policy.quorum - 1].time)
        let head = try includedHead(proof, checkpoint: checkpoint, hasher: hasher)
        try checkHeadNames(head, index: proof.index, manifest: manifest, newestRoot: newestRoot)
        try checkAgainstStored(stored, checkpoint: checkpoint, note: note)

        // 6. Freshness from t_q. A t_q ahead of `now` counts as age 0 and is stored as `now`,
        // once: when the stored checkpoint is the same tree, its stored t_q stays, so
        // cosignatures dated in the future cannot keep a frozen view fresh for ever (the
        // checkpoint then ages from when it was first seen).
        let skewLimit = now.addingReportingOverflow(LogFreshness.allowedFutureSkew).partialValue
        let future = cosigned.filter { Int64(clamping: $0.time) > skewLimit }
        var effectiveQuorumTime = quorumTime
        if quorumTime > now, let stored, NoteText.equal(stored.checkpoint.origin, checkpoint.origin),
            stored.checkpoint.size == checkpoint.size, stored.checkpoint.rootHash == checkpoint.rootHash
        {
            effectiveQuorumTime = min(stored.quorumTime, now)
        }
        return VerifiedLogProof(
            stored: StoredCheckpoint(
                checkpoint: checkpoint, note: note.bytes, quorumTime: min(effectiveQuorumTime, now)),
            head: head, witnesses: cosigned.map(\.name), futureCosignatures: future.map(\.name),
            quorumTimeInFuture: quorumTime > skewLimit,
            freshness: LogFreshness.evaluate(quorumTime: effectiveQuorumTime, now: now, policy: policy))
    }

    /// 1. The log's own signature on the checkpoint.
    private static func checkLogSignature(
        _ note: SignedNote, policy: LogPolicy, crypto: CryptoProvider
    ) throws(LogVerificationError) {
        do {
            guard !(try note.verify(keys: [policy.logKey], verifier: crypto.verifier)).isEmpty else {
                throw LogVerificationError.logSignatureMissing
            }
        } catch let error as LogVerificationError {
            throw error
        } catch {
            throw .logSignatureInvalid
        }
    }

    /// 2. A quorum of cosignatures by distinct listed witness keys.
    ///
    /// - Returns: the witnesses whose cosignature verified and their times (POSIX seconds),
    ///   newest first; at least `policy.quorum` of them.
    private static func quorumCosignatures(
        _ note: SignedNote, policy: LogPolicy, crypto: CryptoProvider
    ) throws(LogVerificationError) -> [(name: String, time: UInt64)] {
        var cosigned = [(name: String, time: UInt64)]()
        for witness in policy.witnesses {
            let valid: [VerifiedNoteSignature]
            do { valid = try note.verify(keys: [witness.key], verifier: crypto.verifier) } catch {
                throw .cosignatureInvalid(witness: witness.name)
            }
            if let time = valid.first?.timestamp { cosigned.append((witness.name, time)) }
        }
        guard cosigned.count >= policy.quorum else { throw .quorumNotMet(valid: cosigned.count, quorum: policy.quorum) }
        cosigned.sort { $0.time > $1.time }
        return cosigned
    }

    /// 3. The proof's entry is the checkpoint's last, and its head record is included.
    private static func includedHead(
        _ proof: TlogProof, checkpoint: Checkpoint, hasher: MerkleHasher
    ) throws(LogVerificationError) -> HeadRecord {
        guard checkpoint.size > 0, proof.index == checkpoint.size - 1 else {
            throw .notLastEntry(index: proof.index, size: checkpoint.size)
        }
        guard let extra = proof.extra else { throw .headMissing }
        let head: HeadRecord
        do { head = try HeadRecord.parse(extra) } catch { throw .malformedHead(error) }
        do { try proof.verifyInclusion(leafHash: hasher.leafHash(extra), checkpoint: checkpoint, hasher: hasher) } catch
        {
            throw .inclusionFailed(error)
        }
        return head
    }

    /// 4. The head names the served manifest and the client's newest root.
    private static func checkHeadNames(
        _ head: HeadRecord, index: UInt64, manifest: ManifestIdentity, newestRoot: RootIdentity
    ) throws(LogVerificationError) {
        guard head.sequence >= 0, UInt64(head.sequence) == index else {
            throw .sequenceMismatch(sequence: head.sequence, index: index)
        }
        guard head.scope == manifest.scope else { throw .scopeMismatch(head.scope) }
        if head.rootVersion > newestRoot.version {
            throw .rootLoggedNotServed(logged: head.rootVersion, newest: newestRoot.version)
        }
        guard head.rootVersion == newestRoot.version, head.rootPayloadSHA256 == newestRoot.payloadSHA256 else {
            throw .rootMismatch(logged: head.rootVersion, newest: newestRoot.version)
        }
        guard head.manifestRootVersion == manifest.rootVersion, head.manifestVersion == manifest.version,
            head.manifestPayloadSHA256 == manifest.payloadSHA256
        else { throw .manifestNotLogged(loggedVersion: head.manifestVersion, servedVersion: manifest.version) }
    }

    /// 5. Not smaller than the stored checkpoint of the same origin; the same size with
    /// another hash is equivocation.
    private static func checkAgainstStored(
        _ stored: StoredCheckpoint?, checkpoint: Checkpoint, note: SignedNote
    ) throws(LogVerificationError) {
        guard let stored, NoteText.equal(stored.checkpoint.origin, checkpoint.origin) else { return }
        if checkpoint.size < stored.checkpoint.size {
            throw .checkpointShrank(stored: stored.checkpoint.size, received: checkpoint.size)
        }
        if checkpoint.size == stored.checkpoint.size, checkpoint.rootHash != stored.checkpoint.rootHash {
            throw .equivocation(
                Equivocation(
                    stored: stored.checkpoint, storedNote: stored.note, received: checkpoint,
                    receivedNote: note.bytes))
        }
    }
}
