// The update channel's refusals (docs/DESIGN.md §6): a redirect to http or to another host is
// refused (not a network failure), 410 ends the root walk like 404, a 304 to a request that
// sent no If-None-Match is refused, and a rejection names the published file it concerns.
// Driven through an injected transport that plays the publisher, redirects included.

import Foundation
import PinionCore
import PinionCrypto
import PinionLinux
import PinionTestSupport
import Synchronization
import Testing

/// A publisher: answers by URL path; a path may redirect (the hop's pin check sees the new
/// host first, as a real client's does) or redirect to http.
final class ScriptedPublisher: HTTPSTransport {
    enum Answer {
        case status(Int, body: [UInt8] = [], headers: [(String, String)] = [])
        case redirect(toHost: String, then: Int, body: [UInt8] = [])
        case redirectToHTTP(String)
        /// The transport's redirect limit reached (a redirect loop on the publisher's host).
        case tooManyRedirects
    }
    let answers: [String: Answer]
    let requests = Mutex<[(path: String, headers: [(String, String)])]>([])

    init(_ answers: [String: Answer]) { self.answers = answers }

    func get(
        _ url: URL, headers: [(String, String)], connectTo: (host: String, port: UInt16)?, totalDeadline: Double?,
        pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse {
        requests.withLock { $0.append((url.path, headers)) }
        func hop(_ host: String) throws(HTTPSError) {
            let chain = PeerChain(
                host: host, port: 443, verifiedSPKISHA256: [[UInt8](repeating: 1, count: 32)],
                verifiedChainDER: [[0x30]], servedChainDER: [[0x30]])
            if case .refuse(let reason) = pinCheck(chain) {
                throw .pinningRefused(host: host, port: 443, reason: reason)
            }
        }
        try hop(url.host ?? "")
        switch answers[url.path] ?? .status(404) {
        case .status(let status, let body, let headers):
            return HTTPSResponse(url: url, status: status, headers: headers, body: body)
        case .redirect(let host, let status, let body):
            try hop(host)
            return HTTPSResponse(url: url, status: status, headers: [("etag", "\"r\"")], body: body)
        case .redirectToHTTP(let location):
            throw .redirectToNonHTTPS(location: location)
        case .tooManyRedirects:
            throw .tooManyRedirects(limit: 3)
        }
    }

    func post(
        _ url: URL, body: [UInt8], contentType: String, pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse {
        HTTPSResponse(url: url, status: 204, headers: [], body: [])
    }
}

@Suite struct UpdateChannelTests {
    let setup: Setup
    let manifest: [UInt8]
    static let manifestPath = "/v1/com.example.app/manifest.json"
    static let root2Path = "/v1/com.example.app/root/2.json"

    init() throws {
        setup = try Setup()
        manifest = try sign(.pins, manifestPayload(issuedAt: t0).serialized(), with: [setup.pinsKey]).serialized()
    }

    func client(_ publisher: ScriptedPublisher, redirectHosts: [String] = []) throws -> PinningClient {
        var configuration = ClientConfiguration(
            scope: "com.example.app", baseURL: URL(string: "https://pins.example.test/"),
            embeddedRoot: setup.rootEnvelope.serialized(), stateDirectory: "/nonexistent",
            clock: { t0.adding(seconds: day) })
        configuration.publisherRedirectHosts = redirectHosts
        return try PinningClient(
            configuration: configuration, crypto: sodium, transport: publisher, storage: MemoryStorage())
    }

    @Test func aRedirectToAnotherHostIsRefusedWithStateUnchanged() throws {
        let publisher = ScriptedPublisher([Self.manifestPath: .redirect(toHost: "cdn.example.net", then: 200)])
        let client = try client(publisher)
        let before = client.trustedState
        let report = client.refresh()
        guard case .rejected(let error) = report.outcome, error.reasonCode == "fetch-refused",
            let resource = error.resource, let reason = error.reason
        else {
            Issue.record("expected a refusal, got \(report.outcome)")
            return
        }
        #expect(resource == "manifest.json")
        #expect(reason.contains("refused redirect to cdn.example.net"))
        #expect(report.document == "manifest.json")
        #expect(client.trustedState == before)
    }

    @Test func aConfiguredRedirectHostIsFollowed() throws {
        let publisher = ScriptedPublisher([
            Self.manifestPath: .redirect(toHost: "cdn.example.net", then: 200, body: manifest)
        ])
        let report = try client(publisher, redirectHosts: ["CDN.example.net."]).refresh()
        #expect(report.outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
    }

    @Test func aRedirectToHTTPIsARefusalNotANetworkFailure() throws {
        let publisher = ScriptedPublisher([Self.root2Path: .redirectToHTTP("http://pins.example.test/root/2.json")])
        let report = try client(publisher).refresh()
        guard case .rejected(let error) = report.outcome, error.reasonCode == "fetch-refused",
            let resource = error.resource, let reason = error.reason
        else {
            Issue.record("expected a refusal, got \(report.outcome)")
            return
        }
        #expect(resource == "root/2.json")
        #expect(reason.hasPrefix("refused redirect to http"))
        #expect(report.failed)
    }

    /// More redirects than the transport follows: a redirect not followed, refused as the status
    /// table refuses a 3xx (the JVM SDK's fetcher answers the same), not a network failure.
    @Test func tooManyRedirectsAreARefusalNotANetworkFailure() throws {
        let publisher = ScriptedPublisher([Self.manifestPath: .tooManyRedirects])
        let report = try client(publisher).refresh()
        guard case .rejected(let error) = report.outcome, error.reasonCode == "fetch-refused",
            let resource = error.resource, let reason = error.reason
        else {
            Issue.record("expected a refusal, got \(report.outcome)")
            return
        }
        #expect(resource == "manifest.json")
        #expect(reason.contains("more than 3 redirects"), "\(reason)")
    }

    @Test func status410EndsTheRootWalkLike404() throws {
        let publisher = ScriptedPublisher([
            Self.root2Path: .status(410), Self.manifestPath: .status(200, body: manifest, headers: [("etag", "\"1\"")]),
        ])
        #expect(try client(publisher).refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
    }

    @Test func a304ToARequestWithoutIfNoneMatchIsRefused() throws {
        let publisher = ScriptedPublisher([Self.manifestPath: .status(304)])
        let client = try client(publisher)
        let before = client.trustedState
        let report = client.refresh()
        guard case .rejected(let error) = report.outcome, error.reasonCode == "fetch-refused",
            let resource = error.resource, let reason = error.reason
        else {
            Issue.record("expected a refusal, got \(report.outcome)")
            return
        }
        #expect(resource == "manifest.json")
        #expect(reason.contains("no If-None-Match"))
        #expect(publisher.requests.withLock { $0.last?.headers.isEmpty } == true, "no validator was sent")
        #expect(client.trustedState == before)
    }

    @Test func aManifestSignedUnderARootTheClientLacksIsExplained() throws {
        // Signed by a key the client's newest root does not list, naming root 3: the client's
        // refusal says what is missing instead of "0 valid signature(s)".
        let otherKey = try makeKey()
        let payload = manifestPayload(rootVersion: 3, issuedAt: t0)
        let envelope = try sign(.pins, payload.serialized(), with: [otherKey]).serialized()
        let publisher = ScriptedPublisher([Self.manifestPath: .status(200, body: envelope)])
        let report = try client(publisher).refresh()
        guard case .rejected(let error) = report.outcome, case .thresholdNotMet? = error.trustError else {
            Issue.record("expected a threshold refusal, got \(report.outcome)")
            return
        }
        #expect(report.document == "manifest.json")
        #expect(
            report.diagnosis?.hasPrefix(
                "manifest rootVersion 3, newest trusted root is 1: publish or pass root 2 and 3")
                == true, "\(report.diagnosis ?? "no diagnosis")")
    }

    @Test func publisherTextInEventsIsEscaped() throws {
        // A hostile publisher's header value (C1 CSI: clear the screen) must not reach an
        // app's log or terminal raw through the SDK's event descriptions.
        let publisher = ScriptedPublisher([
            Self.manifestPath: .status(200, body: manifest, headers: [("content-encoding", "gzip\u{9B}2J")])
        ])
        let events = Mutex<[ClientEvent]>([])
        var configuration = ClientConfiguration(
            scope: "com.example.app", baseURL: URL(string: "https://pins.example.test/"),
            embeddedRoot: setup.rootEnvelope.serialized(), stateDirectory: "/nonexistent",
            clock: { t0.adding(seconds: day) })
        configuration.publisherRedirectHosts = []
        let client = try PinningClient(
            configuration: configuration, crypto: sodium, transport: publisher, storage: MemoryStorage(),
            onEvent: { event in events.withLock { $0.append(event) } })
        _ = client.refresh()
        let texts = events.withLock { $0 }.compactMap { event -> String? in
            if case .networkFailure(let text) = event { return text }
            return nil
        }
        #expect(texts.count == 1)
        #expect(texts.allSatisfy { !$0.unicodeScalars.contains { (0x80...0x9F).contains($0.value) } }, "\(texts)")
        #expect(texts.first?.contains("unsupported Content-Encoding") == true)
    }

    @Test func aRejectedDocumentIsNamed() throws {
        var tampered = manifest
        tampered[tampered.count / 2] ^= 0x01
        let publisher = ScriptedPublisher([Self.manifestPath: .status(200, body: tampered)])
        let report = try client(publisher).refresh()
        guard case .rejected = report.outcome else {
            Issue.record("expected a rejection, got \(report.outcome)")
            return
        }
        #expect(report.document == "manifest.json")
    }
}
