// The machinery of the compromise drills (docs/THREAT_MODEL.md): the team's `pinion` run
// in-process at fixed times, a test PKI made with openssl, publishers and API servers
// (the HTTPSPublisher of `pinion serve`) on 127.0.0.1, and devices running the SDK on a
// clock the test sets.

import Foundation
import PinionCLI
import PinionCore
import PinionLinux
import PinionPublisher
import PinionSystem
import PinionTestSupport
import Testing

// The drills' reference time is PinionTestSupport's `t0` (2026-11-30T09:00:00Z). Every
// document is signed at an explicit offset from it; no drill reads the wall clock (only
// openssl's certificate validity, 30 days from now, depends on it).
let appScope = "com.example.app"
let apiHost = "api.example.test"

// MARK: - The signer's desk

// The desk is PinionTestSupport's `Workspace`: `pinion` in-process, each command at an
// explicit time (`run(_:at:)`, `require(_:at:)`); an argument `@name` stands for its file.

// MARK: - Certificates

/// Certificates made once per test process with the openssl command (EC P-256): a CA the
/// devices trust (`caFile`) and the leaves it issued. Validity: 30 days from the wall clock.
struct DrillPKI: Sendable {
    /// A certificate (`NAME.pem`) with its unencrypted key (`NAME.key`), and for some a CSR
    /// (`NAME.csr`) as a team keeps for a backup key not yet in service.
    enum Leaf: String, CaseIterable, Sendable {
        /// The publisher `pins.example.test`, served on 127.0.0.1: SAN `IP:127.0.0.1`.
        case publisher
        /// api.example.test's key in service; the key that gets stolen.
        case primary
        /// api.example.test's offline backup key (pinned from its CSR before it is used).
        case backup
        /// The next backup key, made during the incident.
        case spare
        /// A certificate for api.example.test that the CA mis-issued to an attacker (X.509
        /// valid, pinned by nobody).
        case rogue
    }

    let directory: String

    var caFile: String { directory + "/ca.pem" }
    func certificate(_ leaf: Leaf) -> String { directory + "/\(leaf.rawValue).pem" }
    func key(_ leaf: Leaf) -> String { directory + "/\(leaf.rawValue).key" }
    func csr(_ leaf: Leaf) -> String { directory + "/\(leaf.rawValue).csr" }

    static func shared() throws -> DrillPKI { try sharedResult.get() }

    private static let sharedResult = Result { () throws(TestSetupError) -> DrillPKI in try make() }

    private static let config = """
        [ v3_ca ]
        basicConstraints = critical, CA:TRUE
        keyUsage = critical, keyCertSign, cRLSign
        subjectKeyIdentifier = hash

        """
        + OpenSSLPKIBuilder.serverSection("v3_api", subjectAltName: "DNS:api.example.test")
        + OpenSSLPKIBuilder.serverSection("v3_publisher", subjectAltName: "IP:127.0.0.1")

    private static func make() throws(TestSetupError) -> DrillPKI {
        let pki = try OpenSSLPKIBuilder(
            directory: try makeTemporaryDirectory(prefix: "pinion-drill-pki"), sections: config)
        try pki.generateKey("ca")
        try pki.selfSign("ca", subject: "/O=Pinion Drill/CN=Pinion Drill CA", extensions: "v3_ca")
        for (serial, leaf) in Leaf.allCases.enumerated() {
            try pki.issueNew(
                leaf.rawValue, subject: leaf == .publisher ? "/CN=pins.example.test" : "/CN=api.example.test",
                by: "ca", serial: serial + 2, extensions: leaf == .publisher ? "v3_publisher" : "v3_api")
        }
        return DrillPKI(directory: pki.directory)
    }
}

// MARK: - Servers

/// An HTTPS server on 127.0.0.1 (port chosen by the system): `pinion serve`'s
/// HTTPSPublisher, in-process. As the publisher it serves a tree; as an API server it
/// answers `GET /healthz` with whatever key it is given, and its access log shows whether
/// a request ever reached it.
final class Server: @unchecked Sendable {
    let publisher: HTTPSPublisher
    let directory: String
    let chainFile: String
    let keyFile: String
    private let logPath: String
    /// An API server's empty directory is its own; a publisher's tree belongs to the desk.
    private var ownsDirectory = false

    var port: UInt16 { publisher.port }
    /// The base URL a client is given (the server root).
    var url: URL { URL(string: "https://127.0.0.1:\(port)/")! }

