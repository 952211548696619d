// The SDK object an app creates: keeps the pins up to date from the publisher, persists
// them, and checks every connection against the effective policy (docs/DESIGN.md §6-§8).

import Foundation
import PinionCore
import PinionLog

/// Everything the SDK needs from the app.
public struct ClientConfiguration: Sendable {
    /// The app's scope (the embedded root's).
    public var scope: String
    /// The publisher's base URL (the server root; `v1/{scope}/...` is appended); nil for a
    /// client that only evaluates connections against the stored and baseline pins.
    public var baseURL: URL?
    /// Exact envelope bytes of the newest root at build time.
    public var embeddedRoot: [UInt8]
    /// Pins compiled into the app.
    public var baseline: Baseline
    /// Directory of the persisted state (created 0700 if missing).
    public var stateDirectory: String
    /// Trust anchors (PEM) for every connection, update channel included; nil: the system store.
    public var caFile: String?
    /// Optional pins for the publisher host. Manifest pins never apply to the update
    /// channel, so no manifest can cut a client off from the next one (docs/DESIGN.md §6).
    public var publisherPins: [Pin]
    /// Seconds after expiry during which the manifest still counts as current (default 0).
    public var staleGrace: Int64
    /// Size and count limits for fetched documents.
    public var limits: Limits
    /// Polling interval, Cache-Control bounds, jitter and back-off.
    public var schedule: UpdateSchedule
    /// Timeouts of HTTPS requests (the response limit is the envelope limit).
    public var connectTimeout: Double
    public var ioTimeout: Double
    public var totalDeadline: Double
    /// Seconds one whole refresh (root walk and manifest) may take; each request gets at
    /// most what is left, so a trickling publisher cannot hold a refresh across hundreds
    /// of roots.
    public var refreshDeadline: Double
    /// The wall clock (injectable for tests).
    public var clock: @Sendable () -> Timestamp
    /// Where pin-failure reports are POSTed as JSON (RFC 7469 §3), at most one identical
    /// report per 24 hours; nil: reports only reach the `onPinFailure` callback.
    public var reportURI: URL?
    /// An address (and port) to dial for the publisher instead of `baseURL`'s host, which
    /// is still the name validated (like curl's --connect-to); nil: dial the URL's host.
    public var publisherConnectTo: (host: String, port: UInt16)?
    /// Other hosts the update channel may follow a redirect to (lowercase names), besides
    /// `baseURL`'s host; empty (the default): a redirect to any other host is refused, so a
    /// compromised or misconfigured publisher cannot move clients to a host it picks.
    public var publisherRedirectHosts: [String] = []

    public init(
        scope: String, baseURL: URL?, embeddedRoot: [UInt8], baseline: Baseline = .empty, stateDirectory: String,
        caFile: String? = nil, publisherPins: [Pin] = [], staleGrace: Int64 = 0, limits: Limits = .standard,
        schedule: UpdateSchedule = UpdateSchedule(), connectTimeout: Double = 10, ioTimeout: Double = 30,
        totalDeadline: Double = 60, refreshDeadline: Double = 300,
        clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) },
        reportURI: URL? = nil, publisherConnectTo: (host: String, port: UInt16)? = nil
    ) {
        self.reportURI = reportURI
        self.publisherConnectTo = publisherConnectTo
        self.scope = scope
        self.baseURL = baseURL
        self.embeddedRoot = embeddedRoot
        self.baseline = baseline
        self.stateDirectory = stateDirectory
        self.caFile = caFile
        self.publisherPins = publisherPins
        self.staleGrace = staleGrace
        self.limits = limits
        self.schedule = schedule
        self.connectTimeout = connectTimeout
        self.ioTimeout = ioTimeout
        self.totalDeadline = totalDeadline
        self.refreshDeadline = refreshDeadline
        self.clock = clock
    }
}

