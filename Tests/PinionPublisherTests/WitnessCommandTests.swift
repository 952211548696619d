// `pinion witness cosign` (the offline witness) and `pinion witness`'s refusals before it listens: flags, configuration, key and state files, with exit codes and messages.

import Foundation
import PinionCore
import PinionCrypto
import PinionLog
import PinionPublisher
import PinionTestSupport
import PinionTrust
import Testing

@Suite struct WitnessCommandTests {
    /// A workspace with a witness key w.key, a configuration for `log` and an empty state.
    private func workspace(_ log: TestLog, name: String = "w1.test") throws -> Workspace {
        let workspace = try Workspace(prefix: "pinion-witness-cli")
        workspace.quickKey("w")
        try workspace.write(
            "config.json",
            "{\"name\": \"\(name)\", \"logs\": [{\"origin\": \"\(log.origin)\", \"key\": \"\(try log.verifierKey.text)\"}]}"
        )
        return workspace
    }

    private func cosign(_ workspace: Workspace, _ body: [UInt8], at time: String = "2027-01-15T08:00:00Z")
        throws -> CommandResult
    {
        try workspace.writeBytes("request", body)
        return workspace.run([
            "witness", "cosign", "--config", "@config.json", "--key", "@w.key", "--state-dir", "@state", "--request",
            "@request", "--at", time,
        ])
    }

    @Test func cosignsOfflineWithTheSameDecisionsAndStateAsTheServer() throws {
        var log = try TestLog(size: 5)
        let workspace = try workspace(log)
        let first = try cosign(workspace, try log.body(old: 0, size: 5))
        #expect(first.status == 0, "\(first.err)")
        #expect(first.err.contains("cosigned \(log.origin) at size 5"))

        // 409 with the cosigned size; 422 for a fork of size 5; 400 for a broken body: exit 1.
        let again = try cosign(workspace, try log.body(old: 0, size: 5))
        #expect(again.status == 1)
        #expect(again.err.contains("409 conflict: the latest cosigned size is 5"))
        #expect(again.out.isEmpty)
        let fork = try cosign(workspace, try log.forked(at: 3).body(old: 5, size: 5))
        #expect(fork.status == 1 && fork.err.contains("422"), "\(fork.err)")
        #expect(try cosign(workspace, Array("old x\n".utf8)).err.contains("400 bad request"))
        let stranger = try TestLog(origin: "pinion.test/unconfigured", size: 1)
        #expect(try cosign(workspace, try stranger.body(old: 0, size: 1)).err.contains("404 unknown origin"))

        log.grow(to: 9)
        let next = try cosign(workspace, try log.body(old: 5, size: 9), at: "2027-01-15T09:00:00Z")
        #expect(next.status == 0, "\(next.err)")

        // --at cannot go back below the latest cosignature's time.
        var later = log
        later.grow(to: 12)
        let stateBefore = try workspace.readBytes(
            "state/" + Witness.stateFileName(origin: log.origin, hasher: witnessCrypto.hasher))
        let back = try cosign(workspace, try later.body(old: 9, size: 12), at: "2027-01-15T08:59:59Z")
        #expect(back.status == 2, "\(back.err)")
        #expect(back.err.contains("is before this witness's latest cosignature"), "\(back.err)")
        #expect(back.out.isEmpty)
        #expect(
            try workspace.readBytes("state/" + Witness.stateFileName(origin: log.origin, hasher: witnessCrypto.hasher))
                == stateBefore)

