// End to end with two real `pinion witness` processes: a thief with the log key has the witnesses cosign an extension it never publishes; publish, log refresh and the audit name it, and honest publishes in flight or stalled are not called a compromise.

import Foundation
import PinionCore
import PinionCrypto
import PinionLog
import PinionPublisher
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

@Suite(.serialized) struct UnpublishedEntriesTests {
    /// The thief: appends its own head to the served tree in memory, signs the larger
    /// checkpoint with the stolen log key and sends it to every witness. Nothing is written
    /// to the tree.
    @discardableResult
    func thiefExtends(_ world: WitnessedWorkspace) throws -> SignedNote {
        let workspace = world.workspace
        let logDirectory = workspace.path("tree/v1/com.example.app/log")
        let note = try SignedNote.parse(try workspace.readBytes("tree/v1/com.example.app/log/checkpoint"))
        let current = try Checkpoint.parse(note.text, hasher: MerkleHasher(sodium.hasher))
        let head = try HeadRecord(
            scope: "com.example.app", sequence: Int64(current.size), rootVersion: 1,
            rootPayloadSHA256: Array(repeating: 0xAA, count: 32), manifestRootVersion: 1, manifestVersion: 999,
            manifestPayloadSHA256: Array(repeating: 0xBB, count: 32))
        let append = try LogPublishing.append(
            heads: [head], current: current, reader: DiskTiles(logDirectory: logDirectory),
            origin: WitnessedWorkspace.origin,
            logSigner: Ed25519NoteSigner(
                key: KeyFile.readSecretKey(path: workspace.path("log.key"), passphrase: { nil })),
            crypto: sodium)
        let client = HTTPSWitnessClient(caFile: workspace.path("pki/ca.pem"))
        for witness in world.witnesses {
            let answer = try client.addCheckpoint(url: witness.url, body: append.addCheckpointBody)
            try #require(answer.status == 200, "the witness cosigns the thief's extension: \(answer.status)")
        }
        return append.note
    }

    func audit(_ world: WitnessedWorkspace, after seconds: Int64, _ extra: [String] = []) -> CommandResult {
        let at = Timestamp(secondsSince1970: Int64(Date().timeIntervalSince1970) + seconds)
        return world.workspace.run(
            ["audit", "--root", "@root.json", "@tree", "--witness-ca", "@pki/ca.pem", "--at", at.description] + extra,
            at: at)
    }

    @Test func theThiefsExtensionIsNamedByPublishRefreshAndTheAudit() throws {
        let world = try WitnessedWorkspace()
        let workspace = world.workspace
        try world.signManifest(1)
        try #require(try world.publish(["@root.json", "@m1.json"]).status == 0)
        try thiefExtends(world)

        // Within the publish grace the monitor calls it a publish in progress: a warning,
        // exit 4, level 1 in the Prometheus file.
        let early = audit(
            world, after: 60,
            ["--save-checkpoint", "@seen.checkpoint", "--prometheus", "@audit.prom"])
        #expect(early.status == 4, "\(early.out)\(early.err)")
        #expect(early.out.contains("publish in progress"), "\(early.out)")
        #expect(!early.out.contains("log-unpublished-entries"), "\(early.out)")
        #expect(
            String(decoding: try workspace.readBytes("audit.prom"), as: UTF8.self).contains(
                "pinion_audit_level{scope=\"com.example.app\"} 1"))

        // Past the grace: critical, named, with the runbook's first steps; exit 1, level 2.
        let late = audit(world, after: 7200, ["--save-checkpoint", "@seen.checkpoint", "--prometheus", "@audit.prom"])
        #expect(late.status == 1, "\(late.out)\(late.err)")
        #expect(late.out.contains("[log-unpublished-entries]"), "\(late.out)")
        #expect(late.out.contains("treat the pins key and the log key as stolen"), "\(late.out)")
        #expect(!late.out.contains("log-rollback"), "\(late.out)")
        let prom = String(decoding: try workspace.readBytes("audit.prom"), as: UTF8.self)
        #expect(prom.contains("pinion_audit_level{scope=\"com.example.app\"} 2"), "\(prom)")
        #expect(
            prom.contains("pinion_audit_findings{scope=\"com.example.app\",rule=\"log-unpublished-entries\"} 2"),
            "\(prom)")

        // The team's next publish and log refresh stop and name it.
        try world.signManifest(2)
        let publish = try world.publish(["@m2.json"])
        #expect(publish.status == 1, "\(publish.out)\(publish.err)")
        #expect(publish.err.contains("an extension we never published"), "\(publish.err)")
        #expect(publish.err.contains("likely stolen keys"), "\(publish.err)")
        #expect(publish.err.contains("Incident runbook"), "\(publish.err)")
        let refresh = try workspace.pinion(
            ["log", "refresh", "--repo", "@tree"] + world.log + ["--at", workspace.now.description],
            environment: world.environment)
        #expect(refresh.status == 1, "\(refresh.out)\(refresh.err)")
        #expect((refresh.out + refresh.err).contains("an extension we never published"), "\(refresh.out)\(refresh.err)")
    }

    /// An honest publish that stopped below the quorum after the witnesses cosigned its
    /// checkpoint, with its tiles not served (a mirror that copies only what a checkpoint
    /// needs): on the publisher host the audit finds the pending checkpoint and calls it a
    /// stalled publish, even past the grace.
    @Test func aStalledHonestPublishIsNotCalledACompromise() throws {
        let world = try WitnessedWorkspace()
        let workspace = world.workspace
        try world.signManifest(1)
        try #require(try world.publish(["@root.json", "@m1.json"]).status == 0)
        // The publisher's own log-signed size-2 checkpoint, cosigned, saved as pending.
        let pending = try thiefExtends(world)
        try FileManager.default.createDirectory(
            atPath: workspace.path("tree/pending/com.example.app"), withIntermediateDirectories: true)
        try Data(pending.bytes).write(
            to: URL(fileURLWithPath: workspace.path("tree/pending/com.example.app/checkpoint")))
        let result = audit(world, after: 7200)
        #expect(result.status == 0, "\(result.out)")
        #expect(result.out.contains("publish stalled: run pinion log refresh"), "\(result.out)")
        #expect(!result.out.contains("log-unpublished-entries"), "\(result.out)")
    }
}
