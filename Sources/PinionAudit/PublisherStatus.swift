// The check behind `pinion status` (docs/DESIGN.md §14): walk the root chain and verify
// manifest.json as a client would, and say how long until clients start narrowing.

import PinionCore
import PinionLog
import PinionTrust

/// What a status check judges against.
public struct StatusOptions: Sendable, Equatable {
    /// The time expiry is judged at (passed explicitly; the check never reads a clock).
    public var at: Timestamp
    /// An expiry less than or equal to this many seconds after `at` is a warning.
    public var warnBefore: Int64
    /// When set, a served manifest version below it is a lagging publisher (broken).
    public var expectVersion: Int64?
    /// Size and count limits; each envelope is read up to `maxEnvelopeBytes`.
    public var limits: Limits
    /// When set and the root has a log, a checkpoint whose t_q is more than this many
    /// seconds old is a warning (before clients find it stale at `maxCheckpointAge`).
    public var warnCheckpointAge: Int64?

    /// - Parameters:
    ///   - at: the check time.
    ///   - warnBefore: the warning window, in seconds (default 7 days).
    ///   - expectVersion: the version the signers published, or nil.
    ///   - limits: document limits (default docs/DESIGN.md §5).
    ///   - warnCheckpointAge: the checkpoint age warning threshold, in seconds, or nil.
    public init(
        at: Timestamp, warnBefore: Int64 = 7 * 86_400, expectVersion: Int64? = nil, limits: Limits = .standard,
        warnCheckpointAge: Int64? = nil
    ) {
        self.warnCheckpointAge = warnCheckpointAge
        self.at = at
        self.warnBefore = warnBefore
        self.expectVersion = expectVersion
        self.limits = limits
    }
}

/// The verdict of a status check, most severe first in `PublisherStatus.health`.
public enum StatusHealth: String, Sendable, Equatable {
    /// Everything verifies and nothing expires within the warning window.
    case healthy
    /// Something verifies but expires within the warning window.
    case warning
    /// Clients refuse what is served now: invalid, expired, missing or lagging.
    case broken
    /// The publisher or tree could not be read (network, TLS, HTTP status, permissions).
    case unreachable

    /// The exit code of `pinion status` (docs/DESIGN.md §11): 0, 4, 1, 3.
    public var exitCode: Int32 {
        switch self {
        case .healthy: return 0
        case .warning: return 4
        case .broken: return 1
        case .unreachable: return 3
        }
    }
}

