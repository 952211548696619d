// `pinion status` with a log: the checkpoint's size, t_q and age, stale/expired/aging verdicts, refused proofs, JSON and Prometheus.

import Foundation
import PinionAudit
import PinionCore
import PinionLog
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

func logStatus(_ tree: LoggedTree, repo: String, at: Timestamp? = nil, warnCheckpointAge: Int64? = nil) throws
    -> PublisherStatus
{
    PublisherStatusCheck.check(
        anchor: try RootChain(anchor: tree.fixture.rootBytes, crypto: sodium),
        source: DirectoryTreeSource(repo: repo, scope: tree.fixture.scope), crypto: sodium,
        options: StatusOptions(at: at ?? tree.fixture.auditTime, warnCheckpointAge: warnCheckpointAge))
}

@Suite struct LogStatusTests {
    @Test func freshCheckpointIsHealthyWithSizeAndQuorumTime() throws {
        let tree = try cleanLoggedTree(4)
        let directory = try TemporaryDirectory()
        try tree.write(to: directory.path)
        let status = try logStatus(tree, repo: directory.path)
        #expect(status.health == .healthy, "\(status.problems)")
        let log = try #require(status.log)
        #expect(log.size == 4)
        #expect(log.quorumTime == tree.cosignTime)
        #expect(log.age == 3600)
        #expect(log.cosigners == ["w1.example", "w2.example"])
        #expect(log.rootHash == tree.rootHash)
    }

    @Test func agingStaleAndExpiredCheckpoints() throws {
        let tree = try cleanLoggedTree(4)
        let directory = try TemporaryDirectory()
        try tree.write(to: directory.path)
        let aging = try logStatus(tree, repo: directory.path, warnCheckpointAge: 1800)
        #expect(aging.problems == [.checkpointAging(age: 3600, warnAfter: 1800)])
        #expect(aging.health == .warning)
        #expect(try logStatus(tree, repo: directory.path, warnCheckpointAge: 3600).health == .healthy)

        let stale = try logStatus(tree, repo: directory.path, at: tree.fixture.auditTime.adding(seconds: day))
        #expect(stale.problems == [.checkpointStale(age: 3600 + day, maxCheckpointAge: day)])
        #expect(stale.health == .warning)

        let expired = try logStatus(tree, repo: directory.path, at: tree.fixture.auditTime.adding(seconds: 9 * day))
        #expect(expired.problems == [.checkpointExpired(age: 3600 + 9 * day, limit: 8 * day)])
        #expect(expired.health == .broken)
    }

    /// Status names a witness cosignature dated in the future: beyond the clients' 5-minute skew it is a warning naming the witness.
    @Test func aCosignatureDatedInTheFutureIsAWarningNamingTheWitness() throws {
        let tree = try cleanLoggedTree(4)
        let audit = tree.fixture.auditTime.secondsSince1970
        let directory = try TemporaryDirectory()
        try tree.write(
            to: directory.path,
            note: try tree.note(cosignedBy: [(0, tree.cosignTime), (1, audit + LogFreshness.allowedFutureSkew + 60)]))
        let status = try logStatus(tree, repo: directory.path)
        #expect(status.problems == [.futureCosignatures(witnesses: ["w2.example"])], "\(status.problems)")
        #expect(status.health == .warning)
        #expect(status.problems.first?.description.contains("witness w2.example") == true)
        #expect(status.problems.first?.code == "future-cosignatures")
        // Within the skew: healthy.
        let within = try TemporaryDirectory()
        try tree.write(
            to: within.path,
            note: try tree.note(cosignedBy: [(0, tree.cosignTime), (1, audit + LogFreshness.allowedFutureSkew)]))
        #expect(try logStatus(tree, repo: within.path).health == .healthy)
    }

