// `pinion status` with a transparency log: manifest.proof verified as a client does, the checkpoint's size, t_q and age.

import PinionCore
import PinionLog
import PinionTrust

/// The log's checkpoint as the served manifest.proof carries it.
public struct LogStatus: Sendable, Equatable {
    /// The log's origin.
    public var origin: String
    /// The checkpoint's tree size, in entries.
    public var size: UInt64
    /// The checkpoint's 32-byte root hash.
    public var rootHash: [UInt8]
    /// t_q: the quorum-th newest valid cosignature time, POSIX seconds (a time in the future
    /// beyond the allowed skew is reported as the check time, like a client stores it).
    public var quorumTime: Int64
    /// `at - t_q` in seconds, never negative.
    public var age: Int64
    /// The root's `maxCheckpointAge`, seconds (0: freshness off).
    public var maxCheckpointAge: Int64
    /// The root's `checkpointGrace`, seconds.
    public var checkpointGrace: Int64
    /// Names of the witnesses whose cosignatures verified.
    public var cosigners: [String]
}

extension PublisherStatusCheck {
    /// A proof that verified up to its last entry (log signature, quorum, inclusion) and
    /// names a later root or manifest than the ones served: the upload has reached
    /// manifest.proof but not manifest.json or the roots yet.
    private static func inProgress(_ error: LogVerificationError) -> StatusProblem? {
        switch error {
        case .rootLoggedNotServed(let logged, let newest):
            return .publishInProgress(
                detail: "manifest.proof is cosigned for root \(logged), and the newest root served is \(newest)")
        case .manifestNotLogged(let logged, let served) where logged > served:
            return .publishInProgress(
                detail: "manifest.proof is cosigned for manifest version \(logged), and manifest.json serves \(served)")
        default:
            return nil
        }
    }

    /// Reads manifest.proof and verifies it under the root's log policy for the verified
    /// manifest (no stored checkpoint: status keeps no state), then judges t_q's age.
    static func checkLog(
        policy: LogPolicy, root: VerifiedRoot, manifest: VerifiedManifest, source: any TreeSource,
        crypto: CryptoProvider, options: StatusOptions, into status: inout PublisherStatus
    ) {
        let bytes: [UInt8]?
        do { bytes = try source.read(.manifestProof, limit: TlogProofLimits.standard.maxBytes) } catch {
            if case .tooLarge = error {
                status.problems.append(.logProofRefused(reason: "log-proof-too-large", detail: error.description))
            } else {
                status.problems.append(problem(error))
            }
            return
        }
        guard let bytes else {
            status.problems.append(
                .logProofRefused(reason: "log-proof-missing", detail: "not published, but the newest root has a log"))
            return
        }
        let payload = manifest.payload
        let verified: VerifiedLogProof
        do {
            verified = try LogVerification.verify(
                proofBytes: bytes, policy: policy,
                manifest: ManifestIdentity(
                    scope: payload.scope, rootVersion: payload.rootVersion, version: payload.version,
                    payloadSHA256: manifest.payloadSHA256),
                newestRoot: RootIdentity(version: root.version, payloadSHA256: root.payloadSHA256), stored: nil,
                now: options.at.secondsSince1970, crypto: crypto)
        } catch {
            status.problems.append(
                inProgress(error) ?? .logProofRefused(reason: AuditRun.reasonCode(error), detail: error.description))
            return
        }
        let stored = verified.stored
        checkServedCheckpoint(
            stored.checkpoint, source: source, crypto: crypto, into: &status)
        let age = max(0, options.at.secondsSince1970 - stored.quorumTime)
        status.log = LogStatus(
            origin: policy.origin, size: stored.checkpoint.size, rootHash: stored.checkpoint.rootHash,
            quorumTime: stored.quorumTime, age: age, maxCheckpointAge: policy.maxCheckpointAge,
            checkpointGrace: policy.checkpointGrace, cosigners: verified.witnesses)
        if !verified.futureCosignatures.isEmpty {
            status.problems.append(.futureCosignatures(witnesses: verified.futureCosignatures))
        }
        switch verified.freshness {
        case .expired:
            status.problems.append(
                .checkpointExpired(
                    age: age,
                    limit: policy.maxCheckpointAge.addingReportingOverflow(policy.checkpointGrace).partialValue))
            return
        case .stale:
            status.problems.append(.checkpointStale(age: age, maxCheckpointAge: policy.maxCheckpointAge))
            return
        case .fresh, .unchecked: break
        }
        if let warnAfter = options.warnCheckpointAge, age > warnAfter {
            status.problems.append(.checkpointAging(age: age, warnAfter: warnAfter))
        }
    }

    /// `log/checkpoint` must carry the tree of manifest.proof's checkpoint (the same origin,
    /// size and root hash; the cosignatures may be newer).
    static func checkServedCheckpoint(
        _ proven: Checkpoint, source: any TreeSource, crypto: CryptoProvider,
        into status: inout PublisherStatus
    ) {
        let bytes: [UInt8]?
        do { bytes = try source.read(.logCheckpoint, limit: NoteLimits.standard.maxBytes) } catch {
            status.problems.append(problem(error))
            return
        }
        guard let bytes else {
            status.problems.append(.logCheckpointDiffers(detail: "missing, but the newest root has a log"))
            return
        }
        let served: Checkpoint
        do {
            served = try Checkpoint.parse(SignedNote.parse(bytes).text, hasher: MerkleHasher(crypto.hasher))
        } catch {
            status.problems.append(.logCheckpointDiffers(detail: "not a checkpoint note: \(error)"))
            return
        }
        if served.origin == proven.origin, served.size > proven.size {
            // Within an upload phase log/checkpoint may land before manifest.proof.
            status.problems.append(
                .publishInProgress(
                    detail:
                        "log/checkpoint holds tree size \(served.size), manifest.proof's checkpoint is size \(proven.size)"
                ))
            return
        }
        guard served.origin == proven.origin, served.size == proven.size, served.rootHash == proven.rootHash else {
            status.problems.append(
                .logCheckpointDiffers(
                    detail:
                        "holds tree size \(served.size) of \"\(served.origin)\", manifest.proof's checkpoint is size \(proven.size) of \"\(proven.origin)\"\(served.size == proven.size && served.origin == proven.origin ? " with another root hash" : "")"
                ))
            return
        }
    }
}
