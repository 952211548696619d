// The refresh over the update-channel seam decides exactly as the closure-driven refresh it
// replaced: both run on generated trees and fetch outcomes (SplitMix, fixed seeds) and must
// return equal results. The former refresh, and the status mapping PinningClient did before
// `UpdateStatus.classify`, are kept here as the reference, with the one deliberate change of the
// seam's table: a 3xx the transport returned (and a 304 to a root or proof request) is refused,
// as in the JVM SDK, where it was a network failure.

import PinionCore
import PinionLog
import PinionTrustTestSupport
import Testing

@testable import PinionTrust

/// The per-file fetch results of the former refresh.
private enum OldRootFetch: Equatable {
    case found([UInt8])
    case notFound
    case failed(String)
    case refused(String)
}
private enum OldManifestFetch: Equatable {
    case found([UInt8], etag: String?)
    case notModified
    case failed(String)
    case refused(String)
}
private enum OldProofFetch: Equatable {
    case found([UInt8])
    case notFound
    case tooLarge(limit: Int)
    case failed(String)
    case refused(String)
}

/// The former refresh: PinningClient's mapping of answers, then TrustCore's closure-driven walk,
/// manifest step and log step with one retry.
private struct ReferenceRefresh {
    let core: TrustCore
    let script: Script

    func mapRoot(_ version: Int64) -> OldRootFetch {
        switch script.answer(.root(version)) {
        case .answer(let a) where a.status == 200: return .found(a.body)
        case .answer(let a) where a.status == 404 || a.status == 410: return .notFound
        case .answer(let a) where (300..<400).contains(a.status): return .refused(Self.redirect(a.status))
        case .answer(let a): return .failed("HTTP \(a.status)")
        case .failure(.refused(let r)): return .refused(r)
        case .failure(.failed(let r)): return .failed(r)
        case .failure(.tooLarge(let limit)): return .failed("tooLarge \(limit)")
        }
    }

    static func redirect(_ status: Int) -> String {
        "refused HTTP \(status): a redirect the update channel did not follow"
    }

    func mapManifest(_ etag: String?) -> OldManifestFetch {
        switch script.answer(.manifest, ifNoneMatch: etag) {
        case .answer(let a) where a.status == 200: return .found(a.body, etag: a.etag)
        case .answer(let a) where a.status == 304:
            guard etag != nil else {
                return .refused("refused a 304 Not Modified to a request that sent no If-None-Match")
            }
            return .notModified
        case .answer(let a) where (300..<400).contains(a.status): return .refused(Self.redirect(a.status))
        case .answer(let a): return .failed("HTTP \(a.status)")
        case .failure(.refused(let r)): return .refused(r)
        case .failure(.failed(let r)): return .failed(r)
        case .failure(.tooLarge(let limit)): return .failed("tooLarge \(limit)")
        }
    }

    func mapProof() -> OldProofFetch {
        let limit = TlogProofLimits.standard.maxBytes
        switch script.answer(.manifestProof) {
        case .answer(let a) where a.status == 200:
            return a.body.count <= limit ? .found(a.body) : .tooLarge(limit: limit)
        case .answer(let a) where a.status == 404 || a.status == 410: return .notFound
        case .answer(let a) where (300..<400).contains(a.status): return .refused(Self.redirect(a.status))
        case .answer(let a): return .failed("HTTP \(a.status)")
        case .failure(.refused(let r)): return .refused(r)
        case .failure(.tooLarge): return .tooLarge(limit: limit)
        case .failure(.failed(let r)): return .failed(r)
        }
    }

