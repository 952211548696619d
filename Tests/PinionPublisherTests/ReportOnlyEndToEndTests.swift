// The report-only rollout end to end: the SDK, with a report-only (and then an enforced)
// entry whose pins the API server's key does not match, POSTs its RFC 7469 report to
// `pinion serve --reports`, which also serves its manifest; `pinion reports` counts it.

import Foundation
import PinionCore
import PinionCrypto
import PinionLinux
import PinionPublisher
import PinionTestSupport
import Testing

/// The reports the SDK handed to its callback.
final class ReportRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [PinFailureReport] = []
    var reports: [PinFailureReport] { lock.withLock { list } }
    func report(_ report: PinFailureReport) { lock.withLock { list.append(report) } }
}

@Suite(.serialized) struct ReportOnlyEndToEndTests {
    /// A CA, the collector's certificate (IP 127.0.0.1) and the API server's
    /// (api.example.test), made with openssl; certificates are valid from now.
    struct PKI {
        let builder: OpenSSLPKIBuilder
        func pem(_ name: String) -> String { builder.directory + "/\(name).pem" }
        func key(_ name: String) -> String { builder.directory + "/\(name).key" }

        init() throws {
            let sections =
                """
                [ ca ]
                basicConstraints = critical, CA:TRUE
                keyUsage = critical, keyCertSign, cRLSign
                subjectKeyIdentifier = hash

                """ + OpenSSLPKIBuilder.serverSection("collector", subjectAltName: "IP:127.0.0.1")
                + OpenSSLPKIBuilder.serverSection("api", subjectAltName: "DNS:api.example.test")
            builder = try OpenSSLPKIBuilder(
                directory: try makeTemporaryDirectory(prefix: "pinion-report-e2e-pki"), sections: sections)
            try builder.generateKey("ca")
            try builder.selfSign("ca", subject: "/CN=Report test CA", extensions: "ca")
            try builder.issueNew("collector", subject: "/CN=collector", by: "ca", serial: 2, extensions: "collector")
            try builder.issueNew("api", subject: "/CN=api", by: "ca", serial: 3, extensions: "api")
        }
    }

    private func runRollout(enforce: Bool) throws {
        let pki = try PKI()
        let setup = try Setup()
        // The wall clock, only because the certificates are valid from now (as in PinningClientTests).
        let now = Timestamp(Date())
        let root = rootPayload(
            rootKeys: [setup.rootKey], pinsKeys: [setup.pinsKey], issuedAt: now.adding(seconds: -day),
            expiresAt: now.adding(seconds: 365 * day))
        let rootEnvelope = try sign(.root, root.serialized(), with: [setup.rootKey])
        let manifest = manifestPayload(
            issuedAt: now.adding(seconds: -60),
            domains: [.init(name: "api.example.test", enforce: enforce, pins: [pin(1), pin(2)])])
        let tree = try makeTemporaryDirectory(prefix: "pinion-report-e2e-tree")
        let scopeDirectory = tree + "/v1/com.example.app"
        try FileManager.default.createDirectory(atPath: scopeDirectory + "/root", withIntermediateDirectories: true)
        try Data(rootEnvelope.serialized()).write(to: URL(fileURLWithPath: scopeDirectory + "/root/1.json"))
        try Data(try sign(.pins, manifest.serialized(), with: [setup.pinsKey]).serialized()).write(
            to: URL(fileURLWithPath: scopeDirectory + "/manifest.json"))
        let database = try makeTemporaryDirectory(prefix: "pinion-report-e2e-db") + "/reports.sqlite"

        var collectorConfiguration = PublisherConfiguration(
            repository: tree, certificateChainFile: pki.pem("collector"), privateKeyFile: pki.key("collector"),
            host: "127.0.0.1", port: 0)
        collectorConfiguration.reports = ReportSettings(databasePath: database)
        let collector = try HTTPSPublisher(configuration: collectorConfiguration, accessLog: .disabled)
        collector.start()
        defer { collector.drain(timeout: 5) }
        let apiServer = try HTTPSPublisher(
            configuration: PublisherConfiguration(
                repository: tree, certificateChainFile: pki.pem("api"), privateKeyFile: pki.key("api"),
                host: "127.0.0.1", port: 0),
            accessLog: .disabled)
        apiServer.start()
        defer { apiServer.drain(timeout: 5) }

        let recorded = ReportRecorder()
        let client = try PinningClient(
            configuration: ClientConfiguration(
                scope: "com.example.app", baseURL: URL(string: collector.url + "/"),
                embeddedRoot: rootEnvelope.serialized(),
                stateDirectory: try makeTemporaryDirectory(prefix: "pinion-report-e2e-state") + "/state",
                caFile: pki.pem("ca"), connectTimeout: 20, ioTimeout: 20, totalDeadline: 60, clock: { now },
                reportURI: URL(string: collector.url + "/v1/com.example.app/reports")),
            onPinFailure: { recorded.report($0) })
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))

        let target = try #require(
            URL(string: "https://api.example.test:\(apiServer.port)/v1/com.example.app/manifest.json"))
        if enforce {
            #expect(throws: HTTPSError.self) { _ = try client.get(target, connectTo: ("127.0.0.1", apiServer.port)) }
        } else {
            let (response, verdict) = try client.get(target, connectTo: ("127.0.0.1", apiServer.port))
            #expect(response.status == 200, "report-only: the connection goes on")
            guard case .reportOnly = verdict else {
                Issue.record("expected a report-only failure, got \(verdict)")
                return
            }
        }
        #expect(recorded.reports.count == 1)
        // The SDK posts in the background: wait for the row (bounded), never for a fixed time.
        var stored: [String] = []
        for _ in 0..<2_000 where stored.isEmpty {
            stored = (try? sqlite3(database, "SELECT hostname, count FROM reports")) ?? []
            if stored.isEmpty { Thread.sleep(forTimeInterval: 0.01) }
        }
        #expect(stored == ["api.example.test|1"])

        let summary = runPinion(["reports", database, "--json", "--at", now.adding(seconds: 60).description])
        #expect(summary.status == 0, "\(summary.err)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(summary.out.utf8)) as? [String: Any])
        let keys = try #require(json["refusedKeys"] as? [[String: Any]])
        #expect(keys.count == 1)
        #expect(keys.first?["hostname"] as? String == "api.example.test")
        #expect(keys.first?["servedPin"] as? String == (try opensslPin(ofCertificateFile: pki.pem("api"))))
        #expect(keys.first?["count"] as? Int == 1)
        #expect(keys.first?["knownPins"] as? [String] == [pin(1), pin(2)].map { Base64.encode($0.digest) })
    }

    @Test func aReportOnlyEntryReportsAnUnpinnedKeyToPinionServe() throws {
        try runRollout(enforce: false)
    }

    /// An enforced entry with a wrong pin refuses the connection; the report about it still
    /// reaches the collector (docs/DESIGN.md §14: a bad pin must not silence its reports).
    @Test func anEnforcedBadPinIsStillReported() throws {
        try runRollout(enforce: true)
    }
}
