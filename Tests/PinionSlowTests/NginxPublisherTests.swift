// Real nginx (Debian package nginx-light) serving a tree written by `pinion publish` with the
// shipped deploy/nginx/pinion.conf: the SDK refreshes from it, and every header the
// configuration promises (docs/DESIGN.md §9, docs/PUBLISHING.md) is checked on the wire.

import Foundation
import PinionCLI
import PinionCore
import PinionCrypto
import PinionLinux
import PinionSystem
import PinionTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// nginx itself is PinionTestSupport's NginxServer.

// MARK: - Tests

@Suite(.serialized) final class NginxPublisherTests {
    let pki: HTTPSTestPKI
    let setup: Setup
    let work: String
    var tree: String { work + "/tree" }
    var scopeDirectory: String { tree + "/v1/com.example.app" }
    /// When the CLI publishes (manifests are signed at t0 for 30 days).
    let publishTime = t0.adding(seconds: 3600)
    /// The SDK's clock.
    let clientTime = t0.adding(seconds: 2 * 3600)

    init() throws {
        pki = try HTTPSTestPKI.shared()
        setup = try Setup()
        work = try makeTemporaryDirectory(prefix: "pinion-nginx-tree")
    }

    deinit { try? FileManager.default.removeItem(atPath: work) }

    func startNginx(firstPort: UInt16? = nil, edit: (String) -> String = { $0 }) throws -> NginxServer {
        try NginxServer(
            tree: tree, chain: [pki.path(.ipLeaf), pki.path(.intermediate)], key: pki.keyPath(.ipLeaf),
            firstPort: firstPort, edit: edit)
    }

    /// Runs `pinion publish` in-process; throws with its output when it fails.
    func publish(_ envelope: Envelope, as name: String) throws { try publish([(envelope, name)]) }

    /// `pinion publish` of several envelopes in one step.
    func publish(_ envelopes: [(Envelope, String)]) throws {
        var paths: [String] = []
        for (envelope, name) in envelopes {
            let path = work + "/" + name
            try Data(envelope.serialized()).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        let result = runPinion(["publish", "--repo", tree] + paths, now: publishTime)
        guard result.status == 0 else {
            let names = envelopes.map(\.1).joined(separator: " ")
            throw TestSetupError(description: "publish \(names) exited \(result.status): \(result.out)\(result.err)")
        }
    }

    /// A manifest signed at t0 pinning `domains` (each to two pins), chained to `previous`.
    func manifest(
        version: Int64, rootVersion: Int64 = 1, previous: Envelope? = nil, domains: [String] = ["api.example.test"],
        pinsKey: Ed25519SecretKey? = nil
    ) throws -> Envelope {
        var payload = manifestPayload(
            version: version, rootVersion: rootVersion, issuedAt: t0,
            domains: domains.map { .init(name: $0, pins: [pin(0x11), pin(0x22)]) })
        payload.previous = previous.map { sodium.hasher.sha256($0.payload) }
        return try sign(.pins, payload.serialized(), with: [pinsKey ?? setup.pinsKey])
    }

    /// Root 1 and manifest 1 published.
    @discardableResult
    func publishFirstVersion() throws -> Envelope {
        try publish(setup.rootEnvelope, as: "root1.json")
        let first = try manifest(version: 1)
        try publish(first, as: "m1.json")
        return first
    }

    func client(port: UInt16) throws -> PinningClient {
        let clientTime = self.clientTime
        return try PinningClient(
            configuration: ClientConfiguration(
                scope: "com.example.app", baseURL: URL(string: "https://127.0.0.1:\(port)/"),
                embeddedRoot: setup.rootEnvelope.serialized(), stateDirectory: work + "/state",
                caFile: pki.path(.root), connectTimeout: 20, ioTimeout: 20, totalDeadline: 60,
                clock: { clientTime }))
    }

    /// A plain GET (or POST) of a path on nginx: X.509 validation against the test root, no pins.
    func get(_ path: String, port: UInt16, headers: [(String, String)] = [], post: Bool = false) throws
        -> HTTPSResponse
    {
        let https = PinnedHTTPSClient(
            configuration: .init(caFile: pki.path(.root), connectTimeout: 20, ioTimeout: 20, totalDeadline: 60))
        guard let url = URL(string: "https://127.0.0.1:\(port)\(path)") else {
            throw TestSetupError(description: "bad path \(path)")
        }
        if post {
            return try https.post(url, body: Array("{}".utf8), contentType: "application/json") { _ in .proceed }
        }
        return try https.get(url, headers: headers) { _ in .proceed }
    }

    /// nginx's ETag of a file: "<mtime seconds in hex>-<size in hex>" (ngx_http_set_etag).
    func nginxETag(_ path: String) throws -> String {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw TestSetupError(description: "cannot stat \(path)") }
        return "\"\(String(info.st_mtim.tv_sec, radix: 16))-\(String(info.st_size, radix: 16))\""
    }

