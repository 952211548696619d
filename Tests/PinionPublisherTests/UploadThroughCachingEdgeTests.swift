// Upload plans replayed through a caching layer (docs/PUBLISHING.md "Upload plans", docs/DESIGN.md
// §9). A mirror is fed phase by phase: each phase's files in a random order (fixed seeds), in
// batches whose files are written at once by parallel uploaders while the clients refresh, then
// the clients refresh again and `pinion status` checks the public URL. The public URL is real
// nginx acting as a CDN edge (`proxy_cache`, cache key the path without the query) in front of
// an origin: the same nginx serving the mirror with the shipped deploy/nginx/pinion.conf, so the
// origin sends the Cache-Control and Content-Type the plan names. Clients are the SDK
// (`PinningClient`, in-process, each with its own state directory) refreshing over HTTPS.
//
// Two edges:
// - honouring: keeps what the origin's Cache-Control allows: root/, history/ and tiles for a
//   year; manifest.json, index.json, manifest.proof and log/checkpoint (`no-cache`) and the
//   404s (`no-store`) are not stored, so every request for them reaches the origin.
// - holding: ignores the origin's Cache-Control and keeps every 200 and 404 for an hour, as a
//   CDN with a minimum TTL and error caching does (docs/PUBLISHING.md advises against it). New
//   files reach clients there only through the plan's invalidations.
//
// Invalidation is emulated: Debian's nginx has no proxy_cache_purge, so an invalidation is a
// request for the path carrying the header X-Pinion-Invalidate, which bypasses the edge's
// cache (proxy_cache_bypass), fetches the origin's current answer and stores it in place of
// the cached one: what a purge followed by the next client's request gives. No real CDN or
// object store is used.
//
// The oracle: no client narrows (its manifest stays valid and current) or loses state (its
// floor never goes down), a client sees no network failure, a refresh is refused only during
// the phases the plan's refusal window names, `pinion status` at the edge is never broken,
// and after the last phase and its invalidations every client reaches the new version and
// `status --expect-version` passes. The same root rotation with all files in one phase (what
// `aws s3 sync` does) narrows clients whenever root/2.json lands before manifest.json; a
// holding edge without the invalidations hides the rotation.

import Foundation
import PinionCore
import PinionLinux
import PinionTestSupport
import PinionTrust
import Testing

/// A CA and a leaf certificate for 127.0.0.1 (openssl, EC P-256), made once per test process.
struct EdgePKI: Sendable {
    let directory: String
    var caFile: String { directory + "/ca.pem" }
    var leaf: String { directory + "/leaf.pem" }
    var key: String { directory + "/leaf.key" }

    static func shared() throws -> EdgePKI { try sharedResult.get() }

    private static let sharedResult = Result { () throws(TestSetupError) -> EdgePKI in
        let pki = try OpenSSLPKIBuilder(
            directory: try makeTemporaryDirectory(prefix: "pinion-edge-pki"),
            sections: """
                [ ca ]
                basicConstraints = critical, CA:TRUE
                keyUsage = critical, keyCertSign, cRLSign

                """ + OpenSSLPKIBuilder.serverSection("leaf", subjectAltName: "IP:127.0.0.1"))
        try pki.generateKey("ca")
        try pki.selfSign("ca", subject: "/CN=Pinion Test Edge CA", extensions: "ca")
        try pki.issueNew("leaf", subject: "/CN=127.0.0.1", by: "ca", serial: 2, extensions: "leaf")
        return EdgePKI(directory: pki.directory)
    }
}

/// How the edge treats the origin's Cache-Control.
enum EdgeCaching: String, Sendable {
    /// Stores only what the origin's Cache-Control allows, for as long as it allows.
    case honouring
    /// Stores every 200 and 404 for an hour, whatever the origin says.
    case holding
}

/// One nginx: the origin (shipped configuration, serving `mirror`) on `ports[1]` and the
/// caching edge in front of it on `ports[0]`.
final class CachingEdge: @unchecked Sendable {
    let nginx: NginxServer
    let pki: EdgePKI
    var url: URL { URL(string: "https://127.0.0.1:\(nginx.port)/")! }

