// `pinion serve --reports`: POST /v1/{scope}/reports answered 204 only after the commit,
// garbage, oversize bodies, floods and a full queue refused with their status while the
// database stays intact (checked with the sqlite3 tool), and the forwarded address rules.

import Foundation
import PinionCore
import PinionSystem
import PinionTestSupport
import Testing

@testable import PinionPublisher

@Suite(.serialized) struct ReportCollectionTests {
    final class Collector: @unchecked Sendable {
        let tree: EnvelopeTree
        let database: String
        let publisher: HTTPSPublisher
        var reportsURL: String { "\(publisher.url)/v1/\(tree.scope)/reports" }

        init(tree: EnvelopeTree? = nil, configure: (inout ReportSettings) throws -> Void = { _ in }) throws {
            self.tree = try tree ?? EnvelopeTree(domains: reportDomains)
            database = try makeTemporaryDirectory(prefix: "pinion-reports") + "/reports.sqlite"
            let credentials = try ServerCredentials.shared()
            var configuration = PublisherConfiguration(
                repository: self.tree.directory, certificateChainFile: credentials.certificate,
                privateKeyFile: credentials.key, host: "127.0.0.1", port: 0)
            configuration.workers = 2
            configuration.metricsListen = ("127.0.0.1", 0)
            configuration.clock = fixedClock(t0.adding(seconds: day))
            var settings = ReportSettings(databasePath: database)
            try configure(&settings)
            configuration.reports = settings
            publisher = try HTTPSPublisher(configuration: configuration, accessLog: .disabled)
            publisher.start()
        }

        func post(_ body: String, headers: [String] = ["Content-Type: application/json"]) throws -> CurlResult {
            let bodyFile = database + ".body-\(UUID().uuidString)"
            try Data(body.utf8).write(to: URL(fileURLWithPath: bodyFile))
            defer { try? FileManager.default.removeItem(atPath: bodyFile) }
            return try curl(
                ["-X", "POST", "-H", "Expect:", "--data-binary", "@" + bodyFile] + headers.flatMap { ["-H", $0] }
                    + [reportsURL])
        }

        func rows() throws -> [String] {
            try sqlite3(database, "SELECT hostname, count, served_pin, last_source FROM reports ORDER BY hostname")
        }

        func integrity() throws -> [String] { try sqlite3(database, "PRAGMA integrity_check") }

        deinit { publisher.drain(timeout: 5) }
    }

    @Test func acknowledgesOnlyCommittedReportsAndCountsRepeats() throws {
        let collector = try Collector()
        let chain = try reportCertificates()
        let body = reportBody(chain: [chain.first])
        let first = try collector.post(body)
        #expect(first.status == 204)
        #expect(first.body.isEmpty)
        // Acknowledged means committed: another connection (the sqlite3 tool) sees it at once.
        let expectedPin = try opensslPin(ofCertificateFile: try ServerCredentials.shared().certificate)
        #expect(try collector.rows() == ["api.example.com|1|\(expectedPin)|127.0.0.0/24"])
        #expect(try collector.post(body).status == 204)
        #expect(try collector.rows() == ["api.example.com|2|\(expectedPin)|127.0.0.0/24"])
        #expect(try collector.post(reportBody(hostname: "API.Example.com.", chain: [chain.first])).status == 204)
        #expect(try collector.rows().count == 1, "the host is compared lowercased without its trailing dot")
        #expect(try sqlite3(collector.database, "PRAGMA journal_mode") == ["wal"])
        let metrics = try #require(collector.publisher.metrics)
        #expect(metrics.reportsStored.value == 1)
        #expect(metrics.reportsRepeated.value == 2)
    }

