// `pinion serve` as operators run it: the ready line, SIGHUP reload, SIGTERM and SIGINT
// drain, refused flags; and readers racing 100 publishes through the server.

import Foundation
import PinionCLI
import PinionCore
import PinionCrypto
import PinionPublisher
import PinionSystem
import PinionTestSupport
import Synchronization
import Testing

@Suite(.serialized) struct ServeCommandTests {
    @Test func announcesReloadsOnSIGHUPAndDrainsOnSIGTERM() throws {
        let credentials = try ServerCredentials.shared()
        let tree = try TestTree()
        let (certificate, key) = try tree.copyOfCredentials(credentials)
        let server = try ServeProcess([
            "--repo", tree.directory, "--cert", certificate, "--key", key, "--listen", "127.0.0.1:0", "--workers", "2",
        ])
        let before = try RawTLSClient(port: server.port)
        let firstPin = try #require(before.peerSPKISHA256)
        #expect(before.request(get("/v1/s/manifest.json"))?.status == 200)

        // A certificate without its key: the reload fails and the old pair stays.
        try FileManager.default.removeItem(atPath: certificate)
        try FileManager.default.copyItem(atPath: credentials.secondCertificate, toPath: certificate)
        server.signal(SIGHUP)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try RawTLSClient(port: server.port).peerSPKISHA256 == firstPin)

        try FileManager.default.removeItem(atPath: key)
        try FileManager.default.copyItem(atPath: credentials.secondKey, toPath: key)
        server.signal(SIGHUP)
        var reloaded = false
        for _ in 0..<100 where !reloaded {
            Thread.sleep(forTimeInterval: 0.05)
            reloaded = try RawTLSClient(port: server.port).peerSPKISHA256 != firstPin
        }
        #expect(reloaded, "SIGHUP must switch new connections to the new certificate")
        #expect(before.request(get("/healthz"))?.status == 200, "connections open before the reload go on")