/// Why the SDK could not start.
public enum ClientSetupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The embedded root does not verify or names another scope.
    case trust(ClientError)
    /// The state directory cannot be used.
    case storage(StorageError)
    /// The configuration cannot be used (a CA file that cannot be read or holds no certificate):
    /// a build or deployment defect, never a state problem.
    case configuration(reason: String)

    public var description: String {
        switch self {
        case .trust(let error): return error.description
        case .storage(let error): return error.description
        case .configuration(let reason): return "configuration: \(reason)"
        }
    }
}

/// Keeps one scope's pins current and checks connections against them. Readers of the
/// policy never block on a refresh and never see a half-merged policy: the trusted state
/// and its merged policy are swapped together under a lock held only for the swap.
public final class PinningClient: Sendable {
    public let configuration: ClientConfiguration
    private let core: TrustCore
    let store: StateStore
    private let transport: any HTTPSTransport
    private let current: Locked<(state: TrustedState, policy: PolicySnapshot)>
    private let refreshing = Locked<Void>(())
    /// True while the stored state has not been loaded (it was unreadable at start-up): the
    /// next refresh loads it first, and nothing is saved over it before.
    private let loadPending = Locked<Bool>(false)
    private let throttle: Locked<ReportThrottle>
    let onEventHandler: @Sendable (ClientEvent) -> Void
    private let onPinFailure: @Sendable (PinFailureReport) -> Void
    /// The crypto the client verifies with; `verdict(for:verifiedChainDER:)` hashes with it.
    let crypto: CryptoProvider
    /// Subscribers of `events()`, by a number.
    let subscribers = Locked<(next: Int, continuations: [Int: AsyncStream<ClientEvent>.Continuation])>(
        (0, [:]))
    /// The policy connections were last evaluated under, how often trust was removed, and the
    /// instant that policy stops applying (the manifest's end of currency; nil: never by time).
    let observed = Locked<(policy: MergedPolicy?, generation: UInt64, until: Timestamp?)>((nil, 0, nil))
    /// The stored log checkpoint, the instant it turns stale (nil: never, or its
    /// `staleCheckpoint` event was raised), and whether that event was raised for it.
    let staleWatch = Locked<(checkpoint: StoredCheckpoint?, from: Timestamp?, raised: Bool)>((nil, nil, false))

    /// Loads and re-verifies the stored state (docs/DESIGN.md §6, start-up), or starts from the
    /// embedded root; computes the effective policy. Of the two stored copies the valid one
    /// with the higher floor is used and the other rewritten (`.stateCopyLost`); when both
    /// are lost, the domains they name stay refused (`.storeDropped`); when the state cannot
    /// be read (permission, I/O error, a locked device) the client starts on its baseline,
    /// reports `.stateUnreadable`, writes nothing, and loads the state at the next refresh. Every platform builds its client here,
    /// plugging in its own crypto, TLS stack and storage (on Linux PinionLinux's
    /// `init(configuration:storage:onEvent:onPinFailure:)` does).
    ///
    /// - Parameters:
    ///   - configuration: the app's settings.
    ///   - crypto: Ed25519 verification (libsodium's strict rules, or a verifier wrapped in
    ///     `StrictEd25519Verifier`) and SHA-256.
    ///   - transport: the HTTPS client for the update channel, reports and `get`.
    ///   - storage: where the trusted state is kept.
    ///   - onEvent: every refresh and start-up event.
    ///   - onPinFailure: RFC 7469 §3 reports of pin failures, at most one identical report
    ///     per 24 hours.
    /// - Throws: `ClientSetupError` for an invalid embedded root.
    public init(
        configuration: ClientConfiguration, crypto: CryptoProvider, transport: any HTTPSTransport,
        storage: any StateStorage,
        onEvent: @escaping @Sendable (ClientEvent) -> Void = { _ in },
        onPinFailure: @escaping @Sendable (PinFailureReport) -> Void = { _ in }
    ) throws(ClientSetupError) {
        self.configuration = configuration
        self.onEventHandler = onEvent
        self.onPinFailure = onPinFailure
        self.crypto = crypto
        do {
            core = try TrustCore(
                scope: configuration.scope, embeddedRoot: configuration.embeddedRoot, crypto: crypto,
                limits: configuration.limits)
        } catch {
            throw .trust(error)
        }
        store = StateStore(
            storage: storage, scope: configuration.scope, limits: configuration.limits, hasher: crypto.hasher)
        throttle = Locked(ReportThrottle(hasher: crypto.hasher))
        self.transport = transport
        let recovery = store.recover()
        var readable: ClientState?
        if case .unreadable = recovery.load { readable = store.bestReadableCopy() }
        let (state, events, pending) = PinningClient.startUp(recovery, readable: readable, core: core)
        current = Locked((state, PinningClient.snapshot(state, configuration)))
        loadPending.withLock { $0 = pending }
        for event in events { emit(event) }
        armStaleness(state, raised: false)
        observe(policy, at: effectiveNow)
    }