    init(mirror: String, caching: EdgeCaching, pki: EdgePKI) throws {
        self.pki = pki
        nginx = try NginxServer(ports: 2) { ports, directory in
            let origin = try NginxServer.shippedServer(
                listen: "127.0.0.1:\(ports[1])", chain: [pki.leaf], key: pki.key, tree: mirror, in: directory)
            let holding =
                caching == .holding
                ? "proxy_ignore_headers Cache-Control Expires;\n            proxy_cache_valid 200 404 1h;" : ""
            // The hop to the origin stays on 127.0.0.1 inside this nginx: not verified. The
            // clients verify the edge's certificate.
            return origin + """

                proxy_cache_path \(directory)/cache levels=1:2 keys_zone=edge:1m inactive=1d use_temp_path=off;
                log_format edge '$upstream_cache_status $status $request_method $request_uri';
                server {
                    listen 127.0.0.1:\(ports[0]) ssl;
                    server_name 127.0.0.1;
                    ssl_certificate \(directory)/chain.pem;
                    ssl_certificate_key \(pki.key);
                    access_log \(directory)/edge.log edge;
                    location / {
                        proxy_pass https://127.0.0.1:\(ports[1]);
                        proxy_ssl_verify off;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        proxy_cache edge;
                        proxy_cache_key $uri;
                        proxy_cache_bypass $http_x_pinion_invalidate;
                        \(holding)
                        add_header X-Cache-Status $upstream_cache_status always;
                    }
                }

                """
        }
    }

    deinit { nginx.stop() }

    /// Invalidates `paths` (tree-relative, `v1/...`) at the edge: each one fetched with
    /// X-Pinion-Invalidate, which must bypass the cache.
    func invalidate(_ paths: [String]) throws {
        for path in paths {
            let answer = try runProgram(
                "/usr/bin/curl",
                [
                    "-sS", "--cacert", pki.caFile, "-H", "X-Pinion-Invalidate: 1", "-o", "/dev/null", "-D", "-",
                    url.absoluteString + path,
                ])
            guard answer.status == 0, answer.out.lowercased().contains("x-cache-status: bypass") else {
                throw TestSetupError(description: "invalidating \(path) failed: \(answer.out)\(answer.err)")
            }
        }
    }

    /// The edge's log lines: cache status, HTTP status, method, request target.
    var log: [String] {
        ((try? String(contentsOfFile: nginx.directory + "/edge.log", encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
    }
}

/// An installed app: the SDK refreshing from `url` with its own state directory and a clock
/// fixed at `time`.
final class EdgeClient: @unchecked Sendable {
    let client: PinningClient
    let stateDirectory: String

    init(root: [UInt8], url: URL, caFile: String, at time: Timestamp) throws {
        stateDirectory = try makeTemporaryDirectory(prefix: "pinion-edge-client")
        client = try PinningClient(
            configuration: ClientConfiguration(
                scope: "com.example.app", baseURL: url, embeddedRoot: root, stateDirectory: stateDirectory,
                caFile: caFile, connectTimeout: 10, ioTimeout: 10, totalDeadline: 20, refreshDeadline: 30,
                clock: { time }))
    }

    deinit { try? FileManager.default.removeItem(atPath: stateDirectory) }

    var floor: ManifestOrder? { client.trustedState.persisted.floor }
    /// What the client holds that must never go backwards.
    var held: Held {
        let state = client.trustedState.persisted
        return Held(floor: state.floor, roots: state.acceptedRoots.count, logSize: state.logCheckpoint?.checkpoint.size)
    }
    /// Whether the client holds a manifest that verifies and is current.
    var holdsCurrentManifest: Bool {
        client.trustedState.manifestValid && client.policy.isManifestCurrent(at: client.effectiveNow)
    }
}

/// A client's floor, its number of accepted roots and the size of the log checkpoint it
/// holds: none of them may go down.
struct Held: Equatable {
    var floor: ManifestOrder?
    var roots: Int
    var logSize: UInt64?

    /// Whether `self` lost anything `before` held.
    func lost(since before: Held) -> Bool {
        if let floor = before.floor, self.floor.map({ $0 < floor }) ?? true { return true }
        if let size = before.logSize, (logSize ?? 0) < size { return true }
        return roots < before.roots
    }
}

/// Values put by concurrent work items, read back in the order of their indexes.
final class LockedList<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Int: Value] = [:]

    func put(_ index: Int, _ value: Value) { lock.withLock { items[index] = value } }
    var values: [Value] { lock.withLock { items.sorted { $0.key < $1.key }.map(\.value) } }
}

/// What one replay found.
struct ReplayResult {
    var violations: [String] = []
    /// Whether root/{n}.json landed in an earlier batch than manifest.json.
    var rootBeforeManifest = false
    /// Refreshes refused inside the plan's refusal window.
    var refusalsInWindow = 0
    /// The edge's log: cache status (HIT, MISS, BYPASS, ...), HTTP status, method, target.
    var edgeLog: [String] = []

