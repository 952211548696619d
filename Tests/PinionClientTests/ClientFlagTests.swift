// `pinion client refresh|connect` flags from the shell: --at rehearsals that never persist,
// --connect-to for the publisher, a --state that must exist for connect, the CA file's
// errors, durations in --stale-grace and --timeout.

import Foundation
import PinionCLI
import PinionCore
import PinionLinux
import PinionTestSupport
import Testing

@Suite struct ClientFlagTests {
    /// A publisher serving a manifest for api.example.test on 127.0.0.1, and the common
    /// client arguments (state directory not yet created).
    struct Fixture {
        let directory: String
        let publisher: TestTLSServer
        let common: [String]
        let now: Timestamp
        var state: String { directory + "/state" }
        var url: String { "https://127.0.0.1:\(publisher.port)/" }

        init() throws {
            let pki = try HTTPSTestPKI.shared()
            let setup = try Setup()
            directory = try makeTemporaryDirectory(prefix: "pinion-client-flags")
            let rootPath = directory + "/root.json"
            try Data(setup.rootEnvelope.serialized()).write(to: URL(fileURLWithPath: rootPath))
            // The test certificates are valid around the wall clock; every command gets it explicitly.
            now = Timestamp(Date())
            let leafPin = try Pin(digest: try pki.spkiSHA256(.leaf))
            let payload = manifestPayload(
                issuedAt: now, domains: [.init(name: "api.example.test", pins: [leafPin, pin(0xEE)])])
            let manifestText = String(
                decoding: try sign(.pins, payload.serialized(), with: [setup.pinsKey]).serialized(), as: UTF8.self)
            publisher = try TestTLSServer(
                chain: [pki.path(.ipLeaf), pki.path(.intermediate)], key: pki.keyPath(.ipLeaf),
                routes: ["/v1/com.example.app/manifest.json": .init(headers: [("ETag", "\"a\"")], body: manifestText)])
            common = [
                "--root", rootPath, "--scope", "com.example.app", "--state", directory + "/state", "--cafile",
                pki.path(.root),
            ]
        }

        func files() throws -> [String: Data] {
            var result: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: state) {
                result[name] = try Data(contentsOf: URL(fileURLWithPath: state + "/" + name))
            }
            return result
        }
    }

    @Test func refreshAtAnotherTimeNeverPersistsAndSaysSo() throws {
        let fixture = try Fixture()
        defer { fixture.publisher.stop() }
        // A rehearsal before any state exists does not create the directory.
        let first = runPinion(
            ["client", "refresh", "--url", fixture.url, "--at", "2026-12-01T00:00:00Z"] + fixture.common,
            now: fixture.now)
        #expect(first.out.contains("rehearsal   rehearsal at 2026-12-01T00:00:00Z"))
        #expect(first.out.contains("never written"))
        #expect(!FileManager.default.fileExists(atPath: fixture.state))

        let real = runPinion(["client", "refresh", "--url", fixture.url] + fixture.common, now: fixture.now)
        #expect(real.status == 0, "\(real.err)")
        #expect(!real.out.contains("rehearsal"))
        let before = try fixture.files()
        #expect(!before.isEmpty)

        // Sixty days later: the manifest (30 days) has expired in the rehearsal...
        let future = fixture.now.adding(seconds: 60 * day)
        let rehearsal = runPinion(
            ["client", "refresh", "--json", "--url", fixture.url, "--at", future.description] + fixture.common,
            now: fixture.now)
        #expect(rehearsal.out.contains("\"rehearsal\": \"rehearsal at \(future.description)"))
        #expect(rehearsal.out.contains("\"manifestCurrent\": false"))
        // ...and nothing was written: the state is byte for byte the same, and a refresh
        // now still holds a current manifest (lastKnownTime did not move forward).
        #expect(try fixture.files() == before)
        let after = runPinion(["client", "refresh", "--json", "--url", fixture.url] + fixture.common, now: fixture.now)
        #expect(after.status == 0, "\(after.err)")
        #expect(after.out.contains("\"manifestCurrent\": true"))
    }

    @Test func refreshConnectsElsewhereWithConnectTo() throws {
        let fixture = try Fixture()
        defer { fixture.publisher.stop() }
        // Port 1 in the URL is never dialled: --connect-to sends the connection to the publisher.
        let refreshed = runPinion(
            [
                "client", "refresh", "--url", "https://127.0.0.1:1/", "--connect-to",
                "127.0.0.1:\(fixture.publisher.port)",
            ]
                + fixture.common, now: fixture.now)
        #expect(refreshed.status == 0, "\(refreshed.err)")
        #expect(refreshed.out.contains("updated to (rootVersion 1, version 1)"))
        for bad in ["", "[]", "127.0.0.1:0", "127.0.0.1:99999", "host:port"] {
            let refused = runPinion(
                ["client", "refresh", "--url", fixture.url, "--connect-to", bad] + fixture.common, now: fixture.now)
            #expect(refused.status == 2, "--connect-to \(bad)")
        }
    }

    @Test func connectRefusesAStateDirectoryThatDoesNotExist() throws {
        let fixture = try Fixture()
        defer { fixture.publisher.stop() }
        let refused = runPinion(
            ["client", "connect", "--connect-to", "127.0.0.1", "api.example.test:\(fixture.publisher.port)"]
                + fixture.common, now: fixture.now)
        #expect(refused.status == 2)
        #expect(refused.err.contains("no such directory"))
        #expect(refused.err.contains("only refresh creates"))
        #expect(!FileManager.default.fileExists(atPath: fixture.state))
        #expect(!refused.out.contains("not pinned"))
    }

    @Test func missingCAFileIsAnIOErrorAboutTheCAFile() throws {
        let fixture = try Fixture()
        defer { fixture.publisher.stop() }
        let missing = fixture.directory + "/missing-ca.pem"
        var arguments = fixture.common
        arguments[arguments.count - 1] = missing
        let refused = runPinion(["client", "refresh", "--url", fixture.url] + arguments, now: fixture.now)
        #expect(refused.status == 3)
        #expect(refused.err.contains("CA file"))
        #expect(refused.err.contains(missing))
        #expect(!refused.err.contains("root/"))
        #expect(!FileManager.default.fileExists(atPath: fixture.state))
    }

    @Test(arguments: ["1h", "3600", "90m"])
    func staleGraceTakesDurationsAndSeconds(grace: String) throws {
        let fixture = try Fixture()
        defer { fixture.publisher.stop() }
        let refreshed = runPinion(
            ["client", "refresh", "--url", fixture.url, "--stale-grace", grace, "--timeout", "30s"] + fixture.common,
            now: fixture.now)
        #expect(refreshed.status == 0, "\(refreshed.err)")
    }

    @Test(arguments: ["0", "-1", "1x", "601", "11m", "nan", "inf"])
    func badTimeoutsAreUsageErrors(timeout: String) throws {
        let fixture = try Fixture()
        defer { fixture.publisher.stop() }
        let refused = runPinion(
            ["client", "refresh", "--url", fixture.url, "--timeout", timeout] + fixture.common, now: fixture.now)
        #expect(refused.status == 2, "--timeout \(timeout)")
    }
}