    /// - Parameters:
    ///   - tree: the directory to serve (the `--repo` of `pinion publish`).
    ///   - leaf: the certificate and key it presents.
    init(tree: String, leaf: DrillPKI.Leaf, pki: DrillPKI) throws {
        directory = tree
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        // Its own copies of the certificate and key, so a rotation replaces them in place.
        let credentials = tree + ".credentials-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        chainFile = credentials + "/chain.pem"
        keyFile = credentials + "/key.pem"
        try FileManager.default.copyItem(atPath: pki.certificate(leaf), toPath: chainFile)
        try FileManager.default.copyItem(atPath: pki.key(leaf), toPath: keyFile)
        logPath = credentials + "/access.log"
        var configuration = PublisherConfiguration(
            repository: tree, certificateChainFile: chainFile, privateKeyFile: keyFile, host: "127.0.0.1", port: 0)
        configuration.workers = 1
        configuration.drainTimeout = 5
        publisher = try HTTPSPublisher(configuration: configuration, accessLog: try AccessLog(path: logPath))
        publisher.start()
    }

    /// An API server for api.example.test presenting `leaf`.
    convenience init(api leaf: DrillPKI.Leaf, pki: DrillPKI) throws {
        try self.init(
            tree: FileManager.default.temporaryDirectory.path + "/pinion-drill-api-\(UUID().uuidString)", leaf: leaf,
            pki: pki)
        ownsDirectory = true
    }

    deinit {
        _ = publisher.drain(timeout: 5)
        try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: chainFile).deletingLastPathComponent().path)
        if ownsDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// The server's key rotation: install another certificate and key, then reload them
    /// (what `kill -HUP` does to `pinion serve`).
    func rotate(to leaf: DrillPKI.Leaf, pki: DrillPKI) throws {
        try FileManager.default.removeItem(atPath: chainFile)
        try FileManager.default.removeItem(atPath: keyFile)
        try FileManager.default.copyItem(atPath: pki.certificate(leaf), toPath: chainFile)
        try FileManager.default.copyItem(atPath: pki.key(leaf), toPath: keyFile)
        try publisher.reloadCredentials()
    }

    /// Requests for `/healthz` logged so far (a refused connection never sends one).
    var healthRequests: Int {
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { $0.contains(" GET /healthz ") }.count
    }
}

// MARK: - Devices

/// The SDK's clock, set by the test (the device's wall clock).
final class DeviceClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Timestamp
    init(_ time: Timestamp) { value = time }
    var now: Timestamp {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

/// What a pinned connection to api.example.test did.
enum Connection: Equatable {
    /// The pin check passed with this pin.
    case trusted(Pin)
    /// No policy entry covers the host.
    case notPinned
    /// Refused by the pin check before any request byte, for this reason.
    case refused(PinFailure.Reason)
    /// Any other failure (X.509, network).
    case failed(HTTPSError)
}

/// Events the SDK delivered, collected across app restarts.
final class EventRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [ClientEvent] = []
    func record(_ event: ClientEvent) { lock.withLock { events.append(event) } }
    /// Events since the last call.
    func take() -> [ClientEvent] {
        lock.withLock {
            defer { events = [] }
            return events
        }
    }
}

/// One installed app: the SDK with its own state directory, embedded root, baseline and
/// clock. `install` again with another root or publisher is an app update or another
/// network path; the state directory stays.
final class Device: @unchecked Sendable {
    let stateDirectory: String
    let clock: DeviceClock
    let pki: DrillPKI
    let baseline: Baseline
    let staleGrace: Int64
    let recorder = EventRecorder()
    private(set) var client: PinningClient

    /// - Parameters:
    ///   - embeddedRoot: the root envelope the app was built with.
    ///   - publisher: the server the app refreshes from (nil: none reachable).
    ///   - baseline: the app's baseline pins.
    ///   - at: the device clock.
    init(
        embeddedRoot: [UInt8], publisher: Server?, baseline: Baseline = .empty, at time: Timestamp,
        staleGrace: Int64 = 0, pki: DrillPKI
    ) throws {
        stateDirectory = FileManager.default.temporaryDirectory.path + "/pinion-drill-device-\(UUID().uuidString)"
        clock = DeviceClock(time)
        self.pki = pki
        self.baseline = baseline
        self.staleGrace = staleGrace
        client = try Device.makeClient(
            embeddedRoot: embeddedRoot, publisher: publisher, stateDirectory: stateDirectory, clock: clock,
            baseline: baseline, staleGrace: staleGrace, pki: pki, recorder: recorder)
    }