    /// The start-up rules (docs/DESIGN.md §6) applied to what the store recovered: the state
    /// to run on, its events, and whether the load is still pending (unreadable state).
    ///
    /// - Parameters:
    ///   - recovery: what the store found.
    ///   - readable: for an unreadable state, the best copy that could still be read: it is
    ///     enforced (in memory, nothing written) until the load completes, so a copy that
    ///     cannot be read never unpins what the other copy pins.
    ///   - core: the trust rules.
    static func startUp(_ recovery: StateRecovery, readable: ClientState? = nil, core: TrustCore) -> (
        TrustedState, [ClientEvent], Bool
    ) {
        var events: [ClientEvent] = []
        let state: TrustedState
        var pending = false
        switch recovery.load {
        case .empty:
            state = core.initialState()
        case .loaded(let stored):
            if recovery.migratedFromFormatVersion == nil {
                for loss in recovery.rewritten {
                    events.append(.stateCopyLost(file: loss.file, reason: loss.reason?.description ?? "missing"))
                }
            }
            let (restored, restoreEvents) = core.restore(stored)
            state = restored
            events += restoreEvents
        case .dropped(let reason, let names):
            state = core.initialState(forcedDomains: names)
            events = [.storeDropped(reason.description)]
        case .unreadable(let error):
            if let readable {
                let (restored, restoreEvents) = core.restore(readable)
                state = restored
                events = [.stateUnreadable(error)] + restoreEvents
            } else {
                state = core.initialState()
                events = [.stateUnreadable(error)]
            }
            pending = true
        }
        return (state, events, pending)
    }

    static func snapshot(_ state: TrustedState, _ configuration: ClientConfiguration) -> PolicySnapshot {
        PolicySnapshot(
            baseline: configuration.baseline, manifest: state.manifest, manifestValid: state.manifestValid,
            revoked: state.revoked, staleGrace: configuration.staleGrace, forcedDomains: state.forcedDomains,
            rootExpiresAt: state.chain.newest.payload.expiresAt, logCurrentUntil: state.logCurrentUntil)
    }

    /// The trusted state (roots, manifest, floor) as of the last completed refresh.
    public var trustedState: TrustedState { current.withLock { $0.state } }

    /// Both merges of the effective policy; `policy.policy(at:)` picks by time.
    public var policy: PolicySnapshot { current.withLock { $0.policy } }

    /// The effective time: `max(wall clock, lastKnownTime)` (docs/DESIGN.md §6).
    public var effectiveNow: Timestamp {
        let wall = configuration.clock()
        return max(wall, trustedState.persisted.lastKnownTime ?? wall)
    }

    /// The merged policy for a connection made now (expiry is evaluated every time).
    public func policyNow() -> MergedPolicy { policy.policy(at: effectiveNow) }

    // MARK: - Refresh

