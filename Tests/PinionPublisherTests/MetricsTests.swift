// `pinion serve --metrics-listen`: /metrics scraped with curl and parsed strictly, the
// counters against the requests made, and /healthz judged at injected times.

import Foundation
import PinionCore
import PinionPublisher
import PinionSystem
import PinionTestSupport
import Testing

@testable import PinionPublisher

@Suite(.serialized) struct MetricsTests {
    private func server(
        _ tree: EnvelopeTree, at time: Timestamp = t0.adding(seconds: day),
        configure: (inout PublisherConfiguration) -> Void = { _ in }
    ) throws -> (HTTPSPublisher, String) {
        let (publisher, url) = try optionalServer(tree, at: time, configure: configure)
        return (publisher, try #require(url))
    }

    private func optionalServer(
        _ tree: EnvelopeTree, at time: Timestamp = t0.adding(seconds: day),
        configure: (inout PublisherConfiguration) -> Void = { _ in }
    ) throws -> (HTTPSPublisher, String?) {
        let credentials = try ServerCredentials.shared()
        var configuration = PublisherConfiguration(
            repository: tree.directory, certificateChainFile: credentials.certificate, privateKeyFile: credentials.key,
            host: "127.0.0.1", port: 0)
        configuration.workers = 2
        configuration.metricsListen = ("127.0.0.1", 0)
        configuration.clock = fixedClock(time)
        configure(&configuration)
        let publisher = try HTTPSPublisher(configuration: configuration, accessLog: .disabled)
        publisher.start()
        return (publisher, publisher.metricsURL)
    }

    private func scrape(_ url: String) throws -> [PrometheusSample] {
        let result = try curl([url + "/metrics"])
        #expect(result.status == 200)
        #expect(result.headers.lowercased().contains("content-type: text/plain; version=0.0.4"))
        return try PrometheusText.parse(result.body)
    }

    @Test func countsRequestsByPathClassAndStatusAsCurlSeesThem() throws {
        let tree = try EnvelopeTree()
        let (publisher, metricsURL) = try server(tree)
        defer { publisher.drain(timeout: 5) }
        let manifestURL = "\(publisher.url)/v1/\(tree.scope)/manifest.json"
        let first = try curl([manifestURL])
        #expect(first.status == 200)
        let etagLine = first.headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }
        let etag = try #require(etagLine.map { String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces) })
        #expect(try curl(["-H", "If-None-Match: \(etag)", manifestURL]).status == 304)
        #expect(try curl(["\(publisher.url)/v1/\(tree.scope)/root/1.json"]).status == 200)
        #expect(try curl(["\(publisher.url)/v1/\(tree.scope)/root/9.json"]).status == 404)
        #expect(try curl(["-X", "DELETE", manifestURL]).status == 405)
        #expect(try curl(["\(publisher.url)/nothing"]).status == 404)

        let samples = try scrape(metricsURL)
        let requests = "pinion_http_requests_total"
        #expect(samples.value(requests, ["path_class": "manifest", "code": "200"]) == 1)
        #expect(samples.value(requests, ["path_class": "manifest", "code": "304"]) == 1)
        #expect(samples.value(requests, ["path_class": "manifest", "code": "405"]) == 1)
        #expect(samples.value(requests, ["path_class": "root", "code": "200"]) == 1)
        #expect(samples.value(requests, ["path_class": "root", "code": "404"]) == 1)
        #expect(samples.value(requests, ["path_class": "other", "code": "404"]) == 1)
        let total = samples.filter { $0.name == requests }.reduce(0) { $0 + $1.value }
        #expect(total == 6, "one count per response, nothing else")
        let manifestBytes = try Data(
            contentsOf: URL(fileURLWithPath: "\(tree.directory)/v1/\(tree.scope)/manifest.json"))
        let rootBytes = try Data(contentsOf: URL(fileURLWithPath: "\(tree.directory)/v1/\(tree.scope)/root/1.json"))
        let bodies = samples.value("pinion_http_response_body_bytes_total") ?? -1
        // The two files, plus the JSON error bodies of the two 404s and the 405 (the 304 has
        // none); the body shape itself is specified by the server tests.
        let textBodies = 2 * PublisherErrorBody.text(404).utf8.count + PublisherErrorBody.text(405).utf8.count
        #expect(bodies == Double(manifestBytes.count + rootBytes.count + textBodies))
        #expect(samples.value("pinion_tls_handshakes_total") == 6)
        #expect(samples.value("pinion_tls_handshake_failures_total") == 0)
        #expect(samples.value("pinion_manifest_version", ["scope": tree.scope]) == Double(tree.manifest.version))
        #expect(
            samples.value("pinion_manifest_expires_at_seconds", ["scope": tree.scope])
                == Double(tree.manifest.expiresAt.secondsSince1970))
        #expect(samples.value("pinion_root_version", ["scope": tree.scope]) == 1)
        #expect(
            samples.value("pinion_root_expires_at_seconds", ["scope": tree.scope])
                == Double(tree.root.expiresAt.secondsSince1970))
        #expect(samples.value("pinion_healthy") == 1)
        #expect(samples.value("pinion_reloads_total", ["result": "success"]) == 0)
    }

    /// `pinion_manifest_polls_total{scope, have}` counts GETs of manifest.json answered 200 or
    /// 304 by the version in the poll token, within a fixed label set; requests for scopes not
    /// in the tree, HEAD and other files count nothing.
    @Test func manifestPollsAreCountedByTheHeldVersionAsCurlSendsThem() throws {
        let tree = try EnvelopeTree()
        let served = tree.manifest.version
        let (publisher, metricsURL) = try server(tree)
        defer { publisher.drain(timeout: 5) }
        let manifestURL = "\(publisher.url)/v1/\(tree.scope)/manifest.json"
        let base = "0123456789abcdef"
        let queries = [
            "?have=\(served)&base=\(base)", "?have=\(served)&base=\(base)", "?have=0&base=\(base)",
            "?have=\(served + 1)&base=\(base)", "", "?have=01&base=\(base)", "?have=1&base=0123456789ABCDEF",
            "?base=\(base)&have=1", "?have=1&base=\(base)&x=1", "?have=99999999999999999999&base=\(base)",
        ]
        for query in queries { #expect(try curl([manifestURL + query]).status == 200, "\(query)") }
        #expect(try curl(["-I", manifestURL + "?have=0&base=\(base)"]).status == 200)
        #expect(try curl(["\(publisher.url)/v1/other.scope/manifest.json?have=0&base=\(base)"]).status == 404)
        #expect(try curl(["\(publisher.url)/v1/\(tree.scope)/root/1.json?have=0&base=\(base)"]).status == 200)

        let polls = try scrape(metricsURL).filter { $0.name == "pinion_manifest_polls_total" }
        let counted = Dictionary(uniqueKeysWithValues: polls.map { ($0.labels["have"] ?? "?", $0.value) })
        #expect(
            counted == [
                String(served): 2, "0": 1, "other": 1, "none": 1, "invalid": 5,
            ])
        #expect(polls.allSatisfy { $0.labels == ["scope": tree.scope, "have": $0.labels["have"] ?? ""] })
    }

    @Test func pathClassesAreReadFromThePathBytes() {
        let cases: [(String, RequestPathClass)] = [
            ("/healthz", .healthz), ("/healthz/", .other), ("/v1", .other), ("/V1/a/manifest.json", .other),
            ("/v1/a/manifest.json", .manifest), ("/v1/a/manifest.json.tmp", .otherFile),
            ("/v1/a/index.json", .index), ("/v1/a/reports", .reports), ("/v1/a/root/2.json", .root),
            ("/v1/a/history/7.json", .history), ("/v1/a/log/checkpoint", .otherFile),
            ("/v1/\u{E9}/manifest.json", .manifest), ("/v1/a/root", .otherFile), ("", .other),
        ]
        for (path, expected) in cases {
            #expect(RequestPathClass(path: path) == expected, "\(path)")
        }
    }

    @Test func pollLabelsAreAFixedSetAroundTheServedVersion() {
        let base = "&base=0123456789abcdef"
        let cases: [(String?, Int64?, String)] = [
            (nil, 100, "none"),
            ("have=0" + base, 100, "0"),
            ("have=0" + base, nil, "0"),
            ("have=100" + base, 100, "100"),
            ("have=37" + base, 100, "37"),
            ("have=36" + base, 100, "other"),
            ("have=101" + base, 100, "other"),
            ("have=5" + base, nil, "other"),
            ("have=9223372036854775807" + base, 9_223_372_036_854_775_807, "9223372036854775807"),
            ("have=9223372036854775808" + base, 100, "invalid"),
            ("", 100, "none"),
            ("have=" + base, 100, "invalid"),
            ("have=-1" + base, 100, "invalid"),
            ("have=+1" + base, 100, "invalid"),
            ("have=007" + base, 100, "invalid"),
            ("have=7", 100, "invalid"),
            ("have=7&base=0123456789abcde", 100, "invalid"),
            ("have=7&base=0123456789abcdef0", 100, "invalid"),
            ("have=7&base=0123456789abcdeg", 100, "invalid"),
            ("have=7&base=0123456789ABCDEF", 100, "invalid"),
            ("HAVE=7" + base, 100, "invalid"),
            ("have=7" + base + "&", 100, "invalid"),
            ("have=%37" + base, 100, "invalid"),
        ]
        for (query, served, expected) in cases {
            #expect(
                PollLabel(query: query.map { Substring($0) }, served: served).text == expected, "\(query ?? "nil")")
        }
    }

    @Test func everyFamilyIsDeclaredAndTheParserRefusesWhatTheFormatForbids() throws {
        let tree = try EnvelopeTree()
        let (publisher, metricsURL) = try server(tree)
        defer { publisher.drain(timeout: 5) }
        let names = Set(try scrape(metricsURL).map(\.name))
        for expected in [
            "pinion_http_requests_total", "pinion_http_response_body_bytes_total", "pinion_open_connections",
            "pinion_connection_cap_refusals_total", "pinion_tls_handshakes_total",
            "pinion_tls_handshake_failures_total", "pinion_reloads_total", "pinion_manifest_version",
            "pinion_manifest_expires_at_seconds", "pinion_root_version", "pinion_root_expires_at_seconds",
            "pinion_healthy",
        ] {
            #expect(names.contains(expected), "\(expected)")
        }
        // The parser is strict: each of these breaks one rule of the format.
        let broken = [
            "x_total 1\n",  // no HELP or TYPE
            "# HELP x_total h\nx_total 1\n",  // no TYPE
            "# HELP x_total h\n# TYPE x_total counter\nx_total{a=\"b\"c\"} 1\n",  // unescaped quote
            "# HELP x_total h\n# TYPE x_total counter\nx_total{a=\"\\q\"} 1\n",  // unknown escape
            "# HELP x_total h\n# TYPE x_total counter\nx_total 1\nx_total 2\n",  // repeated series
            "# HELP x h\n# TYPE x gauge\nx 1",  // no final newline
        ]
        for text in broken { #expect(throws: PrometheusText.Failure.self) { try PrometheusText.parse(text) } }
    }

    @Test func labelValuesAreEscaped() throws {
        // A scope cannot hold these characters, so the writer is checked on its own.
        let tricky = "a\"b\\c\nd"
        var writer = ExpositionWriter()
        writer.family("x", .gauge, help: "h")
        writer.sample("x", [("l", tricky)], "1")
        #expect(writer.text.contains(#"l="a\"b\\c\nd""#))
        let samples = try PrometheusText.parse(writer.text)
        #expect(samples.first?.labels["l"] == tricky)
    }

    @Test func idleAndTricklingClientsDoNotStallScrapes() throws {
        let tree = try EnvelopeTree()
        let (publisher, metricsURL) = try server(tree)
        defer { publisher.drain(timeout: 5) }
        let port = try #require(URL(string: metricsURL)?.port.map { UInt16($0) })
        // Ten connections that send nothing (one sends a first byte and stops), more than the
        // listener's 8 slots, each of which a connection may hold for its 5-second request
        // deadline: a scrape takes the slot of the oldest, instead of being shut out.
        var idle: [Int32] = []
        defer { for descriptor in idle { close(descriptor) } }
        for _ in 0..<10 {
            idle.append(
                try SocketSupport.connectTCP(address: "127.0.0.1", port: port, attemptTimeout: 5, deadline: nil))
        }
        var byte: UInt8 = 0x47
        #expect(write(idle[0], &byte, 1) == 1)
        let scraped = try curl([metricsURL + "/metrics", "--max-time", "4"])
        #expect(scraped.status == 200, "a scrape waited behind idle connections")
        let health = try curl([metricsURL + "/healthz", "--max-time", "4"])
        #expect(health.status == 200)
    }

    @Test func healthzIsServiceUnavailableOnceTheManifestExpires() throws {
        let tree = try EnvelopeTree(manifestLifetime: 10 * day)
        let before = try server(tree, at: tree.manifest.expiresAt.adding(seconds: -1))
        let fine = try curl([before.1 + "/healthz"])
        #expect(fine.status == 200)
        #expect(fine.body == "ok\n")
        #expect(try curl([before.0.url + "/healthz"]).status == 200)
        before.0.drain(timeout: 5)

        let after = try server(tree, at: tree.manifest.expiresAt)
        defer { after.0.drain(timeout: 5) }
        for url in [after.1 + "/healthz", after.0.url + "/healthz"] {
            let expired = try curl([url])
            #expect(expired.status == 503)
            #expect(expired.body.contains("com.example.app: manifest version 3 expired at \(tree.manifest.expiresAt)"))
        }
        #expect(try scrape(after.1).value("pinion_healthy") == 0)
    }

    @Test func healthzIsServiceUnavailableOnceTheNewestRootExpires() throws {
        let tree = try EnvelopeTree(rootExpiresAt: t0.adding(seconds: 5 * day), manifestLifetime: 30 * day)
        let (publisher, metricsURL) = try server(tree, at: t0.adding(seconds: 6 * day))
        defer { publisher.drain(timeout: 5) }
        let result = try curl([metricsURL + "/healthz"])
        #expect(result.status == 503)
        #expect(result.body.contains("root version 1 expired at \(tree.root.expiresAt)"))
        #expect(!result.body.contains("manifest version"))
    }

    @Test func reloadsHandshakeFailuresAndCapRefusalsAreCounted() throws {
        let tree = try EnvelopeTree()
        let (publisher, metricsURL) = try server(tree) { $0.maxConnections = 1 }
        defer { publisher.drain(timeout: 5) }
        try publisher.reloadCredentials()
        var held: RawTLSClient? = try RawTLSClient(port: publisher.port)
        #expect(held?.request(get("/healthz"))?.status == 200)
        let refused = try RawTCPClient(port: publisher.port)
        #expect(refused.waitClosed(timeout: 10))
        held = nil
        for _ in 0..<400 where publisher.openConnections > 0 { Thread.sleep(forTimeInterval: 0.025) }
        #expect(publisher.openConnections == 0)
        // Plain HTTP on the TLS port: a failed handshake.
        let garbage = try RawTCPClient(port: publisher.port)
        garbage.send(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(garbage.waitClosed(timeout: 10))
        let samples = try scrape(metricsURL)
        #expect(samples.value("pinion_reloads_total", ["result": "success"]) == 1)
        #expect(samples.value("pinion_reloads_total", ["result": "failure"]) == 0)
        #expect((samples.value("pinion_connection_cap_refusals_total") ?? 0) >= 1)
        #expect((samples.value("pinion_tls_handshake_failures_total") ?? 0) >= 1)
    }

    @Test func refusesAMetricsAddressThatIsNotAnIPLiteral() throws {
        let tree = try EnvelopeTree()
        let credentials = try ServerCredentials.shared()
        var configuration = PublisherConfiguration(
            repository: tree.directory, certificateChainFile: credentials.certificate, privateKeyFile: credentials.key,
            host: "127.0.0.1", port: 0)
        configuration.metricsListen = ("localhost", 0)
        #expect(throws: PublisherError.self) { try HTTPSPublisher(configuration: configuration, accessLog: .disabled) }
    }

    @Test func metricsOffMeansNoListenerAndNoCounters() throws {
        let tree = try EnvelopeTree()
        let (publisher, _) = try optionalServer(tree) { $0.metricsListen = nil }
        defer { publisher.drain(timeout: 5) }
        #expect(publisher.metricsURL == nil)
        #expect(publisher.metrics == nil)
        #expect(try curl([publisher.url + "/healthz"]).status == 200)
    }
}
