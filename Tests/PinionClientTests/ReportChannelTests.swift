// The report channel has the update channel's trust (docs/DESIGN.md §14): X.509 plus the app's
// publisher pins, never manifest or baseline pins, so a wrong pin cannot silence the reports
// about it. Driven through an injected transport that records the POSTs and their verdicts.

import Foundation
import PinionClient
import PinionCore
import PinionCrypto
import PinionTestSupport
import Synchronization
import Testing

/// A transport that answers every POST after asking the pin check about a fixed chain.
final class RecordingTransport: HTTPSTransport {
    let chainDigests: [[UInt8]]
    let posts = Mutex<[(host: String, decision: PinDecision)]>([])
    let posted = DispatchSemaphore(value: 0)

    init(chainDigests: [[UInt8]]) { self.chainDigests = chainDigests }

    func get(
        _ url: URL, headers: [(String, String)], connectTo: (host: String, port: UInt16)?, totalDeadline: Double?,
        pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse {
        throw .connectionRefused(host: url.host ?? "", port: 443)
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

    func client(transport: RecordingTransport, publisherPins: [Pin]) throws -> PinningClient {
        // The baseline pins both the API host and the collector's host to keys the collector
        // does not present: only the update channel's trust may apply to the POST.
        let baseline = try Baseline(domains: [
            PinnedDomain(name: "api.example.test", pins: [pin(1), pin(2)]),
            PinnedDomain(name: "reports.example.test", pins: [pin(3), pin(4)]),
        ])
        let configuration = ClientConfiguration(
            scope: "com.example.app", baseURL: nil, embeddedRoot: setup.rootEnvelope.serialized(),
            baseline: baseline, stateDirectory: "/nonexistent", publisherPins: publisherPins, clock: { t0 },
            reportURI: URL(string: "https://reports.example.test/v1/com.example.app/reports"))
        return try PinningClient(
            configuration: configuration, crypto: sodium, transport: transport, storage: MemoryStorage())
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

/// State kept in memory (no directory, no lock).
private final class MemoryStorage: StateStorage, @unchecked Sendable {
    private let files = Mutex<[String: [UInt8]]>([:])
    func read(_ name: String, maxBytes: Int) throws(StorageError) -> [UInt8]? { files.withLock { $0[name] } }
    func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(StorageError) { files.withLock { $0[name] = bytes } }
    func remove(_ name: String) throws(StorageError) { _ = files.withLock { $0.removeValue(forKey: name) } }
}