    /// Runs one refresh now, blocking on the network, exactly as the poller does: root
    /// walk, conditional manifest fetch, verification, persistence (a failed save keeps
    /// the previous state and policy), then the swap. Concurrent calls run one at a time.
    public func refresh() -> RefreshReport {
        // Events are delivered after the lock is released, so a handler may call back in.
        let (report, events) = refreshLocked()
        for event in events { emit(event) }
        armStaleness(
            trustedState, raised: events.contains { if case .staleCheckpoint = $0 { true } else { false } })
        observe(policy, at: effectiveNow)
        return report
    }

    private func refreshLocked() -> (RefreshReport, [ClientEvent]) {
        refreshing.withLock { _ in
            // Another process may share the state directory: hold its lock for the whole
            // load-refresh-save, and build on what it last saved, so floors never go down.
            let directoryLock: StorageLock
            do { directoryLock = try store.storage.lockExclusively() } catch {
                let failure = ClientError.fetchFailed(resource: "state", reason: "\(error)")
                return (RefreshReport(outcome: .networkFailure(failure)), [.networkFailure(failure.description)])
            }
            defer { withExtendedLifetime(directoryLock) {} }
            let startEvents: [ClientEvent]
            let rewrite: Bool
            switch catchUpWithStore() {
            case .failure(let failure):
                guard case .stateUnreadable(let error) = failure.code else {
                    return (RefreshReport(outcome: .networkFailure(failure)), [])
                }
                return (RefreshReport(outcome: .networkFailure(failure)), [.stateUnreadable(error)])
            case .success(let caughtUp): (startEvents, rewrite) = caughtUp
            }
            let start = trustedState
            let t0 = configuration.clock()
            guard let fetcher = updateFetcher() else {
                let error = ClientError.fetchFailed(
                    resource: TreeFile.manifest.path, reason: "no publisher URL configured")
                return (
                    RefreshReport(outcome: .networkFailure(error)), startEvents + [.networkFailure(error.description)]
                )
            }
            let result = core.refresh(
                start, startTime: t0, fetcher: fetcher, baselineDocument: configuration.baseline.document)
            var outcome = result.outcome
            var events = startEvents + result.events
            for case .logEquivocation(let evidence) in result.events { keepLogEquivocation(evidence) }
            if result.stateChanged || rewrite {
                do {
                    try store.save(result.state.persisted)
                    let snapshot = PinningClient.snapshot(result.state, configuration)
                    current.withLock { $0 = (result.state, snapshot) }
                } catch {
                    let failure = ClientError.fetchFailed(resource: "state", reason: "could not persist: \(error)")
                    outcome = .networkFailure(failure)
                    // Nothing was adopted: do not announce what was not kept.
                    events.removeAll {
                        switch $0 {
                        case .updated, .rootAccepted: return true
                        default: return false
                        }
                    }
                    events.append(.networkFailure(failure.description))
                }
            }
            return (
                RefreshReport(
                    outcome: outcome, maxAge: fetcher.maxAge.withLock { $0 }, document: result.document,
                    diagnosis: result.diagnosis),
                events
            )
        }
    }