@Suite struct ClientOutputEscapingTests {
    @Test func hostileHeaderValuesReachTheTerminalEscaped() throws {
        let pki = try HTTPSTestPKI.shared()
        let setup = try Setup()
        let directory = try makeTemporaryDirectory(prefix: "pinion-client-escape")
        let rootPath = directory + "/root.json"
        try Data(setup.rootEnvelope.serialized()).write(to: URL(fileURLWithPath: rootPath))
        let now = Timestamp(Date())
        // C1 CSI 2J (clear the screen) and C1 OSC (set the title), which the HTTP parser
        // lets through (they are not C0 controls), then a fake outcome.
        let hostile = "x\u{9B}2J\u{9D}0;t outcome     updated"
        let publisher = try TestTLSServer(
            chain: [pki.path(.ipLeaf), pki.path(.intermediate)], key: pki.keyPath(.ipLeaf),
            routes: [
                "/v1/com.example.app/manifest.json": .init(headers: [("Content-Encoding", hostile)], body: "{}")
            ])
        defer { publisher.stop() }
        let common = [
            "client", "refresh", "--url", "https://127.0.0.1:\(publisher.port)/", "--root", rootPath, "--scope",
            "com.example.app", "--state", directory + "/state", "--cafile", pki.path(.root),
        ]
        for arguments in [common, common + ["--json"]] {
            let result = runPinion(arguments, now: now)
            #expect(result.status != 0)
            for text in [result.out, result.err] {
                #expect(
                    !text.unicodeScalars.contains { (0x7F...0x9F).contains($0.value) || $0 == "\r" || $0 == "\u{07}" })
            }
            #expect(result.out.contains("9B") || result.out.contains("9b"), "\(result.out)")
        }
    }
}

@Suite struct TerminalEscapingTests {
    @Test func linesAreEscapedOneByOneAndBreaksKept() {
        #expect(TerminalText.escapeLines("a\nb\n") == "a\nb\n")
        #expect(TerminalText.escapeLines("ok\u{9B}2J\nnext\r") == "ok\\u{9B}2J\nnext\\u{D}")
        #expect(TerminalText.escapeLines("\u{1B}]0;x\u{07}") == "\\u{1B}]0;x\\u{7}")
        #expect(TerminalText.escapeLines("caf\u{E9} \u{202E}") == "caf\u{E9} \\u{202E}")
    }

    @Test func jsonForTheTerminalEscapesC1DELAndFormatCharacters() throws {
        let value = JSONValue.object(
            JSONObject([.init("a", .string("x\u{9B}2J\u{9D}\u{7F}\u{85}\u{202E}\u{E0001}\u{E9}\t"))]))
        let text = JSONWriter.terminalSafeText(value)
        #expect(text == "{\n  \"a\": \"x\\u009b2J\\u009d\\u007f\\u0085\\u202e\\udb40\\udc01\u{E9}\\t\"\n}\n")
        // The same JSON value.
        let parsed = try StrictJSONParser.parse(Array(text.utf8), limits: Limits.standard.json)
        #expect(parsed == value)
        #expect(JSONWriter.terminalSafeText(.string("plain")) == "\"plain\"\n")
    }
}
