// One client refresh (docs/DESIGN.md §6) in its three steps over the update-channel seam: the
// root walk, the manifest, the log proof. Each step reads the tree through one `UpdateFetcher`
// and `UpdateStatus.classify`; the trust decisions are TrustCore's.

import PinionCore
import PinionLog

extension TrustCore {
    /// One refresh (docs/DESIGN.md §6): the root walk (root N+1 until a 404 or 410, at most
    /// `RootChain.maxRotationsPerWalk`; any other answer ends the walk and fails the refresh,
    /// keeping the verified prefix), then the conditional manifest fetch and its checks, then,
    /// when the newest root has a `log`, manifest.proof (docs/DESIGN.md §12; fetched again
    /// once when it names another manifest than the served one). Any failure keeps the
    /// previous state of that step; nothing becomes unpinned.
    ///
    /// - Parameters:
    ///   - state: the current trusted state.
    ///   - t0: the start time (wall clock), read once by the caller.
    ///   - fetcher: the platform's update-channel fetcher.
    ///   - baselineDocument: the app's baseline document bytes (nil: none), named in the
    ///     manifest request's poll token together with the held manifest version.
    /// - Returns: the new state (persist it when `stateChanged`), the outcome and every event.
    public func refresh(
        _ state: TrustedState, startTime t0: Timestamp, fetcher: some UpdateFetcher, baselineDocument: [UInt8]? = nil
    ) -> RefreshedState {
        let token = PollToken(
            have: state.manifest.map { UInt64(clamping: $0.version) } ?? 0, baselineDocument: baselineDocument,
            hasher: crypto.hasher)
        var run = RefreshRun(core: self, start: state, startTime: t0, fetcher: fetcher, pollToken: token)
        return run.run()
    }
}

/// The working state of one refresh: the state and events so far, and how many roots this
/// refresh accepted (its share of the rotation limit).
struct RefreshRun<Fetcher: UpdateFetcher> {
    let core: TrustCore
    let start: TrustedState
    let t0: Timestamp
    let fetcher: Fetcher
    var current: TrustedState
    var events: [ClientEvent] = []
    var rotations = 0
    /// Sent with every manifest request of this refresh.
    let pollToken: PollToken

    init(core: TrustCore, start: TrustedState, startTime t0: Timestamp, fetcher: Fetcher, pollToken: PollToken) {
        self.pollToken = pollToken
        self.core = core
        self.start = start
        self.t0 = t0
        self.fetcher = fetcher
        current = start
        if let last = start.persisted.lastKnownTime, t0 < last.adding(seconds: -TrustCore.clockStepTolerance) {
            events.append(.clockSteppedBack(wallClock: t0, lastKnownTime: last))
        }
    }

    /// GETs one tree file and classifies the answer.
    func fetch(_ request: UpdateRequest) -> UpdateFetchResult {
        UpdateStatus.classify(request, fetcher.fetch(request))
    }

    func finish(_ outcome: RefreshOutcome, document: String? = nil, diagnosis: String? = nil) -> RefreshedState {
        RefreshedState(
            state: current, outcome: outcome, events: events, stateChanged: current.persisted != start.persisted,
            document: document, diagnosis: diagnosis)
    }

    /// The three steps, with one more walk and proof fetch when the proof names a root the
    /// walk did not see (the publisher added it in between).
    mutating func run() -> RefreshedState {
        if let failed = walkRoots() { return failed }
        // With a log, the manifest stands or falls with manifest.proof: a refused proof keeps
        // the state after the root walk (the verified roots, as any later failure does), with
        // the walk's events; a rotation that changed the log drops the old checkpoint.
        if rotations > 0 { core.reconcileLog(&current) }
        var afterWalk = (current, events)
        var retried = false
        while true {
            (current, events) = afterWalk
            let outcome: RefreshOutcome
            switch manifestStep() {
            case .done(let failure, let document, let diagnosis):
                return finish(failure, document: document, diagnosis: diagnosis)
            case .proceed(let success): outcome = success
            }
            guard let policy = current.chain.newest.payload.log else {
                current.persisted.logCheckpoint = nil
                return finish(outcome)
            }
            let step = core.logStep(current, policy: policy, startTime: t0) {
                fetch(UpdateRequest(file: .manifestProof, maxBytes: TlogProofLimits.standard.maxBytes))
            }
            if case .mismatch(let reason) = step, !retried {
                retried = true
                if case .verification(.rootLoggedNotServed) = reason {
                    // Walk on from the roots verified so far, then fetch both files again.
                    (current, events) = afterWalk
                    if let failed = walkRoots() { return failed }
                    if rotations > 0 { core.reconcileLog(&current) }
                    afterWalk = (current, events)
                }
                continue
            }
            return finishLog(step, outcome: outcome, afterWalk: afterWalk)
        }
    }