        // SIGTERM with a request in flight: it is answered, then the process exits 0.
        let inFlight = try RawTLSClient(port: server.port)
        inFlight.send("GET /v1/s/manifest.json HTTP/1.1\r\n")
        Thread.sleep(forTimeInterval: 0.3)
        server.signal(SIGTERM)
        Thread.sleep(forTimeInterval: 0.3)
        inFlight.send("Host: a\r\n\r\n")
        let (bytes, closed) = inFlight.receive(timeout: 20)
        #expect(splitResponses(bytes).first?.status == 200)
        #expect(closed)
        #expect(server.waitForExit(timeout: 30) == 0)
        let log = server.standardError()
        #expect(log.contains("reload failed"))
        #expect(log.contains("certificate and key reloaded"))
        #expect(log.contains("GET /v1/s/manifest.json 200 13 "))
        #expect(log.contains("stopped"))
    }

    @Test func exitsZeroOnSIGINTAndSurvivesSIGPIPE() throws {
        let credentials = try ServerCredentials.shared()
        let tree = try TestTree()
        try tree.write("v1/s/index.json", String(repeating: " ", count: 4 << 20))
        let server = try ServeProcess([
            "--repo", tree.directory, "--cert", credentials.certificate, "--key", credentials.key, "--listen",
            "127.0.0.1:0", "--access-log", "off",
        ])
        // Clients that vanish in the middle of a large response.
        for _ in 0..<5 {
            let client = try RawTLSClient(port: server.port)
            client.send(get("/v1/s/index.json"))
            _ = client.receive(timeout: 5) { $0.count > 1000 }
        }
        let after = try RawTLSClient(port: server.port)
        #expect(after.request(get("/healthz"))?.status == 200)
        server.signal(SIGINT)
        #expect(server.waitForExit(timeout: 30) == 0)
    }

    @Test func aStalledAccessLogNeverBlocksServing() throws {
        let credentials = try ServerCredentials.shared()
        let tree = try TestTree()
        // The test does not read the server's standard error (the access log) until the
        // end: the pipe (64 KiB) fills after about a thousand lines.
        let server = try ServeProcess([
            "--repo", tree.directory, "--cert", credentials.certificate, "--key", credentials.key, "--listen",
            "127.0.0.1:0",
        ])
        var client = try RawTLSClient(port: server.port)
        let long = "/v1/s/" + String(repeating: "x", count: 200) + ".json"
        for index in 0..<3000 {
            guard let response = client.request(get(long), timeout: 20), response.status == 404 else {
                Issue.record("request \(index) was not answered while the log is stalled")
                break
            }
            // The per-connection request cap (1000) closes the connection now and then.
            if response.header("connection") == "close" { client = try RawTLSClient(port: server.port) }
        }
        #expect(try RawTLSClient(port: server.port).request(get("/healthz"))?.status == 200)
        server.signal(SIGKILL)
        _ = server.waitForExit(timeout: 10)
    }

    @Test func theConnectionCapFitsTheOpenFilesLimit() throws {
        let credentials = try ServerCredentials.shared()
        let tree = try TestTree()
        let server = try ServeProcess(
            [
                "--repo", tree.directory, "--cert", credentials.certificate, "--key", credentials.key, "--listen",
                "127.0.0.1:0", "--workers", "1", "--access-log", "off",
            ], openFilesLimit: 200)
        // 200 descriptors, 64 + 16 per worker kept for files, logs and the event loop.
        let idle = try (0..<120).map { _ in try RawTCPClient(port: server.port) }
        let over = try RawTCPClient(port: server.port)
        #expect(over.waitClosed(timeout: 10), "the connection over the fitted cap is closed")
        _ = idle
        server.signal(SIGKILL)
        _ = server.waitForExit(timeout: 10)
        #expect(server.standardError().contains("the connection cap is 120, not 4096"))
    }

    @Test func refusesBadFlagsAndCredentialsBeforeListening() throws {
        let credentials = try ServerCredentials.shared()
        let tree = try TestTree()
        let base = ["serve", "--repo", tree.directory, "--cert", credentials.certificate, "--key", credentials.key]
        let occupied = try RunningPublisher()
        let cases: [(arguments: [String], status: Int32, message: String)] = [
            (["serve", "--cert", credentials.certificate, "--key", credentials.key], 2, "--repo"),
            (base + ["--listen", "localhost:8443"], 2, "not an IPv4 or IPv6 address"),
            (base + ["--listen", "127.0.0.1"], 2, "ADDRESS:PORT"),
            (base + ["--listen", "127.0.0.1:70000"], 2, "0...65535"),
            (base + ["--listen", "[::1:80"], 2, "ADDRESS:PORT"),
            (base + ["--header-timeout", "0"], 2, "--header-timeout"),
            (base + ["--idle-timeout", "-1s"], 2, "--idle-timeout"),
            (base + ["--drain-timeout", "forever"], 2, "--drain-timeout"),
            (base + ["--workers", "0"], 2, "--workers"),
            (base + ["--max-connections", "many"], 2, "--max-connections"),
            (base + ["extra"], 2, "unexpected argument"),
            (
                [
                    "serve", "--repo", tree.directory, "--cert", credentials.certificate, "--key",
                    credentials.encryptedKey,
                ],
                1, "unencrypted PEM private key"
            ),
            (
                ["serve", "--repo", tree.directory, "--cert", credentials.certificate, "--key", credentials.secondKey],
                1, "is not the key of the certificate"
            ),
            (
                ["serve", "--repo", "/nonexistent/tree", "--cert", credentials.certificate, "--key", credentials.key],
                3, "cannot open the tree"
            ),
            (base + ["--listen", "127.0.0.1:\(occupied.port)"], 3, "cannot listen on 127.0.0.1:\(occupied.port)"),
            (base + ["--access-log", tree.directory], 3, "access log"),
        ]
        for (arguments, status, message) in cases {
            let result = runPinion(arguments)
            #expect(result.status == status, "\(arguments.dropFirst(7)) gave \(result.status): \(result.err)")
            #expect(result.err.contains(message), "\(arguments.dropFirst(7)): \(result.err)")
        }
    }

    @Test func readersRacingOneHundredPublishesSeeOnlyConsistentStates() throws {
        let setup = try Setup()
        let workspace = FileManager.default.temporaryDirectory.appendingPathComponent("pinion-race-\(UUID())").path
        try FileManager.default.createDirectory(atPath: workspace, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: workspace) }
        let repo = workspace + "/repo"
        let at = t0.adding(seconds: 3600).description
        try Data(setup.rootEnvelope.serialized()).write(to: URL(fileURLWithPath: workspace + "/root.json"))
        #expect(runPinion(["publish", "--repo", repo, workspace + "/root.json", "--at", at]).status == 0)

        var previous: [UInt8]? = nil
        func publish(_ version: Int64) throws {
            var payload = manifestPayload(version: version, issuedAt: t0.adding(seconds: version))
            payload.previous = previous
            let bytes = payload.serialized()
            previous = OpenSSLSupport.sha256(bytes)
            let file = workspace + "/m\(version).json"
            try Data(try sign(.pins, bytes, with: [setup.pinsKey]).serialized()).write(to: URL(fileURLWithPath: file))
            let result = runPinion(["publish", "--repo", repo, file, "--at", at])
            #expect(result.status == 0, "publish v\(version): \(result.err)")
        }
        try publish(1)

        let credentials = try ServerCredentials.shared()
        var configuration = PublisherConfiguration(
            repository: repo, certificateChainFile: credentials.certificate, privateKeyFile: credentials.key,
            host: "127.0.0.1", port: 0)
        configuration.workers = 2
        let server = try HTTPSPublisher(configuration: configuration, accessLog: .disabled)
        server.start()
        defer { server.drain(timeout: 5) }

        let root = try #require(try setup.chain().root(version: 1))
        let stop = Atomic<Bool>(false)
        let failures = Mutex<[String]>([])
        let reads = Atomic<Int>(0)
        let done = DispatchGroup()
        let port = server.port
        for reader in 0..<2 {
            done.enter()
            Thread {
                defer { done.leave() }
                var lastVersion: Int64 = 0
                do {
                    var client = try RawTLSClient(port: port)
                    var mustReconnect = false
                    // One request; a new connection when the last response closed it
                    // (the server's per-connection request cap).
                    func fetch(_ path: String) throws -> TestResponse {
                        if mustReconnect { client = try RawTLSClient(port: port) }
                        guard let response = client.request(get(path)) else {
                            throw SetupFailure(description: "\(path): no response")
                        }
                        mustReconnect = response.header("connection") == "close"
                        guard response.status == 200 else {
                            throw SetupFailure(description: "\(path): status \(response.status)")
                        }
                        return response
                    }
                    while !stop.load(ordering: .relaxed) {
                        let manifest = try fetch("/v1/com.example.app/manifest.json")
                        let verified = try ManifestVerifier.verify(manifest.body, under: root, crypto: sodium)
                        let version = verified.payload.version
                        if version < lastVersion {
                            throw SetupFailure(
                                description: "reader \(reader): version went from \(lastVersion) to \(version)")
                        }
                        lastVersion = version
                        let indexResponse = try fetch("/v1/com.example.app/index.json")
                        let index = try PublishedIndex.parse(indexResponse.body)
                        guard let latest = index.manifests.last else { throw SetupFailure(description: "empty index") }
                        guard latest.version >= version else {
                            throw SetupFailure(description: "index v\(latest.version) behind manifest.json v\(version)")
                        }
                        let history = try fetch("/v1/com.example.app/history/\(latest.version).json")
                        let envelope = try Envelope.parse(history.body)
                        guard OpenSSLSupport.sha256(envelope.payload) == latest.payloadSHA256 else {
                            throw SetupFailure(
                                description: "history/\(latest.version).json differs from its index entry")
                        }
                        reads.wrappingAdd(1, ordering: .relaxed)
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }.start()
        }
        for version in Int64(2)...101 { try publish(version) }
        // Let the readers see the final state too.
        Thread.sleep(forTimeInterval: 0.3)
        stop.store(true, ordering: .relaxed)
        done.wait()
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(reads.load(ordering: .relaxed) > 10)
        let final = try RawTLSClient(port: port)
        let manifest = try #require(final.request(get("/v1/com.example.app/manifest.json")))
        #expect(try ManifestVerifier.verify(manifest.body, under: root, crypto: sodium).payload.version == 101)
    }
}