/// One finding of a status check.
public enum StatusProblem: Sendable, Equatable, CustomStringConvertible {
    /// A file could not be read (`TreeSourceError.io`).
    case unreachable(file: String, detail: String)
    /// A file is refused as a property of the tree (a link, a FIFO, too large).
    case fileRefused(file: String, detail: String)
    /// `root/{version}.json` does not verify as the next root.
    case rootInvalid(version: Int64, error: TrustError)
    /// More rotations than a client follows in one refresh.
    case tooManyRotations(limit: Int)
    /// The newest root has expired at the check time.
    case rootExpired(version: Int64, expiresAt: Timestamp)
    /// No `manifest.json` is published (404 or no file) while roots are.
    case manifestMissing
    /// Neither `manifest.json` nor the trusted root's own `root/{version}.json` is there:
    /// nothing of this scope is published at this location (a wrong URL or scope).
    case scopeNotPublished(anchorVersion: Int64)
    /// `manifest.json` does not verify under the newest root.
    case manifestInvalid(error: TrustError)
    /// The manifest has expired at the check time.
    case manifestExpired(version: Int64, expiresAt: Timestamp)
    /// The served manifest is older than `--expect-version`.
    case publisherLagging(served: Int64, expected: Int64)
    /// The newest root expires within the warning window; `secondsLeft` > 0.
    case rootExpiresSoon(version: Int64, expiresAt: Timestamp, secondsLeft: Int64)
    /// The manifest expires within the warning window; `secondsLeft` > 0.
    case manifestExpiresSoon(version: Int64, expiresAt: Timestamp, secondsLeft: Int64)
    /// The root has a log and clients refuse manifest.proof; `reason` is the client's
    /// refusal code (`log-proof-missing`, `log-quorum-not-met`, ...).
    case logProofRefused(reason: String, detail: String)
    /// t_q is past maxCheckpointAge + checkpointGrace: clients treat the manifest as expired.
    case checkpointExpired(age: Int64, limit: Int64)
    /// t_q is past maxCheckpointAge: clients raise `staleCheckpoint`.
    case checkpointStale(age: Int64, maxCheckpointAge: Int64)
    /// t_q is older than `--warn-checkpoint-age` (seconds).
    case checkpointAging(age: Int64, warnAfter: Int64)
    /// Witnesses whose cosignature is dated more than `LogFreshness.allowedFutureSkew`
    /// (5 minutes) after the check time: clients accept it and report `futureCosignatures`
    /// (docs/DESIGN.md §12 "future t_q"), so it is a warning.
    case futureCosignatures(witnesses: [String])
    /// `log/checkpoint`, which monitors and witnesses read, is missing, unreadable as a
    /// checkpoint of the root's log, or another tree than the one manifest.proof carries
    /// (a publish or `pinion log refresh` stopped between the two writes): auditors then
    /// check another view than clients get.
    case logCheckpointDiffers(detail: String)
    /// A consistent skew of an upload in progress (docs/DESIGN.md §9, upload phases): a
    /// cosigned manifest.proof naming a later manifest or root than the ones served, or a
    /// manifest.json signed under the root right after the newest served. Clients refuse
    /// the newer file and keep their state until the last phase is uploaded; a warning,
    /// not broken. `detail` says which file is ahead.
    case publishInProgress(detail: String)

    /// A stable identifier for machines (JSON `problems[].code`).
    public var code: String {
        switch self {
        case .unreachable: return "unreachable"
        case .fileRefused: return "file-refused"
        case .rootInvalid: return "root-invalid"
        case .tooManyRotations: return "too-many-rotations"
        case .rootExpired: return "root-expired"
        case .manifestMissing: return "manifest-missing"
        case .scopeNotPublished: return "scope-not-published"
        case .manifestInvalid: return "manifest-invalid"
        case .manifestExpired: return "manifest-expired"
        case .publisherLagging: return "publisher-lagging"
        case .rootExpiresSoon: return "root-expires-soon"
        case .manifestExpiresSoon: return "manifest-expires-soon"
        case .logProofRefused: return "log-proof-refused"
        case .checkpointExpired: return "checkpoint-expired"
        case .checkpointStale: return "checkpoint-stale"
        case .checkpointAging: return "checkpoint-aging"
        case .futureCosignatures: return "future-cosignatures"
        case .logCheckpointDiffers: return "log-checkpoint-differs"
        case .publishInProgress: return "publish-in-progress"
        }
    }

    /// The verdict this finding alone leads to.
    public var health: StatusHealth {
        switch self {
        case .unreachable, .scopeNotPublished: return .unreachable
        case .rootExpiresSoon, .manifestExpiresSoon, .checkpointStale, .checkpointAging, .futureCosignatures,
            .publishInProgress:
            return .warning
        default: return .broken
        }
    }

    /// The file the finding is about, relative to the scope directory where known.
    public var file: String? {
        switch self {
        case .unreachable(let file, _), .fileRefused(let file, _): return file
        case .rootInvalid(let version, _): return TreeFile.root(version).path
        case .rootExpired(let version, _), .rootExpiresSoon(let version, _, _): return TreeFile.root(version).path
        case .tooManyRotations, .scopeNotPublished, .publishInProgress: return nil
        case .logCheckpointDiffers: return TreeFile.logCheckpoint.path
        case .logProofRefused, .checkpointExpired, .checkpointStale, .checkpointAging, .futureCosignatures:
            return TreeFile.manifestProof.path
        default: return TreeFile.manifest.path
        }
    }

