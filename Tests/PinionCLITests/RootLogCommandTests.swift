// `pinion key note-vkey` against an independently computed vector, and the `log` flags of `pinion root init/rotate`: every bad value exits 2 with nothing written.

import Foundation
import PinionCLI
import PinionCore
import PinionCrypto
import PinionTestSupport
import Testing

@Suite struct RootLogCommandTests {
    /// The verifier key string computed by Python's hashlib and base64 from the .pub file's DER.
    func pythonVerifierKey(_ workspace: Workspace, pub: String, name: String, type: UInt8) throws -> String {
        let script = """
            import base64, hashlib, sys
            lines = open(sys.argv[1]).read().strip().splitlines()
            der = base64.b64decode("".join(lines[1:-1]))
            assert der[:12] == bytes.fromhex("302a300506032b6570032100"), "an RFC 8410 Ed25519 SPKI"
            key = der[12:]
            name, kind = sys.argv[2].encode(), bytes([int(sys.argv[3])])
            keyhash = hashlib.sha256(name + b"\\n" + kind + key).digest()[:4]
            print(name.decode() + "+" + keyhash.hex() + "+" + base64.b64encode(kind + key).decode())
            """
        let result = try workspace.exec("/usr/bin/python3", ["-c", script, "@" + pub, name, String(type)])
        try #require(result.status == 0, "python3: \(result.err)")
        return result.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func noteVkeyMatchesAnIndependentComputationForBothTypes() throws {
        let workspace = try Workspace()
        workspace.quickKey("log")
        for (type, byte, name) in [("log", UInt8(1), "example.com/log"), ("witness", UInt8(4), "witness.example")] {
            let printed = workspace.ok(["key", "note-vkey", "@log.pub", "--name", name, "--type", type]).out
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(printed == (try pythonVerifierKey(workspace, pub: "log.pub", name: name, type: byte)))
            let parsed = try NoteVerifierKey(parsing: printed, hasher: sodium.hasher)
            #expect(parsed.type.rawValue == byte)
            #expect(parsed.name == name)
        }
    }

    @Test func noteVkeyRefusesBadArguments() throws {
        let workspace = try Workspace()
        workspace.quickKey("log")
        for arguments in [
            ["key", "note-vkey", "@log.pub", "--name", "n", "--type", "signer"],
            ["key", "note-vkey", "@log.pub", "--type", "log"],
            ["key", "note-vkey", "@log.pub", "--name", "has space", "--type", "log"],
            ["key", "note-vkey", "@log.pub", "--name", "a+b", "--type", "log"],
            ["key", "note-vkey", "@log.pub", "--name", "", "--type", "log"],
            ["key", "note-vkey", "@log.key", "--name", "n", "--type", "log"],
            ["key", "note-vkey", "--name", "n", "--type", "log"],
        ] {
            let result = workspace.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.status) \(result.err)")
            #expect(result.out.isEmpty)
        }
        // A key file that cannot be read is an I/O error, as for every other command.
        let missing = workspace.run(["key", "note-vkey", "@missing.pub", "--name", "n", "--type", "log"])
        #expect(missing.status == 3, "\(missing.status) \(missing.err)")
        #expect(missing.out.isEmpty)
    }

    func logFlags(witnesses: Int = 4, quorum: Int = 3) -> [String] {
        ["--log-origin", "example.com/pinion/app", "--log-key", "@log.pub"]
            + (1...witnesses).flatMap { ["--witness", "w\($0).example=@w\($0).pub@https://w\($0).example/w"] }
            .map { $0.replacingOccurrences(of: "=@", with: "=") }
            + ["--witness-quorum", String(quorum), "--max-checkpoint-age", "24h", "--checkpoint-grace", "7d"]
    }

    /// A workspace with root, pins, log and four witness keys; the witness flags take absolute paths.
    func keyedWorkspace() throws -> Workspace {
        let workspace = try Workspace()
        for name in ["root", "pins", "log", "w1", "w2", "w3", "w4"] { workspace.quickKey(name) }
        return workspace
    }

