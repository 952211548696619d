// `pinion serve` over real TLS on 127.0.0.1: responses and headers (docs/DESIGN.md §9), refused
// paths, limits, deadlines, the connection cap, garbage, reload and drain. Deadlines run on a
// ManualMonotonicClock the tests advance, so no test sleeps until one passes.

import COpenSSL
import Dispatch
import Foundation
import PinionCore
import PinionCrypto
import PinionPublisher
import PinionSystem
import PinionTestSupport
import PinionTrust
import Synchronization
import Testing

@Suite(.serialized) struct ServerTests {
    private func sha256ETag(_ text: String) throws -> String {
        "\"" + Hex.encode(try #require(OpenSSLSupport.sha256(Array(text.utf8)))) + "\""
    }

    @Test func servesTreeFilesWithETagsAndCacheControl() throws {
        let server = try RunningPublisher()
        let client = try RawTLSClient(port: server.port)
        let manifest = try #require(client.request(get("/v1/s/manifest.json")))
        #expect(manifest.status == 200)
        #expect(manifest.body == Array("{\"version\":2}".utf8))
        #expect(manifest.header("etag") == (try sha256ETag("{\"version\":2}")))
        #expect(manifest.header("cache-control") == "no-cache")
        #expect(manifest.header("content-type") == "application/json")
        #expect(manifest.header("content-length") == "13")
        #expect(manifest.header("date")?.hasSuffix(" GMT") == true)
        #expect(manifest.header("x-content-type-options") == "nosniff")
        let index = try #require(client.request(get("/v1/s/index.json")))
        #expect(index.status == 200 && index.header("cache-control") == "no-cache")
        for path in ["/v1/s/history/1.json", "/v1/s/root/1.json"] {
            let immutable = try #require(client.request(get(path)))
            #expect(immutable.status == 200)
            #expect(immutable.header("cache-control") == "public, max-age=31536000, immutable")
        }
        let health = try #require(client.request(get("/healthz")))
        #expect(health.status == 200 && health.body == Array("ok\n".utf8))
        #expect(server.accessLog.contains("GET /v1/s/manifest.json 200 13 "))
    }

    @Test func ifNoneMatchGives304WithoutBody() throws {
        let server = try RunningPublisher()
        let client = try RawTLSClient(port: server.port)
        let etag = try sha256ETag("{\"version\":2}")
        for condition in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
            let response = try #require(client.request(get("/v1/s/manifest.json", "If-None-Match: \(condition)\r\n")))
            #expect(response.status == 304, "If-None-Match: \(condition)")
            #expect(response.header("etag") == etag)
            #expect(response.header("content-length") == nil)
            #expect(response.body.isEmpty)
        }
        let changed = try #require(client.request(get("/v1/s/manifest.json", "If-None-Match: \"0000\"\r\n")))
        #expect(changed.status == 200 && changed.body.count == 13)
    }