    /// Whether the edge answered a 404 from its cache.
    var servedCachedNotFound: Bool { edgeLog.contains { $0.hasPrefix("HIT 404 ") } }

    /// Whether the edge answered a request for a path ending in `suffix` from its cache.
    func servedFromCache(_ suffix: String) -> Bool {
        edgeLog.contains { line in
            let fields = line.split(separator: " ")
            return fields.count == 4 && fields[0] == "HIT"
                && fields[3].split(separator: "?").first.map { $0.hasSuffix(suffix) } == true
        }
    }
}

/// A publish step ready to replay: the tree before it (`before/`), the tree after it
/// (`tree/`), its plan, and how to run `pinion status`.
struct PublishedStep {
    let workspace: Workspace
    let plan: PlannedUpload
    let rootFile: String
    let newVersion: Int64
    let time: Timestamp

    /// Replays the plan into a fresh copy of `before/` behind an edge, `clients` clients
    /// refreshing through it.
    func replay(
        _ caching: EdgeCaching, seed: UInt64, merged: Bool = false, invalidating: Bool = true, clients: Int = 3
    ) throws -> ReplayResult {
        let pki = try EdgePKI.shared()
        let mirror = workspace.path("mirror-\(caching.rawValue)-\(seed)-\(merged)-\(invalidating)")
        try FileManager.default.copyItem(atPath: workspace.path("before"), toPath: mirror)
        let edge = try CachingEdge(mirror: mirror, caching: caching, pki: pki)
        let root = try workspace.readBytes(rootFile)
        let devices = try (0..<clients).map { _ in
            try EdgeClient(root: root, url: edge.url, caFile: pki.caFile, at: time)
        }
        for device in devices {
            let outcome = device.client.refresh().outcome
            guard device.floor?.version == newVersion - 1 else {
                throw TestSetupError(description: "a client did not reach the previous version: \(outcome)")
            }
        }
        var result = ReplayResult()
        var random = SplitMix(state: seed)
        let phases =
            merged
            ? [
                PlannedUpload.Phase(
                    name: "all", paths: plan.phases.flatMap(\.paths), invalidate: plan.phases.flatMap(\.invalidate))
            ] : plan.phases
        var held = devices.map(\.held)
        var landed: [String: Int] = [:]
        var batchNumber = 0

        func check(_ outcomes: [RefreshOutcome], phase index: Int, after what: String) {
            let allowed = !merged && plan.refusalAllowed(during: index)
            for (number, device) in devices.enumerated() {
                switch outcomes[number] {
                case .rejected: result.refusalsInWindow += allowed ? 1 : 0
                default: break
                }
                switch outcomes[number] {
                case .rejected(let error) where !allowed:
                    result.violations.append("client \(number) refused \(what): \(error)")
                case .networkFailure(let error):
                    result.violations.append("client \(number) failed to reach the edge \(what): \(error)")
                default: break
                }
                if !device.holdsCurrentManifest {
                    result.violations.append("client \(number) narrowed \(what)")
                }
                let now = device.held
                if now.lost(since: held[number]) {
                    result.violations.append("client \(number) lost state \(what): \(held[number]) became \(now)")
                }
                held[number] = now
            }
        }

        for (index, phase) in phases.enumerated() {
            var pending = random.shuffle(phase.paths)
            while !pending.isEmpty {
                let batch = Array(pending.prefix(1 + random.below(3)))
                pending.removeFirst(batch.count)
                batchNumber += 1
                for path in batch { landed[path] = batchNumber }
                let what = "with \(batch.joined(separator: ", ")) in phase \(phase.name)"
                // The batch's files are written at once while every client refreshes.
                let racing = try parallel(uploads: batch, into: mirror, refreshing: devices)
                check(racing, phase: index, after: "while uploading \(what)")
                check(
                    try parallel(uploads: [], into: mirror, refreshing: devices), phase: index, after: "after \(what)")
                let status = workspace.run(
                    ["status", "--root", "@" + rootFile, edge.url.absoluteString, "--cafile", pki.caFile], at: time)
                if status.status == 1 { result.violations.append("status broken after \(what): \(status.out)") }
            }
            if invalidating { try edge.invalidate(phase.invalidate) }
        }
        for (number, device) in devices.enumerated() {
            let outcome = device.client.refresh().outcome
            if device.floor?.version != newVersion {
                result.violations.append(
                    "client \(number) did not reach version \(newVersion) after the last phase: \(outcome)")
            }
        }
        let final = workspace.run(
            [
                "status", "--root", "@" + rootFile, edge.url.absoluteString, "--cafile", pki.caFile,
                "--expect-version", String(newVersion),
            ], at: time)
        if final.status != 0 { result.violations.append("status after the last phase: \(final.out)\(final.err)") }
        let roots = landed.filter { $0.key.contains("/root/") }.map(\.value)
        if let manifest = landed.first(where: { $0.key.hasSuffix("/manifest.json") })?.value,
            let firstRoot = roots.min()
        {
            result.rootBeforeManifest = firstRoot < manifest
        }
        result.edgeLog = edge.log
        if !result.violations.isEmpty { result.violations.append("edge log:\n" + edge.log.joined(separator: "\n")) }
        edge.nginx.stop()
        try? FileManager.default.removeItem(atPath: mirror)
        return result
    }