    public var description: String {
        switch self {
        case .unreachable(let file, let detail): return "\(file): unreachable: \(detail)"
        case .fileRefused(let file, let detail): return "\(file): refused: \(detail)"
        case .rootInvalid(let version, let error): return "root/\(version).json: not a valid next root: \(error)"
        case .tooManyRotations(let limit):
            return "more than \(limit) root rotations: a client stops there and resumes at its next refresh"
        case .rootExpired(let version, let expiresAt):
            return "root/\(version).json: the newest root expired at \(expiresAt): clients accept no manifest"
        case .manifestMissing: return "manifest.json: not published"
        case .scopeNotPublished(let anchorVersion):
            return
                "neither manifest.json nor root/\(anchorVersion).json is published here: no tree of this scope at this location"
        case .manifestInvalid(let error): return "manifest.json: refused by clients: \(error)"
        case .manifestExpired(let version, let expiresAt):
            return "manifest.json: version \(version) expired at \(expiresAt): clients fall back to their baseline pins"
        case .publisherLagging(let served, let expected):
            return "manifest.json: serves version \(served), but version \(expected) was published (--expect-version)"
        case .rootExpiresSoon(let version, let expiresAt, let left):
            return "root/\(version).json: the newest root expires at \(expiresAt), in \(left) s"
        case .manifestExpiresSoon(let version, let expiresAt, let left):
            return "manifest.json: version \(version) expires at \(expiresAt), in \(left) s"
        case .logProofRefused(let reason, let detail):
            return "manifest.proof: refused by clients (\(reason)): \(detail)"
        case .checkpointExpired(let age, let limit):
            return
                "manifest.proof: the checkpoint's t_q is \(age) s old, past maxCheckpointAge + checkpointGrace (\(limit) s): clients treat the manifest as expired"
        case .checkpointStale(let age, let maxAge):
            return
                "manifest.proof: the checkpoint's t_q is \(age) s old, past maxCheckpointAge (\(maxAge) s): clients raise staleCheckpoint (run pinion log refresh)"
        case .checkpointAging(let age, let warnAfter):
            return
                "manifest.proof: the checkpoint's t_q is \(age) s old, more than --warn-checkpoint-age (\(warnAfter) s)"
        case .futureCosignatures(let witnesses):
            return
                "manifest.proof: the cosignature of witness \(witnesses.joined(separator: ", ")) is dated more than \(LogFreshness.allowedFutureSkew) s after the check time: its clock is wrong (clients report futureCosignatures)"
        case .logCheckpointDiffers(let detail):
            return "log/checkpoint: \(detail) (run pinion log refresh; pinion audit checks the log from this file)"
        case .publishInProgress(let detail):
            return
                "publish in progress: \(detail); clients keep their state meanwhile (if this lasts beyond the upload, finish it: the plan's remaining phases)"
        }
    }
}

/// What a status check found.
public struct PublisherStatus: Sendable, Equatable {
    /// The newest verified root.
    public struct Root: Sendable, Equatable {
        public var version: Int64
        public var issuedAt: Timestamp
        public var expiresAt: Timestamp
        /// `expiresAt - at`, in seconds (negative once expired).
        public var secondsLeft: Int64
        /// The root's cap on manifest lifetimes, in seconds.
        public var maxManifestLifetime: Int64
    }

    /// The served manifest, verified under the newest root.
    public struct Manifest: Sendable, Equatable {
        public var version: Int64
        public var rootVersion: Int64
        public var issuedAt: Timestamp
        public var expiresAt: Timestamp
        /// `expiresAt - at`, in seconds (negative once expired).
        public var secondsLeft: Int64
        /// Key ids (lowercase hex) whose signatures counted toward the pins threshold.
        public var signers: [String]
        /// SHA-256 of the payload bytes: the manifest's identity.
        public var payloadSHA256: [UInt8]
        /// Number of domains pinned.
        public var domainCount: Int
    }

