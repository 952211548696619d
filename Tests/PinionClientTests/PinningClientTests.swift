// The SDK end to end on real TLS (127.0.0.1, certificates made with openssl): refresh
// from a publisher, persistence across restarts, pinned connections accepted and refused.

import Foundation
import PinionClient
import PinionCore
import PinionCrypto
import PinionTestSupport
import Testing

/// Collects callbacks from the SDK.
final class Recorded: @unchecked Sendable {
    private let lock = NSLock()
    private var eventList: [ClientEvent] = []
    private var reportList: [PinFailureReport] = []

    var events: [ClientEvent] { lock.withLock { eventList } }
    var reports: [PinFailureReport] { lock.withLock { reportList } }
    func event(_ event: ClientEvent) { lock.withLock { eventList.append(event) } }
    func report(_ report: PinFailureReport) { lock.withLock { reportList.append(report) } }
}

@Suite(.serialized) struct PinningClientTests {
    let pki: HTTPSTestPKI
    let setup: Setup
    let stateDirectory: String

    init() throws {
        pki = try HTTPSTestPKI.shared()
        setup = try Setup()
        stateDirectory = try makeTemporaryDirectory(prefix: "pinion-sdk-state") + "/state"
    }

    /// A manifest pinning api.example.test to the given certificates' keys (plus a backup).
    func manifest(version: Int64 = 1, pinning certificates: [HTTPSTestPKI.Certificate], issuedAt: Timestamp)
        throws -> String
    {
        var pins = try certificates.map { try Pin(digest: try pki.spkiSHA256($0)) }
        pins.append(pin(0xEE))
        let payload = manifestPayload(
            version: version, issuedAt: issuedAt, domains: [.init(name: "api.example.test", pins: pins)])
        return String(
            decoding: try sign(.pins, payload.serialized(), with: [setup.pinsKey]).serialized(), as: UTF8.self)
    }

    /// A publisher on 127.0.0.1 serving manifest.json (root/2.json is a 404).
    func publisher(_ manifestText: String) throws -> TestTLSServer {
        try TestTLSServer(
            chain: [pki.path(.ipLeaf), pki.path(.intermediate)], key: pki.keyPath(.ipLeaf),
            routes: [
                "/v1/com.example.app/manifest.json": .init(
                    headers: [("ETag", "\"m1\""), ("Cache-Control", "no-cache")], body: manifestText)
            ])
    }

    func client(publisherPort: UInt16?, recorded: Recorded, now: Timestamp) throws -> PinningClient {
        let configuration = ClientConfiguration(
            scope: "com.example.app", baseURL: publisherPort.flatMap { URL(string: "https://127.0.0.1:\($0)/") },
            embeddedRoot: setup.rootEnvelope.serialized(), stateDirectory: stateDirectory, caFile: pki.path(.root),
            connectTimeout: 20, ioTimeout: 20, totalDeadline: 60, clock: { now })
        return try PinningClient(
            configuration: configuration, onEvent: { recorded.event($0) }, onPinFailure: { recorded.report($0) })
    }

    /// The wall clock, only to sign a manifest valid while the test's certificates are.
    var now: Timestamp { Timestamp(Date()) }

    @Test func refreshPersistsAndPinsConnections() throws {
        let now = self.now
        let publisher = try publisher(try manifest(pinning: [.leaf], issuedAt: now))
        defer { publisher.stop() }
        let recorded = Recorded()
        let client = try client(publisherPort: publisher.port, recorded: recorded, now: now)
        let report = client.refresh()
        #expect(report.outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        #expect(client.policyNow().entry(named: "api.example.test")?.pins.count == 2)
        #expect(
            try publisher.connections(atLeast: 2).contains {
                $0.request.contains("GET /v1/com.example.app/root/2.json")
            })

        // A restart restores the same policy from the state directory.
        let restarted = try self.client(publisherPort: nil, recorded: Recorded(), now: now)
        #expect(restarted.policyNow() == client.policyNow())
        #expect(restarted.trustedState.floor == ManifestOrder(rootVersion: 1, version: 1))

        // The pinned leaf key is trusted.
        let good = try TestTLSServer(
            chain: [pki.path(.leaf), pki.path(.intermediate)], key: pki.keyPath(.leaf), routes: ["*": .init(body: "ok")]
        )
        defer { good.stop() }
        let (response, verdict) = try client.get(
            URL(string: "https://api.example.test:\(good.port)/")!, connectTo: ("127.0.0.1", good.port))
        #expect(response.status == 200)
        guard case .trusted(_, let entry) = verdict else {
            Issue.record("expected trusted, got \(verdict)")
            return
        }
        #expect(entry == "api.example.test")

        // The same CA, another key: refused before any request byte, and reported.
        let other = try TestTLSServer(
            chain: [pki.path(.secondLeaf), pki.path(.intermediate)], key: pki.keyPath(.secondLeaf),
            routes: ["*": .init(body: "should not be served")])
        defer { other.stop() }
        #expect(throws: HTTPSError.self) {
            _ = try client.get(
                URL(string: "https://api.example.test:\(other.port)/")!, connectTo: ("127.0.0.1", other.port))
        }
        #expect(try other.connections(atLeast: 1).allSatisfy { $0.received == 0 })
        #expect(recorded.reports.count == 1)
        #expect(recorded.reports.first?.hostname == "api.example.test")
    }

    @Test func publisherFailureKeepsPolicyAndState() throws {
        let now = self.now
        let publisher = try publisher(try manifest(pinning: [.leaf], issuedAt: now))
        let recorded = Recorded()
        let client = try client(publisherPort: publisher.port, recorded: recorded, now: now)
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        let before = (client.trustedState, client.policy)
        publisher.stop()
        let report = client.refresh()
        guard case .networkFailure = report.outcome else {
            Issue.record("expected a network failure, got \(report.outcome)")
            return
        }
        #expect(client.trustedState == before.0)
        #expect(client.policy == before.1)
    }

    @Test func forgedManifestIsRefusedAndNothingChanges() throws {
        let now = self.now
        let text = try manifest(pinning: [.secondLeaf], issuedAt: now)
        var envelope = try Envelope.parse(Array(text.utf8))
        envelope.signatures[0].signature[3] ^= 0x40
        let publisher = try publisher(String(decoding: envelope.serialized(), as: UTF8.self))
        defer { publisher.stop() }
        let recorded = Recorded()
        let client = try client(publisherPort: publisher.port, recorded: recorded, now: now)
        let before = client.trustedState
        #expect(
            client.refresh().outcome
                == .rejected(.trust(.thresholdNotMet(role: .pins, rootVersion: 1, valid: 0, threshold: 1))))
        #expect(client.trustedState == before)
        #expect(client.policyNow().domains.isEmpty)
    }
}
