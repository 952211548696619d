// The refresh's transparency-log step (docs/DESIGN.md §12): manifest.proof fetch results, refusal reasons, and the check of the proof against the trusted state.

import PinionCore
import PinionLog

/// Why a refresh was refused by its transparency-log step.
public enum LogRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// manifest.proof failed `LogVerification.verify`.
    case verification(LogVerificationError)
    /// manifest.proof is not served (404) or could not be read; carries why.
    case proofMissing(String)
    /// manifest.proof is larger than the limit, in bytes.
    case proofTooLarge(limit: Int)

    /// The reason code shared by the SDKs and the conformance suite: `log-` and the
    /// kebab-case name of the `LogVerificationError` case (`log-quorum-not-met`), or
    /// `log-proof-missing`, `log-proof-too-large`.
    public var reasonCode: String {
        switch self {
        case .proofMissing: return "log-proof-missing"
        case .proofTooLarge: return "log-proof-too-large"
        case .verification(let error):
            switch error {
            case .malformedProof(.tooLarge): return "log-proof-too-large"
            case .malformedProof: return "log-malformed-proof"
            case .malformedCheckpoint: return "log-malformed-checkpoint"
            case .wrongOrigin: return "log-wrong-origin"
            case .logSignatureMissing: return "log-signature-missing"
            case .logSignatureInvalid: return "log-signature-invalid"
            case .cosignatureInvalid: return "log-cosignature-invalid"
            case .quorumNotMet: return "log-quorum-not-met"
            case .notLastEntry: return "log-not-last-entry"
            case .headMissing: return "log-head-missing"
            case .malformedHead: return "log-malformed-head"
            case .inclusionFailed: return "log-inclusion-failed"
            case .sequenceMismatch: return "log-sequence-mismatch"
            case .scopeMismatch: return "log-scope-mismatch"
            case .rootLoggedNotServed: return "log-root-logged-not-served"
            case .rootMismatch: return "log-root-mismatch"
            case .manifestNotLogged: return "log-manifest-not-logged"
            case .checkpointShrank: return "log-checkpoint-shrank"
            case .equivocation: return "log-equivocation"
            }
        }
    }

    public var description: String {
        switch self {
        case .verification(let error): return error.description
        case .proofMissing(let reason): return "no proof: \(reason)"
        case .proofTooLarge(let limit): return "the proof is larger than \(limit) bytes"
        }
    }
}

/// What the log step of one refresh decided.
enum LogStep {
    /// Verified: the checkpoint to store and the events to report.
    case accepted(StoredCheckpoint, [ClientEvent])
    /// The served manifest (or the newest root) is not the logged head's: walk on and fetch
    /// manifest.json and the proof again, once (a publish writes root/N.json and
    /// manifest.proof before manifest.json, so a refresh can fall between).
    case mismatch(LogRefusal)
    /// Refused with this reason.
    case refused(LogRefusal)
    /// The proof could not be fetched (network), or the channel refused it.
    case fetchFailed(ClientError)
}

extension TrustCore {
    /// The stored checkpoint if it still belongs to `policy`'s log: the same origin and a
    /// valid signature by its log key. One of another origin or key (a root rotation changed
    /// the log) is dropped: nil.
    func storedCheckpoint(_ stored: StoredCheckpoint?, under policy: LogPolicy) -> StoredCheckpoint? {
        guard let stored, NoteText.equal(stored.checkpoint.origin, policy.origin),
            let note = try? SignedNote.parse(stored.note),
            let valid = try? note.verify(keys: [policy.logKey], verifier: crypto.verifier), !valid.isEmpty
        else { return nil }
        return stored
    }

