// `pinion publish --log-key` and `pinion log refresh` as commands: usage refusals exit 2 with the tree unchanged; unreachable witnesses exit 1 with nothing served.

import Foundation
import PinionCore
import PinionTestSupport
import Testing

@Suite struct PublishLogCommandTests {
    /// Root, pins and log keys, three witness keys at unreachable https URLs (127.0.0.1 port 1),
    /// root.json (with the log) and manifest.json signed under it.
    func workspace() throws -> Workspace {
        let workspace = try Workspace(prefix: "pinion-publog-cli")
        for name in ["root", "pins", "log", "other", "w1", "w2", "w3"] { workspace.quickKey(name) }
        try workspace.require(
            [
                "root", "init", "--scope", "com.example.app", "--root-key", "@root.pub", "--root-threshold", "1",
                "--pins-key", "@pins.pub", "--pins-threshold", "1", "-o", "@root-payload.json",
                "--log-origin", "example.com/pinion/com.example.app", "--log-key", "@log.pub",
            ]
                + (1...3).flatMap {
                    ["--witness", "w\($0).example=\(workspace.path("w\($0).pub"))@https://127.0.0.1:1/w\($0)"]
                }
                + ["--witness-quorum", "2", "--max-checkpoint-age", "24h"], at: workspace.now)
        try workspace.require(
            ["sign", "--key", "@root.key", "@root-payload.json", "-o", "@root.json"], at: workspace.now)
        try workspace.require(
            ["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@payload.json"],
            at: workspace.now)
        try workspace.require(
            [
                "manifest", "set-domain", "@payload.json", "api.example.com", "--pin",
                "sha256/" + Data(repeating: 0xA1, count: 32).base64EncodedString(), "--pin",
                "sha256/" + Data(repeating: 0xB2, count: 32).base64EncodedString(),
            ], at: workspace.now)
        try workspace.require(
            ["sign", "--key", "@pins.key", "@payload.json", "-o", "@manifest.json"], at: workspace.now)
        return workspace
    }

    func tree(_ workspace: Workspace) -> [String] {
        let base = workspace.path("tree")
        return ((FileManager.default.subpaths(atPath: base)) ?? []).sorted()
    }

    @Test func withoutTheLogKeyAnotherKeyOrBadFlagsPublishExitsTwoAndWritesNothing() throws {
        let workspace = try workspace()
        let first = workspace.run(["publish", "--repo", "@tree", "@root.json"])
        #expect(first.status == 2, "the root lists a log: --log-key is required: \(first.err)")
        #expect(first.err.contains("--log-key"))
        #expect(!workspace.exists("tree"))
        workspace.ok(["publish", "--repo", "@tree", "@root.json", "--log-key", "@log.key"])
        let before = tree(workspace)
        for (label, extra, status) in [
            ("no --log-key", [String](), Int32(2)),
            ("another key", ["--log-key", "@other.key"], 2),
            ("a public key file", ["--log-key", "@log.pub"], 2),
            ("--witness-ca without --log-key", ["--witness-ca", "@root.json"], 2),
            ("--passphrase-file without --log-key", ["--passphrase-file", "@root.json"], 2),
            // Unreadable inputs are I/O errors, exit 3, as in every other command.
            ("missing key file", ["--log-key", "@missing.key"], 3),
            ("missing --witness-ca", ["--log-key", "@log.key", "--witness-ca", "@missing.pem"], 3),
            // A non-PEM bundle is a usage error, not one network failure per witness.
            ("non-PEM --witness-ca", ["--log-key", "@log.key", "--witness-ca", "@root.json"], 2),
        ] {
            let result = workspace.run(["publish", "--repo", "@tree", "@manifest.json"] + extra)
            #expect(result.status == status, "\(label): exit \(result.status) \(result.err)")
            #expect(tree(workspace) == before, "\(label): nothing written")
        }
    }

    @Test func aLogKeyForAScopeWithoutALogIsNotUsedAndSaysSo() throws {
        let workspace = try Workspace(prefix: "pinion-publog-cli")
        workspace.standardRoot()
        workspace.quickKey("log")
        let result = workspace.ok(["publish", "--repo", "@tree", "@root.json", "--log-key", "@log.key"])
        #expect(result.err.contains("lists no transparency log"))
        #expect(!workspace.exists("tree/v1/com.example.app/log"))
        #expect(!workspace.exists("tree/pending"))
    }

    @Test func unreachableWitnessesExitOneWithNothingServedAndRefreshExitsOne() throws {
        let workspace = try workspace()
        workspace.ok(["publish", "--repo", "@tree", "@root.json", "--log-key", "@log.key"])
        let result = workspace.run(["publish", "--repo", "@tree", "@manifest.json", "--log-key", "@log.key"])
        #expect(result.status == 1, "below the quorum: \(result.err)")
        #expect(result.err.contains("0 of the 3 witnesses cosigned"))
        let scope = "tree/v1/com.example.app/"
        #expect(!workspace.exists(scope + "manifest.json"))
        #expect(!workspace.exists(scope + "manifest.proof"))
        #expect(!workspace.exists(scope + "log/checkpoint"))
        #expect(workspace.exists("tree/pending/com.example.app/checkpoint"))
        let refresh = workspace.run(["log", "refresh", "--repo", "@tree", "--log-key", "@log.key"])
        #expect(refresh.status == 1, "\(refresh.err)")
        #expect(!workspace.exists(scope + "manifest.json"))
        // Every failing scope is reported, not only the first. A second scope whose index.json is damaged sorts after this one: both are named, exit 1.
        try FileManager.default.createDirectory(
            atPath: workspace.path("tree/v1/com.example.zzz/root"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: workspace.path(scope + "root/1.json"), toPath: workspace.path("tree/v1/com.example.zzz/root/1.json")
        )
        try Data("{".utf8).write(to: URL(fileURLWithPath: workspace.path("tree/v1/com.example.zzz/index.json")))
        let both = workspace.run(["log", "refresh", "--repo", "@tree", "--log-key", "@log.key"])
        #expect(both.status == 1, "\(both.err)")
        #expect(both.err.contains("scope com.example.app: "), "\(both.err)")
        #expect(both.err.contains("scope com.example.zzz: "), "\(both.err)")
        #expect(both.err.contains("2 of 2 scope(s) failed: com.example.app, com.example.zzz"), "\(both.err)")
        #expect(!workspace.exists(scope + "manifest.json"))
        let notPEM = workspace.run([
            "log", "refresh", "--repo", "@tree", "--log-key", "@log.key", "--witness-ca", "@root.json",
        ])
        #expect(notPEM.status == 2, "\(notPEM.err)")
        #expect(notPEM.err.contains("--witness-ca \(workspace.path("root.json")): not a PEM bundle"), "\(notPEM.err)")
        #expect(!notPEM.err.contains("w1.example"), "refused once, before any witness: \(notPEM.err)")
        let usage = workspace.run(["log", "refresh", "--repo", "@tree"])
        #expect(usage.status == 2)
        let otherKey = workspace.run(["log", "refresh", "--repo", "@tree", "--log-key", "@other.key"])
        #expect(otherKey.status == 2, "no scope lists this key: \(otherKey.err)")
    }
}