    /// The refresh's end after the log step (other than a first mismatch, which is retried).
    mutating func finishLog(_ step: LogStep, outcome: RefreshOutcome, afterWalk: (TrustedState, [ClientEvent]))
        -> RefreshedState
    {
        let refusal: LogRefusal
        switch step {
        case .accepted(let checkpoint, let logEvents):
            current.persisted.logCheckpoint = checkpoint
            events += logEvents
            return finish(outcome)
        case .mismatch(let reason), .refused(let reason):
            refusal = reason
        case .fetchFailed(let error):
            (current, events) = afterWalk
            if case .fetchRefused = error.code {
                events.append(.rejected(error))
                return finish(.rejected(error), document: TreeFile.manifestProof.path)
            }
            events.append(.networkFailure(error.description))
            return finish(.networkFailure(error))
        }
        (current, events) = afterWalk
        if case .verification(.equivocation(let evidence)) = refusal {
            // Both notes go out with the event; PinningClient keeps them in a side file.
            events.append(.logEquivocation(evidence))
        }
        let error = ClientError.log(refusal)
        events.append(.rejected(error))
        return finish(.rejected(error), document: TreeFile.manifestProof.path)
    }
}

extension RefreshRun {
    /// A walk that fails keeps its verified prefix (docs/DESIGN.md §6), with or without a
    /// log: roots are authorised by the root role; a log change drops the old checkpoint.
    mutating func walkFailed(_ outcome: RefreshOutcome, _ event: ClientEvent, document: String? = nil)
        -> RefreshedState
    {
        if rotations > 0 { core.reconcileLog(&current) }
        events.append(event)
        return finish(outcome, document: document)
    }

    /// The root walk from the newest trusted root (`RootChainWalk`, with what is left of this
    /// refresh's rotation limit); nil when it ended at a 404 or 410, else the failed refresh.
    /// The stored manifest stays current when it still verifies under the new newest root (its
    /// `pinsRoleSince` covers the manifest's rootVersion, docs/DESIGN.md §5); otherwise it stops
    /// being current until a manifest signed under the new pins role is accepted, which
    /// restarts the revoked set (until then revoked pins stay revoked, even in the baseline).
    mutating func walkRoots() -> RefreshedState? {
        var walk = RootChainWalk(
            from: current.chain, maxRotations: RootChain.maxRotationsPerWalk - rotations, crypto: core.crypto,
            limits: core.limits)
        let storedManifest = current.manifest != nil ? current.persisted.manifest : nil
        var acceptedBytes: [[UInt8]] = []
        // Whether the stored manifest verifies under the newest accepted root: checked once per
        // accepted root, for its event, and that last verdict is the state's.
        var manifestValid = false
        var walkEvents: [ClientEvent] = []
        let core = self.core
        let end = walk.run(
            lookup: { (version) throws(ClientError) -> [UInt8]? in
                let file = TreeFile.root(version)
                switch fetch(UpdateRequest(file: file)) {
                case .absent: return nil
                case .document(let bytes, _): return bytes
                case .refused(let reason): throw .fetchRefused(resource: file.path, reason: reason)
                case .failed(let reason): throw .fetchFailed(resource: file.path, reason: reason)
                case .tooLarge(let limit):
                    throw .fetchFailed(resource: file.path, reason: "larger than the limit of \(limit) bytes")
                case .notModified: throw .fetchFailed(resource: file.path, reason: "HTTP 304")
                }
            },
            accepted: { root, bytes in
                acceptedBytes.append(bytes)
                walkEvents.append(.rootAccepted(version: root.version))
                guard let storedManifest else { return }
                manifestValid =
                    (try? ManifestVerifier.verify(storedManifest, under: root, crypto: core.crypto, limits: core.limits))
                    != nil
                if !manifestValid {
                    walkEvents.append(
                        .manifestNotCurrent("root \(root.version) was accepted; the manifest must be re-signed"))
                }
            })
        events += walkEvents
        if !acceptedBytes.isEmpty {
            current.chain = walk.chain
            current.persisted.acceptedRoots += acceptedBytes
            current.manifestValid = manifestValid
            rotations += acceptedBytes.count
        }
        switch end {
        case .complete:
            return nil
        case .lookupFailed(let version, let error):
            if case .fetchRefused = error.code {
                return walkFailed(.rejected(error), .rejected(error), document: TreeFile.root(version).path)
            }
            return walkFailed(.networkFailure(error), .networkFailure(error.description))
        case .refused(let version, _, let trustError):
            let error: ClientError
            if case .tooManyRotations = trustError {
                error = .tooManyRotations(limit: RootChain.maxRotationsPerWalk)
            } else {
                error = .trust(trustError)
            }
            return walkFailed(.rejected(error), .rejected(error), document: TreeFile.root(version).path)
        }
    }