    /// Copies `uploads` from `tree/` into `mirror` (each an atomic rename, all at once) while
    /// every client refreshes; returns the clients' outcomes in order.
    private func parallel(uploads: [String], into mirror: String, refreshing devices: [EdgeClient]) throws
        -> [RefreshOutcome]
    {
        let outcomes = LockedList<RefreshOutcome>()
        let failures = LockedList<String>()
        let source = workspace.path("tree")
        DispatchQueue.concurrentPerform(iterations: uploads.count + devices.count) { item in
            if item < uploads.count {
                let path = uploads[item]
                do {
                    let target = mirror + "/" + path
                    let directory = URL(fileURLWithPath: target).deletingLastPathComponent().path
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                    let temporary = directory + "/.upload-\(UUID().uuidString)"
                    try Data(contentsOf: URL(fileURLWithPath: source + "/" + path)).write(
                        to: URL(fileURLWithPath: temporary))
                    guard rename(temporary, target) == 0 else { throw TestSetupError(description: "rename \(target)") }
                } catch {
                    failures.put(item, "\(path): \(error)")
                }
            } else {
                outcomes.put(item - uploads.count, devices[item - uploads.count].client.refresh().outcome)
            }
        }
        guard failures.values.isEmpty else { throw TestSetupError(description: "upload failed: \(failures.values)") }
        return outcomes.values
    }
}

@Suite(.serialized) struct UploadThroughCachingEdgeTests {
    /// The seeds of a replay: `fixed`, or 1...N when PINION_UPLOAD_SWEEP_SEEDS is N (the
    /// longer sweep of bench/upload-sweep).
    static func seeds(_ fixed: [UInt64]) -> [UInt64] {
        guard let text = ProcessInfo.processInfo.environment["PINION_UPLOAD_SWEEP_SEEDS"], let count = UInt64(text),
            count > 0
        else { return fixed }
        return Array(1...count)
    }

