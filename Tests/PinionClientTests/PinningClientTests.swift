// The SDK end to end on real TLS (127.0.0.1, certificates made with openssl): refresh
// from a publisher, persistence across restarts, pinned connections accepted and refused.

import Foundation
import PinionCore
import PinionCrypto
import PinionLinux
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

    func client(
        publisherPort: UInt16?, recorded: Recorded, now: Timestamp, publisherHost: String = "127.0.0.1",
        reportURI: URL? = nil
    ) throws -> PinningClient {
        let configuration = ClientConfiguration(
            scope: "com.example.app",
            baseURL: publisherPort.flatMap { URL(string: "https://\(publisherHost):\($0)/") },
            embeddedRoot: setup.rootEnvelope.serialized(), stateDirectory: stateDirectory, caFile: pki.path(.root),
            connectTimeout: 20, ioTimeout: 20, totalDeadline: 60, clock: { now }, reportURI: reportURI,
            publisherConnectTo: publisherPort.map { ("127.0.0.1", $0) })
        return try PinningClient(
            configuration: configuration, onEvent: { recorded.event($0) }, onPinFailure: { recorded.report($0) })
    }

    /// The wall clock, only to sign a manifest valid while the test's certificates are.
    var now: Timestamp { Timestamp(Date()) }

    @Test func aBadCAFileIsAConfigurationErrorAtStartAndNothingIsWritten() throws {
        let directory = try makeTemporaryDirectory(prefix: "pinion-sdk-ca")
        let notPEM = directory + "/not-a-ca.pem"
        let empty = directory + "/empty.pem"
        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: notPEM))
        try Data().write(to: URL(fileURLWithPath: empty))
        for caFile in [notPEM, empty, directory + "/no-such-ca.pem"] {
            let state = directory + "/state"
            let configuration = ClientConfiguration(
                scope: "com.example.app", baseURL: URL(string: "https://127.0.0.1:1/"),
                embeddedRoot: setup.rootEnvelope.serialized(), stateDirectory: state, caFile: caFile)
            do {
                _ = try PinningClient(configuration: configuration)
                Issue.record("\(caFile) was accepted as a CA file")
            } catch {
                guard case .configuration(let reason) = error else {
                    Issue.record("\(caFile): \(error) is not a configuration error")
                    continue
                }
                #expect(reason.contains(caFile), "\(reason)")
            }
            #expect(!FileManager.default.fileExists(atPath: state), "state written for \(caFile)")
        }
    }

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

    @Test func manifestPinningThePublisherHostWithJunkDoesNotCutOffUpdates() throws {
        let now = self.now
        // The publisher is api.example.test itself; manifest 1 pins it to junk.
        let first = try TestTLSServer(
            chain: [pki.path(.leaf), pki.path(.intermediate)], key: pki.keyPath(.leaf),
            routes: ["/v1/com.example.app/manifest.json": .init(body: try manifest(pinning: [], issuedAt: now))])
        let client1 = try client(
            publisherPort: first.port, recorded: Recorded(), now: now, publisherHost: "api.example.test")
        #expect(client1.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        #expect(throws: HTTPSError.self) {
            _ = try client1.get(
                URL(string: "https://api.example.test:\(first.port)/")!, connectTo: ("127.0.0.1", first.port))
        }
        first.stop()
        // The next manifest still arrives over the update channel, which manifest pins never cover.
        let second = try TestTLSServer(
            chain: [pki.path(.leaf), pki.path(.intermediate)], key: pki.keyPath(.leaf),
            routes: [
                "/v1/com.example.app/manifest.json": .init(
                    body: try manifest(version: 2, pinning: [.leaf], issuedAt: now))
            ])
        defer { second.stop() }
        let client2 = try client(
            publisherPort: second.port, recorded: Recorded(), now: now, publisherHost: "api.example.test")
        #expect(client2.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
        let (_, verdict) = try client2.get(
            URL(string: "https://api.example.test:\(second.port)/x")!, connectTo: ("127.0.0.1", second.port))
        guard case .trusted = verdict else {
            Issue.record("expected trusted after the fix, got \(verdict)")
            return
        }
    }

    @Test func pinFailureIsPostedToTheReportURIOnce() throws {
        let now = self.now
        let publisher = try publisher(try manifest(pinning: [.leaf], issuedAt: now))
        defer { publisher.stop() }
        let collector = try TestTLSServer(
            chain: [pki.path(.ipLeaf), pki.path(.intermediate)], key: pki.keyPath(.ipLeaf),
            routes: ["/report": .init(status: 204)])
        defer { collector.stop() }
        let recorded = Recorded()
        let client = try client(
            publisherPort: publisher.port, recorded: recorded, now: now,
            reportURI: URL(string: "https://127.0.0.1:\(collector.port)/report"))
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        let other = try TestTLSServer(
            chain: [pki.path(.secondLeaf), pki.path(.intermediate)], key: pki.keyPath(.secondLeaf),
            routes: ["*": .init(body: "no")])
        defer { other.stop() }
        for _ in 0..<2 {
            #expect(throws: HTTPSError.self) {
                _ = try client.get(
                    URL(string: "https://api.example.test:\(other.port)/")!, connectTo: ("127.0.0.1", other.port))
            }
        }
        #expect(recorded.reports.count == 1)
        let posted = try collector.connections(atLeast: 1)
        #expect(posted.count == 1)
        #expect(posted.first?.request.hasPrefix("POST /report HTTP/1.1\r\n") == true)
        #expect(posted.first?.request.contains("\"hostname\": \"api.example.test\"") == true)
    }

    @Test func bothStateCopiesCorruptAtStartUpKeepTheirDomainsRefused() throws {
        let now = self.now
        let publisher = try publisher(try manifest(pinning: [.leaf], issuedAt: now))
        let client = try client(publisherPort: publisher.port, recorded: Recorded(), now: now)
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        publisher.stop()
        // Damage both state copies: the restarted client drops the state, reports it, and
        // refuses api.example.test (its pins are unknown) instead of leaving it unpinned.
        for file in StateStore.copyFileNames {
            let statePath = stateDirectory + "/" + file
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: statePath)))
            // One bit in the envelope's base64 text: the JSON still parses, the checksum fails.
            bytes[bytes.count / 2] ^= 0x01
            try Data(bytes).write(to: URL(fileURLWithPath: statePath))
        }
        let recorded = Recorded()
        let restarted = try self.client(publisherPort: nil, recorded: recorded, now: now)
        #expect(recorded.events.contains { if case .storeDropped = $0 { return true } else { return false } })
        let entry = restarted.policyNow().entry(named: "api.example.test")
        #expect(entry?.enforce == true)
        #expect(entry?.pins == [])
        let good = try TestTLSServer(
            chain: [pki.path(.leaf), pki.path(.intermediate)], key: pki.keyPath(.leaf), routes: ["*": .init(body: "ok")]
        )
        defer { good.stop() }
        #expect(throws: HTTPSError.self) {
            _ = try restarted.get(
                URL(string: "https://api.example.test:\(good.port)/")!, connectTo: ("127.0.0.1", good.port))
        }
    }

    @Test func twoClientsSharingAStateDirectoryNeverLowerTheFloor() throws {
        let now = self.now
        let v2 = try publisher(try manifest(version: 2, pinning: [.leaf], issuedAt: now))
        defer { v2.stop() }
        let v3 = try publisher(try manifest(version: 3, pinning: [.leaf], issuedAt: now))
        defer { v3.stop() }
        let v4 = try publisher(try manifest(version: 4, pinning: [.leaf], issuedAt: now))
        defer { v4.stop() }
        let first = try client(publisherPort: v2.port, recorded: Recorded(), now: now)
        #expect(first.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
        // B starts now (it holds version 2 in memory) and will talk to a slower publisher of v3.
        let second = try client(publisherPort: v3.port, recorded: Recorded(), now: now)
        // Meanwhile another process accepts version 4.
        let third = try client(publisherPort: v4.port, recorded: Recorded(), now: now)
        #expect(third.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 4)))
        // B builds on what was saved: version 3 is now a rollback, and the floor stays at 4.
        let report = second.refresh()
        #expect(
            report.outcome
                == .rejected(
                    .rollback(
                        offered: ManifestOrder(rootVersion: 1, version: 3),
                        floor: ManifestOrder(rootVersion: 1, version: 4))))
        #expect(second.trustedState.floor == ManifestOrder(rootVersion: 1, version: 4))
        let restarted = try client(publisherPort: nil, recorded: Recorded(), now: now)
        #expect(restarted.trustedState.floor == ManifestOrder(rootVersion: 1, version: 4))
    }

    @Test func aTricklingPublisherCannotHoldARefreshPastItsDeadline() throws {
        let now = self.now
        let slow = try TestTLSServer(
            chain: [pki.path(.ipLeaf), pki.path(.intermediate)], key: pki.keyPath(.ipLeaf),
            routes: ["*": .init(status: 404, body: String(repeating: "x", count: 4000), trickle: 0.05)])
        defer { slow.stop() }
        let configuration = ClientConfiguration(
            scope: "com.example.app", baseURL: URL(string: "https://127.0.0.1:\(slow.port)/"),
            embeddedRoot: setup.rootEnvelope.serialized(), stateDirectory: stateDirectory, caFile: pki.path(.root),
            connectTimeout: 20, ioTimeout: 20, totalDeadline: 120, refreshDeadline: 3, clock: { now })
        let client = try PinningClient(configuration: configuration)
        let started = Date()
        let report = client.refresh()
        guard case .networkFailure = report.outcome else {
            Issue.record("expected a network failure, got \(report.outcome)")
            return
        }
        // 4,000 bytes at 20 per second would take 200 s; the refresh deadline is 3 s.
        #expect(Date().timeIntervalSince(started) < 60)
    }
}
