// PinnedHTTPSClient against real TLS servers on 127.0.0.1: X.509 first, then the pin check on
// the verified chain before any request byte, limits, timeouts and redirects.

import Foundation
import PinionLinux
import PinionSystem
import PinionTestSupport
import Synchronization
import Testing

// MARK: - Helpers

/// Records every chain the client hands to the pin check and answers with `decide`.
private final class PinCheckRecorder: Sendable {
    private let calls = Mutex<[PeerChain]>([])
    private let decide: @Sendable (PeerChain) -> PinDecision

    init(_ decide: @escaping @Sendable (PeerChain) -> PinDecision = { _ in .proceed }) {
        self.decide = decide
    }

    var chains: [PeerChain] { calls.withLock { $0 } }

    func check(_ chain: PeerChain) -> PinDecision {
        calls.withLock { $0.append(chain) }
        return decide(chain)
    }
}

/// A pin check trusting a chain when any verified certificate's SPKI SHA-256 is in `pins`.
private func pinned(to pins: [[UInt8]]) -> PinCheckRecorder {
    PinCheckRecorder { chain in
        chain.verifiedSPKISHA256.contains { pins.contains($0) } ? .proceed : .refuse(reason: "no pin matched")
    }
}

/// The error a call throws, or nil when it returns.
private func failure(_ body: () throws -> HTTPSResponse) -> HTTPSError? {
    do {
        _ = try body()
        return nil
    } catch let error as HTTPSError {
        return error
    } catch {
        Issue.record("not an HTTPSError: \(error)")
        return nil
    }
}

/// Generous limits for a loaded 2-core machine.
private func makeClient(
    caFile: String?, ioTimeout: Double = 60, totalDeadline: Double = 120, maxResponseBytes: Int = 1024 * 1024,
    maxRedirects: Int = 3
) -> PinnedHTTPSClient {
    PinnedHTTPSClient(
        configuration: .init(
            caFile: caFile, connectTimeout: 60, ioTimeout: ioTimeout, totalDeadline: totalDeadline,
            maxResponseBytes: maxResponseBytes, maxRedirects: maxRedirects))
}

private func url(_ text: String) throws -> URL {
    try #require(URL(string: text))
}

private let host = "api.example.test"

// MARK: - Tests

@Suite struct PinnedHTTPSClientTests {
    let pki: HTTPSTestPKI

    init() throws {
        pki = try HTTPSTestPKI.shared()
    }

    /// A server for api.example.test presenting `leaf` + intermediate (+ `extra`).
    private func server(
        _ leaf: HTTPSTestPKI.Certificate = .leaf, extra: [HTTPSTestPKI.Certificate] = [],
        routes: [String: TestTLSServer.Route] = ["*": .init(body: "hello")]
    ) throws -> TestTLSServer {
        try TestTLSServer(
            chain: [pki.path(leaf), pki.path(.intermediate)] + extra.map(pki.path), key: pki.keyPath(leaf),
            routes: routes)
    }

    private func get(
        _ server: TestTLSServer, path: String = "/", client: PinnedHTTPSClient? = nil,
        headers: [(String, String)] = [], recorder: PinCheckRecorder
    ) throws -> Result<HTTPSResponse, HTTPSError> {
        let client = client ?? makeClient(caFile: pki.path(.root))
        let target = try url("https://\(host):\(server.port)\(path)")
        return Result { () throws(HTTPSError) -> HTTPSResponse in
            try client.get(
                target, headers: headers, connectTo: ("127.0.0.1", server.port), pinCheck: { recorder.check($0) })
        }
    }

    // MARK: Pinning on the verified chain