    /// Brings the state in memory up to what the store holds, under the storage lock: the
    /// first load when start-up could not read the store, or what another process sharing the
    /// directory saved since.
    ///
    /// - Returns: the events to report, and whether the stored copies must be rewritten from
    ///   memory even if the refresh changes nothing (they were lost, or are behind the state in
    ///   memory); `ClientError.stateUnreadable` when the store cannot be read (another process
    ///   may have written a higher floor there: refresh nothing, overwrite nothing).
    private func catchUpWithStore() -> Result<([ClientEvent], Bool), ClientError> {
        let recovery = store.recover()
        if case .unreadable(let error) = recovery.load { return .failure(.stateUnreadable(error)) }
        if loadPending.withLock({ $0 }) {
            let (state, events, _) = PinningClient.startUp(recovery, core: core)
            current.withLock { $0 = (state, PinningClient.snapshot(state, configuration)) }
            loadPending.withLock { $0 = false }
            return .success((events, false))
        }
        var startEvents: [ClientEvent] = []
        var rewrite = false
        let zero = ManifestOrder(rootVersion: 0, version: 0)
        switch recovery.load {
        case .unreadable: break
        case .loaded(let stored) where stored != trustedState.persisted:
            let (reloaded, _) = core.restore(stored)
            if (reloaded.floor ?? zero) >= (trustedState.floor ?? zero) {
                let snapshot = PinningClient.snapshot(reloaded, configuration)
                current.withLock { $0 = (reloaded, snapshot) }
            } else {
                rewrite = true
            }
        case .loaded: break
        case .dropped(let reason, _):
            // Lost while running: the state in memory is the last surviving record.
            if trustedState.persisted.floor != nil || trustedState.persisted.manifest != nil {
                startEvents.append(.storeDropped("\(reason); rewritten from the state in memory"))
            }
            rewrite = true
        case .empty:
            rewrite = trustedState.persisted != core.initialState().persisted
        }
        if case .loaded = recovery.load, recovery.migratedFromFormatVersion == nil {
            for loss in recovery.rewritten {
                startEvents.append(.stateCopyLost(file: loss.file, reason: loss.reason?.description ?? "missing"))
            }
        }
        return .success((startEvents, rewrite))
    }

    /// The update channel of one refresh starting now: tree files of the scope below
    /// `configuration.baseURL`, all within `configuration.refreshDeadline` seconds from now.
    /// `refresh()` reads through it, and so do the shared conformance runs over HTTPS.
    ///
    /// - Returns: the fetcher, or nil when no publisher URL is configured.
    func updateFetcher() -> TransportFetcher? {
        guard let baseURL = configuration.baseURL else { return nil }
        let scopeURL = baseURL.appendingPathComponent("v1").appendingPathComponent(configuration.scope)
        let deadline =
            DispatchTime.now().uptimeNanoseconds + UInt64(max(min(configuration.refreshDeadline, 86_400), 1) * 1e9)
        return TransportFetcher(client: self, scopeURL: scopeURL, deadline: deadline)
    }

    /// The update-channel fetcher over the app's `HTTPSTransport`: tree files of the scope at
    /// `scopeURL`, all within one refresh's deadline; it keeps the manifest's Cache-Control
    /// max-age for the poller.
    struct TransportFetcher: UpdateFetcher {
        let client: PinningClient
        let scopeURL: URL
        let deadline: UInt64
        let maxAge = Locked<Double?>(nil)

        func fetch(_ request: UpdateRequest) -> Result<UpdateAnswer, UpdateFetchError> {
            var headers: [(String, String)] = []
            if let etag = request.ifNoneMatch { headers.append(("If-None-Match", etag)) }
            // manifest.proof is fetched every time, even after a 304 for manifest.json
            // (docs/DESIGN.md §12): no cache may answer for it.
            if request.file == .manifestProof { headers.append(("Cache-Control", "no-cache")) }
            // The poll token's query is letters, digits, `=` and `&`: nothing to escape.
            var url = scopeURL.appendingPathComponent(request.file.path)
            if let token = request.pollToken, let withQuery = URL(string: url.absoluteString + "?" + token.query) {
                url = withQuery
            }
            switch client.fetch(url, headers: headers, maxBytes: request.maxBytes, deadline: deadline) {
            case .success(let response):
                if request.file == .manifest, response.status == 200 || response.status == 304 {
                    maxAge.withLock { $0 = CacheControl.maxAge(response.value(forHeader: "cache-control")) }
                }
                return .success(
                    UpdateAnswer(status: response.status, etag: response.value(forHeader: "etag"), body: response.body))
            case .failure(let failure) where failure.refused: return .failure(.refused(failure.reason))
            case .failure(let failure) where failure.tooLarge && request.maxBytes != nil:
                return .failure(.tooLarge(limit: request.maxBytes ?? 0))
            case .failure(let failure): return .failure(.failed(failure.reason))
            }
        }
    }