    /// What the manifest step decided.
    enum ManifestStepResult {
        /// The refresh ends here (a failure), with these details.
        case done(RefreshOutcome, document: String?, diagnosis: String?)
        /// The manifest step succeeded with this outcome; the log step follows when the
        /// newest root has a log.
        case proceed(RefreshOutcome)
    }

    /// A refresh that succeeds without a new manifest still moves lastKnownTime (the highest
    /// start time of a successful refresh, docs/DESIGN.md §6).
    mutating func succeededUnchanged(etag: String??) -> ManifestStepResult {
        current.persisted.lastKnownTime = max(current.persisted.lastKnownTime ?? t0, t0)
        if let etag, let storable = TrustCore.storableETag(etag) { current.persisted.manifestETag = storable }
        events.append(.unchanged)
        // A publisher that offers nothing newer than an expired manifest (a freeze, or a team
        // that forgot to re-sign) must not go unnoticed by the app.
        let now = max(t0, current.persisted.lastKnownTime ?? t0)
        if let manifest = current.manifest, manifest.expiresAt <= now {
            events.append(
                .manifestNotCurrent(
                    "version \(manifest.version) expired at \(manifest.expiresAt) and the publisher offers nothing newer"
                ))
        }
        return .proceed(.unchanged)
    }

    /// The conditional manifest fetch and its checks (docs/DESIGN.md §6 steps 3-5), on
    /// `current` after the root walk.
    mutating func manifestStep() -> ManifestStepResult {
        let file = TreeFile.manifest.path
        let sent = current.persisted.manifestETag
        let bytes: [UInt8]
        let etag: String?
        switch fetch(UpdateRequest(file: .manifest, ifNoneMatch: sent, pollToken: pollToken)) {
        case .notModified:
            return succeededUnchanged(etag: nil)
        case .document(let body, let tag):
            (bytes, etag) = (body, tag)
        case .refused(let reason):
            let error = ClientError.fetchRefused(resource: file, reason: reason)
            events.append(.rejected(error))
            return .done(.rejected(error), document: file, diagnosis: nil)
        case .failed(let reason):
            return manifestFetchFailed(reason)
        case .tooLarge(let limit):
            return manifestFetchFailed("larger than the limit of \(limit) bytes")
        case .absent:
            return manifestFetchFailed("absent")
        }
        do {
            switch try core.acceptManifest(bytes, etag: etag, into: current, startTime: t0) {
            case .unchanged:
                return succeededUnchanged(etag: .some(etag))
            case .updated(let next, let stepEvents):
                current = next
                events += stepEvents
                let accepted = stepEvents.compactMap { event -> ManifestOrder? in
                    if case .updated(let order) = event { return order }
                    return nil
                }
                return .proceed(accepted.first.map { .updated($0) } ?? .unchanged)
            }
        } catch {
            if case .equivocation(let order) = error.code { events.append(.equivocation(order)) }
            events.append(.rejected(error))
            var diagnosis: String?
            if case .trust(let trustError) = error.code, let envelope = try? Envelope.parse(bytes, limits: core.limits)
            {
                diagnosis = ManifestDiagnosis.explain(
                    trustError, envelope: envelope, chain: current.chain, crypto: core.crypto)
            }
            return .done(.rejected(error), document: file, diagnosis: diagnosis)
        }
    }

    mutating func manifestFetchFailed(_ reason: String) -> ManifestStepResult {
        let error = ClientError.fetchFailed(resource: TreeFile.manifest.path, reason: reason)
        events.append(.networkFailure(error.description))
        return .done(.networkFailure(error), document: nil, diagnosis: nil)
    }
}