    @Test func pinnedLeafKeyIsTrustedAndSeenFirst() throws {
        let server = try server()
        defer { server.stop() }
        let leaf = try pki.spkiSHA256(.leaf)
        let recorder = pinned(to: [leaf])

        let response = try get(server, path: "/data?x=1", headers: [("If-None-Match", "\"abc\"")], recorder: recorder)
            .get()

        #expect(response.status == 200)
        #expect(response.body == Array("hello".utf8))
        let chain = try #require(recorder.chains.first)
        #expect(recorder.chains.count == 1)
        #expect(chain.host == host)
        #expect(chain.port == server.port)
        #expect(
            chain.verifiedSPKISHA256 == [leaf, try pki.spkiSHA256(.intermediate), try pki.spkiSHA256(.root)])
        #expect(chain.verifiedChainDER == [try pki.der(.leaf), try pki.der(.intermediate), try pki.der(.root)])
        #expect(chain.servedChainDER == [try pki.der(.leaf), try pki.der(.intermediate)])
        let request = try #require(server.connections(atLeast: 1).first).request
        #expect(request.hasPrefix("GET /data?x=1 HTTP/1.1\r\n"))
        #expect(request.contains("\r\nHost: \(host):\(server.port)\r\n"))
        #expect(request.contains("\r\nConnection: close\r\n"))
        #expect(request.contains("\r\nIf-None-Match: \"abc\"\r\n"))
    }

    @Test func pinnedIntermediateKeyIsTrusted() throws {
        let server = try server()
        defer { server.stop() }
        let recorder = pinned(to: [try pki.spkiSHA256(.intermediate)])

        let response = try get(server, recorder: recorder).get()

        #expect(response.status == 200)
        #expect(recorder.chains.count == 1)
    }

    @Test func validChainWithUnpinnedKeyIsRefusedBeforeAnyRequestByte() throws {
        let server = try server(.secondLeaf)
        defer { server.stop() }
        let recorder = pinned(to: [try pki.spkiSHA256(.leaf)])

        let result = try get(server, recorder: recorder)

        #expect(
            result.failure == .pinningRefused(host: host, port: server.port, reason: "no pin matched"))
        #expect(recorder.chains.first?.verifiedSPKISHA256.first == (try pki.spkiSHA256(.secondLeaf)))
        let record = try #require(server.connections(atLeast: 1).first)
        #expect(record.handshake)
        #expect(record.received == 0)
        #expect(record.request.isEmpty)
    }

    @Test func appendedPinnedCertificateOffTheVerifiedPathDoesNotCount() throws {
        let server = try server(.secondLeaf, extra: [.unrelated])
        defer { server.stop() }
        let unrelated = try pki.spkiSHA256(.unrelated)
        let recorder = pinned(to: [unrelated])

        let result = try get(server, recorder: recorder)

        #expect(result.failure == .pinningRefused(host: host, port: server.port, reason: "no pin matched"))
        let chain = try #require(recorder.chains.first)
        #expect(!chain.verifiedSPKISHA256.contains(unrelated))
        #expect(chain.verifiedSPKISHA256.count == 3)
        #expect(chain.servedChainDER.contains(try pki.der(.unrelated)))
        #expect(try server.connections(atLeast: 1).first?.received == 0)
    }

    // MARK: X.509 first

    @Test func expiredCertificateFailsVerificationBeforePinCheck() throws {
        let server = try server(.expiredLeaf)
        defer { server.stop() }
        let recorder = PinCheckRecorder()

        let result = try get(server, recorder: recorder)

        #expect(
            result.failure
                == .certificateVerificationFailed(host: host, port: server.port, reason: "certificate has expired"))
        #expect(recorder.chains.isEmpty)
        #expect(try server.connections(atLeast: 1).first?.received == 0)
    }

    @Test func hostnameMismatchFailsVerification() throws {
        let server = try server(.otherNameLeaf)
        defer { server.stop() }
        let recorder = PinCheckRecorder()

        let result = try get(server, recorder: recorder)

        #expect(
            result.failure == .certificateVerificationFailed(host: host, port: server.port, reason: "hostname mismatch")
        )
        #expect(recorder.chains.isEmpty)
    }

    @Test func wrongCAFailsVerification() throws {
        let server = try server()
        defer { server.stop() }
        let recorder = PinCheckRecorder()

        let result = try get(server, client: makeClient(caFile: pki.path(.otherRoot)), recorder: recorder)

        #expect(
            result.failure
                == .certificateVerificationFailed(
                    host: host, port: server.port, reason: "unable to get local issuer certificate"))
        #expect(recorder.chains.isEmpty)
    }

    @Test func systemTrustStoreDoesNotTrustTheTestCA() throws {
        let server = try server()
        defer { server.stop() }
        let recorder = PinCheckRecorder()

        let result = try get(server, client: makeClient(caFile: nil), recorder: recorder)

        guard result.failure?.reasonCode == "certificate-verification-failed" else {
            Issue.record("expected a verification failure, got \(result)")
            return
        }
        #expect(recorder.chains.isEmpty)
    }

    @Test func hostIsPassedToPinCheckAsGivenWhileValidationNormalisesIt() throws {
        let server = try server()
        defer { server.stop() }
        let recorder = PinCheckRecorder()
        let target = try url("https://API.Example.TEST.:\(server.port)/")

        let response = try makeClient(caFile: pki.path(.root)).get(
            target, connectTo: ("127.0.0.1", server.port), pinCheck: { recorder.check($0) })

        #expect(response.status == 200)
        #expect(recorder.chains.map(\.host) == ["API.Example.TEST."])
    }

    @Test func connectToDialsAnotherAddressWhileValidatingTheURLHost() throws {
        let server = try server()
        defer { server.stop() }
        let recorder = PinCheckRecorder()

        let response = try makeClient(caFile: pki.path(.root)).get(
            try url("https://\(host)/manifest.json"), connectTo: ("127.0.0.1", server.port),
            pinCheck: { recorder.check($0) })

        #expect(response.status == 200)
        #expect(recorder.chains.map(\.host) == [host])
        #expect(recorder.chains.map(\.port) == [443])
        let request = try #require(server.connections(atLeast: 1).first).request
        #expect(request.hasPrefix("GET /manifest.json HTTP/1.1\r\nHost: \(host)\r\n"))
    }

    @Test func closedPortIsConnectionRefusedNamingTheDialledAddress() throws {
        let server = try server()
        let port = server.port
        server.stop()

        let result = try get(server, recorder: PinCheckRecorder())

        #expect(result.failure == .connectionRefused(host: "127.0.0.1", port: port))
        #expect(result.failure?.isNetworkError == true)
    }

    @Test func unreadableCAFileIsReportedBeforeConnecting() throws {
        let missing = pki.directory + "/no-such-ca.pem"
        let recorder = PinCheckRecorder()

        let error = failure {
            try makeClient(caFile: missing).get(try url("https://\(host)/"), pinCheck: { recorder.check($0) })
        }

        guard error?.reasonCode == "ca-file-unreadable", let path = error?.path else {
            Issue.record("expected caFileUnreadable, got \(String(describing: error))")
            return
        }
        #expect(path == missing)
        #expect(error?.isNetworkError == false)
    }

    // MARK: Responses

    @Test func notFoundAndServerErrorAreResponsesNotErrors() throws {
        let server = try server(routes: [
            "/missing": .init(status: 404, body: "not here"), "/broken": .init(status: 500, body: "oops"),
        ])
        defer { server.stop() }
        let recorder = PinCheckRecorder()

        let missing = try get(server, path: "/missing", recorder: recorder).get()
        let broken = try get(server, path: "/broken", recorder: recorder).get()

        #expect(missing.status == 404)
        #expect(missing.body == Array("not here".utf8))
        #expect(broken.status == 500)
        #expect(broken.body == Array("oops".utf8))
    }

    @Test func chunkedBodyIsDecodedAndHeaderNamesLowercased() throws {
        let body = String(repeating: "0123456789", count: 100)
        let server = try server(routes: [
            "*": .init(headers: [("X-Pinion-Test", "Value 1"), ("ETag", "\"e1\"")], body: body, framing: .chunked)
        ])
        defer { server.stop() }

        let response = try get(server, recorder: PinCheckRecorder()).get()

        #expect(response.body == Array(body.utf8))
        #expect(response.headers.contains { $0 == ("x-pinion-test", "Value 1") })
        #expect(response.value(forHeader: "ETag") == "\"e1\"")
        #expect(response.value(forHeader: "transfer-encoding") == "chunked")
    }

    @Test func bodyDelimitedByCloseNeedsCloseNotify() throws {
        let server = try server(routes: [
            "/clean": .init(body: "complete", framing: .close),
            "/cut": .init(body: "perhaps cut", framing: .close, closeNotify: false),
        ])
        defer { server.stop() }

        let clean = try get(server, path: "/clean", recorder: PinCheckRecorder()).get()
        let cut = try get(server, path: "/cut", recorder: PinCheckRecorder())

        #expect(clean.body == Array("complete".utf8))
        guard cut.failure?.reasonCode == "connection-lost" else {
            Issue.record("expected connectionLost, got \(cut)")
            return
        }
    }

    @Test func truncatedContentLengthBodyIsMalformed() throws {
        let server = try server(routes: ["*": .init(body: "short", declaredLength: 100)])
        defer { server.stop() }

        let result = try get(server, recorder: PinCheckRecorder())

        guard result.failure?.reasonCode == "malformed-response" else {
            Issue.record("expected malformedResponse, got \(result)")
            return
        }
    }

    @Test func headerLimitsAreEnforced() throws {
        let manyHeaders = (0...100).map { ("X-H\($0)", "v") }
        let server = try server(routes: [
            "/many": .init(headers: manyHeaders),
            "/long": .init(headers: [("X-Long", String(repeating: "a", count: 9000))]),
        ])
        defer { server.stop() }

        for path in ["/many", "/long"] {
            let result = try get(server, path: path, recorder: PinCheckRecorder())
            guard result.failure?.reasonCode == "malformed-response" else {
                Issue.record("\(path): expected malformedResponse, got \(result)")
                continue
            }
        }
    }

    // MARK: Limits and timeouts

    @Test func oversizeBodyIsAbortedWhileReading() throws {
        let server = try server(routes: ["*": .init(framing: .close, endless: true)])
        defer { server.stop() }
        let limit = 64 * 1024

        let result = try get(
            server, client: makeClient(caFile: pki.path(.root), maxResponseBytes: limit), recorder: PinCheckRecorder())

        #expect(result.failure == .responseTooLarge(host: host, port: server.port, limit: limit))
        // The server could not send its 256 MiB: the client stopped reading and closed.
        let record = try #require(server.connections(atLeast: 1).first)
        #expect(!record.finishedSending)
        #expect(record.sent < 256 * 1024 * 1024)
    }

    @Test func oversizeChunkedBodyIsAbortedWhileReading() throws {
        let server = try server(routes: ["*": .init(bodySize: 512 * 1024, framing: .chunked, chunkSize: 16384)])
        defer { server.stop() }
        let limit = 64 * 1024

        let result = try get(
            server, client: makeClient(caFile: pki.path(.root), maxResponseBytes: limit), recorder: PinCheckRecorder())

        #expect(result.failure == .responseTooLarge(host: host, port: server.port, limit: limit))
    }

    @Test func declaredOversizeContentLengthIsRefusedWithoutReadingTheBody() throws {
        let server = try server(routes: ["*": .init(declaredLength: 10 * 1024 * 1024, endless: true)])
        defer { server.stop() }
        let limit = 64 * 1024

        let result = try get(
            server, client: makeClient(caFile: pki.path(.root), maxResponseBytes: limit), recorder: PinCheckRecorder())

        #expect(result.failure == .responseTooLarge(host: host, port: server.port, limit: limit))
        #expect(try server.connections(atLeast: 1).first?.finishedSending == false)
    }

    @Test func tricklingServerIsCutOffAtTheTotalDeadline() throws {
        let server = try server(routes: ["*": .init(bodySize: 100_000, trickle: 0.2)])
        defer { server.stop() }
        let clock = ContinuousClock()
        let start = clock.now

        let result = try get(
            server, client: makeClient(caFile: pki.path(.root), ioTimeout: 60, totalDeadline: 3),
            recorder: PinCheckRecorder())

        let elapsed = clock.now - start
        #expect(result.failure == .timedOut(host: host, port: server.port, phase: .deadline))
        #expect(elapsed >= .seconds(2.9))
        #expect(elapsed < .seconds(45))
    }

    @Test func silentServerTimesOutInTheHandshake() throws {
        let server = try TestTLSServer(chain: [pki.path(.leaf)], key: pki.keyPath(.leaf), silent: true)
        defer { server.stop() }
        let recorder = PinCheckRecorder()

        let result = try get(server, client: makeClient(caFile: pki.path(.root), ioTimeout: 1), recorder: recorder)

        #expect(result.failure == .timedOut(host: host, port: server.port, phase: .handshake))
        #expect(recorder.chains.isEmpty)
    }

    // MARK: Redirects

    @Test func redirectToHTTPSIsFollowedWithAPinCheckForTheNewHost() throws {
        let target = try TestTLSServer(
            chain: [pki.path(.ipLeaf), pki.path(.intermediate)], key: pki.keyPath(.ipLeaf),
            routes: ["/next": .init(body: "arrived")])
        defer { target.stop() }
        let location = "https://127.0.0.1:\(target.port)/next"
        let origin = try server(routes: ["/start": .init(status: 302, headers: [("Location", location)], body: "moved")]
        )
        defer { origin.stop() }
        let recorder = PinCheckRecorder()

        let response = try get(origin, path: "/start", recorder: recorder).get()

        #expect(response.status == 200)
        #expect(response.body == Array("arrived".utf8))
        #expect(response.url.absoluteString == location)
        #expect(recorder.chains.map(\.host) == [host, "127.0.0.1"])
        #expect(recorder.chains.map(\.port) == [origin.port, target.port])
        #expect(
            recorder.chains.map { $0.verifiedSPKISHA256.first } == [
                try pki.spkiSHA256(.leaf), try pki.spkiSHA256(.ipLeaf),
            ])
        #expect(try target.connections(atLeast: 1).first?.request.hasPrefix("GET /next HTTP/1.1\r\n") == true)
    }

    @Test func redirectHopIsRefusedWhenItsPinCheckRefuses() throws {
        let target = try TestTLSServer(
            chain: [pki.path(.ipLeaf), pki.path(.intermediate)], key: pki.keyPath(.ipLeaf),
            routes: ["*": .init(body: "arrived")])
        defer { target.stop() }
        let origin = try server(routes: [
            "*": .init(status: 307, headers: [("Location", "https://127.0.0.1:\(target.port)/next")])
        ])
        defer { origin.stop() }
        let recorder = pinned(to: [try pki.spkiSHA256(.leaf)])

        let result = try get(origin, recorder: recorder)

        #expect(result.failure == .pinningRefused(host: "127.0.0.1", port: target.port, reason: "no pin matched"))
        #expect(try target.connections(atLeast: 1).first?.received == 0)
    }

    @Test func relativeRedirectStaysOnTheConnectToAddress() throws {
        let server = try server(routes: [
            "/start": .init(status: 301, headers: [("Location", "/final")]), "/final": .init(body: "final"),
        ])
        defer { server.stop() }
        let recorder = PinCheckRecorder()

        let response = try get(server, path: "/start", recorder: recorder).get()

        #expect(response.body == Array("final".utf8))
        #expect(recorder.chains.map(\.host) == [host, host])
    }

    @Test func redirectToHTTPIsRefused() throws {
        let server = try server(routes: ["*": .init(status: 302, headers: [("Location", "http://\(host)/plain")])])
        defer { server.stop() }
        let recorder = PinCheckRecorder()

        let result = try get(server, recorder: recorder)

        #expect(result.failure == .redirectToNonHTTPS(location: "http://\(host)/plain"))
        #expect(recorder.chains.count == 1)
    }

    @Test func redirectsBeyondTheLimitAreRefused() throws {
        let server = try server(routes: ["*": .init(status: 302, headers: [("Location", "/again")])])
        defer { server.stop() }
        let recorder = PinCheckRecorder()

        let result = try get(server, client: makeClient(caFile: pki.path(.root), maxRedirects: 2), recorder: recorder)

        #expect(result.failure == .tooManyRedirects(limit: 2))
        #expect(recorder.chains.count == 3)
    }

    // MARK: Arguments and classification (no network)

    @Test func nonHTTPSURLsAndBadArgumentsAreRefusedBeforeConnecting() throws {
        let client = makeClient(caFile: pki.path(.root))
        let recorder = PinCheckRecorder()
        let check: @Sendable (PeerChain) -> PinDecision = { recorder.check($0) }
        let plain = try url("http://\(host)/")
        let withCredentials = try url("https://user:pw@\(host)/")
        let secure = try url("https://\(host)/")
        let infiniteDeadline = PinnedHTTPSClient(configuration: .init(totalDeadline: .infinity))

        #expect(failure { try client.get(plain, pinCheck: check) } == .unsupportedScheme("http"))
        let outcomes: [(String, HTTPSError?)] = [
            ("credentials in the URL", failure { try client.get(withCredentials, pinCheck: check) }),
            (
                "caller Host header",
                failure { try client.get(secure, headers: [("Host", "evil.test")], pinCheck: check) }
            ),
            (
                "CR LF in a header value",
                failure { try client.get(secure, headers: [("X-A", "b\r\nInjected: 1")], pinCheck: check) }
            ),
            ("infinite deadline", failure { try infiniteDeadline.get(secure, pinCheck: check) }),
        ]
        for (what, error) in outcomes {
            switch error?.reasonCode {
            case "invalid-url", "invalid-header", "invalid-configuration": break
            default: Issue.record("\(what): expected an argument error, got \(String(describing: error))")
            }
        }
        #expect(recorder.chains.isEmpty)
    }

    @Test func networkErrorsAreToldApartFromTrustFailures() {
        #expect(HTTPSError.timedOut(host: host, port: 443, phase: .deadline).isNetworkError)
        #expect(HTTPSError.connectionRefused(host: host, port: 443).isNetworkError)
        #expect(HTTPSError.responseTooLarge(host: host, port: 443, limit: 1).isNetworkError)
        #expect(!HTTPSError.certificateVerificationFailed(host: host, port: 443, reason: "x").isNetworkError)
        #expect(!HTTPSError.pinningRefused(host: host, port: 443, reason: "x").isNetworkError)
        #expect(!HTTPSError.emptyVerifiedChain(host: host, port: 443).isNetworkError)
        #expect(!HTTPSError.redirectToNonHTTPS(location: "http://x.test/").isNetworkError)
        #expect(
            HTTPSError.pinningRefused(host: host, port: 8443, reason: "no pin matched").description
                == "api.example.test:8443: refused by pin check: no pin matched")
    }
}

extension Result {
    /// The error of a failed result, nil on success.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