    /// Why a fetch on the update channel produced no usable response.
    private struct FetchFailure: Error {
        let reason: String
        /// The channel refused what the server did (not a network failure).
        var refused = false
        /// The body was larger than the transport's response limit.
        var tooLarge = false
    }

    /// The hosts the update channel may connect to: the publisher's and the configured ones.
    private var updateChannelHosts: Set<String> {
        Set(([configuration.baseURL?.host ?? ""] + configuration.publisherRedirectHosts).map(Self.normalisedHost))
    }

    private static func normalisedHost(_ host: String) -> String {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return name
    }

    private func fetch(_ url: URL, headers: [(String, String)] = [], maxBytes: Int? = nil, deadline: UInt64) -> Result<
        HTTPSResponse, FetchFailure
    > {
        let pins = Set(configuration.publisherPins.map(\.digest))
        let now = DispatchTime.now().uptimeNanoseconds
        guard now < deadline else {
            let error = HTTPSError.timedOut(host: url.host ?? "", port: UInt16(url.port ?? 443), phase: .deadline)
            return .failure(FetchFailure(reason: error.description))
        }
        let allowedHosts = updateChannelHosts
        let offHost = Locked<String?>(nil)
        let response: HTTPSResponse
        do {
            response = try transport.get(
                url, headers: headers, connectTo: configuration.publisherConnectTo,
                totalDeadline: max(Double(deadline - now) / 1e9, 0.001), maxResponseBytes: maxBytes
            ) { chain in
                // A redirect may not leave the publisher's host (or the configured ones).
                guard allowedHosts.contains(Self.normalisedHost(chain.host)) else {
                    offHost.withLock { $0 = chain.host }
                    return .refuse(reason: "redirect to \(TerminalText.escape(chain.host)) refused")
                }
                // The update channel: X.509 validation already passed; only the app's
                // publisher pins apply, never manifest pins.
                guard !pins.isEmpty else { return .proceed }
                return chain.verifiedSPKISHA256.contains(where: pins.contains)
                    ? .proceed : .refuse(reason: "no publisher pin in the verified chain")
            }
        } catch {
            if case .redirectToNonHTTPS(let location) = error.code {
                return .failure(
                    FetchFailure(reason: "refused redirect to http (\(TerminalText.escape(location)))", refused: true))
            }
            // A redirect past the limit is one the channel does not follow: refused, as a 3xx it
            // returns is (docs/ARCHITECTURE.md, the status table), never a network failure.
            if case .tooManyRedirects = error.code {
                return .failure(FetchFailure(reason: "refused: \(error.description)", refused: true))
            }
            if let host = offHost.withLock({ $0 }) {
                return .failure(
                    FetchFailure(
                        reason:
                            "refused redirect to \(TerminalText.escape(host)): the update channel stays on the publisher's host",
                        refused: true))
            }
            if case .responseTooLarge = error.code {
                return .failure(FetchFailure(reason: error.description, tooLarge: true))
            }
            return .failure(FetchFailure(reason: error.description))
        }
        // The SDK sends no Accept-Encoding: a compressed body is a transport fault, not a
        // document to verify.
        if let coding = response.value(forHeader: "content-encoding"),
            coding.trimmingCharacters(in: .whitespaces).lowercased() != "identity"
        {
            return .failure(FetchFailure(reason: "unsupported Content-Encoding \(TerminalText.escape(coding))"))
        }
        return .success(response)
    }

