// `pinion client refresh` and `pinion client connect` against real TLS servers on 127.0.0.1.

import Foundation
import PinionCLI
import PinionCore
import PinionLinux
import PinionTestSupport
import Testing

@Suite struct ClientCommandTests {
    @Test func refreshThenConnectTrustedAndRejected() throws {
        let pki = try HTTPSTestPKI.shared()
        let setup = try Setup()
        let directory = try makeTemporaryDirectory(prefix: "pinion-client-cli")
        let rootPath = directory + "/root.json"
        try Data(setup.rootEnvelope.serialized()).write(to: URL(fileURLWithPath: rootPath))
        let now = Timestamp(Date())
        let leafPin = try Pin(digest: try pki.spkiSHA256(.leaf))
        let payload = manifestPayload(
            issuedAt: now, domains: [.init(name: "api.example.test", pins: [leafPin, pin(0xEE)])])
        let manifestText = String(
            decoding: try sign(.pins, payload.serialized(), with: [setup.pinsKey]).serialized(), as: UTF8.self)
        let publisher = try TestTLSServer(
            chain: [pki.path(.ipLeaf), pki.path(.intermediate)], key: pki.keyPath(.ipLeaf),
            routes: ["/v1/com.example.app/manifest.json": .init(headers: [("ETag", "\"a\"")], body: manifestText)])
        defer { publisher.stop() }
        let common = [
            "--root", rootPath, "--scope", "com.example.app", "--state", directory + "/state", "--cafile",
            pki.path(.root),
        ]

        let refreshed = runPinion(
            ["client", "refresh", "--url", "https://127.0.0.1:\(publisher.port)/"] + common, now: now)
        #expect(refreshed.status == 0, "\(refreshed.err)")
        #expect(refreshed.out.contains("updated to (rootVersion 1, version 1)"))
        #expect(refreshed.out.contains(leafPin.description))

        let json = runPinion(
            ["client", "refresh", "--json", "--url", "https://127.0.0.1:\(publisher.port)/"] + common, now: now)
        #expect(json.status == 0)
        #expect(json.out.contains("\"manifestCurrent\": true"))
        // Values, not prose, for machines: the outcome enum, the floor as numbers, RFC 3339 times.
        guard
            case .object(let document) = try StrictJSONParser.parse(Array(json.out.utf8), limits: Limits.standard.json)
        else {
            Issue.record("client refresh --json is not an object")
            return
        }
        #expect(document["outcomeKind"] == .string("unchanged"))
        #expect(document["floorRootVersion"] == .number("1"))
        #expect(document["floorVersion"] == .number("1"))
        #expect(document["manifestExpiresAt"] == .string(payload.expiresAt.description))
        #expect(document["rootExpiresAt"] == .string(setup.root.expiresAt.description))

        let good = try TestTLSServer(
            chain: [pki.path(.leaf), pki.path(.intermediate)], key: pki.keyPath(.leaf), routes: ["*": .init(body: "ok")]
        )
        defer { good.stop() }
        let trusted = runPinion(
            ["client", "connect", "--connect-to", "127.0.0.1", "api.example.test:\(good.port)"] + common, now: now)
        #expect(trusted.status == 0, "\(trusted.err)")
        #expect(trusted.out.contains("trusted: api.example.test matches \(leafPin)"))

        let bad = try TestTLSServer(
            chain: [pki.path(.secondLeaf), pki.path(.intermediate)], key: pki.keyPath(.secondLeaf),
            routes: ["*": .init(body: "no")])
        defer { bad.stop() }
        let rejected = runPinion(
            ["client", "connect", "--connect-to", "127.0.0.1", "api.example.test:\(bad.port)"] + common, now: now)
        #expect(rejected.status == 1)
        #expect(rejected.err.contains("rejected"))
        #expect(try bad.connections(atLeast: 1).allSatisfy { $0.received == 0 })

        let unpinned = try TestTLSServer(
            chain: [pki.path(.otherNameLeaf), pki.path(.intermediate)], key: pki.keyPath(.otherNameLeaf),
            routes: ["*": .init(body: "ok")])
        defer { unpinned.stop() }
        let notPinned = runPinion(
            ["client", "connect", "--connect-to", "127.0.0.1", "other.example.test:\(unpinned.port)"] + common, now: now
        )
        #expect(notPinned.status == 0)
        #expect(notPinned.out.contains("not pinned"))

        // The publisher gone: a network failure, exit 3, the stored policy unchanged.
        publisher.stop()
        let down = runPinion(["client", "refresh", "--url", "https://127.0.0.1:\(publisher.port)/"] + common, now: now)
        #expect(down.status == 3)
        #expect(down.out.contains(leafPin.description))
    }

    @Test func refusesBadArguments() throws {
        let now = Timestamp(secondsSince1970: 1_796_029_200)
        #expect(runPinion(["client", "refresh", "--url", "http://x/"], now: now).status == 2)
        #expect(runPinion(["client", "connect"], now: now).status == 2)
        let directory = try makeTemporaryDirectory(prefix: "pinion-client-cli")
        try Data("not a root".utf8).write(to: URL(fileURLWithPath: directory + "/root.json"))
        let bad = runPinion(
            [
                "client", "refresh", "--url", "https://127.0.0.1:1/", "--root", directory + "/root.json", "--scope",
                "a.b",
                "--state", directory + "/state",
            ], now: now)
        #expect(bad.status == 1)
    }

    @Test func refreshRefusesARedirectToHTTPAndNamesTheFile() throws {
        let pki = try HTTPSTestPKI.shared()
        let setup = try Setup()
        let directory = try makeTemporaryDirectory(prefix: "pinion-client-redirect")
        let rootPath = directory + "/root.json"
        try Data(setup.rootEnvelope.serialized()).write(to: URL(fileURLWithPath: rootPath))
        let now = Timestamp(Date())
        let publisher = try TestTLSServer(
            chain: [pki.path(.ipLeaf), pki.path(.intermediate)], key: pki.keyPath(.ipLeaf),
            routes: [
                "/v1/com.example.app/manifest.json": .init(
                    status: 302, headers: [("Location", "http://127.0.0.1/v1/com.example.app/manifest.json")])
            ])
        defer { publisher.stop() }
        let result = runPinion(
            [
                "client", "refresh", "--url", "https://127.0.0.1:\(publisher.port)/", "--root", rootPath, "--scope",
                "com.example.app", "--state", directory + "/state", "--cafile", pki.path(.root),
            ], now: now)
        #expect(result.status == 1, "a refusal, not a network failure (exit 3): \(result.err)")
        #expect(result.out.contains("rejected: manifest.json: refused redirect to http"), "\(result.out)")
    }
}
