// Runs one conformance case (conformance/README.md) against the Swift SDK: PinionTrust driven with
// bytes, in memory or through the Linux SDK's update channel against an HTTPS publisher.

import Foundation
import PinionCore
import PinionCrypto
import PinionLinux
import PinionTrustTestSupport

@testable import PinionTrust

/// A step whose result differs from its expectation, or a case file that cannot be read.
struct ConformanceFailure: Error, CustomStringConvertible {
    var description: String
}

/// What the fake publisher serves for one path.
private enum ServedFile {
    case file([UInt8], etag: String?)
    case status(Int)
}

/// One case directory: fixtures plus steps.json, run step by step.
final class CaseRunner {
    let directory: URL
    private let document: [String: Any]
    private var core: TrustCore
    private let baseline: Baseline
    private let storage = MemoryStorage()
    private let store: StateStore
    private var state: TrustedState
    private var roots: [Int64: ServedFile] = [:]
    private var manifest: ServedFile?
    /// `manifest.proof` (docs/DESIGN.md §12); absent: 404.
    private var proof: ServedFile?
    /// The update channel over HTTPS (`useHTTPS`): the publisher serving the case's answers and
    /// the SDK client whose fetcher reads them; nil: answers in memory.
    private var channel: (publisher: HTTPSPublisher, client: PinningClient)?

    /// Reads steps.json and the embedded root and baseline it names.
    ///
    /// - Throws: `ConformanceFailure` for a case that cannot be read or an SDK that refuses its root.
    init(directory: URL) throws {
        self.directory = directory
        let data = try Data(contentsOf: directory.appendingPathComponent("steps.json"))
        guard let document = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            document["format"] as? String == "pinion-conformance/1", let scope = document["scope"] as? String,
            let embedded = document["embeddedRoot"] as? String
        else {
            throw ConformanceFailure(description: "\(directory.lastPathComponent): not a pinion-conformance/1 case")
        }
        self.document = document
        let crypto = CryptoProvider.sodium
        core = try TrustCore(scope: scope, embeddedRoot: CaseRunner.bytes(directory, embedded), crypto: crypto)
        if let name = document["baseline"] as? String {
            baseline = try Baseline.parse(CaseRunner.bytes(directory, name))
        } else {
            baseline = .empty
        }
        store = StateStore(storage: storage, scope: scope, hasher: crypto.hasher)
        state = core.initialState()
        start()
    }

    /// Refreshes through the Linux SDK's own update channel (`PinningClient`'s fetcher on
    /// `PinnedHTTPSClient`) against `publisher`, which serves the case's answers, instead of in
    /// memory (conformance/README.md, "Publisher modes").
    ///
    /// - Parameter publisher: the HTTPS publisher; its answers are replaced before every refresh.
    /// - Throws: `ClientSetupError` when the SDK client cannot be made.
    func useHTTPS(_ publisher: HTTPSPublisher) throws {
        guard let scope = document["scope"] as? String, let embedded = document["embeddedRoot"] as? String,
            let baseURL = URL(string: "https://\(HTTPSPublisher.host)/")
        else { throw ConformanceFailure(description: "no scope or embeddedRoot") }
        // Bounds a client that waits for a close the publisher never sends: it fails the step,
        // it does not hang the run.
        let configuration = ClientConfiguration(
            scope: scope, baseURL: baseURL, embeddedRoot: try CaseRunner.bytes(directory, embedded),
            baseline: baseline, stateDirectory: "/nonexistent/unused", caFile: publisher.caFile, connectTimeout: 10,
            ioTimeout: 10, totalDeadline: 20, refreshDeadline: 60,
            publisherConnectTo: ("127.0.0.1", publisher.port))
        channel = (publisher, try PinningClient(configuration: configuration, storage: MemoryStorage()))
    }

    /// The case's `pending` note, if it is a pending case.
    var pendingNote: String? { document["pending"] as? String }