    @Test func refusesGarbageWithItsReasonAndTheDatabaseStaysIntact() throws {
        let collector = try Collector { $0.rateBurst = 1_000 }
        let chain = try reportCertificates()
        #expect(try collector.post(reportBody(hostname: "kept.api.example.com", chain: [chain.first])).status == 204)
        let good = reportBody(chain: [chain.first])
        let cases: [(String, String)] = [
            ("not json", "not strict JSON"),
            ("[1, 2]", "not a JSON object"),
            ("{}", "missing member"),
            (good.replacingOccurrences(of: "\"port\": 443", with: "\"port\": 0"), "\"port\""),
            (good.replacingOccurrences(of: "\"port\": 443", with: "\"port\": 70000"), "\"port\""),
            (good.replacingOccurrences(of: "\"port\": 443", with: "\"port\": \"443\""), "\"port\""),
            (good.replacingOccurrences(of: "\"port\": 443", with: "\"port\": 443, \"port\": 443"), "duplicate"),
            (good.replacingOccurrences(of: "2026-11-30T09:00:00Z", with: "yesterday"), "date-time"),
            (
                good.replacingOccurrences(of: "\"include-subdomains\": false", with: "\"include-subdomains\": 0"),
                "include-subdomains"
            ),
            (good.replacingOccurrences(of: "AAAAAAAA", with: "AAAA"), "known-pins[0]"),
            (good.replacingOccurrences(of: "pin-sha256=", with: "pin-sha1="), "known-pins[0]"),
            (
                reportBody(chain: ["-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"]),
                "served-certificate-chain[0]"
            ),
            (reportBody(chain: []), "served-certificate-chain\" is empty"),
            (reportBody(hostname: "bad host", chain: [chain.first]), "\"hostname\""),
            (reportBody(chain: [chain.first], extra: "\"x-extra\": 1"), "unknown member"),
            (reportBody(chain: [chain.first], appVersion: "1.0\u{7}"), "app-version"),
            (
                good.replacingOccurrences(
                    of: "\"noted-hostname\": \"api.example.com\"", with: "\"noted-hostname\": \"API.example.com\""),
                "noted-hostname"
            ),
        ]
        for (body, reason) in cases {
            let result = try collector.post(body)
            #expect(result.status == 400, "\(body.prefix(80))")
            // The body is JSON, {"error": reason}, like every other error pinion serve sends.
            let object = try? JSONSerialization.jsonObject(with: Data(result.body.utf8)) as? [String: String]
            let error = object?["error"] ?? ""
            #expect(
                object?.count == 1 && error.contains(reason), "\(result.body) should be {\"error\": ...\(reason)...}")
        }
        let wrongType = try collector.post(good, headers: ["Content-Type: text/plain"])
        #expect(wrongType.status == 400)
        #expect(wrongType.body.contains("Content-Type"))
        let chunked = try collector.post(
            good, headers: ["Content-Type: application/json", "Transfer-Encoding: chunked"])
        #expect(chunked.status == 400)
        let oversize = try collector.post(String(repeating: " ", count: 64 * 1024 + 1))
        #expect(oversize.status == 413)
        let unknownScope = try curl(
            [
                "-X", "POST", "-H", "Content-Type: application/json", "--data-binary", good,
                "\(collector.publisher.url)/v1/no.such.scope/reports",
            ])
        #expect(unknownScope.status == 404)
        #expect(try collector.integrity() == ["ok"])
        #expect(
            try collector.rows().map { $0.split(separator: "|").first.map(String.init) } == ["kept.api.example.com"])
        let metrics = try #require(collector.publisher.metrics)
        // The chunked body is refused by the HTTP parser, before it is known to be a report.
        #expect(metrics.refusals(.malformed) == UInt64(cases.count + 1))
        #expect(metrics.refusals(.tooLarge) == 1)
        #expect(metrics.refusals(.unknownScope) == 1)
        // Serving goes on.
        #expect(try curl(["\(collector.publisher.url)/v1/\(collector.tree.scope)/manifest.json"]).status == 200)
    }

    @Test func aFloodFromOneAddressGets429WithRetryAfter() throws {
        let collector = try Collector {
            $0.rateBurst = 5
            $0.ratePerMinute = 1
        }
        let chain = try reportCertificates()
        var statuses: [Int] = []
        var retryAfter: [String] = []
        for index in 0..<12 {
            let result = try collector.post(reportBody(hostname: "h\(index).api.example.com", chain: [chain.first]))
            statuses.append(result.status)
            if result.status == 429 {
                let object = try? JSONSerialization.jsonObject(with: Data(result.body.utf8)) as? [String: String]
                #expect(object?["error"] == "too many reports from this network (127.0.0.0/24)", "\(result.body)")
                retryAfter += result.headers.split(separator: "\r\n").filter {
                    $0.lowercased().hasPrefix("retry-after:")
                }
                .map(String.init)
            }
        }
        #expect(statuses.prefix(5).allSatisfy { $0 == 204 })
        #expect(statuses.dropFirst(5).allSatisfy { $0 == 429 })
        #expect(retryAfter.count == 7)
        #expect(try collector.rows().count == 5)
        #expect(try collector.integrity() == ["ok"])
        #expect(collector.publisher.metrics?.refusals(.rateLimited) == 7)
    }

    @Test func aTrustedProxysForwardedAddressIsTheClient() throws {
        let collector = try Collector {
            $0.rateBurst = 1
            $0.trustedProxies = [try IPRange("127.0.0.0/8")]
        }
        let chain = try reportCertificates()
        let body = reportBody(chain: [chain.first])
        #expect(
            try collector.post(body, headers: ["Content-Type: application/json", "X-Forwarded-For: 10.0.0.1"]).status
                == 204)
        #expect(
            try collector.post(body, headers: ["Content-Type: application/json", "X-Forwarded-For: 10.0.0.1"]).status
                == 429)
        // The client may prepend anything; only the entry the proxy appended counts.
        let spoofed = try collector.post(
            body, headers: ["Content-Type: application/json", "X-Forwarded-For: 10.0.0.1, 10.0.9.2"])
        #expect(spoofed.status == 204)
        #expect(try collector.rows().first?.hasSuffix("|10.0.9.0/24") == true, "only the network is stored")
        let garbage = try collector.post(body, headers: ["Content-Type: application/json", "X-Forwarded-For: nobody"])
        #expect(garbage.status == 400)
        let missing = try collector.post(body)
        #expect(missing.status == 400)
    }

    @Test func forwardedAddressesAreIgnoredWithoutATrustedProxy() throws {
        let collector = try Collector { $0.rateBurst = 1 }
        let chain = try reportCertificates()
        let body = reportBody(chain: [chain.first])
        #expect(
            try collector.post(body, headers: ["Content-Type: application/json", "X-Forwarded-For: 10.0.0.1"]).status
                == 204)
        #expect(
            try collector.post(body, headers: ["Content-Type: application/json", "X-Forwarded-For: 10.0.0.2"]).status
                == 429)
        #expect(try collector.rows().first?.hasSuffix("|127.0.0.0/24") == true)
    }

    @Test func aFullQueueAnswers503WhileManifestsAreStillServed() throws {
        let collector = try Collector {
            $0.queueCapacity = 1
            $0.rateBurst = 100
        }
        let chain = try reportCertificates()
        // Another connection holds the write lock: the writer blocks in its busy wait.
        let blocker = try SQLiteDatabase(path: collector.database, mode: .readWrite)
        try blocker.execute("BEGIN IMMEDIATE")
        let metrics = try #require(collector.publisher.metrics)
        func request(_ host: String) -> String {
            let body = reportBody(hostname: host, chain: [chain.first])
            return "POST /v1/\(collector.tree.scope)/reports HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        }
        let first = try RawTLSClient(port: collector.publisher.port)
        #expect(first.send(request("a.api.example.com")))
        // Wait until the writer has taken it (accepted, no longer queued) and is blocked.
        func queued() -> Int { metrics.reportsQueued.load(ordering: .relaxed) }
        for _ in 0..<2_000 where metrics.reportsAccepted.value < 1 || queued() != 0 {
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(metrics.reportsAccepted.value == 1)
        let second = try RawTLSClient(port: collector.publisher.port)
        #expect(second.send(request("b.api.example.com")))
        for _ in 0..<2_000 where metrics.reportsAccepted.value < 2 { Thread.sleep(forTimeInterval: 0.01) }
        #expect(queued() == 1)
        let third = try RawTLSClient(port: collector.publisher.port)
        let refused = third.request(request("c.api.example.com"))
        #expect(refused?.status == 503)
        #expect(refused.map { String(decoding: $0.body, as: UTF8.self) }?.contains("queue is full") == true)
        #expect(refused?.header("retry-after") == "5")
        // Serving manifests is not held up by the blocked writer.
        let manifest = try RawTLSClient(port: collector.publisher.port)
        #expect(manifest.request(get("/v1/\(collector.tree.scope)/manifest.json"))?.status == 200)
        try blocker.execute("COMMIT")
        // Each parked report is answered by its outcome: 204 only when it is in the database.
        let answers = [first, second].map { client in
            splitResponses(client.receive(timeout: 20) { !splitResponses($0).isEmpty }.bytes).first?.status
        }
        let stored = try sqlite3(collector.database, "SELECT hostname FROM reports ORDER BY hostname")
        for (host, status) in zip(["a.api.example.com", "b.api.example.com"], answers) {
            #expect(status == 204 || status == 503)
            #expect(stored.contains(host) == (status == 204), "\(host): \(String(describing: status))")
        }
        #expect(!stored.contains("c.api.example.com"))
        #expect(metrics.refusals(.queueFull) == 1)
        #expect(try collector.integrity() == ["ok"])
    }

    @Test func refusesADatabaseInsideTheServedTree() throws {
        let tree = try EnvelopeTree()
        let credentials = try ServerCredentials.shared()
        let outside = try makeTemporaryDirectory(prefix: "pinion-reports-link")
        try FileManager.default.createSymbolicLink(atPath: outside + "/tree-link", withDestinationPath: tree.directory)
        for path in [
            tree.directory + "/reports.sqlite", tree.directory + "/v1/reports.sqlite", outside + "/tree-link/r.sqlite",
        ] {
            var configuration = PublisherConfiguration(
                repository: tree.directory, certificateChainFile: credentials.certificate,
                privateKeyFile: credentials.key, host: "127.0.0.1", port: 0)
            configuration.reports = ReportSettings(databasePath: path)
            #expect(throws: PublisherError.reportStore(.insideServedTree(database: path, tree: tree.directory))) {
                try HTTPSPublisher(configuration: configuration, accessLog: .disabled)
            }
            #expect(!FileManager.default.fileExists(atPath: path))
        }
        let result = runPinion([
            "serve", "--repo", tree.directory, "--cert", credentials.certificate, "--key", credentials.key,
            "--listen", "127.0.0.1:0", "--reports", tree.directory + "/r.sqlite",
        ])
        #expect(result.status == 2)
        #expect(result.err.contains("must not be inside the served tree"))
    }

    @Test func reportOptionsNeedReportsAndAValidProxy() throws {
        let tree = try EnvelopeTree()
        let credentials = try ServerCredentials.shared()
        let base = ["serve", "--repo", tree.directory, "--cert", credentials.certificate, "--key", credentials.key]
        let stray = runPinion(base + ["--trusted-proxy", "127.0.0.1"])
        #expect(stray.status == 2)
        #expect(stray.err.contains("--trusted-proxy needs --reports"))
        let proxy = runPinion(base + ["--reports", "/tmp/x-\(UUID()).sqlite", "--trusted-proxy", "proxy.example.com"])
        #expect(proxy.status == 2)
        #expect(proxy.err.contains("not an IPv4 or IPv6 address"))
        let retention = runPinion(base + ["--reports", "/tmp/x-\(UUID()).sqlite", "--reports-retention", "forever"])
        #expect(retention.status == 2)
    }

    /// Hostile values of --trusted-proxy, --baseline and --reports-max-bytes: a clear
    /// message, a non-zero exit, and no database created.
    @Test func badRangesAndBaselinesAreRefusedAtStartUp() throws {
        let tree = try EnvelopeTree()
        let credentials = try ServerCredentials.shared()
        let directory = try makeTemporaryDirectory(prefix: "pinion-report-flags")
        let database = directory + "/r.sqlite"
        let base = [
            "serve", "--repo", tree.directory, "--cert", credentials.certificate, "--key", credentials.key,
            "--listen", "127.0.0.1:0", "--reports", database,
        ]
        for (value, message) in [
            ("10.0.0.1/8", "address bits are set beyond the /8 prefix (did you mean 10.0.0.0/8?)"),
            ("10.0.0.0/33", "the prefix length must be a number from 0 to 32"),
            ("2001:db8::/200", "the prefix length must be a number from 0 to 128"),
            ("10.0.0.0/8,,192.0.2.1", "an empty entry"), ("10.0.0.0/8,", "an empty entry"),
            ("cdn.example.com/24", "not an IPv4 or IPv6 address"), ("10.0.0.0/8\u{1b}[2J", "the prefix length"),
        ] {
            let result = runPinion(base + ["--trusted-proxy", "192.0.2.1", "--trusted-proxy", value])
            #expect(result.status == 2, "\(value): \(result.err)")
            #expect(result.err.contains("--trusted-proxy: ") && result.err.contains(message), "\(result.err)")
            #expect(!result.err.unicodeScalars.contains { $0.value == 0x1b })
        }
        let baselines: [(String, String)] = [
            ("not json", "--baseline"),
            ("{\"type\": \"pinion.manifest\", \"specVersion\": 1, \"domains\": []}", "type"),
            (
                "{\"type\": \"pinion.baseline\", \"specVersion\": 1, \"domains\": [{\"name\": \"EVIL\", \"pins\": []}]}",
                "domains[0]"
            ),
        ]
        for (index, (text, message)) in baselines.enumerated() {
            let path = directory + "/baseline-\(index).json"
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            let result = runPinion(base + ["--baseline", path])
            #expect(result.status == 1, "\(text): \(result.err)")
            #expect(result.err.contains(path) && result.err.contains(message), "\(result.err)")
        }
        let missing = runPinion(base + ["--baseline", directory + "/missing.json"])
        #expect(missing.status == 3, "\(missing.err)")
        let small = runPinion(base + ["--reports-max-bytes", "65536"])
        #expect(small.status == 2, "\(small.err)")
        let stray = runPinion(
            [
                "serve", "--repo", tree.directory, "--cert", credentials.certificate, "--key", credentials.key,
                "--baseline", directory + "/baseline-0.json",
            ])
        #expect(stray.status == 2)
        #expect(stray.err.contains("--baseline needs --reports"), "\(stray.err)")
        #expect(!FileManager.default.fileExists(atPath: database), "nothing was created")
    }
}
