// Load and fault tests of `pinion serve`: 500 slowloris connections while normal
// clients are served, and a catalogue of malformed requests and TLS garbage. They assert
// behaviour with generous bounds, never a throughput figure (that belongs in bench/).

import COpenSSL
import Foundation
import PinionPublisher
import PinionSystem
import PinionTestSupport
import Synchronization
import Testing

/// Resident memory of a process in KiB (VmRSS), or nil.
func residentKiB(_ pid: Int32) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }
    return nil
}

@Suite(.serialized) struct LoadAndFaultTests {
    /// The bound asserted on the server's resident memory under 500 slow connections.
    static let residentBoundKiB = 150 * 1024

    @Test func fiveHundredDribblersAreClosedAtTheDeadlineWhileNormalClientsAreServed() throws {
        let credentials = try ServerCredentials.shared()
        let tree = try TestTree()
        let server = try ServeProcess([
            "--repo", tree.directory, "--cert", credentials.certificate, "--key", credentials.key, "--listen",
            "127.0.0.1:0", "--workers", "2", "--max-connections", "700", "--header-timeout", "4s", "--access-log",
            "off",
        ])
        let pid = server.process.processIdentifier
        let idleRSS = residentKiB(pid) ?? 0

        // 500 connections that complete TLS and then send a request head one byte at a time.
        let dribblers = try (0..<500).map { _ in try RawTLSClient(port: server.port) }
        let opened = Date()
        let head = Array(get("/v1/s/manifest.json").utf8)
        let stop = Atomic<Bool>(false)
        let finished = DispatchSemaphore(value: 0)
        let dribbling = Thread {
            defer { finished.signal() }
            var position = 0
            while !stop.load(ordering: .relaxed), position < head.count - 1 {
                for client in dribblers { client.send([head[position]]) }
                position += 1
                Thread.sleep(forTimeInterval: 0.4)
            }
        }
        dribbling.start()

        // Normal clients meanwhile: every request is answered, each within a generous bound.
        var slowest = 0.0
        for _ in 0..<40 {
            let started = Date()
            let client = try RawTLSClient(port: server.port)
            let response = client.request(get("/v1/s/manifest.json"))
            #expect(response?.status == 200)
            slowest = max(slowest, Date().timeIntervalSince(started))
        }
        #expect(slowest < 10, "a normal request took \(slowest) s under load")
        let loadedRSS = residentKiB(pid) ?? Int.max
        #expect(
            loadedRSS < Self.residentBoundKiB,
            "resident memory \(loadedRSS) KiB with 500 slow connections (idle: \(idleRSS) KiB)")