    /// Whether a pending case lists the Swift SDK in `supportedBy` (it must then pass).
    var supportedBySwift: Bool { (document["supportedBy"] as? [String])?.contains("swift") ?? false }

    private static func bytes(_ directory: URL, _ name: String) throws -> [UInt8] {
        guard !name.contains("/") else { throw ConformanceFailure(description: "fixture name \(name) has a /") }
        return Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// Start-up: what the SDK does when the app starts with the stored state.
    private func start() {
        // As PinningClient starts up: the valid copy with the higher floor, the other rewritten.
        switch store.recover().load {
        case .empty: state = core.initialState()
        case .loaded(let stored): state = core.restore(stored).0
        case .dropped(_, let names): state = core.initialState(forcedDomains: names)
        case .unreadable: state = core.initialState()
        }
    }

    /// Runs every step.
    ///
    /// - Returns: the number of steps run.
    /// - Throws: `ConformanceFailure` naming the first step that differs.
    func run() throws -> Int {
        guard let steps = document["steps"] as? [[String: Any]] else {
            throw ConformanceFailure(description: "no steps")
        }
        for (index, step) in steps.enumerated() {
            do {
                try run(step)
            } catch let failure as ConformanceFailure {
                throw ConformanceFailure(
                    description: "\(directory.lastPathComponent) step \(index) (\(step["action"] ?? "?")): \(failure)")
            }
        }
        return steps.count
    }

    private func time(_ value: Any?) throws -> Timestamp {
        guard let text = value as? String, let time = try? Timestamp(rfc3339: text) else {
            throw ConformanceFailure(description: "bad time \(String(describing: value))")
        }
        return time
    }

    private func servedFile(_ value: Any?) throws -> ServedFile? {
        guard let object = value as? [String: Any] else {
            if let name = value as? String { return .file(try CaseRunner.bytes(directory, name), etag: nil) }
            return nil
        }
        if let status = object["status"] as? Int { return .status(status) }
        guard let name = object["file"] as? String else { throw ConformanceFailure(description: "served: no file") }
        return .file(try CaseRunner.bytes(directory, name), etag: object["etag"] as? String)
    }

    private func run(_ step: [String: Any]) throws {
        switch step["action"] as? String {
        case "serve":
            roots = [:]
            for (key, value) in step["roots"] as? [String: Any] ?? [:] {
                guard let version = Int64(key) else { throw ConformanceFailure(description: "root key \(key)") }
                roots[version] = try servedFile(value)
            }
            manifest = try servedFile(step["manifest"])
            proof = try servedFile(step["proof"])
        case "refresh":
            try refresh(at: try time(step["at"]), expect: step["expect"] as? [String: Any] ?? [:])
        case "policy":
            try checkPolicy(at: try time(step["at"]), expect: step["expect"] as? [String: Any] ?? [:])
        case "evaluate":
            try evaluateStep(step)
        case "restart":
            start()
        case "upgradeApp":
            guard let name = step["embeddedRoot"] as? String else {
                throw ConformanceFailure(description: "upgradeApp: embeddedRoot is required")
            }
            do {
                core = try TrustCore(
                    scope: core.scope, embeddedRoot: CaseRunner.bytes(directory, name), crypto: core.crypto)
            } catch {
                throw ConformanceFailure(description: "upgradeApp: \(error)")
            }
            start()
        case "deleteState":
            storage.removeAll()
            start()
        case "corruptCopy":
            // The Swift SDK keeps one state record: copy A is state.json, copy B the small
            // enforced-domains.json (docs/DESIGN.md §6).
            let name = step["copy"] as? String == "B" ? StateStore.enforcedDomainsFileName : StateStore.stateFileName
            _ = storage.corrupt(name)
            start()
        default:
            throw ConformanceFailure(description: "unknown action")
        }
    }

    /// A published file as the scripted publisher answers it: absent files are 404.
    private func served(_ file: ServedFile?) -> Served {
        switch file {
        case nil: return .notFound
        case .status(let status)?: return .status(status)
        case .file(let bytes, let etag)?: return .found(bytes, etag: etag)
        }
    }

    /// What the publisher serves now, by path below `v1/{scope}/`.
    private var publishedFiles: [String: PublishedFile] {
        func published(_ file: ServedFile) -> PublishedFile {
            switch file {
            case .status(let status): return PublishedFile(status: status)
            case .file(let bytes, let etag): return PublishedFile(status: 200, body: bytes, etag: etag)
            }
        }
        var files: [String: PublishedFile] = [:]
        for (version, file) in roots { files[TreeFile.root(version).path] = published(file) }
        if let manifest { files[TreeFile.manifest.path] = published(manifest) }
        if let proof { files[TreeFile.manifestProof.path] = published(proof) }
        return files
    }

    private func refresh(at t0: Timestamp, expect: [String: Any]) throws {
        let result =
            try channel.map { try refreshOverHTTPS($0.publisher, $0.client, at: t0) } ?? refreshInMemory(at: t0)
        try checkRefresh(result, at: t0, expect: expect)
    }

    /// One refresh through the SDK's fetcher; a manifest request must carry the poll token of
    /// the state held.
    private func refreshOverHTTPS(_ publisher: HTTPSPublisher, _ client: PinningClient, at t0: Timestamp) throws
        -> RefreshedState
    {
        let token = PollToken(
            have: state.manifest.map { UInt64(clamping: $0.version) } ?? 0, baselineDocument: baseline.document,
            hasher: core.crypto.hasher)
        try publisher.serve(publishedFiles, manifestQuery: token.query)
        guard let fetcher = client.updateFetcher() else { throw ConformanceFailure(description: "no publisher URL") }
        return core.refresh(state, startTime: t0, fetcher: fetcher, baselineDocument: baseline.document)
    }

    private func refreshInMemory(at t0: Timestamp) -> RefreshedState {
        core.refresh(
            state, startTime: t0,
            // Raw answers: UpdateStatus.classify maps them (the status table of docs/ARCHITECTURE.md
            // "The update-channel seam"), as for every transport.
            fetchRoot: { version in self.served(self.roots[version]) },
            fetchManifest: { sent in
                if case .file(_, let etag)? = self.manifest, let sent, sent == etag { return .notModified }
                return self.served(self.manifest)
            },
            fetchProof: { self.served(self.proof) })
    }

    private func checkRefresh(_ result: RefreshedState, at t0: Timestamp, expect: [String: Any]) throws {
        if result.stateChanged {
            do { try store.save(result.state.persisted) } catch {
                throw ConformanceFailure(description: "save failed: \(error)")
            }
        }
        state = result.state
        let (outcome, reason): (String, String?)
        switch result.outcome {
        case .updated: (outcome, reason) = ("updated", nil)
        case .unchanged: (outcome, reason) = ("unchanged", nil)
        case .rejected(let error): (outcome, reason) = ("rejected", error.reasonCode)
        case .networkFailure(let error): (outcome, reason) = ("network", error.reasonCode)
        }
        try same("outcome", outcome, expect["outcome"] as? String, detail: "\(result.outcome)")
        if let expected = expect["reason"] as? String {
            try same("reason", reason, expected, detail: "\(result.outcome)")
        }
        let floor = state.floor.map { [Int($0.rootVersion), Int($0.version)] }
        try same("floor", floor, expect["floor"] as? [Int])
        try same("stateChanged", result.stateChanged, expect["stateChanged"] as? Bool)
        let names = Set(result.events.map(CaseRunner.eventName))
        for name in expect["events"] as? [String] ?? [] where !names.contains(name) {
            throw ConformanceFailure(description: "event \(name) missing from \(names.sorted())")
        }
        for name in expect["absentEvents"] as? [String] ?? [] where names.contains(name) {
            throw ConformanceFailure(description: "event \(name) reported: \(result.events)")
        }
        if let hosts = expect["policy"] as? [String: Any] { try checkPolicy(at: t0, expect: hosts) }
    }

    /// The event names of conformance/README.md.
    private static func eventName(_ event: ClientEvent) -> String {
        switch event {
        case .updated: return "updated"
        case .unchanged: return "unchanged"
        case .rootAccepted: return "rootAccepted"
        case .rejected: return "rejected"
        case .networkFailure: return "networkFailure"
        case .clockSteppedBack: return "clockSteppedBack"
        case .futureDated: return "futureDated"
        case .equivocation: return "equivocation"
        case .storeDropped: return "storeDropped"
        case .trustRemoved: return "trustRemoved"
        case .stateCopyLost: return "stateCopyLost"
        case .stateUnreadable: return "stateUnreadable"
        case .manifestNotCurrent: return "manifestNotCurrent"
        case .staleCheckpoint: return "staleCheckpoint"
        // The log's split view is `equivocation` in the shared suite, like a manifest's.
        case .logEquivocation: return "equivocation"
        case .futureCosignatures: return "futureCosignature"
        }
    }

    private func same<T: Equatable>(_ what: String, _ actual: T?, _ expected: T?, detail: String = "") throws {
        guard actual == expected else {
            throw ConformanceFailure(
                description:
                    "\(what): expected \(expected.map { "\($0)" } ?? "null"), got \(actual.map { "\($0)" } ?? "null") \(detail)"
            )
        }
    }

    private func policy(at wall: Timestamp) -> MergedPolicy {
        let snapshot = PolicySnapshot(
            baseline: baseline, manifest: state.manifest, manifestValid: state.manifestValid, revoked: state.revoked,
            staleGrace: 0, forcedDomains: state.forcedDomains, rootExpiresAt: state.chain.newest.payload.expiresAt,
            logCurrentUntil: state.logCurrentUntil)
        return snapshot.policy(at: max(wall, state.persisted.lastKnownTime ?? wall))
    }

    private func checkPolicy(at wall: Timestamp, expect: [String: Any]) throws {
        let merged = policy(at: wall)
        for (host, value) in expect.sorted(by: { $0.key < $1.key }) {
            let actual = merged.hostPolicy(for: host)
            guard let expected = value as? [String: Any] else {
                if let actual { throw ConformanceFailure(description: "\(host): expected not pinned, got \(actual)") }
                continue
            }
            guard let actual else { throw ConformanceFailure(description: "\(host): expected pinned, got not pinned") }
            try same("\(host) pins", actual.entry.pins.map(\.description).sorted(), expected["pins"] as? [String])
            try same("\(host) enforce", actual.enforce, expected["enforce"] as? Bool)
        }
    }

    private func evaluateStep(_ step: [String: Any]) throws {
        guard let host = step["host"] as? String, let chain = step["chain"] as? [String],
            let expect = step["expect"] as? [String: Any]
        else { throw ConformanceFailure(description: "evaluate: host, chain and expect are required") }
        let digests = try chain.map { text in
            do { return try Pin(text).digest } catch { throw ConformanceFailure(description: "bad pin \(text)") }
        }
        let verdict: String
        var failure: String?
        switch evaluate(host: host, verifiedChain: digests, policy: policy(at: try time(step["at"]))) {
        case .trusted: verdict = "trusted"
        case .notPinned: verdict = "notPinned"
        case .rejected(let why):
            verdict = "rejected"
            failure = failureName(why.reason)
        case .reportOnly(let why):
            verdict = "reportOnly"
            failure = failureName(why.reason)
        }
        try same("verdict", verdict, expect["verdict"] as? String)
        try same("failure", failure, expect["failure"] as? String)
    }

    private func failureName(_ reason: PinFailure.Reason) -> String {
        switch reason {
        case .noVerifiedChain: return "noVerifiedChain"
        case .noUsablePin: return "noUsablePin"
        case .noMatchingPin: return "noMatchingPin"
        }
    }
}