    deinit { try? FileManager.default.removeItem(atPath: stateDirectory) }

    private static func makeClient(
        embeddedRoot: [UInt8], publisher: Server?, stateDirectory: String, clock: DeviceClock, baseline: Baseline,
        staleGrace: Int64, pki: DrillPKI, recorder: EventRecorder
    ) throws -> PinningClient {
        let configuration = ClientConfiguration(
            scope: appScope, baseURL: publisher?.url, embeddedRoot: embeddedRoot, baseline: baseline,
            stateDirectory: stateDirectory, caFile: pki.caFile, staleGrace: staleGrace, connectTimeout: 10,
            ioTimeout: 10, totalDeadline: 20, refreshDeadline: 30, clock: { clock.now })
        return try PinningClient(configuration: configuration, onEvent: { recorder.record($0) })
    }

    /// Restarts the app (same state directory) with this embedded root and publisher: an
    /// app update, or the same app on another network path.
    func install(embeddedRoot: [UInt8], publisher: Server?) throws {
        client = try Device.makeClient(
            embeddedRoot: embeddedRoot, publisher: publisher, stateDirectory: stateDirectory, clock: clock,
            baseline: baseline, staleGrace: staleGrace, pki: pki, recorder: recorder)
    }

    /// Events since the last call.
    func takeEvents() -> [ClientEvent] { recorder.take() }

    /// One refresh now (blocking on 127.0.0.1).
    func refresh() -> RefreshOutcome { client.refresh().outcome }

    /// A pinned GET https://api.example.test:PORT/healthz, dialled at 127.0.0.1.
    func connect(to server: Server) -> Connection {
        let port = server.port
        guard let url = URL(string: "https://\(apiHost):\(port)/healthz") else { return .notPinned }
        do {
            let (_, verdict) = try client.get(url, connectTo: ("127.0.0.1", port))
            switch verdict {
            case .trusted(let pin, _): return .trusted(pin)
            case .notPinned, .reportOnly: return .notPinned
            case .rejected(let failure): return .refused(failure.reason)
            }
        } catch {
            if error.reasonCode == "pinning-refused", let reason = error.detail,
                let known = [PinFailure.Reason.noUsablePin, .noMatchingPin, .noVerifiedChain].first(where: {
                    $0.description == reason
                })
            {
                return .refused(known)
            }
            return .failed(error)
        }
    }

    /// The pins the device accepts for api.example.test now (nil: not pinned).
    var apiPins: [Pin]? { client.policyNow().entry(named: apiHost)?.pins }
    /// Whether the accepted manifest counts as current at the device's effective time.
    var manifestCurrent: Bool { client.policy.isManifestCurrent(at: client.effectiveNow) }
}

// MARK: - The team

/// The security team's standing set-up, made with the real `pinion` at t0: root role
/// alice, bob and carol (2 of 3), pins role one key; root 1 signed by alice and bob;
/// manifest 1 (14 days) pinning api.example.test to the primary key and the backup CSR,
/// published to `tree/`; a publisher serving it; the primary key in service. The baseline
/// the app ships with holds the same two pins.
final class Team: @unchecked Sendable {
    let desk: Workspace
    let pki: DrillPKI
    let publisher: Server
    let api: Server
    /// Pins printed by `pinion spki` for each leaf (the backup's and spare's from their CSRs).
    let pins: [DrillPKI.Leaf: String]
    let keyIDs: [String: String]

    var tree: String { desk.path("tree") }