        // The printed line is the witness's cosignature at --at, on the state's checkpoint.
        let witness = try Witness(
            configuration: try WitnessConfiguration.parse(
                try workspace.readBytes("config.json"), hasher: witnessCrypto.hasher),
            signer: Ed25519NoteSigner(key: KeyFile.readSecretKey(path: workspace.path("w.key"), passphrase: { nil })),
            stateDirectory: workspace.path("state"), crypto: witnessCrypto)
        let checkpoint = try log.checkpoint(size: 9)
        #expect(witness.latestCheckpoint(origin: log.origin) == checkpoint)
        let note = SignedNote(
            text: checkpoint.text, signatures: try SignedNote.parseSignatureLines(Array(next.out.utf8)))
        let verified = try note.verify(keys: [witness.verifierKey], verifier: witnessCrypto.verifier)
        #expect(verified.map(\.timestamp) == [UInt64(try Timestamp(rfc3339: "2027-01-15T09:00:00Z").secondsSince1970)])
    }

    @Test func refusesBadFlagsConfigurationKeysAndStateWithClearMessages() throws {
        let log = try TestLog(size: 3)
        let workspace = try workspace(log)
        try workspace.writeBytes("request", try log.body(old: 0, size: 3))
        let base = ["witness", "cosign", "--config", "@config.json", "--key", "@w.key", "--state-dir", "@state"]
        func run(_ extra: [String], replacing: [String: String] = [:]) -> CommandResult {
            var arguments = base + extra
            for (index, argument) in arguments.enumerated() {
                if let new = replacing[argument] { arguments[index] = new }
            }
            return workspace.run(arguments)
        }
        let usage: [([String], [String: String], String)] = [
            ([], [:], "--request"),
            (["--request", "@request", "--at", "yesterday"], [:], "--at"),
            (["--request", "@request", "--max-proof-lines", "64"], [:], "--max-proof-lines"),
            (["--request", "@request", "--max-body-bytes", "10"], [:], "--max-body-bytes"),
            (["--request", "@request", "--bogus"], [:], "bogus"),
        ]
        for (extra, replacing, needle) in usage {
            let result = run(extra, replacing: replacing)
            #expect(result.status == 2, "\(extra): \(result.err)")
            #expect(result.err.contains(needle), "\(extra): \(result.err)")
        }
        // Files: a missing configuration (3), a bad one (1), a file that is no key (non-zero, names --key).
        #expect(run(["--request", "@request"], replacing: ["@config.json": "@missing.json"]).status == 3)
        try workspace.write("bad.json", "{\"name\": \"w1.test\", \"logs\": [], \"x\": 1}")
        let badConfig = run(["--request", "@request"], replacing: ["@config.json": "@bad.json"])
        #expect(badConfig.status == 1 && badConfig.err.contains("--config"), "\(badConfig.err)")
        try workspace.write("junk.key", "not a key\n")
        let badKey = run(["--request", "@request"], replacing: ["@w.key": "@junk.key"])
        #expect(badKey.status != 0 && badKey.err.contains("--key"), "\(badKey.err)")
        let publicKey = run(["--request", "@request"], replacing: ["@w.key": "@w.pub"])
        #expect(publicKey.status != 0 && publicKey.err.contains("--key"), "\(publicKey.err)")
        let missingRequest = run(["--request", "@nothing"])
        #expect(missingRequest.status == 3 && missingRequest.err.contains("--request"))
        #expect(!workspace.exists("state/" + Witness.stateFileName(origin: log.origin, hasher: witnessCrypto.hasher)))

        // A corrupt state file: refused, never reset, the file untouched.
        #expect(run(["--request", "@request"]).status == 0)
        let stateName = "state/" + Witness.stateFileName(origin: log.origin, hasher: witnessCrypto.hasher)
        try workspace.write(stateName, "pinion.test/witness/log\n3\nnot base64\n")
        let corrupt = run(["--request", "@request"])
        #expect(corrupt.status == 1)
        #expect(corrupt.err.contains("refusing to start rather than forget the cosigned size"), "\(corrupt.err)")
        #expect(try workspace.read(stateName) == "pinion.test/witness/log\n3\nnot base64\n")
    }

    @Test func readsAnEncryptedWitnessKeyWithItsPassphraseFile() throws {
        let log = try TestLog(size: 2)
        let workspace = try workspace(log)
        try workspace.write("pass", "a long witness passphrase 2027\n")
        try workspace.write("wrong", "not the witness passphrase 2027\n")
        workspace.ok(["keygen", "--out", "@e", "--passphrase-file", "@pass", "--kdf-iterations", "1000"])
        try workspace.writeBytes("request", try log.body(old: 0, size: 2))
        let base = [
            "witness", "cosign", "--config", "@config.json", "--key", "@e.key", "--state-dir", "@state", "--request",
            "@request",
        ]
        let wrong = workspace.run(base + ["--passphrase-file", "@wrong"])
        #expect(wrong.status != 0 && wrong.err.contains("--key"), "\(wrong.err)")
        #expect(!workspace.exists("state/" + Witness.stateFileName(origin: log.origin, hasher: witnessCrypto.hasher)))
        let right = workspace.run(base + ["--passphrase-file", "@pass"])
        #expect(right.status == 0, "\(right.err)")
        #expect(right.out.hasPrefix("— w1.test "))
    }

    @Test func theServerRefusesBadSettingsBeforeListening() throws {
        let log = try TestLog(size: 3)
        let workspace = try workspace(log)
        let credentials = try ServerCredentials.shared()
        let base = [
            "witness", "--config", "@config.json", "--key", "@w.key", "--state-dir", "@state", "--cert",
            credentials.certificate, "--tls-key", credentials.key, "--access-log", "off",
        ]
        let cases: [([String], Int32, String)] = [
            (["--listen", "localhost:0"], 2, "--listen"),
            (["--listen", "127.0.0.1:0", "--path-prefix", "w1/"], 2, "--path-prefix"),
            (["--listen", "127.0.0.1:0", "--no-rate-limit", "--rate-burst", "5"], 2, "contradict"),
            (["--listen", "127.0.0.1:0", "--rate-per-minute", "0"], 2, "--rate-per-minute"),
            (["--listen", "127.0.0.1:0", "--workers", "0"], 2, "--workers"),
        ]
        for (extra, status, needle) in cases {
            let result = workspace.run(base + extra)
            #expect(result.status == status, "\(extra): \(result.err)")
            #expect(result.err.contains(needle), "\(extra): \(result.err)")
            #expect(!result.out.contains("listening"))
        }
        let noCert = workspace.run(["witness", "--config", "@config.json", "--key", "@w.key", "--state-dir", "@state"])
        #expect(noCert.status == 2 && noCert.err.contains("--cert"))
        let badCert = workspace.run(
            base.map { $0 == credentials.certificate ? workspace.path("config.json") : $0 } + [
                "--listen", "127.0.0.1:0",
            ])
        #expect(badCert.status == 1 && badCert.err.contains("TLS"), "\(badCert.err)")
        // A corrupt state refuses the server too.
        _ = try workspace.makeDirectory("state")
        try workspace.write("state/" + Witness.stateFileName(origin: log.origin, hasher: witnessCrypto.hasher), "x")
        let corrupt = workspace.run(base + ["--listen", "127.0.0.1:0"])
        #expect(corrupt.status == 1 && corrupt.err.contains("refusing to start"), "\(corrupt.err)")
    }
}
