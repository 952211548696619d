// Typed errors and events of the client trust core (docs/DESIGN.md §6).

import PinionCore
import PinionLog

/// Why a refresh step was refused. Every refusal leaves the state and the effective
/// policy as they were.
///
/// A struct over a `package` code, as async-http-client's `HTTPClientError`: a new kind of
/// refusal is a new static member, never a new enum case that breaks a caller's exhaustive
/// `switch`. Compare with `==` (`error == .rollback(offered: a, floor: b)`), read a payload
/// through its accessor (`trustError`, `logRefusal`, `storageError`, `resource`, `reason`),
/// or branch on the stable `reasonCode`.
public struct ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of refusal and their payloads. Package-wide so that the SDK's own modules
    /// match kinds the compiler checks (and classify every kind in exhaustive switches),
    /// while an app cannot switch over them.
    package enum Code: Sendable, Equatable {
        case trust(TrustError)
        case rollback(offered: ManifestOrder, floor: ManifestOrder)
        case equivocation(order: ManifestOrder)
        case invalidEmbeddedRoot(String)
        case tooManyRotations(limit: Int)
        case fetchFailed(resource: String, reason: String)
        case fetchRefused(resource: String, reason: String)
        case stateUnreadable(StorageError)
        case log(LogRefusal)
    }

    /// The kind of refusal and its payload.
    package let code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// The document broke a format or trust rule (signatures, thresholds, scope, ...).
    ///
    /// - Parameter error: the rule broken.
    /// - Returns: the refusal.
    public static func trust(_ error: TrustError) -> ClientError { ClientError(.trust(error)) }

    /// A manifest ordered below the floor (docs/DESIGN.md §6 step 4).
    ///
    /// - Parameters:
    ///   - offered: the order of the refused manifest.
    ///   - floor: the order of the accepted manifest it falls below.
    /// - Returns: the refusal.
    public static func rollback(offered: ManifestOrder, floor: ManifestOrder) -> ClientError {
        ClientError(.rollback(offered: offered, floor: floor))
    }

    /// A manifest with the floor's (rootVersion, version) but other payload bytes: the
    /// publisher or a signer shows different clients different documents.
    ///
    /// - Parameter order: the order both manifests claim.
    /// - Returns: the refusal.
    public static func equivocation(order: ManifestOrder) -> ClientError { ClientError(.equivocation(order: order)) }

    /// The embedded root does not verify, or names another scope: an app build error.
    ///
    /// - Parameter reason: what is wrong with it.
    /// - Returns: the refusal.
    public static func invalidEmbeddedRoot(_ reason: String) -> ClientError {
        ClientError(.invalidEmbeddedRoot(reason))
    }

    /// The root walk met more than `RootChain.maxRotationsPerWalk` new roots; the verified
    /// prefix is kept and the walk resumes at the next refresh.
    ///
    /// - Parameter limit: the most new roots one walk accepts.
    /// - Returns: the refusal.
    public static func tooManyRotations(limit: Int) -> ClientError { ClientError(.tooManyRotations(limit: limit)) }

    /// A fetch failed (status other than 200/304/404 where allowed, or a network error).
    ///
    /// - Parameters:
    ///   - resource: the published file's path, e.g. `manifest.json`.
    ///   - reason: what failed.
    /// - Returns: the refusal.
    public static func fetchFailed(resource: String, reason: String) -> ClientError {
        ClientError(.fetchFailed(resource: resource, reason: reason))
    }

    /// The update channel refused a fetch: a redirect to http or to another host, publisher
    /// pins not met, a 304 to a request that sent no If-None-Match. Not a network failure:
    /// retrying does not help until the publisher is fixed.
    ///
    /// - Parameters:
    ///   - resource: the published file's path, e.g. `manifest.json`.
    ///   - reason: why the channel refused it.
    /// - Returns: the refusal.
    public static func fetchRefused(resource: String, reason: String) -> ClientError {
        ClientError(.fetchRefused(resource: resource, reason: reason))
    }

    /// The stored state exists but could not be read (permission, I/O error, a device still
    /// locked): the refresh was skipped and nothing was dropped or overwritten
    /// (docs/DESIGN.md §6). Delivered as a `.networkFailure` outcome (exit 3 in the CLI).
    ///
    /// - Parameter error: the storage failure.
    /// - Returns: the refusal.
    public static func stateUnreadable(_ error: StorageError) -> ClientError { ClientError(.stateUnreadable(error)) }

    /// The newest root has a `log` member and manifest.proof was missing or failed its
    /// check (docs/DESIGN.md §12): the refresh is refused and the state is unchanged (only
    /// the evidence of a log equivocation is kept).
    ///
    /// - Parameter refusal: why the log step refused.
    /// - Returns: the refusal.
    public static func log(_ refusal: LogRefusal) -> ClientError { ClientError(.log(refusal)) }

    /// The trust or format rule broken, for a `trust` refusal; nil otherwise.
    public var trustError: TrustError? {
        if case .trust(let error) = code { return error }
        return nil
    }

    /// Why the log step refused, for a `log` refusal; nil otherwise.
    public var logRefusal: LogRefusal? {
        if case .log(let refusal) = code { return refusal }
        return nil
    }

    /// The storage failure, for a `stateUnreadable` refusal; nil otherwise.
    public var storageError: StorageError? {
        if case .stateUnreadable(let error) = code { return error }
        return nil
    }

    /// The published file's path (e.g. `root/2.json`), for a `fetchFailed` or `fetchRefused`
    /// refusal; nil otherwise.
    public var resource: String? {
        switch code {
        case .fetchFailed(let resource, _), .fetchRefused(let resource, _): return resource
        case .trust, .rollback, .equivocation, .invalidEmbeddedRoot, .tooManyRotations, .stateUnreadable, .log:
            return nil
        }
    }

    /// The free-text reason of a `fetchFailed`, `fetchRefused` or `invalidEmbeddedRoot`
    /// refusal; nil for the others (their payloads are typed).
    public var reason: String? {
        switch code {
        case .fetchFailed(_, let reason), .fetchRefused(_, let reason), .invalidEmbeddedRoot(let reason): return reason
        case .trust, .rollback, .equivocation, .tooManyRotations, .stateUnreadable, .log: return nil
        }
    }

    /// The shared reason code of conformance/README.md, e.g. `rollback`, `threshold-not-met`,
    /// `fetch-refused`, `log-quorum-not-met`: stable across releases and SDKs, for logs,
    /// metrics and branching.
    public var reasonCode: String {
        switch code {
        case .trust(let trust): return trust.reasonCode
        case .rollback: return "rollback"
        case .equivocation: return "equivocation"
        case .invalidEmbeddedRoot: return "invalid-embedded-root"
        case .tooManyRotations: return "too-many-rotations"
        case .fetchFailed: return "network"
        case .fetchRefused: return "fetch-refused"
        case .stateUnreadable: return "storage"
        case .log(let refusal): return refusal.reasonCode
        }
    }

    public var description: String {
        switch code {
        case .trust(let error): return error.description
        case .rollback(let offered, let floor): return "rollback: \(offered) is below the floor \(floor)"
        case .equivocation(let order):
            return "equivocation: a different manifest with the same \(order) as the accepted one"
        case .invalidEmbeddedRoot(let reason): return "the embedded root is invalid: \(reason)"
        case .tooManyRotations(let limit): return "more than \(limit) root rotations in one refresh"
        case .fetchFailed(let resource, let reason): return "\(resource): \(reason)"
        case .fetchRefused(let resource, let reason): return "\(resource): \(reason)"
        case .stateUnreadable(let error):
            return "the stored state cannot be read (\(error)); refresh skipped, nothing dropped"
        case .log(let refusal): return "manifest.proof: \(refusal.reasonCode): \(refusal)"
        }
    }
}