    // swift-format-ignore
    func refresh(_ state: TrustedState, startTime t0: Timestamp) -> RefreshedState {
        var events: [ClientEvent] = []
        if let last = state.persisted.lastKnownTime, t0 < last.adding(seconds: -TrustCore.clockStepTolerance) {
            events.append(.clockSteppedBack(wallClock: t0, lastKnownTime: last))
        }
        var current = state
        func finish(_ outcome: RefreshOutcome, document: String? = nil, diagnosis: String? = nil) -> RefreshedState {
            RefreshedState(state: current, outcome: outcome, events: events, stateChanged: current.persisted != state.persisted, document: document, diagnosis: diagnosis)
        }
        var rotations = 0
        func walkFailed(_ outcome: RefreshOutcome, _ event: ClientEvent, document: String? = nil) -> RefreshedState {
            if rotations > 0 { core.reconcileLog(&current) }
            events.append(event)
            return finish(outcome, document: document)
        }
        func walkRoots() -> RefreshedState? {
            var walk = RootChainWalk(from: current.chain, maxRotations: RootChain.maxRotationsPerWalk - rotations, crypto: core.crypto, limits: core.limits)
            let storedManifest = current.manifest != nil ? current.persisted.manifest : nil
            var acceptedBytes: [[UInt8]] = []
            var manifestValid = false
            let end = walk.run(
                lookup: { (version) throws(ClientError) -> [UInt8]? in
                    switch mapRoot(version) {
                    case .notFound: return nil
                    case .found(let bytes): return bytes
                    case .failed(let reason): throw .fetchFailed(resource: "root/\(version).json", reason: reason)
                    case .refused(let reason): throw .fetchRefused(resource: "root/\(version).json", reason: reason)
                    }
                },
                accepted: { root, bytes in
                    acceptedBytes.append(bytes)
                    events.append(.rootAccepted(version: root.version))
                    guard let storedManifest else { return }
                    manifestValid = (try? ManifestVerifier.verify(storedManifest, under: root, crypto: core.crypto, limits: core.limits)) != nil
                    if !manifestValid { events.append(.manifestNotCurrent("root \(root.version) was accepted; the manifest must be re-signed")) }
                })
            if !acceptedBytes.isEmpty {
                current.chain = walk.chain
                current.persisted.acceptedRoots += acceptedBytes
                current.manifestValid = manifestValid
                rotations += acceptedBytes.count
            }
            switch end {
            case .complete: return nil
            case .lookupFailed(let version, let error):
                if case .fetchRefused = error.code { return walkFailed(.rejected(error), .rejected(error), document: "root/\(version).json") }
                return walkFailed(.networkFailure(error), .networkFailure(error.description))
            case .refused(let version, _, let trustError):
                let error: ClientError
                if case .tooManyRotations = trustError { error = .tooManyRotations(limit: RootChain.maxRotationsPerWalk) } else { error = .trust(trustError) }
                return walkFailed(.rejected(error), .rejected(error), document: "root/\(version).json")
            }
        }
        if let failed = walkRoots() { return failed }
        if rotations > 0 { core.reconcileLog(&current) }
        var afterWalk = current
        var walkEvents = events
        var retried = false
        while true {
            current = afterWalk
            events = walkEvents
            let outcome: RefreshOutcome
            switch manifestStep(&current, &events, startTime: t0) {
            case .done(let failure, let document, let diagnosis): return finish(failure, document: document, diagnosis: diagnosis)
            case .proceed(let success): outcome = success
            }
            guard let policy = current.chain.newest.payload.log else {
                current.persisted.logCheckpoint = nil
                return finish(outcome)
            }
            let refusal: LogRefusal
            let step = core.logStep(current, policy: policy, startTime: t0) { () -> UpdateFetchResult in
                switch mapProof() {
                case .found(let body): return .document(body, etag: nil)
                case .notFound: return .absent
                case .tooLarge(let limit): return .tooLarge(limit: limit)
                case .failed(let reason): return .failed(reason)
                case .refused(let reason): return .refused(reason)
                }
            }
            switch step {
            case .accepted(let checkpoint, let logEvents):
                current.persisted.logCheckpoint = checkpoint
                events += logEvents
                return finish(outcome)
            case .mismatch(let reason) where !retried:
                retried = true
                if case .verification(.rootLoggedNotServed) = reason {
                    current = afterWalk
                    events = walkEvents
                    if let failed = walkRoots() { return failed }
                    if rotations > 0 { core.reconcileLog(&current) }
                    afterWalk = current
                    walkEvents = events
                }
                continue
            case .mismatch(let reason), .refused(let reason):
                refusal = reason
            case .fetchFailed(let error):
                current = afterWalk
                events = walkEvents
                if case .fetchRefused = error.code {
                    events.append(.rejected(error))
                    return finish(.rejected(error), document: "manifest.proof")
                }
                events.append(.networkFailure(error.description))
                return finish(.networkFailure(error))
            }
            current = afterWalk
            events = walkEvents
            if case .verification(.equivocation(let evidence)) = refusal { events.append(.logEquivocation(evidence)) }
            let error = ClientError.log(refusal)
            events.append(.rejected(error))
            return finish(.rejected(error), document: "manifest.proof")
        }
    }