    @Test func refusedProofsAreBrokenWithTheClientReason() throws {
        let tree = try cleanLoggedTree(4)
        // Missing.
        var directory = try TemporaryDirectory()
        var files = try tree.write(to: directory.path)
        try files.remove(.manifestProof)
        var status = try logStatus(tree, repo: directory.path)
        #expect(status.health == .broken)
        #expect(status.problems.map(\.code) == ["log-proof-refused"])
        guard case .logProofRefused(let reason, _) = status.problems.first else {
            throw TestSetupError(description: "")
        }
        #expect(reason == "log-proof-missing")
        #expect(status.log == nil)

        // Larger than the client's limit.
        try files.writeLog(.manifestProof, Array(repeating: 0x41, count: TlogProofLimits.standard.maxBytes + 1))
        status = try logStatus(tree, repo: directory.path)
        #expect(
            status.problems == [
                .logProofRefused(reason: "log-proof-too-large", detail: status.problems.first?.detail ?? "")
            ])

        // A manifest left out of the log (published but no head).
        try tree.fixture.extend(1)
        directory = try TemporaryDirectory()
        files = try tree.write(to: directory.path)
        status = try logStatus(tree, repo: directory.path)
        guard case .logProofRefused(let notLogged, _) = status.problems.first else {
            throw TestSetupError(description: "\(status.problems)")
        }
        #expect(notLogged == "log-manifest-not-logged")