    init(_ label: String) throws {
        pki = try DrillPKI.shared()
        desk = try Workspace(prefix: "pinion-drill-\(label)")
        var ids: [String: String] = [:]
        for name in ["alice", "bob", "carol", "pins"] {
            ids[name] = try desk.require(["keygen", "--out", "@" + name, "--insecure-no-passphrase"], at: t0).out
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        keyIDs = ids
        var pins: [DrillPKI.Leaf: String] = [:]
        let spki = try desk.require(
            [
                "spki", pki.certificate(.primary), pki.csr(.backup), pki.csr(.spare), pki.certificate(.rogue),
                pki.certificate(.publisher),
            ], at: t0
        ).out.split(separator: "\n").map { String($0.split(separator: " ")[0]) }
        for (leaf, pin) in zip([DrillPKI.Leaf.primary, .backup, .spare, .rogue, .publisher], spki) { pins[leaf] = pin }
        self.pins = pins
        try desk.require(
            [
                "root", "init", "--scope", appScope, "--root-key", "@alice.pub", "--root-key", "@bob.pub",
                "--root-key", "@carol.pub", "--root-threshold", "2", "--pins-key", "@pins.pub", "--pins-threshold",
                "1", "--issued-at", t0.description, "--expires-in", "1y", "--max-manifest-lifetime", "30d", "-o",
                "@root-1.payload.json",
            ], at: t0)
        try desk.require(
            ["sign", "--key", "@alice.key", "--key", "@bob.key", "@root-1.payload.json", "-o", "@root-1.json"], at: t0)
        try desk.require(["publish", "--repo", "@tree", "@root-1.json"], at: t0)
        try desk.require(
            [
                "manifest", "init", "--root", "@root-1.json", "--issued-at", t0.description, "--expires-in", "14d",
                "-o",
                "@manifest-1.payload.json",
            ], at: t0)
        try desk.require(
            [
                "manifest", "set-domain", "@manifest-1.payload.json", apiHost, "--pin", pins[.primary] ?? "", "--pin",
                pins[.backup] ?? "",
            ], at: t0)
        try desk.require(
            [
                "sign", "--key", "@pins.key", "--root", "@root-1.json", "@manifest-1.payload.json", "-o",
                "@manifest-1.json",
            ], at: t0)
        try desk.require(["publish", "--repo", "@tree", "@manifest-1.json"], at: t0)
        publisher = try Server(tree: desk.path("tree"), leaf: .publisher, pki: pki)
        api = try Server(api: .primary, pki: pki)
    }

    func pin(_ leaf: DrillPKI.Leaf) -> String { pins[leaf] ?? "" }
    func typedPin(_ leaf: DrillPKI.Leaf) throws -> Pin { try Pin(pin(leaf)) }

    /// The baseline file the app is built with: api.example.test, primary and backup pins.
    func baseline() throws -> Baseline {
        let text = """
            {"type": "pinion.baseline", "specVersion": 1, "domains": [
              {"name": "\(apiHost)", "pins": ["\(pin(.primary))", "\(pin(.backup))"]}]}
            """
        return try Baseline.parse(Array(text.utf8))
    }

    /// A device running the app built with root 1 (or `embeddedRoot`) and the baseline,
    /// refreshing from `publisher` (default: the team's; `offline`: none reachable).
    func device(
        publisher: Server? = nil, offline: Bool = false, embeddedRoot: String = "root-1.json", at time: Timestamp,
        staleGrace: Int64 = 0
    ) throws -> Device {
        try Device(
            embeddedRoot: try desk.readBytes(embeddedRoot), publisher: offline ? nil : publisher ?? self.publisher,
            baseline: try baseline(), at: time, staleGrace: staleGrace, pki: pki)
    }

    /// The next manifest, made the way the runbooks say: `manifest init --previous`
    /// (optionally `--root` after a rotation), the edits, `sign` with the pins key(s),
    /// all at `time`. Writes `NAME.payload.json` and `NAME.json`.
    func nextManifest(
        _ name: String, previous: String, root: String, at time: Timestamp, lifetime: String = "14d",
        pinsKeys: [String] = ["pins"], edits: [[String]] = []
    ) throws {
        let payload = "@\(name).payload.json"
        try desk.require(
            [
                "manifest", "init", "--previous", "@" + previous, "--root", "@" + root, "--issued-at", time.description,
                "--expires-in", lifetime, "-o", payload,
            ], at: time)
        for edit in edits { try desk.require(["manifest"] + edit.map { $0 == "PAYLOAD" ? payload : $0 }, at: time) }
        try desk.require(
            ["sign"] + pinsKeys.flatMap { ["--key", "@\($0).key"] } + [
                "--root", "@" + root, payload, "-o",
                "@\(name).json",
            ], at: time)
    }

    /// `pinion publish --repo tree NAME` at `time`.
    func publish(_ name: String, at time: Timestamp) -> CommandResult {
        desk.run(["publish", "--repo", "@tree", "@" + name], at: time)
    }

    /// `pinion audit --root ROOT TREE --at TIME`.
    func audit(_ tree: String, root: String = "root-1.json", at time: Timestamp) -> CommandResult {
        desk.run(["audit", "--root", "@" + root, tree, "--at", time.description], at: time)
    }
}

extension RefreshOutcome {
    static func updated(_ rootVersion: Int64, _ version: Int64) -> RefreshOutcome {
        .updated(ManifestOrder(rootVersion: rootVersion, version: version))
    }
}

extension ManifestOrder {
    init(_ rootVersion: Int64, _ version: Int64) { self.init(rootVersion: rootVersion, version: version) }
}