    /// Whether the longer sweep runs.
    static var sweeping: Bool { seeds([]) != [] }

    /// Three made-up SPKI pins for api.example.com.
    let pins = [0xA1, 0xB2, 0xC3].map { "sha256/" + Data(repeating: UInt8($0), count: 32).base64EncodedString() }
    /// The edge cached as its kind says, so the replay went through a cache: a honouring edge
    /// never answered manifest.json or a 404 from its cache, a holding edge did both.
    func expectCaching(
        _ result: ReplayResult, _ caching: EdgeCaching, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let held = caching == .holding
        #expect(result.servedFromCache("/manifest.json") == held, "\(caching)", sourceLocation: sourceLocation)
        #expect(result.servedCachedNotFound == held, "\(caching)", sourceLocation: sourceLocation)
    }

    /// When the unlogged trees are published and refreshed (manifests live 30 days from t0).
    let time = t0.adding(seconds: 3600)

    /// root.json and m1.json published to tree/ at t0.
    func unloggedWorld() throws -> Workspace {
        let w = try Workspace(prefix: "pinion-edge")
        w.standardRoot()
        w.ok(["publish", "--repo", "@tree", "@root.json"])
        w.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@p1.json"])
        w.ok(["manifest", "set-domain", "@p1.json", "api.example.com", "--pin", pins[0], "--pin", pins[1]])
        w.ok(["sign", "--key", "@pins.key", "@p1.json", "-o", "@m1.json"])
        w.ok(["publish", "--repo", "@tree", "@m1.json"])
        try w.copy("tree", to: "before")
        return w
    }

    /// Manifest 2 under root 1, published with `--plan`.
    func manifestPublish() throws -> PublishedStep {
        let w = try unloggedWorld()
        w.ok(["manifest", "init", "--previous", "@m1.json", "--expires-in", "30d", "-o", "@p2.json"])
        w.ok(["manifest", "set-domain", "@p2.json", "api.example.com", "--pin", pins[1], "--pin", pins[2]])
        w.ok(["sign", "--key", "@pins.key", "@p2.json", "-o", "@m2.json"])
        w.ok(["publish", "--repo", "@tree", "@m2.json", "--plan", "@plan.json"])
        return PublishedStep(
            workspace: w, plan: try PlannedUpload(try w.readBytes("plan.json")), rootFile: "root.json",
            newVersion: 2, time: time)
    }

    /// Root 2 replacing the pins key (pinsRoleSince 2) and manifest 2 signed under it,
    /// published in one step with `--plan`.
    func pinsRoleRotation() throws -> PublishedStep {
        let w = try unloggedWorld()
        w.quickKey("pins-2")
        w.ok([
            "root", "rotate", "--previous", "@root.json", "--add-pins-key", "@pins-2.pub", "--remove-pins-key",
            "@pins.pub", "-o", "@r2.json",
        ])
        w.ok(["sign", "--key", "@root.key", "@r2.json", "-o", "@root2.json"])
        w.ok([
            "manifest", "init", "--previous", "@m1.json", "--root", "@root2.json", "--expires-in", "30d", "-o",
            "@p2.json",
        ])
        w.ok(["sign", "--key", "@pins-2.key", "--root", "@root2.json", "@p2.json", "-o", "@m2.json"])
        w.ok(["publish", "--repo", "@tree", "@root2.json", "@m2.json", "--plan", "@plan.json"])
        let plan = try PlannedUpload(try w.readBytes("plan.json"))
        try #require(plan.window?.first == "manifest" && plan.window?.last == "roots")
        return PublishedStep(workspace: w, plan: plan, rootFile: "root.json", newVersion: 2, time: time)
    }

