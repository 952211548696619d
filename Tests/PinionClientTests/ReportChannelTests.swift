// The report channel has the update channel's trust (docs/DESIGN.md §14): X.509 plus the app's
// publisher pins, never manifest or baseline pins, so a wrong pin cannot silence the reports
// about it. Driven through an injected transport that records the POSTs and their verdicts.

import Foundation
import PinionCore
import PinionCrypto
import PinionLinux
import PinionTestSupport
import Synchronization
import Testing

/// A transport that answers every POST after asking the pin check about a fixed chain.
final class RecordingTransport: HTTPSTransport {
    let chainDigests: [[UInt8]]
    /// Bodies served with 200 by URL path; other paths are 404.
    let routes: [String: [UInt8]]
    let posts = Mutex<[(host: String, decision: PinDecision)]>([])
    let posted = DispatchSemaphore(value: 0)

    init(chainDigests: [[UInt8]], routes: [String: [UInt8]] = [:]) {
        self.chainDigests = chainDigests
        self.routes = routes
    }

    func get(
        _ url: URL, headers: [(String, String)], connectTo: (host: String, port: UInt16)?, totalDeadline: Double?,
        pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse {
        guard let body = routes[url.path] else { return HTTPSResponse(url: url, status: 404, headers: [], body: []) }
        return HTTPSResponse(url: url, status: 200, headers: [("etag", "\"1\"")], body: body)
    }

    func post(
        _ url: URL, body: [UInt8], contentType: String, pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse {
        let host = url.host ?? ""
        let decision = pinCheck(
            PeerChain(
                host: host, port: 443, verifiedSPKISHA256: chainDigests, verifiedChainDER: [[0x30]],
                servedChainDER: [[0x30]]))
        posts.withLock { $0.append((host, decision)) }
        posted.signal()
        if case .refuse(let reason) = decision { throw .pinningRefused(host: host, port: 443, reason: reason) }
        return HTTPSResponse(url: url, status: 204, headers: [], body: [])
    }
}

@Suite struct ReportChannelTests {
    let setup: Setup

    init() throws { setup = try Setup() }

    func client(
        transport: RecordingTransport, publisherPins: [Pin], baseURL: URL? = nil,
        onPinFailure: @escaping @Sendable (PinFailureReport) -> Void = { _ in }
    ) throws -> PinningClient {
        // The baseline pins both the API host and the collector's host to keys the collector
        // does not present: only the update channel's trust may apply to the POST.
        let baseline = try Baseline(domains: [
            PinnedDomain(name: "api.example.test", pins: [pin(1), pin(2)]),
            PinnedDomain(name: "reports.example.test", pins: [pin(3), pin(4)]),
            PinnedDomain(name: "beta.api.example.test", enforce: false, pins: [pin(5), pin(6)]),
        ])
        let configuration = ClientConfiguration(
            scope: "com.example.app", baseURL: baseURL, embeddedRoot: setup.rootEnvelope.serialized(),
            baseline: baseline, stateDirectory: "/nonexistent", publisherPins: publisherPins,
            clock: { t0.adding(seconds: day) },
            reportURI: URL(string: "https://reports.example.test/v1/com.example.app/reports"))
        return try PinningClient(
            configuration: configuration, crypto: sodium, transport: transport, storage: MemoryStorage(),
            onPinFailure: onPinFailure)
    }

    func failure(on client: PinningClient) {
        let verdict = client.check(
            PeerChain(
                host: "api.example.test", port: 443, verifiedSPKISHA256: [[UInt8](repeating: 9, count: 32)],
                verifiedChainDER: [[0x30]], servedChainDER: [[0x30]]))
        #expect(verdict != .notPinned)
    }

    @Test func aReportIsPostedEvenWhenPinsCoverTheCollectorsHost() throws {
        let transport = RecordingTransport(chainDigests: [[UInt8](repeating: 7, count: 32)])
        failure(on: try client(transport: transport, publisherPins: []))
        #expect(transport.posted.wait(timeout: .now() + 30) == .success, "the report was POSTed")
        let posts = transport.posts.withLock { $0 }
        #expect(posts.count == 1)
        #expect(posts.first?.host == "reports.example.test")
        #expect(posts.first?.decision == .proceed, "baseline pins of the collector host never apply")
    }

    @Test func publisherPinsApplyToTheReportChannel() throws {
        let transport = RecordingTransport(chainDigests: [[UInt8](repeating: 7, count: 32)])
        failure(on: try client(transport: transport, publisherPins: [pin(5)]))
        #expect(transport.posted.wait(timeout: .now() + 30) == .success)
        let decision = transport.posts.withLock { $0.first?.decision }
        #expect(decision == .refuse(reason: "no publisher pin in the verified chain"))

        let matching = RecordingTransport(chainDigests: [pin(5).digest])
        failure(on: try client(transport: matching, publisherPins: [pin(5)]))
        #expect(matching.posted.wait(timeout: .now() + 30) == .success)
        #expect(matching.posts.withLock { $0.first?.decision } == .proceed)
    }
}

extension ReportChannelTests {
    /// RFC 7469 §3 effective-expiration-date names when the pins that applied stop counting:
    /// the manifest's expiry for a manifest entry, none (left out) for a baseline entry, also
    /// when a manifest parent with includeSubdomains covers it.
    @Test func theExpirationDateIsTheOneOfTheEntryWhosePinsApplied() throws {
        let manifest = manifestPayload(
            issuedAt: t0,
            domains: [.init(name: "api.example.test", includeSubdomains: true, pins: [pin(1), pin(7)])])
        let envelope = try sign(.pins, manifest.serialized(), with: [setup.pinsKey]).serialized()
        let transport = RecordingTransport(
            chainDigests: [[UInt8](repeating: 7, count: 32)],
            routes: ["/v1/com.example.app/manifest.json": envelope])
        let reports = Mutex<[PinFailureReport]>([])
        let client = try client(
            transport: transport, publisherPins: [], baseURL: URL(string: "https://pins.example.test/"),
            onPinFailure: { report in reports.withLock { $0.append(report) } })
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))

        let unpinned = [[UInt8](repeating: 9, count: 32)]
        for host in ["api.example.test", "beta.api.example.test"] {
            _ = client.check(
                PeerChain(
                    host: host, port: 443, verifiedSPKISHA256: unpinned, verifiedChainDER: [[0x30]],
                    servedChainDER: [[0x30]]))
        }
        let byEntry = Dictionary(
            reports.withLock { $0 }.map { ($0.notedHostname, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byEntry["api.example.test"]?.effectiveExpirationDate == manifest.expiresAt)
        let baselineReport = try #require(byEntry["beta.api.example.test"])
        #expect(baselineReport.effectiveExpirationDate == nil, "the baseline's pins applied, not the manifest's")
        #expect(!String(decoding: baselineReport.jsonBytes(), as: UTF8.self).contains("effective-expiration-date"))
    }
}