    func initArguments(_ workspace: Workspace, extra: [String]) -> [String] {
        [
            "root", "init", "--scope", "com.example.app", "--root-key", "@root.pub", "--root-threshold", "1",
            "--pins-key", "@pins.pub", "--pins-threshold", "1", "-o", "@root-payload.json",
        ] + extra.map { $0.replacingOccurrences(of: "=w", with: "=" + workspace.path("w")) }
    }

    func payload(_ workspace: Workspace, _ name: String = "root-payload.json") throws -> RootPayload {
        try RootPayload.parse(try workspace.readBytes(name), crypto: sodium)
    }

    @Test func rootInitWritesTheLogMember() throws {
        let workspace = try keyedWorkspace()
        let result = workspace.ok(initArguments(workspace, extra: logFlags()))
        #expect(!result.err.contains("warning"), "4 witnesses for quorum 3: no warning")
        #expect(result.out.contains("a cosigned checkpoint carries 5 of at most 32 signature lines"), "\(result.out)")
        let log = try #require(try payload(workspace).log)
        #expect(log.origin == "example.com/pinion/app")
        #expect(log.quorum == 3)
        #expect(log.maxCheckpointAge == 86_400)
        #expect(log.checkpointGrace == 7 * 86_400)
        #expect(log.witnesses.map(\.url) == (1...4).map { "https://w\($0).example/w" })
        #expect(
            log.logKey.text
                == workspace.ok(["key", "note-vkey", "@log.pub", "--name", "example.com/pinion/app", "--type", "log"])
                .out.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(
            log.witnesses[0].key.text
                == workspace.ok(["key", "note-vkey", "@w1.pub", "--name", "w1.example", "--type", "witness"]).out
                .trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func rootInitWarnsWhenTheQuorumToleratesNoOutage() throws {
        let workspace = try keyedWorkspace()
        let result = workspace.ok(initArguments(workspace, extra: logFlags(witnesses: 2, quorum: 2)))
        #expect(result.err.contains("tolerates no witness outage"), "\(result.err)")
        #expect(try payload(workspace).log?.witnesses.count == 2)
        let recommended = workspace.ok(initArguments(workspace, extra: logFlags(witnesses: 3, quorum: 2)) + ["--force"])
        #expect(!recommended.err.contains("warning"), "3 witnesses, quorum 2: \(recommended.err)")
    }

    @Test func rootInitRefusesAMinorityQuorum() throws {
        let workspace = try keyedWorkspace()
        for (witnesses, quorum) in [(2, 1), (3, 1), (4, 2), (4, 1)] {
            let result = workspace.run(initArguments(workspace, extra: logFlags(witnesses: witnesses, quorum: quorum)))
            #expect(result.status == 2, "\(quorum) of \(witnesses): \(result.status) \(result.err)")
            #expect(result.err.contains("is not a majority"), "\(result.err)")
            #expect(result.err.contains("--allow-minority-quorum"), "\(result.err)")
            #expect(!workspace.exists("root-payload.json"), "\(quorum) of \(witnesses): nothing written")
        }
        let allowed = workspace.ok(
            initArguments(workspace, extra: logFlags(witnesses: 4, quorum: 2)) + ["--allow-minority-quorum"])
        #expect(allowed.out.contains("quorum 2 (minority quorum"), "\(allowed.out)")
        #expect(allowed.err.contains("is a minority quorum"), "\(allowed.err)")
        #expect(try payload(workspace).log?.quorum == 2)
    }

    /// A rotation that keeps the log member is never refused (an emergency pins-key rotation
    /// must not block on the quorum rule); one that changes it follows the rule.
    @Test func rotateRefusesAMinorityQuorumOnlyWhenTheLogMemberChanges() throws {
        let workspace = try keyedWorkspace()
        workspace.ok(
            initArguments(workspace, extra: logFlags(witnesses: 4, quorum: 2)) + ["--allow-minority-quorum"])
        workspace.ok(["sign", "--key", "@root.key", "@root-payload.json", "-o", "@root.json"])
        let rotate = ["root", "rotate", "--previous", "@root.json", "-o", "@next.json"]
        workspace.ok(rotate)
        #expect(try payload(workspace, "next.json").log?.quorum == 2, "kept unchanged")
        try FileManager.default.removeItem(atPath: workspace.path("next.json"))
        let changed = workspace.run(rotate + ["--max-checkpoint-age", "12h"])
        #expect(changed.status == 2, "\(changed.err)")
        #expect(changed.err.contains("is not a majority"), "\(changed.err)")
        #expect(!workspace.exists("next.json"))
        workspace.ok(rotate + ["--max-checkpoint-age", "12h", "--allow-minority-quorum"])
        #expect(try payload(workspace, "next.json").log?.maxCheckpointAge == 12 * 3600)
        workspace.ok(rotate + ["--witness-quorum", "3", "--force"])
        #expect(try payload(workspace, "next.json").log?.quorum == 3)
    }

    /// `--max-checkpoint-age 0` is not accepted silently.
    /// docs/DESIGN.md §12 allows 0 (freshness off, at a documented cost), so it is written,
    /// with a warning naming the flag and the cost; on rotate too.
    @Test func maxCheckpointAgeZeroIsWrittenWithAWarning() throws {
        let workspace = try keyedWorkspace()
        var flags = logFlags()
        let index = try #require(flags.firstIndex(of: "--max-checkpoint-age"))
        flags[index + 1] = "0"
        let result = workspace.ok(initArguments(workspace, extra: flags))
        #expect(result.err.contains("warning: --max-checkpoint-age 0 turns freshness off"), "\(result.err)")
        #expect(try payload(workspace).log?.maxCheckpointAge == 0)
        // A non-zero age: no such warning.
        let normal = workspace.ok(initArguments(workspace, extra: logFlags()) + ["--force"])
        #expect(!normal.err.contains("turns freshness off"), "\(normal.err)")
        workspace.ok(["sign", "--key", "@root.key", "@root-payload.json", "-o", "@root.json"])
        let rotate = workspace.ok([
            "root", "rotate", "--previous", "@root.json", "-o", "@next.json", "--max-checkpoint-age", "0",
        ])
        #expect(rotate.err.contains("--max-checkpoint-age 0 turns freshness off"), "\(rotate.err)")
        #expect(try payload(workspace, "next.json").log?.maxCheckpointAge == 0)
    }

    /// A bad --log-origin is reported as such, not as an error about --log-key.
    @Test func aBadLogOriginIsReportedAsLogOrigin() throws {
        let workspace = try keyedWorkspace()
        for bad in ["example com", "a+b", "", "caf\u{e9}", String(repeating: "o", count: 257), "tab\there"] {
            var flags = logFlags()
            let index = try #require(flags.firstIndex(of: "--log-origin"))
            flags[index + 1] = bad
            let result = workspace.run(initArguments(workspace, extra: flags))
            #expect(result.status == 2, "\(bad): exit \(result.status) \(result.err)")
            #expect(result.err.contains("--log-origin"), "\(bad): \(result.err)")
            #expect(!result.err.contains("--log-key"), "\(bad): \(result.err)")
            #expect(!workspace.exists("root-payload.json"), "\(bad): nothing written")
        }
        // On rotate, a new origin for the same key is checked the same way.
        workspace.ok(initArguments(workspace, extra: logFlags()))
        workspace.ok(["sign", "--key", "@root.key", "@root-payload.json", "-o", "@root.json"])
        let rotate = workspace.run([
            "root", "rotate", "--previous", "@root.json", "-o", "@next.json", "--log-origin", "bad origin",
        ])
        #expect(rotate.status == 2, "\(rotate.err)")
        #expect(rotate.err.contains("--log-origin \"bad origin\""), "\(rotate.err)")
        #expect(!workspace.exists("next.json"))
    }

    @Test func everyBadLogValueIsRefusedAndWritesNothing() throws {
        let workspace = try keyedWorkspace()
        let good = logFlags()
        func replacing(_ option: String, with value: String) -> [String] {
            var flags = good
            if let index = flags.firstIndex(of: option) { flags[index + 1] = value }
            return flags
        }
        func dropping(_ option: String) -> [String] {
            var flags = good
            if let index = flags.firstIndex(of: option) { flags.removeSubrange(index...index + 1) }
            return flags
        }
        let cases: [(String, [String])] = [
            ("http witness", replacing("--witness", with: "w1.example=w1.pub@http://w1.example/w")),
            ("query in URL", replacing("--witness", with: "w1.example=w1.pub@https://w1.example/w?x=1")),
            ("no @URL", replacing("--witness", with: "w1.example=w1.pub")),
            ("no NAME=", replacing("--witness", with: "w1.pub@https://w1.example/w")),
            ("missing witness key", replacing("--witness", with: "w1.example=nope.pub@https://w1.example/w")),
            ("bad witness name", replacing("--witness", with: "w 1=w1.pub@https://w1.example/w")),
            ("quorum 0", replacing("--witness-quorum", with: "0")),
            ("quorum above witnesses", replacing("--witness-quorum", with: "5")),
            ("quorum not a number", replacing("--witness-quorum", with: "two")),
            ("bad age", replacing("--max-checkpoint-age", with: "24x")),
            ("negative age", replacing("--max-checkpoint-age", with: "-1h")),
            ("bad grace", replacing("--checkpoint-grace", with: "soon")),
            ("origin with a space", replacing("--log-origin", with: "example com")),
            ("missing log key file", replacing("--log-key", with: workspace.path("nope.pub"))),
            ("a secret key as the log key", replacing("--log-key", with: workspace.path("log.key"))),
            ("no origin", dropping("--log-origin")),
            ("no log key", dropping("--log-key")),
            ("no quorum", dropping("--witness-quorum")),
            ("no max age", dropping("--max-checkpoint-age")),
            ("a witness key twice", good + ["--witness", "w5.example=w1.pub@https://w5.example/w"]),
            (
                "the log key as a witness",
                good + ["--witness", "w5.example=" + workspace.path("log.pub") + "@https://w5.example/w"]
            ),
            ("one witness name twice", good + ["--witness", "w1.example=w2.pub@https://w9.example/w"]),
        ]
        // A key file that cannot be read is an I/O error (3); every other bad value is a usage error.
        let unreadable: Set = ["missing witness key", "missing log key file"]
        for (label, flags) in cases {
            let result = workspace.run(initArguments(workspace, extra: flags))
            #expect(
                result.status == (unreadable.contains(label) ? 3 : 2), "\(label): exit \(result.status) \(result.err)")
            #expect(!workspace.exists("root-payload.json"), "\(label): nothing written")
        }
    }

    @Test func rotateKeepsChangesAndDropsTheLog() throws {
        let workspace = try keyedWorkspace()
        workspace.ok(initArguments(workspace, extra: logFlags()))
        workspace.ok(["sign", "--key", "@root.key", "@root-payload.json", "-o", "@root.json"])
        let first = try #require(try payload(workspace).log)
        let rotate = ["root", "rotate", "--previous", "@root.json", "-o", "@next.json", "--force"]
        workspace.ok(rotate)
        #expect(try payload(workspace, "next.json").log == first, "kept without log flags")
        workspace.ok(rotate + ["--witness-quorum", "4"])
        let changed = try #require(try payload(workspace, "next.json").log)
        #expect(changed.quorum == 4)
        #expect(changed.witnesses == first.witnesses)
        #expect(changed.logKey == first.logKey)
        workspace.ok(rotate + ["--no-log"])
        #expect(try payload(workspace, "next.json").log == nil)
        try FileManager.default.removeItem(atPath: workspace.path("next.json"))
        for (label, extra) in [
            ("--no-log with a log flag", ["--no-log", "--witness-quorum", "1"]),
            ("quorum above the witnesses", ["--witness-quorum", "9"]),
            ("http witness", ["--witness", "w1.example=" + workspace.path("w1.pub") + "@http://w1.example"]),
        ] {
            let result = workspace.run(rotate + extra)
            #expect(result.status == 2, "\(label): exit \(result.status) \(result.err)")
            #expect(!workspace.exists("next.json"), "\(label): nothing written")
        }
    }

    @Test func noLogOnARootWithoutALogIsAUsageError() throws {
        let workspace = try Workspace()
        workspace.standardRoot()
        let result = workspace.run(["root", "rotate", "--previous", "@root.json", "-o", "@next.json", "--no-log"])
        #expect(result.status == 2)
        #expect(!workspace.exists("next.json"))
    }
}