/// Something a refresh or start-up observed that an app should log or act on.
public enum ClientEvent: Sendable, Equatable {
    /// A new manifest was accepted.
    case updated(ManifestOrder)
    /// Nothing new: 304, or the same payload again (possibly with more co-signatures).
    case unchanged
    /// A root rotation was verified and accepted.
    case rootAccepted(version: Int64)
    /// A fetched document was refused.
    case rejected(ClientError)
    /// The publisher could not be reached or answered with an unexpected status.
    case networkFailure(String)
    /// The wall clock is more than 5 minutes behind the last known time; the last known
    /// time is used instead.
    case clockSteppedBack(wallClock: Timestamp, lastKnownTime: Timestamp)
    /// The manifest's issuedAt is more than a day after the refresh start time (device
    /// clock behind, or a future-dated manifest). It never moves lastKnownTime.
    case futureDated(issuedAt: Timestamp, startTime: Timestamp)
    /// Equivocation: reported loudly (also delivered as `.rejected(.equivocation)`).
    case equivocation(ManifestOrder)
    /// The stored state was refused at start-up and dropped (every copy lost, or a part that
    /// no longer verifies); domains it named stay enforced.
    case storeDropped(String)
    /// The effective policy removed trust (a pin dropped or revoked, a domain newly pinned or
    /// enforced, a manifest expired): connections and TLS sessions made before must not be
    /// reused (`PinningClient.trustGeneration` is now `generation`).
    case trustRemoved(generation: UInt64)
    /// One copy of the stored state was missing, corrupt, of another scope or of a newer
    /// format, and was rewritten from the surviving record; nothing was dropped. `file` is
    /// the copy's name, `reason` why it was lost.
    case stateCopyLost(file: String, reason: String)
    /// The stored state exists but could not be read (permission, I/O error, a device still
    /// locked). At start-up the client runs on its baseline and loads the state at the next
    /// refresh; a refresh is skipped. Nothing is dropped or overwritten.
    case stateUnreadable(StorageError)
    /// The stored manifest no longer verifies as current (root rotated, expired or
    /// re-check failed); it keeps taking trust away as a non-current manifest.
    case manifestNotCurrent(String)
    /// The stored log checkpoint's t_q is older than the newest root's `maxCheckpointAge`
    /// (a freeze or a stale cache, docs/DESIGN.md §12); raised once per checkpoint, at the
    /// refresh or the first connection past that age. `age` is in seconds at `now`.
    case staleCheckpoint(size: UInt64, quorumTime: Int64, age: Int64)
    /// The log signed two different trees of one size (a split view): the refresh was
    /// refused (the state as after the root walk) and both checkpoint notes go with the
    /// event; `PinningClient` keeps the first in `log-equivocation.json`
    /// (`logEquivocationEvidence`). Report it loudly.
    case logEquivocation(Equivocation)
    /// Cosignatures dated more than 5 minutes ahead of the refresh time: the named
    /// witnesses, and whether t_q itself is ahead (then it counts as age 0, and is stored as
    /// the refresh time). Never moves `lastKnownTime`.
    case futureCosignatures(witnesses: [String], quorumTimeInFuture: Bool)
}