    /// Runs `openssl s_client` against nginx with `options`, sends `request`, and returns
    /// its exit status, what the server answered (stdout) and the diagnostics (stderr).
    func openSSLClient(port: UInt16, options: [String], request: String) throws -> (
        status: Int32, answer: String, diagnostics: String
    ) {
        let directory = try makeTemporaryDirectory(prefix: "pinion-nginx-client")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try request.write(toFile: directory + "/request", atomically: true, encoding: .utf8)
        for name in ["stdout", "stderr"] {
            _ = FileManager.default.createFile(atPath: directory + "/" + name, contents: nil)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "openssl", "s_client", "-connect", "127.0.0.1:\(port)", "-CAfile", pki.path(.root),
                "-verify_return_error", "-verify_ip", "127.0.0.1", "-quiet",
            ] + options
        process.standardInput = FileHandle(forReadingAtPath: directory + "/request")
        process.standardOutput = FileHandle(forWritingAtPath: directory + "/stdout")
        process.standardError = FileHandle(forWritingAtPath: directory + "/stderr")
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { _ = kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        func read(_ name: String) -> String {
            (try? String(contentsOfFile: directory + "/" + name, encoding: .isoLatin1)) ?? ""
        }
        return (process.terminationStatus, read("stdout"), read("stderr"))
    }

    // MARK: The SDK

    @Test func sdkRefreshesFromNginxThroughPublishesAndARootRotation() throws {
        let first = try publishFirstVersion()
        let nginx = try startNginx()
        defer { nginx.stop() }
        let client = try client(port: nginx.port)
        let scope = "/v1/com.example.app"
        // The manifest request carries the poll token (no baseline here), and nginx serves the
        // file whatever the query.
        func poll(have: Int) -> String { "manifest.json?have=\(have)&base=0000000000000000" }

        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)), "\(nginx.errorLog)")
        #expect(
            try nginx.accessLog(atLeast: 2) == [
                "404 GET \(scope)/root/2.json", "200 GET \(scope)/\(poll(have: 0))",
            ])
        let firstETag = try nginxETag(scopeDirectory + "/manifest.json")
        #expect(client.trustedState.persisted.manifestETag == firstETag)

        // Nothing published since: the SDK's If-None-Match with nginx's ETag gets a 304.
        #expect(client.refresh().outcome == .unchanged)
        #expect(
            try nginx.accessLog(atLeast: 4).suffix(2) == [
                "404 GET \(scope)/root/2.json", "304 GET \(scope)/\(poll(have: 1))",
            ])

        // Version 2 is larger (one more domain), so its ETag differs whatever the clock says.
        let second = try manifest(
            version: 2, previous: first, domains: ["api.example.test", "www.example.test"])
        try publish(second, as: "m2.json")
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
        #expect(
            try nginx.accessLog(atLeast: 6).suffix(2) == [
                "404 GET \(scope)/root/2.json", "200 GET \(scope)/\(poll(have: 1))",
            ])
        #expect(client.trustedState.persisted.manifestETag == (try nginxETag(scopeDirectory + "/manifest.json")))
        #expect(client.trustedState.persisted.manifestETag != firstETag)
        #expect(client.policyNow().entry(named: "www.example.test")?.pins.count == 2)

        // A root rotation (a new pins key) and manifest 3 signed under root 2: the walk
        // fetches root/2.json (200), then root/3.json (404).
        let newPinsKey = try makeKey()
        let root2 = try sign(
            .root, rootPayload(version: 2, rootKeys: [setup.rootKey], pinsKeys: [newPinsKey]).serialized(),
            with: [setup.rootKey])
        // A new pins role: the root goes out in one step with the manifest signed under it.
        try publish([
            (root2, "root2.json"),
            (try manifest(version: 3, rootVersion: 2, previous: second, pinsKey: newPinsKey), "m3.json"),
        ])
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 2, version: 3)))
        #expect(
            try nginx.accessLog(atLeast: 9).suffix(3) == [
                "200 GET \(scope)/root/2.json", "404 GET \(scope)/root/3.json", "200 GET \(scope)/\(poll(have: 2))",
            ])
        #expect(client.trustedState.chain.newest.version == 2)
        #expect(try nginx.accessLog(atLeast: 9).count == 9)
    }

    // MARK: Headers

    @Test func filesCarryTheCacheControlOfTheirKind() throws {
        try publishFirstVersion()
        let nginx = try startNginx()
        defer { nginx.stop() }
        let expectations = [
            ("manifest.json", "no-cache"), ("index.json", "no-cache"),
            ("root/1.json", "public, max-age=31536000, immutable"),
            ("history/1.json", "public, max-age=31536000, immutable"),
        ]
        for (file, cacheControl) in expectations {
            let response = try get("/v1/com.example.app/" + file, port: nginx.port)
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: scopeDirectory + "/" + file)))
            #expect(response.status == 200, "\(file)")
            #expect(response.body == bytes, "\(file)")
            #expect(response.value(forHeader: "cache-control") == cacheControl, "\(file)")
            #expect(response.value(forHeader: "content-type") == "application/json", "\(file)")
            #expect(response.value(forHeader: "x-content-type-options") == "nosniff", "\(file)")
            #expect(response.value(forHeader: "etag") == (try nginxETag(scopeDirectory + "/" + file)), "\(file)")
            #expect(response.value(forHeader: "content-length") == String(bytes.count), "\(file)")
            #expect(response.value(forHeader: "content-encoding") == nil, "\(file)")
            #expect(response.value(forHeader: "server") == "nginx", "\(file): server_tokens off")
        }
    }

    @Test func ifNoneMatchWithNginxsETagGives304() throws {
        try publishFirstVersion()
        let nginx = try startNginx()
        defer { nginx.stop() }
        let etag = try nginxETag(scopeDirectory + "/manifest.json")
        let notModified = try get(
            "/v1/com.example.app/manifest.json", port: nginx.port, headers: [("If-None-Match", etag)])
        #expect(notModified.status == 304)
        #expect(notModified.body.isEmpty)
        #expect(notModified.value(forHeader: "etag") == etag)
        #expect(notModified.value(forHeader: "cache-control") == "no-cache")
        let other = try get(
            "/v1/com.example.app/manifest.json", port: nginx.port, headers: [("If-None-Match", "\"0-0\"")])
        #expect(other.status == 200)
        #expect(!other.body.isEmpty)
    }

    @Test func notFoundIsNoStore() throws {
        try publishFirstVersion()
        let nginx = try startNginx()
        defer { nginx.stop() }
        // The end of the root chain above all: a cached 404 there would hide every rotation.
        for path in [
            "/v1/com.example.app/root/2.json", "/v1/com.example.app/history/2.json",
            "/v1/other.scope/manifest.json", "/v1/com.example.app/unknown.json", "/",
        ] {
            let response = try get(path, port: nginx.port)
            #expect(response.status == 404, "\(path)")
            #expect(response.value(forHeader: "cache-control") == "no-store", "\(path)")
            #expect(response.value(forHeader: "x-content-type-options") == "nosniff", "\(path)")
            #expect(response.value(forHeader: "content-type") == "application/json", "\(path)")
        }
    }

    @Test func errorBodiesAreTheJSONShapePinionServeSends() throws {
        try publishFirstVersion()
        let nginx = try startNginx()
        defer { nginx.stop() }
        // The same bytes as PublisherErrorBody (ServeHTTPFeaturesTests checks pinion serve's).
        let missing = try get("/v1/com.example.app/root/2.json", port: nginx.port)
        #expect(String(decoding: missing.body, as: UTF8.self) == "{\"error\": \"not found\"}\n")
        let posted = try get("/v1/com.example.app/manifest.json", port: nginx.port, post: true)
        #expect(String(decoding: posted.body, as: UTF8.self) == "{\"error\": \"method not allowed\"}\n")
        #expect(posted.value(forHeader: "content-type") == "application/json")
        #expect(missing.value(forHeader: "access-control-allow-origin") == nil)
    }

    @Test func lastModifiedIsSentAndIfModifiedSinceGives304() throws {
        try publishFirstVersion()
        let nginx = try startNginx()
        defer { nginx.stop() }
        let first = try get("/v1/com.example.app/manifest.json", port: nginx.port)
        let lastModified = try #require(first.value(forHeader: "last-modified"))
        let again = try get(
            "/v1/com.example.app/manifest.json", port: nginx.port, headers: [("If-Modified-Since", lastModified)])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        // A later date also gives 304 (if_modified_since before), as from pinion serve.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let later = try #require(formatter.date(from: lastModified)).addingTimeInterval(3600)
        let afterwards = try get(
            "/v1/com.example.app/manifest.json", port: nginx.port,
            headers: [("If-Modified-Since", formatter.string(from: later))])
        #expect(afterwards.status == 304)
        let earlier = try get(
            "/v1/com.example.app/manifest.json", port: nginx.port,
            headers: [("If-Modified-Since", formatter.string(from: later.addingTimeInterval(-7200)))])
        #expect(earlier.status == 200)
    }

    @Test func theDocumentedCORSLinesAddAllowOrigin() throws {
        try publishFirstVersion()
        let shipped = try String(contentsOfFile: NginxServer.shippedConfiguration, encoding: .utf8)
        #expect(shipped.components(separatedBy: "\n        #cors ").count - 1 == 6)
        for file in ["manifest.proof", "log/tile/0/000.p/1", "log/tile/entries/000.p/1"] {
            let path = scopeDirectory + "/" + file
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data("x\n".utf8).write(to: URL(fileURLWithPath: path))
        }
        let nginx = try startNginx(edit: { $0.replacingOccurrences(of: "#cors ", with: "") })
        defer { nginx.stop() }
        for path in [
            "/v1/com.example.app/manifest.json", "/v1/com.example.app/root/1.json", "/v1/com.example.app/root/2.json",
            "/v1/com.example.app/manifest.proof", "/v1/com.example.app/log/tile/0/000.p/1",
            "/v1/com.example.app/log/tile/entries/000.p/1",
        ] {
            let response = try get(path, port: nginx.port)
            #expect(response.value(forHeader: "access-control-allow-origin") == "*", "\(path)")
        }
    }

    @Test func onlyGetAndHeadAreAllowed() throws {
        try publishFirstVersion()
        let nginx = try startNginx()
        defer { nginx.stop() }
        let posted = try get("/v1/com.example.app/manifest.json", port: nginx.port, post: true)
        #expect(posted.status == 405)
        #expect(posted.value(forHeader: "allow") == "GET, HEAD")
        #expect(posted.value(forHeader: "cache-control") == "no-store")
        // Also where no file is: the method is refused before the path is looked at.
        #expect(try get("/v1/com.example.app/root/9.json", port: nginx.port, post: true).status == 405)

        let size = try FileManager.default.attributesOfItem(atPath: scopeDirectory + "/manifest.json")[.size] as? Int
        let head = try openSSLClient(
            port: nginx.port, options: [],
            request:
                "HEAD /v1/com.example.app/manifest.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(head.answer.hasPrefix("HTTP/1.1 200 "), "\(head.answer)\(head.diagnostics)")
        #expect(head.answer.contains("\r\nContent-Length: \(size ?? -1)\r\n"))
        #expect(head.answer.contains("\r\nCache-Control: no-cache\r\n"))
        #expect(head.answer.hasSuffix("\r\n\r\n"), "HEAD: no body")

        for method in ["DELETE", "PUT", "OPTIONS"] {
            let answer = try openSSLClient(
                port: nginx.port, options: [],
                request: "\(method) /v1/com.example.app/manifest.json HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Content-Length: 0\r\nConnection: close\r\n\r\n"
            ).answer
            #expect(answer.hasPrefix("HTTP/1.1 405 "), "\(method): \(answer)")
            #expect(answer.contains("\r\nCache-Control: no-store\r\n"), "\(method)")
        }
    }

    // MARK: Refusals

    @Test func servesNothingButTheFilesOfTheTree() throws {
        try publishFirstVersion()
        // What a publish that died leaves behind, a stray file, and symbolic links (one to
        // a file of the tree, one out of it) where the next root and history files go.
        try Data("partial".utf8).write(to: URL(fileURLWithPath: scopeDirectory + "/.manifest.json.tmp-12-34"))
        try Data("partial".utf8).write(to: URL(fileURLWithPath: scopeDirectory + "/root/.2.json.tmp-56-78"))
        try Data("notes".utf8).write(to: URL(fileURLWithPath: scopeDirectory + "/notes.txt"))
        try FileManager.default.createSymbolicLink(
            atPath: scopeDirectory + "/root/2.json", withDestinationPath: "1.json")
        try FileManager.default.createSymbolicLink(
            atPath: scopeDirectory + "/history/2.json", withDestinationPath: "/etc/hostname")
        // An operator's hidden copy of a scope, whose name would pass as a scope.
        try FileManager.default.createDirectory(atPath: tree + "/v1/.backup", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: scopeDirectory + "/manifest.json", toPath: tree + "/v1/.backup/manifest.json")
        let nginx = try startNginx()
        defer { nginx.stop() }

        for path in [
            "/v1/com.example.app/.manifest.json.tmp-12-34", "/v1/com.example.app/%2Emanifest.json.tmp-12-34",
            "/v1/com.example.app/root/.2.json.tmp-56-78", "/v1/com.example.app/notes.txt",
            "/v1/com.example.app/root/2.json", "/v1/com.example.app/history/2.json", "/v1/.backup/manifest.json",
        ] {
            let response = try get(path, port: nginx.port)
            #expect(response.status == 404, "\(path)")
            #expect(response.value(forHeader: "cache-control") == "no-store", "\(path)")
            #expect(!String(decoding: response.body, as: UTF8.self).contains("partial"), "\(path)")
        }
        // The links were refused for being links (they match the served file names).
        #expect(nginx.errorLog.contains("root/2.json\" failed (40: Too many levels of symbolic links)"))
        #expect(nginx.errorLog.contains("history/2.json\" failed (40: Too many levels of symbolic links)"))

        for directory in ["/v1/", "/v1/com.example.app/", "/v1/com.example.app/root/", "/v1/com.example.app/root"] {
            let response = try get(directory, port: nginx.port)
            #expect(response.status == 404, "\(directory)")
            #expect(!String(decoding: response.body, as: UTF8.self).contains("1.json"), "\(directory): no listing")
        }
    }

    @Test func onlyTLS12And13WithForwardSecretAEADSuites() throws {
        try publishFirstVersion()
        let nginx = try startNginx()
        defer { nginx.stop() }
        let request = "GET /v1/com.example.app/root/1.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        for version in ["-tls1_2", "-tls1_3"] {
            let result = try openSSLClient(port: nginx.port, options: [version], request: request)
            #expect(result.status == 0, "\(version): \(result.diagnostics)")
            #expect(result.answer.hasPrefix("HTTP/1.1 200 "), "\(version)")
        }
        // The client offers TLS 1.1 (allowed on its side at security level 0); nginx refuses.
        let old = try openSSLClient(
            port: nginx.port, options: ["-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0"], request: request)
        #expect(old.status != 0)
        #expect(old.diagnostics.contains("alert protocol version"), "\(old.diagnostics)")
        // A CBC suite OpenSSL would accept by default is not in the configured list.
        let cbc = try openSSLClient(
            port: nginx.port, options: ["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA"], request: request)
        #expect(cbc.status != 0)
        #expect(cbc.diagnostics.contains("alert handshake failure"), "\(cbc.diagnostics)")
    }

    // MARK: The harness itself

    @Test func aPortTakenMeanwhileIsDetectedAndAnotherTried() throws {
        try publishFirstVersion()
        let first = try startNginx()
        defer { first.stop() }
        let second = try startNginx(firstPort: first.port)
        defer { second.stop() }
        #expect(second.conflicts == [first.port])
        #expect(second.port != first.port)
        #expect(try get("/v1/com.example.app/manifest.json", port: second.port).status == 200)
    }

    @Test func stopLeavesNoNginxProcessBehind() throws {
        try publishFirstVersion()
        let nginx = try startNginx()
        defer { nginx.stop() }
        let deadline = Date().addingTimeInterval(30)
        while NginxServer.processes(inGroup: nginx.processGroup).count < 2, Date() < deadline { usleep(20_000) }
        #expect(NginxServer.processes(inGroup: nginx.processGroup).count == 2, "a master and one worker")
        nginx.stop()
        #expect(NginxServer.processes(inGroup: nginx.processGroup).isEmpty)
    }

    @Test func publishingGuideShowsTheShippedConfigurationVerbatim() throws {
        let configuration = try String(contentsOfFile: NginxServer.shippedConfiguration, encoding: .utf8)
        let guide = try String(contentsOfFile: NginxServer.packageRoot + "/docs/PUBLISHING.md", encoding: .utf8)
        #expect(guide.contains("```nginx\n" + configuration + "```\n"))
    }

    @Test func aMissingNginxFailsWithTheFix() throws {
        let error = #expect(throws: TestSetupError.self) {
            _ = try NginxServer(
                tree: tree, chain: [pki.path(.ipLeaf)], key: pki.keyPath(.ipLeaf), binary: work + "/no-nginx")
        }
        #expect(error?.description.contains("scripts/install-deps") == true)
    }
}