    /// A poller for this client (start it with `start()`, stop with `stop()`).
    public func makeUpdater() -> Updater {
        Updater(schedule: configuration.schedule) { [self] in
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(returning: self.refresh()) }
            }
        }
    }

    // MARK: - Connections

    /// Evaluates a verified chain for `host` against the policy now (docs/DESIGN.md §8), and
    /// reports a failure (RFC 7469 §3) to `onPinFailure`, throttled.
    public func check(_ chain: PeerChain) -> ConnectionVerdict {
        let now = effectiveNow
        let snapshot = policy
        let merged = snapshot.policy(at: now)
        observeIfExpired(at: now)
        observeIfStale(at: now)
        let verdict = evaluate(host: chain.host, verifiedChain: chain.verifiedSPKISHA256, policy: merged)
        switch verdict {
        case .trusted, .notPinned: break
        case .reportOnly(let failure), .rejected(let failure):
            report(failure, chain: chain, at: now, snapshot: snapshot)
        }
        return verdict
    }

    private func report(_ failure: PinFailure, chain: PeerChain, at now: Timestamp, snapshot: PolicySnapshot) {
        let report = PinFailureReport(
            failure: failure, port: Int(chain.port), dateTime: configuration.clock(),
            servedCertificateChain: chain.servedChainDER.map { PinFailureReport.pem(certificateDER: $0) },
            validatedCertificateChain: chain.verifiedChainDER.map { PinFailureReport.pem(certificateDER: $0) },
            effectiveExpirationDate: Self.expiration(
                of: failure.entry, snapshot: snapshot, state: trustedState, at: now))
        guard throttle.withLock({ $0.shouldSend(report, at: now) }) else { return }
        onPinFailure(report)
        if let reportURI = configuration.reportURI { post(report, to: reportURI) }
    }

    /// RFC 7469 §3 `effective-expiration-date` of the entry whose pins applied: the current
    /// manifest's expiry (plus staleGrace) when that entry is the manifest's; nil when the
    /// baseline's entry applied (its pins do not expire), also under a manifest parent.
    static func expiration(of entry: String, snapshot: PolicySnapshot, state: TrustedState, at now: Timestamp)
        -> Timestamp?
    {
        guard snapshot.isManifestCurrent(at: now), let manifest = state.manifest,
            manifest.domains.contains(where: { $0.name == entry })
        else { return nil }
        return snapshot.manifestCurrentUntil
    }

    /// POSTs a report in the background on the update channel's trust: X.509 validation and
    /// the app's publisher pins, never manifest pins (docs/DESIGN.md §14), so a bad pin in a
    /// manifest cannot silence the reports about it. Failures of the POST are not reported.
    private func post(_ report: PinFailureReport, to uri: URL) {
        let client = transport
        let pins = Set(configuration.publisherPins.map(\.digest))
        DispatchQueue.global().async {
            _ = try? client.post(uri, body: report.jsonBytes(), contentType: "application/json") { chain in
                guard !pins.isEmpty else { return .proceed }
                return chain.verifiedSPKISHA256.contains(where: pins.contains)
                    ? .proceed : .refuse(reason: "no publisher pin in the verified chain")
            }
        }
    }

    /// A pinned HTTPS GET: normal X.509 validation, then the pin check on the verified
    /// chain before any request byte is sent; redirects under the same checks.
    ///
    /// - Returns: the response and the verdict of the last connection's pin check.
    /// - Throws: `HTTPSError` (`.pinningRefused` when the policy rejects the chain).
    public func get(_ url: URL, headers: [(String, String)] = [], connectTo: (host: String, port: UInt16)? = nil)
        throws(HTTPSError) -> (HTTPSResponse, ConnectionVerdict)
    {
        let verdict = Locked<ConnectionVerdict?>(nil)
        let response = try transport.get(url, headers: headers, connectTo: connectTo, totalDeadline: nil) { chain in
            let result = self.check(chain)
            verdict.withLock { $0 = result }
            switch result {
            case .trusted, .notPinned, .reportOnly: return .proceed
            case .rejected(let failure): return .refuse(reason: failure.reason.description)
            }
        }
        return (response, verdict.withLock { $0 } ?? .notPinned)
    }
}