    /// Fetches and verifies manifest.proof for the manifest `state` holds after the manifest
    /// step, in the order of docs/DESIGN.md §12.
    ///
    /// - Parameters:
    ///   - state: the state after the root walk and the manifest step.
    ///   - policy: the newest root's `log`.
    ///   - t0: the refresh's start time; freshness uses `max(t0, lastKnownTime)`.
    ///   - fetchProof: GET of manifest.proof, classified (`UpdateStatus.classify`).
    func logStep(
        _ state: TrustedState, policy: LogPolicy, startTime t0: Timestamp, fetchProof: () -> UpdateFetchResult
    ) -> LogStep {
        let bytes: [UInt8]
        let file = TreeFile.manifestProof.path
        switch fetchProof() {
        case .document(let body, _): bytes = body
        case .absent: return .refused(.proofMissing("the publisher serves no manifest.proof (404)"))
        case .tooLarge(let limit): return .refused(.proofTooLarge(limit: limit))
        case .failed(let reason): return .fetchFailed(.fetchFailed(resource: file, reason: reason))
        case .refused(let reason): return .fetchFailed(.fetchRefused(resource: file, reason: reason))
        case .notModified: return .fetchFailed(.fetchFailed(resource: file, reason: "HTTP 304"))
        }
        let identity: ManifestIdentity
        if let manifest = state.manifest, let payloadSHA256 = servedPayloadSHA256(state, manifest) {
            identity = ManifestIdentity(
                scope: manifest.scope, rootVersion: manifest.rootVersion, version: manifest.version,
                payloadSHA256: payloadSHA256)
        } else {
            // No manifest to match: no head can name it (refused at step 4).
            identity = ManifestIdentity(scope: scope, rootVersion: 0, version: 0, payloadSHA256: [])
        }
        let newest = state.chain.newest
        let now = max(t0, state.persisted.lastKnownTime ?? t0).secondsSince1970
        let verified: VerifiedLogProof
        do {
            verified = try LogVerification.verify(
                proofBytes: bytes, policy: policy, manifest: identity,
                newestRoot: RootIdentity(version: newest.version, payloadSHA256: newest.payloadSHA256),
                stored: storedCheckpoint(state.persisted.logCheckpoint, under: policy), now: now, crypto: crypto)
        } catch {
            switch error {
            case .manifestNotLogged, .rootLoggedNotServed: return .mismatch(.verification(error))
            default: return .refused(.verification(error))
            }
        }
        var events: [ClientEvent] = []
        if !verified.futureCosignatures.isEmpty || verified.quorumTimeInFuture {
            events.append(
                .futureCosignatures(
                    witnesses: verified.futureCosignatures, quorumTimeInFuture: verified.quorumTimeInFuture))
        }
        switch verified.freshness {
        case .stale(let age), .expired(let age):
            events.append(
                .staleCheckpoint(
                    size: verified.stored.checkpoint.size, quorumTime: verified.stored.quorumTime, age: age))
        case .fresh, .unchecked: break
        }
        return .accepted(verified.stored, events)
    }
}

extension TrustCore {
    /// SHA-256 of the held manifest's payload: the hash recorded with the floor when the
    /// manifest is the floor's (the manifest step just computed it), else from its envelope.
    fileprivate func servedPayloadSHA256(_ state: TrustedState, _ manifest: ManifestPayload) -> [UInt8]? {
        if let recorded = state.persisted.floorPayloadSHA256,
            state.persisted.floor == ManifestOrder(rootVersion: manifest.rootVersion, version: manifest.version)
        {
            return recorded
        }
        guard let stored = state.persisted.manifest, let envelope = try? Envelope.parse(stored, limits: limits) else {
            return nil
        }
        return crypto.hasher.sha256(envelope.payload)
    }
}

extension TrustedState {
    /// The instant the manifest stops counting as current because of log freshness
    /// (docs/DESIGN.md §12): the first second past t_q + maxCheckpointAge + checkpointGrace;
    /// the distant past when the newest root requires a log and no checkpoint is stored; nil
    /// when there is no log or freshness is off (`maxCheckpointAge` 0).
    public var logCurrentUntil: Timestamp? {
        guard let policy = chain.newest.payload.log, policy.maxCheckpointAge > 0 else { return nil }
        guard let stored = persisted.logCheckpoint else { return Timestamp(secondsSince1970: Int64.min / 2) }
        return Timestamp(secondsSince1970: stored.quorumTime).adding(seconds: policy.maxCheckpointAge)
            .adding(seconds: policy.checkpointGrace).adding(seconds: 1)
    }

    /// The instant the stored checkpoint becomes stale (the first second past t_q +
    /// maxCheckpointAge); nil without a log, a checkpoint or freshness.
    public var logStaleFrom: Timestamp? {
        guard let policy = chain.newest.payload.log, policy.maxCheckpointAge > 0,
            let stored = persisted.logCheckpoint
        else { return nil }
        return Timestamp(secondsSince1970: stored.quorumTime).adding(seconds: policy.maxCheckpointAge).adding(
            seconds: 1)
    }
}
