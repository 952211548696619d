// `pinion audit` on a tree with a log, in-process: the log section, --json, --since/--save-checkpoint, exit codes for bad input.

import Foundation
import PinionAudit
import PinionCLI
import PinionCore
import PinionTestSupport
import PinionTrust
import Testing

/// A logged tree written under a temporary directory with its given root.
struct LoggedAuditWorld {
    let directory: TemporaryDirectory
    let tree: LoggedTree
    var repo: String { directory.path + "/tree" }
    var rootFile: String { directory.path + "/given-root.json" }

    init(_ tree: LoggedTree) throws {
        directory = try TemporaryDirectory()
        self.tree = tree
        try tree.write(to: repo)
        try Data(tree.fixture.rootBytes).write(to: URL(fileURLWithPath: rootFile))
    }

    func path(_ name: String) -> String { directory.path + "/" + name }

    func audit(_ extra: [String]) -> CommandResult {
        runPinion(["audit", "--root", rootFile, repo, "--at", tree.fixture.auditTime.description] + extra)
    }
}

@Suite struct LogAuditCommandTests {
    @Test func monitorSavesTheCheckpointAndChecksTheNextRunAgainstIt() throws {
        let tree = try cleanLoggedTree(4)
        var world = try LoggedAuditWorld(tree)
        // The monitor's state outlives each tree written.
        let state = try TemporaryDirectory()
        let saved = state.path + "/seen.checkpoint"
        let first = world.audit(["--no-witnesses", "--save-checkpoint", saved])
        #expect(first.status == 0, "\(first.out)\(first.err)")
        #expect(first.out.contains("log         origin \(LogKeys.origin)"), "\(first.out)")
        #expect(first.out.contains("checkpoint size 4"), "\(first.out)")
        #expect(first.out.contains("witness    w1.example https://127.0.0.1:1/w1: not-checked"), "\(first.out)")
        let note = try tree.note(cosignedBy: [(0, tree.cosignTime), (1, tree.cosignTime)]).bytes
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: saved))) == note)

        // Two more publish steps: the next run extends the saved checkpoint.
        try tree.fixture.extend(2)
        try tree.logAll()
        world = try LoggedAuditWorld(tree)
        let second = world.audit(["--no-witnesses", "--since", saved, "--save-checkpoint", saved, "--json"])
        #expect(second.status == 0, "\(second.out)\(second.err)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(second.out.utf8)) as? [String: Any])
        let log = try #require(object["log"] as? [String: Any])
        #expect(log["size"] as? Int == 6)
        #expect(log["sinceSize"] as? Int == 4)
        #expect(log["verified"] as? Bool == true)
        #expect(log["expectedHeads"] as? Int == 6)
        #expect(
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: saved)))
                == (try tree.note(cosignedBy: [(0, tree.cosignTime), (1, tree.cosignTime)]).bytes))
    }

    @Test func rollbackAgainstSinceFailsAndLeavesTheSavedCheckpoint() throws {
        let tree = try cleanLoggedTree(5)
        let bigger = try LoggedTree(keys: tree.keys)
        try bigger.append(try (0..<5).map { try tree.head(ofManifest: $0).bytes } + [Array("later\n".utf8)])
        let world = try LoggedAuditWorld(tree)
        let since = world.path("since.checkpoint")
        let biggerNote = try bigger.note(cosignedBy: []).bytes
        try Data(biggerNote).write(to: URL(fileURLWithPath: since))
        let result = world.audit(["--no-witnesses", "--since", since, "--save-checkpoint", since])
        #expect(result.status == 1, "\(result.out)\(result.err)")
        #expect(result.out.contains("[log-since] the log shrank"), "\(result.out)")
        #expect(result.err.contains("left unchanged"), "\(result.err)")
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: since))) == biggerNote)

        // The monitor's own saved checkpoint carries the witnesses' cosignatures: a witness
        // that cosigned both makes the smaller tree a rollback (its own code), exit 1.
        let savedNote = try bigger.note(try bigger.checkpoint, cosignedBy: [(0, tree.cosignTime)]).bytes
        try Data(savedNote).write(to: URL(fileURLWithPath: since))
        let stale = world.audit(["--no-witnesses", "--since", since, "--save-checkpoint", since, "--json"])
        #expect(stale.status == 1, "\(stale.out)\(stale.err)")
        #expect(stale.out.contains("\"log-rollback\""), "\(stale.out)")
        #expect(!stale.out.contains("\"log-since\""), "\(stale.out)")
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: since))) == savedNote)
    }

    /// The monitor's alerting: with --save-checkpoint, warnings only exit 4 (unreachable
    /// witnesses here) and the Prometheus file says level 1; bad --publish-grace and
    /// --prometheus values exit 2 before anything is written.
    @Test func theMonitorExitsFourOnWarningsAndWritesThePrometheusFile() throws {
        let world = try LoggedAuditWorld(try cleanLoggedTree(3))
        let state = try TemporaryDirectory()
        let saved = state.path + "/seen.checkpoint"
        let metrics = state.path + "/audit.prom"
        let warned = world.audit(["--save-checkpoint", saved, "--prometheus", metrics])
        #expect(warned.status == 4, "\(warned.out)\(warned.err)")
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: metrics)), as: UTF8.self)
        #expect(text.contains("pinion_audit_level{scope=\"\(world.tree.fixture.scope)\"} 1"), "\(text)")
        #expect(text.contains("rule=\"log-witness-unavailable\"} 3"), "\(text)")
        #expect(text.contains("pinion_audit_log_size{scope=\"\(world.tree.fixture.scope)\"} 3"), "\(text)")
        // Without --save-checkpoint an audit keeps its exit 0 for warnings.
        #expect(world.audit([]).status == 0)
        let clean = world.audit(["--no-witnesses", "--save-checkpoint", saved, "--prometheus", metrics])
        #expect(clean.status == 0, "\(clean.out)\(clean.err)")
        #expect(
            String(decoding: try Data(contentsOf: URL(fileURLWithPath: metrics)), as: UTF8.self).contains(
                "pinion_audit_level{scope=\"\(world.tree.fixture.scope)\"} 0"))
        for bad in [["--publish-grace", "soon"], ["--publish-grace", "-1h"], ["--prometheus", state.path]] {
            let result = world.audit(["--no-witnesses"] + bad)
            #expect(result.status == 2 || result.status == 1, "\(bad): \(result.status) \(result.err)")
            #expect(result.out.isEmpty, "\(bad): refused before the audit: \(result.out)")
        }
    }

    @Test func unreachableWitnessesAreWarningsAndExitZero() throws {
        // The default witness URLs are 127.0.0.1 port 1, where nothing listens.
        let world = try LoggedAuditWorld(try cleanLoggedTree(3))
        let result = world.audit([])
        #expect(result.status == 0, "\(result.out)\(result.err)")
        #expect(result.out.contains("warnings (3)"), "\(result.out)")
        #expect(result.out.contains("[log-witness-unavailable] witness w1.example: unreachable"), "\(result.out)")
    }

    @Test func badFlagsAndInputsExitNonZero() throws {
        let world = try LoggedAuditWorld(try cleanLoggedTree(3))
        let both = world.audit(["--no-witnesses", "--witness-ca", world.path("ca.pem")])
        #expect(both.status == 2, "\(both.err)")
        let missing = world.audit(["--no-witnesses", "--since", world.path("absent")])
        #expect(missing.status == 3, "\(missing.err)")
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: world.path("garbage")))
        let garbage = world.audit(["--no-witnesses", "--since", world.path("garbage")])
        #expect(garbage.status == 1, "\(garbage.err)")
        #expect(garbage.out.contains("[log-since] the --since checkpoint is unusable"), "\(garbage.out)")
        try Data(repeating: 0x41, count: 20_000).write(to: URL(fileURLWithPath: world.path("huge")))
        let huge = world.audit(["--no-witnesses", "--since", world.path("huge")])
        #expect(huge.status != 0, "\(huge.err)")

        // An unreadable --witness-ca is an I/O error before any witness is asked.
        let noCA = world.audit(["--witness-ca", world.path("absent-ca.pem")])
        #expect(noCA.status == 3, "\(noCA.err)")
        // A non-PEM bundle is one usage error before any witness is asked, not a network
        // failure per witness.
        let notPEM = world.audit(["--witness-ca", world.rootFile])
        #expect(notPEM.status == 2, "\(notPEM.err)")
        #expect(notPEM.err.contains("--witness-ca \(world.rootFile): not a PEM bundle"), "\(notPEM.err)")
        #expect(!notPEM.out.contains("log-witness-unavailable"), "\(notPEM.out)")

        // --since on a scope whose root has no log.
        let plainSince = try AuditWorld(try simpleHistory(2))
        let sinceNoLog = plainSince.audit(["--since", world.path("garbage")])
        #expect(sinceNoLog.status == 1, "\(sinceNoLog.err)")
        #expect(
            sinceNoLog.err.contains("--since: the newest root of scope com.example.app has no log"), "\(sinceNoLog.err)"
        )

        // --save-checkpoint on a scope whose root has no log.
        let plain = try AuditWorld(try simpleHistory(2))
        let noLog = plain.audit(["--save-checkpoint", plain.directory.path + "/out"])
        #expect(noLog.status == 1, "\(noLog.err)")
        #expect(noLog.err.contains("has no log"), "\(noLog.err)")
        #expect(!FileManager.default.fileExists(atPath: plain.directory.path + "/out"))
    }
}