    /// The scope checked (the trusted root's).
    public var scope: String
    /// Where the tree was read from (a directory or URL).
    public var location: String
    /// The options the check ran with.
    public var options: StatusOptions
    /// The version of the trusted root the walk started from.
    public var anchorVersion: Int64
    /// The newest root reached, or nil when not even the anchor's chain could be read.
    public var root: Root?
    /// The manifest, when it verified under the newest root (expired or not).
    public var manifest: Manifest?
    /// ETag and Cache-Control of `manifest.json`'s response (nil for a directory).
    public var headers: PublisherHeaders?
    /// The log's checkpoint as manifest.proof carries it, when the root has a log and the
    /// proof verified.
    public var log: LogStatus? = nil
    /// Every finding, in the order found.
    public var problems: [StatusProblem]

    /// The worst verdict: broken, then unreachable, then warning, else healthy.
    public var health: StatusHealth {
        let verdicts = Set(problems.map(\.health))
        if verdicts.contains(.broken) { return .broken }
        if verdicts.contains(.unreachable) { return .unreachable }
        if verdicts.contains(.warning) { return .warning }
        return .healthy
    }

    /// When clients start narrowing: the earlier of the newest root's and the manifest's
    /// expiry (nil when either is unknown).
    public var narrowsAt: Timestamp? {
        guard let root, let manifest else { return nil }
        return min(root.expiresAt, manifest.expiresAt)
    }
}

/// Checks a publisher's tree of one scope as a client refresh would (docs/DESIGN.md §6
/// steps 1-5), without state: no floor, no persistence.
public enum PublisherStatusCheck {
    /// Walks `root/{n+1}.json` from the anchor until one is absent, verifying each
    /// rotation, then verifies `manifest.json` under the newest root and judges expiry and
    /// lag at `options.at`.
    ///
    /// - Parameters:
    ///   - anchor: the trusted root chain (the root an app embeds).
    ///   - source: the scope's files; an `HeaderReportingTreeSource` also yields the
    ///     manifest's ETag and Cache-Control.
    ///   - crypto: Ed25519 and SHA-256.
    ///   - options: time, warning window, expected version, limits.
    /// - Returns: the findings; never throws (an unreadable source is a finding).
    public static func check(
        anchor: RootChain, source: any TreeSource, crypto: CryptoProvider, options: StatusOptions
    ) -> PublisherStatus {
        var status = PublisherStatus(
            scope: anchor.newest.payload.scope, location: source.location, options: options,
            anchorVersion: anchor.newest.version, root: nil, manifest: nil, headers: nil, problems: [])
        var chain = anchor
        guard walkRoots(&chain, source: source, crypto: crypto, options: options, into: &status) else {
            status.root = rootStatus(chain.newest, at: options.at)
            return status
        }
        let newest = chain.newest
        status.root = rootStatus(newest, at: options.at)
        if newest.payload.expiresAt <= options.at {
            status.problems.append(.rootExpired(version: newest.version, expiresAt: newest.payload.expiresAt))
        } else if newest.payload.expiresAt.secondsSince1970 - options.at.secondsSince1970 <= options.warnBefore {
            status.problems.append(
                .rootExpiresSoon(
                    version: newest.version, expiresAt: newest.payload.expiresAt,
                    secondsLeft: newest.payload.expiresAt.secondsSince1970 - options.at.secondsSince1970))
        }
        checkManifest(under: newest, source: source, crypto: crypto, options: options, into: &status)
        return status
    }

    /// Follows rotations (`RootChainWalk`); false when the walk ended in a failure (recorded
    /// in `status`).
    private static func walkRoots(
        _ chain: inout RootChain, source: any TreeSource, crypto: CryptoProvider, options: StatusOptions,
        into status: inout PublisherStatus
    ) -> Bool {
        var walk = RootChainWalk(from: chain, crypto: crypto, limits: options.limits)
        let end = walk.run(lookup: { (version) throws(TreeSourceError) -> [UInt8]? in
            try source.read(.root(version), limit: options.limits.maxEnvelopeBytes)
        })
        chain = walk.chain
        switch end {
        case .complete:
            return true
        case .lookupFailed(_, let error):
            status.problems.append(problem(error))
        case .refused(_, _, .tooManyRotations(let limit)):
            status.problems.append(.tooManyRotations(limit: limit))
        case .refused(let version, _, let error):
            status.problems.append(.rootInvalid(version: version, error: error))
        }
        return false
    }