    @Test func headDescribesTheBodyWithoutSendingIt() throws {
        let server = try RunningPublisher()
        let client = try RawTLSClient(port: server.port)
        let head = try #require(
            client.request("HEAD /v1/s/manifest.json HTTP/1.1\r\nHost: a\r\n\r\n", bodiless: true))
        #expect(head.status == 200 && head.header("content-length") == "13" && head.body.isEmpty)
        // The next response on the connection starts right after the head: no body was sent.
        let next = try #require(client.request(get("/healthz")))
        #expect(next.status == 200 && next.body == Array("ok\n".utf8))
    }

    @Test func refusedPathsAre404AndNeverStored() throws {
        let tree = try TestTree()
        try tree.write("v1/s/.2.json.tmp-crash", "{\"half\":")
        try FileManager.default.createSymbolicLink(
            atPath: tree.directory + "/v1/s/passwd.json", withDestinationPath: "/etc/passwd")
        let server = try RunningPublisher(tree: tree)
        let client = try RawTLSClient(port: server.port)
        for path in [
            "/v1/s/missing.json", "/v1/s/.2.json.tmp-crash", "/v1/s/passwd.json", "/v1/s/../s/manifest.json",
            "/v1/s/%2e%2e/s/manifest.json", "/v1/s%2fmanifest.json", "/v1/s/history", "/v1/s/history/",
            "/v1/s\\manifest.json", "/", "/etc/passwd", "/v1/s/manifest.json%00",
        ] {
            let response = try #require(client.request(get(path)), "\(path)")
            #expect(response.status == 404, "\(path)")
            #expect(response.header("cache-control") == "no-store", "\(path)")
            #expect(!String(decoding: response.body, as: UTF8.self).contains("root:"), "\(path)")
        }
    }

    @Test func otherMethodsAre405() throws {
        let server = try RunningPublisher()
        let client = try RawTLSClient(port: server.port)
        for method in ["POST", "PUT", "DELETE", "OPTIONS", "TRACE", "PROPFIND"] {
            let response = try #require(client.request("\(method) /v1/s/manifest.json HTTP/1.1\r\nHost: a\r\n\r\n"))
            #expect(response.status == 405, "\(method)")
            #expect(response.header("allow") == "GET, HEAD")
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let server = try RunningPublisher()
        let client = try RawTLSClient(port: server.port)
        client.send(get("/v1/s/history/1.json") + get("/v1/s/missing.json") + get("/v1/s/manifest.json"))
        let (bytes, _) = client.receive(timeout: 20) {
            splitResponses($0).count == 3 && splitResponses($0)[2].body.count == 13
        }
        #expect(splitResponses(bytes).map(\.status) == [200, 404, 200])
    }

    /// Requests in separate TLS records that arrive together: the server reads ahead, so
    /// after the first response the next records are already inside OpenSSL, not in the
    /// socket; the worker must answer them without waiting for a readiness event that never
    /// comes (SSL_has_pending).
    @Test func requestsInRecordsReadAheadAreAnsweredWithoutMoreBytes() throws {
        let server = try RunningPublisher()
        let client = try RawTLSClient(port: server.port)
        #expect(
            client.sendAsSeparateRecordsInOneSegment([
                get("/v1/s/history/1.json"), get("/v1/s/missing.json"), get("/v1/s/manifest.json"),
            ]))
        let (bytes, _) = client.receive(timeout: 20) {
            splitResponses($0).count == 3 && splitResponses($0)[2].body.count == 13
        }
        #expect(splitResponses(bytes).map(\.status) == [200, 404, 200])
    }

    @Test func closesAfterTheRequestCapAndOnConnectionClose() throws {
        let server = try RunningPublisher { $0.maxRequestsPerConnection = 2 }
        let client = try RawTLSClient(port: server.port)
        #expect(client.request(get("/healthz"))?.header("connection") == nil)
        #expect(client.request(get("/healthz"))?.header("connection") == "close")
        #expect(client.receive(timeout: 20).closed)

        let other = try RawTLSClient(port: server.port)
        #expect(other.request(get("/healthz", "Connection: close\r\n"))?.header("connection") == "close")
        #expect(other.receive(timeout: 20).closed)
        let old = try RawTLSClient(port: server.port)
        #expect(old.request("GET /healthz HTTP/1.0\r\n\r\n")?.status == 200)
        #expect(old.receive(timeout: 20).closed)
    }

    @Test func oversizedHeadsGet414Or431AndTheServerGoesOn() throws {
        let server = try RunningPublisher()
        let longLine = try RawTLSClient(port: server.port)
        longLine.send("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: a\r\n\r\n")
        let (lineBytes, lineClosed) = longLine.receive(timeout: 20)
        #expect(splitResponses(lineBytes).first?.status == 414)
        #expect(lineClosed)

        let bigHeaders = try RawTLSClient(port: server.port)
        bigHeaders.send("GET / HTTP/1.1\r\nHost: a\r\nCookie: " + String(repeating: "c", count: 9000) + "\r\n\r\n")
        let (headerBytes, headerClosed) = bigHeaders.receive(timeout: 20)
        #expect(splitResponses(headerBytes).first?.status == 431)
        #expect(headerClosed)

        var many = "GET / HTTP/1.1\r\nHost: a\r\n"
        for index in 0..<150 { many += "X-\(index): v\r\n" }
        let manyHeaders = try RawTLSClient(port: server.port)
        manyHeaders.send(many + "\r\n")
        #expect(splitResponses(manyHeaders.receive(timeout: 20).bytes).first?.status == 431)

        let malformed = try RawTLSClient(port: server.port)
        malformed.send("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        #expect(splitResponses(malformed.receive(timeout: 20).bytes).first?.status == 400)

        let fine = try RawTLSClient(port: server.port)
        #expect(fine.request(get("/v1/s/manifest.json"))?.status == 200)
    }

    @Test func headerDeadlineClosesADribblerWhileOthersAreServed() throws {
        // The deadline is measured on a clock the test moves: no sleeping until it passes.
        // One worker, so a request answered on another connection shows that the worker has
        // also read every byte the dribbler sent before it (epoll is level-triggered).
        let clock = ManualMonotonicClock()
        let server = try RunningPublisher {
            $0.headerTimeout = 1
            $0.workers = 1
            $0.deadlineClock = clock
        }
        let dribbler = try RawTLSClient(port: server.port)
        let head = Array(get("/v1/s/manifest.json").utf8)
        let halfway = head.count / 2
        for byte in head[..<halfway] { #expect(dribbler.send([byte])) }
        // A normal client is served while the dribbler is still going.
        #expect(try RawTLSClient(port: server.port).request(get("/v1/s/manifest.json"))?.status == 200)
        clock.advance(seconds: 0.5)
        #expect(server.publisher.checkDeadlinesNow())
        for byte in head[halfway..<(head.count - 1)] { #expect(dribbler.send([byte])) }
        #expect(try RawTLSClient(port: server.port).request(get("/v1/s/manifest.json"))?.status == 200)

        // One nanosecond before the deadline the dribbler is still open: more bytes gave it no
        // fresh time, but its time is not up either.
        clock.advance(nanoseconds: 500_000_000 - 1)
        #expect(server.publisher.checkDeadlinesNow())
        #expect(!server.accessLog.contains(" 408 0 "), "closed before the 1 s header deadline")
        #expect(!dribbler.receive(timeout: 0.2).closed, "closed before the 1 s header deadline")

        // At the deadline exactly it is closed, unanswered, and logged as a header timeout.
        clock.advance(nanoseconds: 1)
        #expect(server.publisher.checkDeadlinesNow())
        let (bytes, closed) = dribbler.receive(timeout: 15)
        #expect(closed, "the dribbling connection must be closed")
        #expect(bytes.isEmpty, "a timed-out request gets no response")
        #expect(server.accessLog.contains("- (header timeout) 408 0 "))
        // Others are still served.
        #expect(try RawTLSClient(port: server.port).request(get("/healthz"))?.status == 200)
    }

    @Test func idleKeepAliveConnectionsAreClosed() throws {
        let clock = ManualMonotonicClock()
        let server = try RunningPublisher {
            $0.idleTimeout = 1
            $0.deadlineClock = clock
        }
        let client = try RawTLSClient(port: server.port)
        #expect(client.request(get("/healthz"))?.status == 200)
        // The client may read the response before the worker has noted when it ended; a
        // check handled by the worker after that makes sure the idle deadline has started.
        #expect(server.publisher.checkDeadlinesNow())
        // The idle deadline runs from the end of the response: not up 1 ns before it.
        clock.advance(nanoseconds: 1_000_000_000 - 1)
        #expect(server.publisher.checkDeadlinesNow())
        #expect(!client.receive(timeout: 0.2).closed, "closed before the 1 s idle deadline")
        clock.advance(nanoseconds: 1)
        #expect(server.publisher.checkDeadlinesNow())
        #expect(client.receive(timeout: 15).closed)
    }

    @Test func theConnectionCapClosesExtraConnectionsAtOnce() throws {
        let server = try RunningPublisher { $0.maxConnections = 2 }
        let first = try RawTLSClient(port: server.port)
        let second = try RawTLSClient(port: server.port)
        #expect(first.request(get("/healthz"))?.status == 200)
        #expect(second.request(get("/healthz"))?.status == 200)
        let extra = try RawTCPClient(port: server.port)
        #expect(extra.waitClosed(timeout: 10), "a connection over the cap must be closed")
        #expect(server.accessLog.contains("(connection cap) 503"))
        _ = consume first
        var served = false
        for _ in 0..<50 where !served {
            // The cap frees up once the server has seen the close.
            if let again = try? RawTLSClient(port: server.port, timeout: 2),
                again.request(get("/healthz"), timeout: 2)?.status == 200
            {
                served = true
            } else {
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        #expect(served)
        #expect(second.request(get("/healthz"))?.status == 200)
    }

    @Test func plainHTTPGarbageAndVanishingClientsHarmNoOne() throws {
        // Garbage the TLS stack refuses is closed at once; a hello cut short, or silence, only at
        // the 2 s header deadline, which the test passes by advancing the server's clock (the
        // keeper's idle deadline is far away, so it lives through every advance).
        let clock = ManualMonotonicClock()
        let server = try RunningPublisher {
            $0.headerTimeout = 2
            $0.idleTimeout = 86_400
            $0.deadlineClock = clock
        }
        let keeper = try RawTLSClient(port: server.port)
        #expect(keeper.request(get("/healthz"))?.status == 200)
        var random = SystemRandomNumberGenerator()
        let attacks: [[UInt8]] = [
            Array(get("/v1/s/manifest.json").utf8),  // plain HTTP on the TLS port
            Array("CONNECT a:443 HTTP/1.1\r\n\r\n".utf8),
            (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) },  // noise
            [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC],  // a ClientHello cut short
            [0x16, 0x03, 0x01, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 64),  // record length lies
            [0x80, 0x80, 0x01, 0x03, 0x01],  // SSLv2-style hello
            [],  // connect and send nothing
        ]
        for attack in attacks {
            let client = try RawTCPClient(port: server.port)
            if !attack.isEmpty { client.send(attack) }
            #expect(
                client.waitClosed(advancing: clock, by: 2, on: server), "garbage \(attack.prefix(8)) must be closed")
        }
        // Clients that vanish mid-handshake.
        for _ in 0..<20 {
            let client = try RawTCPClient(port: server.port)
            client.send([0x16, 0x03, 0x01, 0x00, 0xF0, 0x01])
        }
        #expect(keeper.request(get("/v1/s/manifest.json"))?.status == 200)
        let fresh = try RawTLSClient(port: server.port)
        #expect(fresh.request(get("/v1/s/manifest.json"))?.status == 200)
    }

    @Test func onlyTLS12AndTLS13AreSpoken() throws {
        let server = try RunningPublisher()
        let tls12 = try RawTLSClient(port: server.port, maxVersion: TLS1_2_VERSION)
        #expect(tls12.protocolVersion == "TLSv1.2")
        #expect(tls12.request(get("/healthz"))?.status == 200)
        #expect(!tls12.hasSessionTicket, "no session tickets (forward secrecy)")
        let tls13 = try RawTLSClient(port: server.port)
        #expect(tls13.protocolVersion == "TLSv1.3")
        // TLS 1.3 still gets a (stateful) ticket: with SSL_OP_NO_TICKET OpenSSL sends a
        // session id for its server cache, not a ticket encrypted under a long-lived key.
        #expect(tls13.request(get("/healthz"))?.status == 200)
        #expect(throws: SetupFailure.self) { try RawTLSClient(port: server.port, maxVersion: TLS1_1_VERSION) }
    }

    @Test func aReplacedFileIsServedAtOnceOnTheSameConnection() throws {
        let server = try RunningPublisher()
        let client = try RawTLSClient(port: server.port)
        #expect(client.request(get("/v1/s/manifest.json"))?.body == Array("{\"version\":2}".utf8))
        try server.tree.write("v1/s/.next", "{\"version\":3}")
        #expect(rename(server.tree.directory + "/v1/s/.next", server.tree.directory + "/v1/s/manifest.json") == 0)
        let updated = try #require(client.request(get("/v1/s/manifest.json")))
        #expect(updated.body == Array("{\"version\":3}".utf8))
        #expect(updated.header("etag") == (try sha256ETag("{\"version\":3}")))
    }

    @Test func reloadSwitchesCredentialsForNewConnectionsOnly() throws {
        let credentials = try ServerCredentials.shared()
        let tree = try TestTree()
        let (certificate, key) = try tree.copyOfCredentials(credentials)
        let server = try RunningPublisher(tree: tree) {
            $0.certificateChainFile = certificate
            $0.privateKeyFile = key
        }
        let before = try RawTLSClient(port: server.port)
        let firstPin = try #require(before.peerSPKISHA256)
        #expect(before.request(get("/healthz"))?.status == 200)

        // A broken pair is refused and the old credentials stay.
        try Data(try Data(contentsOf: URL(fileURLWithPath: credentials.secondCertificate))).write(
            to: URL(fileURLWithPath: certificate))
        #expect(throws: PublisherError.self) { try server.publisher.reloadCredentials() }
        #expect(try RawTLSClient(port: server.port).peerSPKISHA256 == firstPin)

        try FileManager.default.removeItem(atPath: key)
        try FileManager.default.copyItem(atPath: credentials.secondKey, toPath: key)
        try server.publisher.reloadCredentials()
        let after = try RawTLSClient(port: server.port)
        let secondPin = try #require(after.peerSPKISHA256)
        #expect(secondPin != firstPin)
        #expect(after.request(get("/healthz"))?.status == 200)
        // The connection opened before the reload goes on.
        #expect(before.request(get("/v1/s/manifest.json"))?.status == 200)
    }

    @Test func drainFinishesRequestsInFlightThenStops() throws {
        let server = try RunningPublisher { $0.headerTimeout = 20 }
        let idle = try RawTLSClient(port: server.port)
        #expect(idle.request(get("/healthz"))?.status == 200)
        let inFlight = try RawTLSClient(port: server.port)
        let request = get("/v1/s/manifest.json")
        inFlight.send(String(request.prefix(10)))
        Thread.sleep(forTimeInterval: 0.3)  // let the server read the first bytes
        let drained = Mutex<Bool?>(nil)
        let publisher = server.publisher
        let thread = Thread {
            let clean = publisher.drain(timeout: 20)
            drained.withLock { $0 = clean }
        }
        thread.start()
        // The idle connection is closed at once; the request in flight is answered.
        #expect(idle.receive(timeout: 15).closed)
        #expect(drained.withLock { $0 } == nil, "drain must wait for the request in flight")
        inFlight.send(String(request.dropFirst(10)))
        let (bytes, closed) = inFlight.receive(timeout: 15)
        let response = try #require(splitResponses(bytes).first)
        #expect(response.status == 200 && response.header("connection") == "close")
        #expect(closed)
        for _ in 0..<200 where drained.withLock({ $0 }) == nil { Thread.sleep(forTimeInterval: 0.05) }
        #expect(drained.withLock { $0 } == true)
        #expect(throws: (any Error).self) { try RawTLSClient(port: server.port, timeout: 2) }
    }

    @Test func newConnectionsAreRefusedAtOnceWhileDraining() throws {
        let server = try RunningPublisher { $0.headerTimeout = 20 }
        let inFlight = try RawTLSClient(port: server.port)
        inFlight.send("GET /healthz HTTP/1.1\r\n")
        Thread.sleep(forTimeInterval: 0.3)
        let publisher = server.publisher
        Thread { publisher.drain(timeout: 20) }.start()
        Thread.sleep(forTimeInterval: 0.3)
        let started = Date()
        #expect(throws: (any Error).self) { try RawTLSClient(port: server.port, timeout: 10) }
        #expect(Date().timeIntervalSince(started) < 5, "refused, not left waiting in the backlog")
        inFlight.send("Host: a\r\n\r\n")
        #expect(splitResponses(inFlight.receive(timeout: 15).bytes).first?.status == 200)
    }

    @Test func http10KeepAliveIsAnnouncedAndIfNoneMatchLinesCombine() throws {
        let server = try RunningPublisher()
        let client = try RawTLSClient(port: server.port)
        let response = try #require(
            client.request("GET /v1/s/manifest.json HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"))
        #expect(response.header("connection") == "keep-alive")
        let etag = try sha256ETag("{\"version\":2}")
        let conditional = try #require(
            client.request(
                "GET /v1/s/manifest.json HTTP/1.0\r\nConnection: keep-alive\r\nIf-None-Match: \"x\"\r\nIf-None-Match: \(etag)\r\n\r\n"
            ))
        #expect(conditional.status == 304)
        // Errors and /healthz keep an HTTP/1.0 connection too, and say so: the same
        // connection then answers the next request.
        for (request, status) in [
            ("GET /nope HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 404),
            ("GET /v1/s/missing.json HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 404),
            ("DELETE /v1/s/manifest.json HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 405),
            ("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", nil),
        ] as [(String, Int?)] {
            let answer = try #require(client.request(request), "\(request)")
            if let status { #expect(answer.status == status, "\(request)") }
            #expect(answer.header("connection") == "keep-alive", "\(request)")
        }
        #expect(client.request("GET /v1/s/manifest.json HTTP/1.0\r\n\r\n")?.status == 200)
    }

    @Test func reloadsUnderConnectionChurnNeverCrash() throws {
        let server = try RunningPublisher()
        let stop = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        let publisher = server.publisher
        Thread {
            defer { done.signal() }
            while !stop.load(ordering: .relaxed) { try? publisher.reloadCredentials() }
        }.start()
        var served = 0
        let started = Date()
        while Date().timeIntervalSince(started) < 3 {
            if let client = try? RawTLSClient(port: server.port, timeout: 10),
                client.request(get("/healthz", "Connection: close\r\n"))?.status == 200
            {
                served += 1
            }
        }
        stop.store(true, ordering: .relaxed)
        done.wait()
        #expect(served > 10)
        #expect(try RawTLSClient(port: server.port).request(get("/healthz"))?.status == 200)
    }

    @Test func aReloadFromAFIFOIsRefusedWithoutBlocking() throws {
        let credentials = try ServerCredentials.shared()
        let tree = try TestTree()
        let certificate = tree.directory + ".cert.pem"
        defer { unlink(certificate) }
        try FileManager.default.copyItem(atPath: credentials.certificate, toPath: certificate)
        let server = try RunningPublisher(tree: tree) { $0.certificateChainFile = certificate }
        unlink(certificate)
        #expect(mkfifo(certificate, 0o600) == 0)
        #expect(throws: PublisherError.self) { try server.publisher.reloadCredentials() }
        #expect(try RawTLSClient(port: server.port).request(get("/healthz"))?.status == 200)
    }

    @Test func refusesBadCredentialsAndSettings() throws {
        let credentials = try ServerCredentials.shared()
        let tree = try TestTree()
        func make(_ change: (inout PublisherConfiguration) -> Void) throws {
            var configuration = PublisherConfiguration(
                repository: tree.directory, certificateChainFile: credentials.certificate,
                privateKeyFile: credentials.key, host: "127.0.0.1", port: 0)
            change(&configuration)
            _ = try HTTPSPublisher(configuration: configuration, accessLog: .disabled)
        }
        #expect(throws: PublisherError.self) { try make { $0.privateKeyFile = credentials.encryptedKey } }
        #expect(throws: PublisherError.self) { try make { $0.privateKeyFile = credentials.secondKey } }
        #expect(throws: PublisherError.self) { try make { $0.certificateChainFile = credentials.key } }
        #expect(throws: PublisherError.self) { try make { $0.certificateChainFile = "/nonexistent.pem" } }
        #expect(throws: PublisherError.self) { try make { $0.repository = "/nonexistent" } }
        #expect(throws: PublisherError.self) { try make { $0.host = "localhost" } }
        #expect(throws: PublisherError.self) { try make { $0.workers = 0 } }
        #expect(throws: PublisherError.self) { try make { $0.headerTimeout = 0 } }
        #expect(throws: PublisherError.self) { try make { $0.idleTimeout = .infinity } }
        #expect(throws: PublisherError.self) { try make { $0.maxConnections = 0 } }
    }
}