    private enum StepResult {
        case done(RefreshOutcome, document: String?, diagnosis: String?)
        case proceed(RefreshOutcome)
    }

    // swift-format-ignore
    private func manifestStep(_ current: inout TrustedState, _ events: inout [ClientEvent], startTime t0: Timestamp) -> StepResult {
        func succeededUnchanged(etag: String??) -> StepResult {
            current.persisted.lastKnownTime = max(current.persisted.lastKnownTime ?? t0, t0)
            if let etag, let storable = TrustCore.storableETag(etag) { current.persisted.manifestETag = storable }
            events.append(.unchanged)
            let now = max(t0, current.persisted.lastKnownTime ?? t0)
            if let manifest = current.manifest, manifest.expiresAt <= now {
                events.append(.manifestNotCurrent("version \(manifest.version) expired at \(manifest.expiresAt) and the publisher offers nothing newer"))
            }
            return .proceed(.unchanged)
        }
        switch mapManifest(current.persisted.manifestETag) {
        case .notModified: return succeededUnchanged(etag: nil)
        case .failed(let reason):
            let error = ClientError.fetchFailed(resource: "manifest.json", reason: reason)
            events.append(.networkFailure(error.description))
            return .done(.networkFailure(error), document: nil, diagnosis: nil)
        case .refused(let reason):
            let error = ClientError.fetchRefused(resource: "manifest.json", reason: reason)
            events.append(.rejected(error))
            return .done(.rejected(error), document: "manifest.json", diagnosis: nil)
        case .found(let bytes, let etag):
            do {
                switch try core.acceptManifest(bytes, etag: etag, into: current, startTime: t0) {
                case .unchanged: return succeededUnchanged(etag: .some(etag))
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
                if case .trust(let trustError) = error.code, let envelope = try? Envelope.parse(bytes, limits: core.limits) {
                    diagnosis = ManifestDiagnosis.explain(trustError, envelope: envelope, chain: current.chain, crypto: core.crypto)
                }
                return .done(.rejected(error), document: "manifest.json", diagnosis: diagnosis)
            }
        }
    }
}

/// A generated publisher: for each file, the answers of its first, second, ... fetch (the last
/// repeats), so both refreshes see the same sequence.
private final class Script {
    var roots: [Int64: Served] = [:]
    var manifests: [Served] = []
    var proofs: [Served] = []
    private var manifestCalls = 0
    private var proofCalls = 0

    init() {}

    func copy() -> Script {
        let other = Script()
        (other.roots, other.manifests, other.proofs) = (roots, manifests, proofs)
        return other
    }