        // After the header deadline (4 s from connect) every dribbler has been closed.
        Thread.sleep(forTimeInterval: max(0, 6 - Date().timeIntervalSince(opened)))
        stop.store(true, ordering: .relaxed)
        finished.wait()
        var closed = 0
        for client in dribblers where client.receive(timeout: 10).closed { closed += 1 }
        #expect(closed == 500, "\(closed) of 500 slow connections were closed")
        let after = try RawTLSClient(port: server.port)
        #expect(after.request(get("/healthz"))?.status == 200)
        server.signal(SIGTERM)
        #expect(server.waitForExit(timeout: 30) == 0)
    }

    /// A request, what the server must answer (nil: close without an answer), and why.
    struct Malformed: CustomStringConvertible, Sendable {
        let name: String
        let bytes: [UInt8]
        let status: Int?
        var description: String { name }

        init(_ name: String, _ text: String, _ status: Int?) {
            self.name = name
            bytes = Array(text.utf8)
            self.status = status
        }
        init(_ name: String, bytes: [UInt8], _ status: Int?) {
            self.name = name
            self.bytes = bytes
            self.status = status
        }
    }

    static let catalogue: [Malformed] = [
        Malformed("no Host", "GET /healthz HTTP/1.1\r\n\r\n", 400),
        Malformed("two Hosts", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        Malformed("bare LF", "GET /healthz HTTP/1.1\nHost: a\n\n", 400),
        Malformed("bare CR", "GET /healthz HTTP/1.1\rHost: a\r\n\r\n", 400),
        Malformed("NUL in target", "GET /he\0althz HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Malformed("NUL in header", "GET /healthz HTTP/1.1\r\nHost: a\0\r\n\r\n", 400),
        Malformed("space in target", "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Malformed("tab separator", "GET\t/healthz HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Malformed("absolute form of another scheme", "GET ftp://a/healthz HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Malformed("asterisk form", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Malformed("authority form", "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Malformed("HTTP/0.9", "GET /healthz\r\n\r\n", 400),
        Malformed("HTTP/2.0 version", "GET /healthz HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        Malformed("HTTP/1.2 version", "GET /healthz HTTP/1.2\r\nHost: a\r\n\r\n", 505),
        Malformed("lowercase version", "GET /healthz http/1.1\r\nHost: a\r\n\r\n", 400),
        Malformed("HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505),
        Malformed("method not a token", "GE(T /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Malformed("unknown method", "BREW /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 405),
        Malformed("POST with body", "POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi", 400),
        Malformed("GET with body", "GET /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", 400),
        Malformed("chunked", "GET /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        Malformed(
            "CL and TE", "GET /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n",
            400),
        Malformed(
            "two lengths", "GET /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 7\r\n\r\n", 400),
        Malformed("negative length", "GET /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
        Malformed("space before colon", "GET /healthz HTTP/1.1\r\nHost : a\r\n\r\n", 400),
        Malformed("folded header", "GET /healthz HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n\r\n", 400),
        Malformed("no colon", "GET /healthz HTTP/1.1\r\nHost: a\r\nJunk\r\n\r\n", 400),
        Malformed("empty header name", "GET /healthz HTTP/1.1\r\nHost: a\r\n: v\r\n\r\n", 400),
        Malformed("control in value", "GET /healthz HTTP/1.1\r\nHost: a\r\nX: \u{7}\r\n\r\n", 400),
        Malformed(
            "request line 9 KiB", "GET /" + String(repeating: "a", count: 9216) + " HTTP/1.1\r\nHost: a\r\n\r\n", 414),
        Malformed(
            "one 9 KiB header",
            "GET /healthz HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "x", count: 9216) + "\r\n\r\n",
            431),
        Malformed(
            "101 headers",
            "GET /healthz HTTP/1.1\r\nHost: a\r\n" + (0..<100).map { "X-\($0): v\r\n" }.joined() + "\r\n", 431),
        Malformed("traversal", "GET /v1/s/../../etc/passwd.json HTTP/1.1\r\nHost: a\r\n\r\n", 404),
        Malformed("encoded traversal", "GET /v1/s/%2e%2e/%2e%2e/x.json HTTP/1.1\r\nHost: a\r\n\r\n", 404),
        Malformed("backslash", "GET /v1/s\\..\\manifest.json HTTP/1.1\r\nHost: a\r\n\r\n", 404),
        Malformed("hidden file", "GET /v1/s/.manifest.json.tmp-1-2 HTTP/1.1\r\nHost: a\r\n\r\n", 404),
        Malformed("non-ASCII target", "GET /v1/s/\u{e9}.json HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Malformed("DEL in target", "GET /v1/s/\u{7f}.json HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Malformed("only CRLFs", String(repeating: "\r\n", count: 10), 400),
        Malformed("binary noise", bytes: (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 7919) }, 400),
    ]

    @Test func malformedRequestsGetTheirStatusAndTheServerStaysUp() throws {
        #expect(Self.catalogue.count >= 30)
        let server = try RunningPublisher { $0.headerTimeout = 3 }
        for entry in Self.catalogue {
            let client = try RawTLSClient(port: server.port)
            client.send(entry.bytes)
            // Kept-alive answers (404, 405) are read by length; refusals until the close.
            let (bytes, closed) = client.receive(timeout: 15) { bytes in
                guard let first = splitResponses(bytes).first, first.status == 404 || first.status == 405 else {
                    return false
                }
                return first.body.count == Int(first.header("content-length") ?? "") ?? -1
            }
            let response = splitResponses(bytes).first
            #expect(response?.status == entry.status, "\(entry.name): got \(String(describing: response?.status))")
            if let status = entry.status, status >= 400, status != 404, status != 405 {
                #expect(closed, "\(entry.name): the connection must be closed after \(status)")
                #expect(response?.header("connection") == "close", "\(entry.name)")
            }
            #expect(try RawTLSClient(port: server.port).request(get("/healthz"))?.status == 200, "after \(entry.name)")
        }
    }

    @Test func tlsGarbageOnlyClosesItsOwnConnection() throws {
        // What waits for more bytes is closed at the 2 s header deadline, which the test passes
        // by advancing the server's clock; the keeper's idle deadline is far away.
        let clock = ManualMonotonicClock()
        let server = try RunningPublisher {
            $0.headerTimeout = 2
            $0.idleTimeout = 86_400
            $0.deadlineClock = clock
        }
        let keeper = try RawTLSClient(port: server.port)
        // Idle from now on, so no advance of the clock reaches the keeper's deadline.
        #expect(keeper.request(get("/healthz"))?.status == 200)
        let record: ([UInt8]) -> [UInt8] = { body in
            [0x16, 0x03, 0x01, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
        }
        let garbage: [(String, [UInt8])] = [
            ("plain HTTP", Array(get("/healthz").utf8)),
            ("TLS alert first", [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28]),
            ("application data first", [0x17, 0x03, 0x03, 0x00, 0x05, 1, 2, 3, 4, 5]),
            ("empty handshake record", record([])),
            ("ClientHello with a lying length", record([0x01, 0xFF, 0xFF, 0xFF, 0x03, 0x03])),
            ("truncated ClientHello", record([0x01, 0x00, 0x00, 0x30, 0x03, 0x03] + [UInt8](repeating: 0, count: 20))),
            ("record over 16 KiB", [0x16, 0x03, 0x01, 0x48, 0x01] + [UInt8](repeating: 0x01, count: 64)),
            ("SSLv2 hello", [0x80, 0x2E, 0x01, 0x00, 0x02, 0x00, 0x15, 0x00, 0x00, 0x00, 0x10]),
            ("unknown content type", [0x42, 0x03, 0x03, 0x00, 0x01, 0x00]),
            ("zero bytes", [UInt8](repeating: 0, count: 1024)),
        ]
        for (name, bytes) in garbage {
            let client = try RawTCPClient(port: server.port)
            client.send(bytes)
            #expect(client.waitClosed(advancing: clock, by: 2, on: server), "\(name) must end in a close")
            #expect(keeper.request(get("/healthz"))?.status == 200, "after \(name)")
        }
    }
}