    private static func checkManifest(
        under root: VerifiedRoot, source: any TreeSource, crypto: CryptoProvider, options: StatusOptions,
        into status: inout PublisherStatus
    ) {
        let limit = options.limits.maxEnvelopeBytes
        let read: [UInt8]?
        do {
            if let headered = source as? any HeaderReportingTreeSource {
                let response = try headered.readWithHeaders(.manifest, limit: limit)
                status.headers = response.headers
                read = response.bytes
            } else {
                read = try source.read(.manifest, limit: limit)
            }
        } catch {
            status.problems.append(problem(error))
            return
        }
        guard let bytes = read else {
            // Tell a wrong URL or scope from a tree that lost its manifest.
            let anchorFile: [UInt8]?
            do { anchorFile = try source.read(.root(status.anchorVersion), limit: limit) } catch {
                status.problems.append(problem(error))
                return
            }
            status.problems.append(
                anchorFile == nil ? .scopeNotPublished(anchorVersion: status.anchorVersion) : .manifestMissing)
            return
        }
        let verified: VerifiedManifest
        do { verified = try ManifestVerifier.verify(bytes, under: root, crypto: crypto, limits: options.limits) } catch
        {
            if let ahead = signedUnderNextRoot(bytes, newest: root, limits: options.limits) {
                status.problems.append(
                    .publishInProgress(
                        detail:
                            "manifest.json (version \(ahead)) is signed under root \(root.version + 1), and root/\(root.version + 1).json is not served yet"
                    ))
            } else {
                status.problems.append(.manifestInvalid(error: error))
            }
            return
        }
        let payload = verified.payload
        let left = payload.expiresAt.secondsSince1970 - options.at.secondsSince1970
        status.manifest = PublisherStatus.Manifest(
            version: payload.version, rootVersion: payload.rootVersion, issuedAt: payload.issuedAt,
            expiresAt: payload.expiresAt, secondsLeft: left, signers: verified.report.valid.sorted(),
            payloadSHA256: verified.payloadSHA256, domainCount: payload.domains.count)
        if left <= 0 {
            status.problems.append(.manifestExpired(version: payload.version, expiresAt: payload.expiresAt))
        } else if left <= options.warnBefore {
            status.problems.append(
                .manifestExpiresSoon(version: payload.version, expiresAt: payload.expiresAt, secondsLeft: left))
        }
        if let expected = options.expectVersion, payload.version < expected {
            status.problems.append(.publisherLagging(served: payload.version, expected: expected))
        }
        if let policy = root.payload.log {
            checkLog(
                policy: policy, root: root, manifest: verified, source: source, crypto: crypto, options: options,
                into: &status)
        }
    }

    /// The version of a manifest of the newest root's scope whose rootVersion is the root
    /// right after the newest (an upload that has reached manifest.json but not the roots
    /// yet), else nil. Its signatures cannot be checked without that root: clients refuse it
    /// and keep their state, so this is never read as trust, only as the skew's name.
    private static func signedUnderNextRoot(_ bytes: [UInt8], newest: VerifiedRoot, limits: Limits) -> Int64? {
        guard let envelope = try? Envelope.parse(bytes, limits: limits),
            let payload = try? ManifestPayload.parse(envelope.payload, limits: limits),
            payload.scope == newest.payload.scope, payload.rootVersion == newest.version + 1
        else { return nil }
        return payload.version
    }

    private static func rootStatus(_ root: VerifiedRoot, at: Timestamp) -> PublisherStatus.Root {
        let payload = root.payload
        return PublisherStatus.Root(
            version: payload.version, issuedAt: payload.issuedAt, expiresAt: payload.expiresAt,
            secondsLeft: payload.expiresAt.secondsSince1970 - at.secondsSince1970,
            maxManifestLifetime: payload.maxManifestLifetime)
    }

    static func problem(_ error: TreeSourceError) -> StatusProblem {
        switch error {
        case .io(let file, let detail): return .unreachable(file: file, detail: detail)
        case .refused(let file, _), .tooLarge(let file, _): return .fileRefused(file: file, detail: error.description)
        }
    }
}