    func answer(_ file: TreeFile, ifNoneMatch: String? = nil) -> Served {
        switch file {
        case .root(let version): return roots[version] ?? .notFound
        case .manifest:
            defer { manifestCalls += 1 }
            guard !manifests.isEmpty else { return .notFound }
            let served = manifests[min(manifestCalls, manifests.count - 1)]
            // The publisher's own ETag logic: a matching If-None-Match gets a 304.
            if case .answer(let a) = served, a.status == 200, let sent = ifNoneMatch, sent == a.etag {
                return .notModified
            }
            return served
        case .manifestProof:
            defer { proofCalls += 1 }
            guard !proofs.isEmpty else { return .notFound }
            return proofs[min(proofCalls, proofs.count - 1)]
        default: return .notFound
        }
    }
}

@Suite struct RefreshSplitTests {
    /// One generated case: a world (with or without a log), a start state, a time, a script.
    private func generate(_ random: inout SplitMix, plain: TrustCore, logged: inout LogWorld, publisher: Publisher)
        throws -> (TrustCore, TrustedState, Timestamp, Script)
    {
        let useLog = random.flag()
        let core = useLog ? logged.core : plain
        let junk: [UInt8] = random.flag() ? Array("{}".utf8) : random.bytes(random.below(40))
        let manifests: [[UInt8]] =
            useLog
            ? logged.tree.manifests
            : [
                try publisher.manifest(version: 1, domains: [.init(name: "api.example.test", pins: [try junkPin(1)])]),
                try publisher.manifest(version: 2, domains: [.init(name: "api.example.test", pins: [try junkPin(2)])]),
                try publisher.manifest(
                    version: 3, rootVersion: 2, domains: [.init(name: "api.example.test", pins: [try junkPin(3)])]),
                try publisher.manifest(
                    version: 4, lifetime: day, domains: [.init(name: "api.example.test", pins: [try junkPin(4)])]),
            ]
        let etags: [String?] = [nil, "\"e1\"", "\"e2\"", "W/\"weak\"", String(repeating: "x", count: 2000)]
        // A body over the limit is a transport failure only where the request set a limit (the
        // proof); without one the transport's own limit reports a network failure.
        func transportFailure(limited: Bool = false) -> Served {
            switch random.below(limited ? 3 : 2) {
            case 0: return .failed("connection reset")
            case 1: return .refused("redirect to http refused")
            default: return .tooLarge(limit: TlogProofLimits.standard.maxBytes)
            }
        }
        func someStatus() -> Served {
            .status([304, 404, 410, 500, 302, 403, 204][random.below(7)])
        }
        let script = Script()
        let rotated = try publisher.rotatedRoot()
        for version in Int64(2)...4 where random.below(3) > 0 {
            switch random.below(4) {
            case 0: script.roots[version] = version == 2 ? .found(rotated) : .found(junk)
            case 1: script.roots[version] = someStatus()
            case 2: script.roots[version] = transportFailure()
            default: script.roots[version] = .found(version == 2 ? rotated : try publisher.embeddedRoot())
            }
        }
        for _ in 0..<(1 + random.below(2)) {
            switch random.below(5) {
            case 0, 1:
                let bytes = manifests[random.below(manifests.count)]
                script.manifests.append(.found(bytes, etag: etags[random.below(etags.count)]))
            case 2: script.manifests.append(.found(junk, etag: "\"j\""))
            case 3: script.manifests.append(someStatus())
            default: script.manifests.append(transportFailure())
            }
        }
        if useLog {
            let good = try logged.log.proof(cosignedAt: t0.adding(seconds: -100))
            for _ in 0..<(1 + random.below(2)) {
                switch random.below(5) {
                case 0, 1: script.proofs.append(.found(good))
                case 2: script.proofs.append(.found(junk))
                case 3: script.proofs.append(someStatus())
                default: script.proofs.append(transportFailure(limited: true))
                }
            }
        }
        var state = core.initialState()
        if random.flag() {
            // A client that already holds version 1 (with an ETag or without one).
            let first = Script()
            first.manifests = [.found(manifests[0], etag: random.flag() ? "\"e1\"" : nil)]
            if useLog { first.proofs = [.found(try logged.log.proof(cosignedAt: t0.adding(seconds: -100)))] }
            let accepted = ReferenceRefresh(core: core, script: first).refresh(state, startTime: t0)
            state = accepted.state
        }
        let time = t0.adding(seconds: [0, 60, 10 * day, 40 * day, -3600][random.below(5)])
        return (core, state, time, script)
    }

    @Test func theSplitRefreshDecidesAsTheFormerOneOnGeneratedTrees() throws {
        let publisher = try Publisher()
        let plain = try TrustCore(
            scope: scope, embeddedRoot: try publisher.embeddedRoot(), crypto: PortableCrypto.provider)
        var logged = try LogWorld()
        try logged.publish(version: 1)
        try logged.publish(version: 2)
        var random = SplitMix(state: 0x5EED_2026_1204)
        var outcomes: Set<String> = []
        for round in 0..<400 {
            let (core, state, time, script) = try generate(&random, plain: plain, logged: &logged, publisher: publisher)
            let expected = ReferenceRefresh(core: core, script: script.copy()).refresh(state, startTime: time)
            let reply = script.copy()
            let fetcher = ScriptedFetcher(
                root: { reply.answer(.root($0)) }, manifest: { reply.answer(.manifest, ifNoneMatch: $0) },
                proof: { reply.answer(.manifestProof) })
            let actual = core.refresh(state, startTime: time, fetcher: fetcher)
            if actual != expected {
                Issue.record(
                    "round \(round): \(actual.outcome) \(actual.events) != \(expected.outcome) \(expected.events)")
            }
            outcomes.insert("\(actual.outcome)".prefix(12).description)
        }
        // The generator reaches every kind of outcome, or the comparison proves little.
        #expect(outcomes.contains { $0.hasPrefix("updated") })
        #expect(outcomes.contains { $0.hasPrefix("unchanged") })
        #expect(outcomes.contains { $0.hasPrefix("rejected") })
        #expect(outcomes.contains { $0.hasPrefix("networkFail") })
    }
}