    /// A tree with a transparency log cosigned by two real `pinion witness` processes:
    /// root.json and m1.json published, then m2.json with `--plan`. The witnesses date their
    /// cosignatures with this machine's clock, so the clients and status read it too.
    func loggedPublish() throws -> PublishedStep {
        let world = try WitnessedWorkspace(prefix: "pinion-edge-log")
        let w = world.workspace
        for files in [["@root.json"], ["@m1.json"], ["@m2.json", "--plan", "@plan.json"]] {
            if files[0] == "@m1.json" { try world.signManifest(1) }
            if files[0] == "@m2.json" {
                try w.copy("tree", to: "before")
                try world.signManifest(2)
            }
            let published = try world.publish(files)
            try #require(published.status == 0, "publish \(files): \(published.err)")
        }
        let plan = try PlannedUpload(try w.readBytes("plan.json"))
        try #require(plan.window?.first == "index-and-log" && plan.window?.last == "manifest")
        try #require(plan.phases.flatMap(\.paths).contains { $0.hasSuffix("/manifest.proof") })
        return PublishedStep(
            workspace: w, plan: plan, rootFile: "root.json", newVersion: 2,
            time: Timestamp(secondsSince1970: Int64(Date().timeIntervalSince1970)))
    }

    @Test func aManifestPublishThroughEitherEdgeNeverNarrowsAClient() throws {
        let step = try manifestPublish()
        #expect(step.plan.window == nil)
        for caching in [EdgeCaching.honouring, .holding] {
            for seed in Self.seeds([1]) {
                let result = try step.replay(caching, seed: seed)
                expectCaching(result, caching)
                #expect(
                    result.violations.isEmpty, "\(caching) seed \(seed): \(result.violations.joined(separator: "\n"))")
            }
        }
    }

    @Test func aPinsRoleRotationThroughEitherEdgeRefusesOnlyInsideItsWindow() throws {
        let step = try pinsRoleRotation()
        for caching in [EdgeCaching.honouring, .holding] {
            for seed in Self.seeds([1, 2]) {
                let result = try step.replay(caching, seed: seed)
                expectCaching(result, caching)
                #expect(result.refusalsInWindow > 0, "\(caching) seed \(seed): the refusal window was never entered")
                #expect(
                    result.violations.isEmpty, "\(caching) seed \(seed): \(result.violations.joined(separator: "\n"))")
            }
        }
    }

    /// The oracle can fail: uploaded as one phase, root/2.json may land before manifest.json,
    /// and every client that refreshes in between narrows. Seeds are tried until one order
    /// does so (all of them in the sweep); each such order must be caught, and one must occur.
    @Test func theRotationMergedIntoOnePhaseNarrowsClientsThroughTheEdge() throws {
        let step = try pinsRoleRotation()
        var caught: [UInt64] = []
        for seed in Self.seeds(Array(1...6)) {
            let result = try step.replay(.honouring, seed: seed, merged: true, clients: 2)
            if result.rootBeforeManifest {
                #expect(
                    result.violations.contains { $0.contains("narrowed") || $0.contains("status broken") },
                    "seed \(seed) uploaded root/2.json first, yet no client narrowed: \(result.violations)")
                caught.append(seed)
                if !Self.sweeping { break }
            }
        }
        #expect(!caught.isEmpty, "no seed put root/2.json before manifest.json")
    }

    /// The invalidations are load-bearing: an edge that keeps its cached manifest.json and its
    /// cached 404 of root/2.json hides the rotation after the last phase.
    @Test func aHoldingEdgeWithoutTheInvalidationsHidesTheRotation() throws {
        let step = try pinsRoleRotation()
        let result = try step.replay(.holding, seed: 1, invalidating: false, clients: 2)
        #expect(result.violations.contains { $0.contains("did not reach version 2") }, "\(result.violations)")
    }

    @Test func aLoggedPublishThroughEitherEdgeRefusesOnlyInsideItsWindow() throws {
        let step = try loggedPublish()
        for caching in [EdgeCaching.honouring, .holding] {
            for seed in Self.seeds([1]) {
                let result = try step.replay(caching, seed: seed)
                expectCaching(result, caching)
                #expect(result.refusalsInWindow > 0, "\(caching) seed \(seed): the refusal window was never entered")
                #expect(
                    result.violations.isEmpty, "\(caching) seed \(seed): \(result.violations.joined(separator: "\n"))")
            }
        }
    }
}