        // Below the quorum.
        try tree.logAll()
        directory = try TemporaryDirectory()
        try tree.write(to: directory.path, note: try tree.note(cosignedBy: [(2, tree.cosignTime)]))
        status = try logStatus(tree, repo: directory.path)
        guard case .logProofRefused(let quorum, _) = status.problems.first else {
            throw TestSetupError(description: "\(status.problems)")
        }
        #expect(quorum == "log-quorum-not-met")
    }

    /// Status reads `log/checkpoint` as well as manifest.proof: one left behind (monitors and
    /// witnesses read it; `pinion audit` fails on it) is broken.
    @Test func aServedCheckpointMissingUnreadableOrOfAnotherTreeIsBroken() throws {
        let tree = try cleanLoggedTree(4)
        let directory = try TemporaryDirectory()
        let files = try tree.write(to: directory.path)
        try files.remove(.logCheckpoint)
        var status = try logStatus(tree, repo: directory.path)
        #expect(status.problems == [.logCheckpointDiffers(detail: "missing, but the newest root has a log")])
        #expect(status.health == .broken)
        #expect(status.problems.first?.file == "log/checkpoint")
        #expect(status.log?.size == 4, "manifest.proof itself is still verified and shown")

        try files.writeLog(.logCheckpoint, Array("not a note".utf8))
        status = try logStatus(tree, repo: directory.path)
        #expect(status.problems.map(\.code) == ["log-checkpoint-differs"])
        #expect(status.problems.first?.description.contains("not a checkpoint note") == true)

        // The tree of size 3 (a publish stopped before it rewrote log/checkpoint), and a tree of
        // size 4 with another root hash.
        let older = try tree.note(
            try Checkpoint(origin: LogKeys.origin, size: 3, rootHash: tree.rootHash), cosignedBy: [(0, tree.cosignTime)]
        )
        try files.writeLog(.logCheckpoint, older.bytes)
        status = try logStatus(tree, repo: directory.path)
        #expect(status.problems.map(\.code) == ["log-checkpoint-differs"])
        #expect(status.problems.first?.description.contains("size 3") == true, "\(status.problems)")
        let forked = try tree.note(
            try Checkpoint(origin: LogKeys.origin, size: 4, rootHash: [UInt8](repeating: 7, count: 32)),
            cosignedBy: [(0, tree.cosignTime)])
        try files.writeLog(.logCheckpoint, forked.bytes)
        status = try logStatus(tree, repo: directory.path)
        #expect(status.problems.first?.description.contains("another root hash") == true, "\(status.problems)")

        // Newer cosignatures on the same tree are fine.
        try files.writeLog(
            .logCheckpoint, try tree.note(cosignedBy: [(0, tree.cosignTime + 60), (2, tree.cosignTime)]).bytes)
        #expect(try logStatus(tree, repo: directory.path).health == .healthy)
    }

    /// An upload in progress (docs/DESIGN.md §9): manifest.proof or log/checkpoint already
    /// name a later manifest than manifest.json serves. Clients refuse the proof and keep
    /// their state until manifest.json lands: a warning, not broken.
    @Test func aProofOrCheckpointAheadOfManifestJSONIsAPublishInProgress() throws {
        let tree = try cleanLoggedTree(4)
        let directory = try TemporaryDirectory()
        let files = try tree.write(to: directory.path)
        // manifest.json still serves version 3; the proof is cosigned for version 4.
        try files.write(.manifest, tree.fixture.manifests[2].envelope.serialized())
        var status = try logStatus(tree, repo: directory.path)
        #expect(status.problems.map(\.code) == ["publish-in-progress"], "\(status.problems)")
        #expect(status.health == .warning)
        #expect(
            status.problems.first?.description.contains("manifest.proof is cosigned for manifest version 4") == true)

        // log/checkpoint of a larger tree than manifest.proof's: uploaded first within its phase.
        let files2 = try tree.write(to: directory.path)
        let ahead = try tree.note(
            try Checkpoint(origin: LogKeys.origin, size: 5, rootHash: [UInt8](repeating: 7, count: 32)),
            cosignedBy: [(0, tree.cosignTime)])
        try files2.writeLog(.logCheckpoint, ahead.bytes)
        status = try logStatus(tree, repo: directory.path)
        #expect(status.problems.map(\.code) == ["publish-in-progress"], "\(status.problems)")
        #expect(status.health == .warning)
    }

    @Test func statusCommandPrintsTheCheckpointInTextJSONAndPrometheus() throws {
        let tree = try cleanLoggedTree(3)
        let world = try LoggedAuditWorld(tree)
        let at = tree.fixture.auditTime.description
        let text = runPinion(["status", "--root", world.rootFile, world.repo, "--at", at])
        #expect(text.status == 0, "\(text.out)\(text.err)")
        #expect(text.out.contains("log         checkpoint size 3 of \(LogKeys.origin)"), "\(text.out)")
        #expect(text.out.contains("age 1h (stale after 1d)"), "\(text.out)")

        let metrics = world.path("status.prom")
        let json = runPinion([
            "status", "--root", world.rootFile, world.repo, "--at", at, "--json", "--warn-checkpoint-age", "30m",
            "--prometheus", metrics,
        ])
        #expect(json.status == 4, "\(json.err)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        let log = try #require(object["log"] as? [String: Any])
        #expect(log["size"] as? Int == 3)
        #expect(log["checkpointAge"] as? Int == 3600)
        #expect(log["quorumTime"] as? Int == Int(tree.cosignTime))
        let problems = try #require(object["problems"] as? [[String: Any]])
        #expect(problems.map { $0["code"] as? String } == ["checkpoint-aging"])
        let prometheus = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(prometheus.contains("pinion_status_checkpoint_age_seconds{scope=\"com.example.app\"} 3600"))
        #expect(prometheus.contains("pinion_status_checkpoint_size{scope=\"com.example.app\"} 3"))
        #expect(
            prometheus.contains(
                "pinion_status_checkpoint_quorum_time_seconds{scope=\"com.example.app\"} \(tree.cosignTime)"))

        for bad in ["", "0", "-1h", "1w", "12x"] {
            let refused = runPinion(["status", "--root", world.rootFile, world.repo, "--warn-checkpoint-age", bad])
            #expect(refused.status == 2, "\(bad): \(refused.err)")
        }
    }
}

extension StatusProblem {
    /// The detail text of a refused proof, for comparisons.
    var detail: String? {
        if case .logProofRefused(_, let detail) = self { return detail }
        return nil
    }
}
