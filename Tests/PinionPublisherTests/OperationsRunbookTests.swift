// docs/OPERATIONS.md run as written: every `pinion` command of its code blocks, in order,
// with the placeholders replaced by a test tree, keys, ports and files; `pinion serve` as
// a child process, and a report POSTed with curl where the app would send one.

import Foundation
import PinionCore
import PinionCrypto
import PinionPublisher
import PinionSystem
import PinionTestSupport
import Testing

@Suite(.serialized) struct OperationsRunbookTests {
    /// The `pinion` command lines of the file's indented code blocks, continuation lines
    /// joined, in document order.
    static func commands(in markdown: String) -> [String] {
        var commands: [String] = []
        var pending: String?
        for raw in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            let isCode = raw.hasPrefix("    ")
            if let started = pending {
                let joined = started + " " + line
                if line.hasSuffix("\\") {
                    pending = String(joined.dropLast()).trimmingCharacters(in: .whitespaces)
                } else {
                    commands.append(joined.trimmingCharacters(in: .whitespaces))
                    pending = nil
                }
                continue
            }
            guard isCode, line.hasPrefix("pinion ") else { continue }
            if line.hasSuffix("\\") {
                pending = String(line.dropLast()).trimmingCharacters(in: .whitespaces)
            } else {
                commands.append(line)
            }
        }
        return commands
    }

    @Test func everyCommandOfTheRunbookRuns() throws {
        let markdown = try String(
            contentsOfFile: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("docs/OPERATIONS.md").path,
            encoding: .utf8)
        let commands = Self.commands(in: markdown)
        #expect(commands.count >= 12, "\(commands)")

        // The team's starting point: a root, the pins key, and manifest 1 published.
        let workspace = try Workspace(prefix: "pinion-runbook")
        workspace.standardRoot()
        try FileManager.default.createDirectory(atPath: workspace.path("tree"), withIntermediateDirectories: true)
        workspace.ok(["publish", "--repo", "@tree", "@root.json"])
        workspace.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@m1.json"])
        workspace.ok([
            "manifest", "set-domain", "@m1.json", "www.example.com", "--pin", "sha256/" + Base64.encode(pin(7).digest),
            "--pin", "sha256/" + Base64.encode(pin(8).digest),
        ])
        workspace.ok(["sign", "--key", "@pins.key", "@m1.json", "-o", "@m1.signed.json"])
        workspace.ok(["publish", "--repo", "@tree", "@m1.signed.json"])

        let credentials = try ServerCredentials.shared()
        let servedPin = try opensslPin(ofCertificateFile: credentials.certificate)
        let substitutions: [(String, String)] = [
            ("/var/lib/pinion/reports.sqlite", workspace.path("reports.sqlite")),
            ("/srv/pinion", workspace.path("tree")), ("next.signed.json", workspace.path("next.signed.json")),
            ("next.json", workspace.path("next.json")), ("pins.key", workspace.path("pins.key")),
            ("chain.pem", credentials.certificate), ("key.pem", credentials.key), ("SCOPE", "com.example.app"),
            ("sha256/BASE64", "sha256/" + servedPin), ("sha256/BACKUP", "sha256/" + Base64.encode(pin(9).digest)),
            ("--listen 0.0.0.0:443", "--listen 127.0.0.1:0"),
            ("--metrics-listen 127.0.0.1:9464", "--metrics-listen 127.0.0.1:0"),
            // `pinion status`: the root the app embeds, and the node exporter's textfile directory.
            ("app-root.json", workspace.path("root.json")),
            ("/var/lib/prometheus/node-exporter", workspace.directory.path),
        ]
        var server: AnnouncedServer?
        var published = 1
        var collecting = false
        var reported = false
        func postReport() throws -> Int {
            let body = reportBody(chain: [try reportCertificates().first])
            return try curl([
                "-X", "POST", "-H", "Content-Type: application/json", "--data-binary", body,
                (server?.url ?? "") + "/v1/com.example.app/reports",
            ]).status
        }
        for command in commands {
            var text = command
            for (placeholder, value) in substitutions { text = text.replacingOccurrences(of: placeholder, with: value) }
            let arguments = Array(text.split(separator: " ").map(String.init).dropFirst())
            if arguments.first == "serve" {
                if let running = server { #expect(running.stop() == 0) }
                let listen = arguments.contains("--listen") ? [] : ["--listen", "127.0.0.1:0"]
                server = try AnnouncedServer(
                    arguments + listen + ["--access-log", "off"], expectMetrics: arguments.contains("--metrics-listen"))
                if let metricsURL = server?.metricsURL {
                    let scraped = try PrometheusText.parse(try curl([metricsURL + "/metrics"]).body)
                    #expect(scraped.value("pinion_manifest_version", ["scope": "com.example.app"]) == Double(published))
                }
                collecting = text.contains("--reports")
                if collecting {
                    // Nothing pins api.example.com yet: the collector refuses reports about it.
                    #expect(try postReport() == 422)
                }
                continue
            }
            let result = runPinion(arguments)
            #expect(result.status == 0, "\(command)\n-> \(result.err)")
            if arguments.first == "publish" {
                published += 1
                if collecting, !reported {
                    // Where the app's SDK would POST its report about the report-only entry
                    // the first publish under collection adds.
                    #expect(try postReport() == 204)
                    reported = true
                }
                if let metricsURL = server?.metricsURL {
                    // The metrics see the publish (the tree's status is re-read at most once a second).
                    var version: Double?
                    for _ in 0..<300 where version != Double(published) {
                        version = try PrometheusText.parse(try curl([metricsURL + "/metrics"]).body).value(
                            "pinion_manifest_version", ["scope": "com.example.app"])
                        if version != Double(published) { Thread.sleep(forTimeInterval: 0.02) }
                    }
                    #expect(version == Double(published))
                }
            }
            if arguments.first == "reports" {
                #expect(result.out.contains("api.example.com  pin-sha256=\"\(servedPin)\""), "\(result.out)")
            }
        }
        #expect(server?.stop() == 0)
        #expect(published == 4, "manifests 2 (re-sign), 3 (report-only) and 4 (enforced)")
        #expect(reported)
        // The runbook's `pinion status --prometheus` wrote the textfile collector's file.
        let status = try PrometheusText.parse(try workspace.read("pinion_status.prom"))
        #expect(status.value("pinion_status_healthy", ["scope": "com.example.app"]) == 1)
        let latest = try Envelope.parse(try workspace.readBytes("tree/v1/com.example.app/manifest.json"))
        let manifest = try ManifestPayload.parse(latest.payload)
        #expect(manifest.domain(named: "api.example.com")?.enforce == true)
    }
}
