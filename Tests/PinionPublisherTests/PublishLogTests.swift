// Publishing with a transparency log (docs/TRANSPARENCY.md "Publishing steps"): heads, tiles, witnesses, outages, pending and log refresh, backfill, refusals.

import Foundation
import PinionCore
import PinionCrypto
import PinionLog
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

@testable import PinionPublisher

@Suite struct PublishLogTests {
    /// The client's check of manifest.proof against manifest.json and the newest root.
    func verifyServed(_ world: LogWorld, newestRoot: [UInt8], stored: StoredCheckpoint? = nil) throws
        -> VerifiedLogProof
    {
        let proof = try #require(world.read("manifest.proof"))
        let manifest = try Envelope.parse(try #require(world.read("manifest.json")))
        let payload = try ManifestPayload.parse(manifest.payload)
        let root = try Envelope.parse(newestRoot)
        let rootPayload = try RootPayload.parse(root.payload, crypto: sodium)
        return try LogVerification.verify(
            proofBytes: proof, policy: try #require(rootPayload.log),
            manifest: ManifestIdentity(
                scope: payload.scope, rootVersion: payload.rootVersion, version: payload.version,
                payloadSHA256: sodium.hasher.sha256(manifest.payload)),
            newestRoot: RootIdentity(version: rootPayload.version, payloadSHA256: sodium.hasher.sha256(root.payload)),
            stored: stored, now: t0.secondsSince1970 + 3600, crypto: sodium)
    }

    func checkpoint(_ world: LogWorld) throws -> Checkpoint {
        let note = try SignedNote.parse(try #require(world.read("log/checkpoint")))
        return try Checkpoint.parse(note.text, hasher: MerkleHasher(sodium.hasher))
    }

    @Test func eachPublishAppendsOneHeadAndTheProofVerifies() throws {
        let world = try LogWorld()
        let root = try world.root()
        try world.publish([root])
        #expect(world.read("log/checkpoint") == nil, "no manifest yet: nothing to log")
        var stored: StoredCheckpoint?
        for expected in 1...3 {
            let outcome = try world.publish([try world.nextManifest()])
            let log = try #require(outcome.log)
            #expect(log.size == UInt64(expected))
            #expect(log.appended == 1)
            #expect(log.cosigners.count == 3)
            let verified = try verifyServed(world, newestRoot: root, stored: stored)
            #expect(verified.head.sequence == Int64(expected - 1))
            #expect(verified.head.manifestVersion == Int64(expected))
            #expect(try checkpoint(world).size == UInt64(expected))
            stored = verified.stored
        }
        // The tiles give the checkpoint's root hash, and hold exactly the three heads.
        let current = try checkpoint(world)
        var heads: [HeadRecord] = []
        try TileAudit.verify(
            size: current.size, rootHash: current.rootHash,
            reader: DiskTiles(logDirectory: world.scopeDirectory + "/log"),
            hasher: MerkleHasher(sodium.hasher), visit: { _, entry in heads.append(try HeadRecord.parse(entry)) })
        #expect(heads.map(\.manifestVersion) == [1, 2, 3])
        #expect(world.snapshot().keys.allSatisfy { !$0.hasPrefix("pending") }, "no pending file after a success")
    }

    @Test func publishWithoutTheLogKeyOrWithAnotherKeyIsRefusedBeforeAnyWrite() throws {
        let world = try LogWorld()
        try world.publish([try world.root()])
        try world.publish([try world.nextManifest()])
        let before = world.snapshot()
        let next = try world.nextManifest()
        do {
            try world.publish([next], log: false)
            Issue.record("published without --log-key")
        } catch {
            guard case .usage(let message) = error else { throw error }
            #expect(message.contains("--log-key"))
        }
        let other = LogPublishContext(
            signer: Ed25519NoteSigner(key: try makeKey()),
            witnesses: FakeWitnessNetwork(
                witnesses: world.witnesses, logKey: try world.logVerifierKey, origin: LogWorld.origin))
        do {
            _ = try Publisher.publish(
                [next], into: world.repo, at: t0.adding(seconds: 3600), crypto: sodium, log: other)
            Issue.record("published with another log key")
        } catch {
            guard case .usage(let message) = error else { throw error }
            #expect(message.contains("not the log key"))
        }
        #expect(world.snapshot() == before)
    }

    @Test func oneWitnessDownStillReachesTheQuorum() throws {
        let world = try LogWorld()
        let root = try world.root()
        try world.publish([root])
        try world.publish([try world.nextManifest()])
        world.witnesses[2].isDown = true
        let outcome = try world.publish([try world.nextManifest()])
        let log = try #require(outcome.log)
        #expect(log.cosigners.sorted() == ["w1.example", "w2.example"])
        #expect(log.failures.count == 1)
        let verified = try verifyServed(world, newestRoot: root)
        #expect(verified.head.manifestVersion == 2)
        #expect(verified.witnesses.count == 2)
    }

    @Test func twoWitnessesDownRefusesWithTheTreeUnchangedAndRefreshCompletesLater() throws {
        let world = try LogWorld()
        let root = try world.root()
        try world.publish([root])
        try world.publish([try world.nextManifest()])
        let before = world.snapshot()
        world.witnesses[1].isDown = true
        world.witnesses[2].isDown = true
        let next = try world.nextManifest()
        do {
            try world.publish([next])
            Issue.record("published below the quorum")
        } catch {
            guard case .refused(nil, let reason) = error else { throw error }
            #expect(reason.contains("quorum is 2"))
        }
        #expect(world.snapshot() == before, "step 1 (re-cosign the current checkpoint) failed: nothing written")
        // A refresh with the witnesses still down: the scope fails (refused), still nothing changed.
        let refreshed = try Publisher.refreshLog(
            repo: world.repo, at: t0.adding(seconds: 3600), crypto: sodium, log: try world.context())
        guard case .failed("com.example.app", .refused(nil, let reason)) = try #require(refreshed.first) else {
            Issue.record("not refused: \(refreshed)")
            return
        }
        #expect(reason.contains("quorum"), "\(reason)")
        #expect(world.snapshot() == before)
        world.witnesses[1].isDown = false
        try world.publish([next])
        #expect(try verifyServed(world, newestRoot: root).head.manifestVersion == 2)
    }

    /// The scope's first publish (root 1 and manifest 1 together) below the quorum: history
    /// and index.json are written, root/1.json (written last) is not. Both `log refresh` and
    /// the same publish run again must complete it (the guard against a tree that lost its
    /// roots must not refuse either).
    @Test func aFirstPublishBelowTheQuorumIsCompletedByRefreshAndByPublishingAgain() throws {
        for completeByRefresh in [true, false] {
            let world = try LogWorld()
            let root = try world.root()
            let first = try world.nextManifest()
            world.witnesses[1].goDown(afterAnswers: 0)
            world.witnesses[2].goDown(afterAnswers: 0)
            do {
                try world.publish([root, first])
                Issue.record("published below the quorum")
            } catch {
                guard case .refused(nil, let reason) = error else { throw error }
                #expect(reason.contains("pending"), "\(reason)")
            }
            #expect(world.read("root/1.json") == nil, "roots are written last")
            #expect(world.read("manifest.json") == nil)
            world.witnesses[1].isDown = false
            if completeByRefresh {
                let outcomes = try Publisher.refreshLog(
                    repo: world.repo, at: t0.adding(seconds: 60), crypto: sodium, log: try world.context())
                guard case .completed(_, let outcome) = try #require(outcomes.first) else {
                    Issue.record("not completed: \(outcomes)")
                    continue
                }
                #expect(outcome.log?.size == 1)
            } else {
                try world.publish([root, first])
            }
            #expect(world.read("root/1.json") != nil, "completed by \(completeByRefresh ? "log refresh" : "publish")")
            #expect(try verifyServed(world, newestRoot: root).head.manifestVersion == 1)
        }
        // A tree whose roots were really lost (history, no root/, an index that does not
        // list this root) is still refused.
        let world = try LogWorld()
        let root = try world.root()
        try world.publish([root, try world.nextManifest()])
        try FileManager.default.removeItem(atPath: world.repo + "/v1/com.example.app/root")
        try FileManager.default.removeItem(atPath: world.repo + "/v1/com.example.app/index.json")
        do {
            try world.publish([root])
            Issue.record("a tree without its roots was accepted")
        } catch {
            guard case .refused(nil, let reason) = error else { throw error }
            #expect(reason.contains("root/ is empty"), "\(reason)")
        }
    }

    @Test func witnessesLostAfterStepOneLeaveAPendingPublishThatRefreshCompletes() throws {
        let world = try LogWorld()
        let root = try world.root()
        try world.publish([root])
        try world.publish([try world.nextManifest()])
        let servedBefore = ["manifest.json", "manifest.proof", "log/checkpoint"].map { world.read($0) }
        // Two witnesses answer step 1's re-cosign, then go down before the new checkpoint.
        world.witnesses[1].goDown(afterAnswers: 1)
        world.witnesses[2].goDown(afterAnswers: 1)
        let next = try world.nextManifest()
        do {
            try world.publish([next])
            Issue.record("published below the quorum")
        } catch {
            guard case .refused(nil, let reason) = error else { throw error }
            #expect(reason.contains("pending"))
        }
        #expect(["manifest.json", "manifest.proof", "log/checkpoint"].map { world.read($0) } == servedBefore)
        let pending = try SignedNote.parse(
            try #require(FileManager.default.contents(atPath: world.repo + "/pending/com.example.app/checkpoint")).map {
                $0
            })
        #expect(pending.text.contains("\n2\n"), "the log-signed checkpoint of size 2 is pending")
        #expect(pending.signatures.count == 1, "signed by the log only")
        world.witnesses[1].isDown = false
        let outcomes = try Publisher.refreshLog(
            repo: world.repo, at: t0.adding(seconds: 3600), crypto: sodium, log: try world.context())
        guard case .completed(let scope, let outcome) = try #require(outcomes.first) else {
            Issue.record("not completed: \(outcomes)")
            return
        }
        #expect(scope == "com.example.app")
        #expect(outcome.log?.size == 2)
        #expect(try verifyServed(world, newestRoot: root).head.manifestVersion == 2)
        #expect(!FileManager.default.fileExists(atPath: world.repo + "/pending/com.example.app"))
    }

    @Test func refreshWithNothingPendingReCosignsAndRewritesTheProof() throws {
        let world = try LogWorld()
        let root = try world.root()
        try world.publish([root])
        try world.publish([try world.nextManifest()])
        let oldProof = try #require(world.read("manifest.proof"))
        let oldTiles = world.snapshot(under: world.scopeDirectory + "/log/tile")
        for witness in world.witnesses { witness.time += 1800 }
        let outcomes = try Publisher.refreshLog(
            repo: world.repo, at: t0.adding(seconds: 3600), crypto: sodium, log: try world.context())
        guard case .refreshed(_, let log) = try #require(outcomes.first) else {
            Issue.record("not refreshed: \(outcomes)")
            return
        }
        #expect(log.size == 1)
        #expect(log.appended == 0)
        #expect(
            log.cosignedAt == Dictionary(uniqueKeysWithValues: world.witnesses.map { ($0.name, $0.time) }),
            "each cosigner's cosignature time, for the future-time warning")
        let newProof = try #require(world.read("manifest.proof"))
        #expect(newProof != oldProof)
        let verified = try verifyServed(world, newestRoot: root)
        #expect(verified.stored.quorumTime == t0.secondsSince1970 + 1800, "t_q is the fresh cosignatures' time")
        let note = try SignedNote.parse(try #require(world.read("log/checkpoint")))
        #expect(note.signatures.count == 4, "the log's signature and three fresh cosignatures, the old ones dropped")
        #expect(world.snapshot(under: world.scopeDirectory + "/log/tile") == oldTiles, "no tile changes")
    }

    /// The refresh reports every failing scope, not only the first. Two
    /// broken scopes sort before and after a healthy one: both are reported by name, and the
    /// healthy one is still re-cosigned.
    @Test func refreshTriesEveryScopeAndReportsEachFailingOne() throws {
        let world = try LogWorld()
        try world.publish([try world.root()])
        try world.publish([try world.nextManifest()])
        for broken in ["com.example.aaa", "com.example.zzz"] {
            let copy = world.repo + "/v1/" + broken
            try FileManager.default.copyItem(atPath: world.scopeDirectory, toPath: copy)
            // A copy under another name (its documents name com.example.app) and a checkpoint
            // without its log signature: refused.
            try Data("not a signed note\n".utf8).write(to: URL(fileURLWithPath: copy + "/log/checkpoint"))
        }
        let brokenBefore = world.snapshot(under: world.repo + "/v1/com.example.zzz")
        let oldProof = try #require(world.read("manifest.proof"))
        for witness in world.witnesses { witness.time += 1800 }
        let outcomes = try Publisher.refreshLog(
            repo: world.repo, at: t0.adding(seconds: 3600), crypto: sodium, log: try world.context())
        #expect(outcomes.count == 3, "\(outcomes)")
        var failed: [String] = []
        var refreshed: [String] = []
        for outcome in outcomes {
            switch outcome {
            case .failed(let scope, .refused(nil, let reason)):
                #expect(reason.contains("v1/\(scope)/"), "each failure names its own scope: \(reason)")
                failed.append(scope)
            case .refreshed(let scope, let log):
                #expect(log.cosigners.count == 3)
                refreshed.append(scope)
            default: Issue.record("unexpected \(outcome)")
            }
        }
        #expect(failed == ["com.example.aaa", "com.example.zzz"])
        #expect(refreshed == ["com.example.app"])
        #expect(try #require(world.read("manifest.proof")) != oldProof, "the healthy scope was re-cosigned")
        #expect(world.snapshot(under: world.repo + "/v1/com.example.zzz") == brokenBefore, "nothing corrupted")
    }

    @Test func addingALogToAnExistingScopeBackfillsOneHeadPerEarlierStep() throws {
        let world = try LogWorld()
        try world.publish([try world.root(withLog: false)], log: false)
        try world.publish([try world.nextManifest()], log: false)
        try world.publish([try world.nextManifest()], log: false)
        let root2 = try world.root(version: 2)
        let outcome = try world.publish([root2, try world.nextManifest(rootVersion: 2)])
        #expect(outcome.log?.size == 3)
        #expect(outcome.log?.appended == 3)
        let current = try checkpoint(world)
        var heads: [HeadRecord] = []
        try TileAudit.verify(
            size: current.size, rootHash: current.rootHash,
            reader: DiskTiles(logDirectory: world.scopeDirectory + "/log"),
            hasher: MerkleHasher(sodium.hasher), visit: { _, entry in heads.append(try HeadRecord.parse(entry)) })
        #expect(heads.map(\.sequence) == [0, 1, 2])
        #expect(heads.map(\.manifestVersion) == [1, 2, 3])
        #expect(heads.map(\.rootVersion) == [1, 1, 2], "each head names the newest root of its own step")
        #expect(try verifyServed(world, newestRoot: root2).head.sequence == 2)
    }

    @Test func aRootAloneAfterManifestsIsRefusedWithALog() throws {
        let world = try LogWorld()
        try world.publish([try world.root()])
        try world.publish([try world.nextManifest()])
        let before = world.snapshot()
        var payload = rootPayload(version: 2, rootKeys: [world.setup.rootKey], pinsKeys: [world.setup.pinsKey])
        payload.log = try world.policy()
        payload.pinsRoleSince = 1
        let root2 = try sign(.root, payload.serialized(), with: [world.setup.rootKey]).serialized()
        do {
            try world.publish([root2])
            Issue.record("published a root no head names")
        } catch {
            guard case .refused(nil, let reason) = error else { throw error }
            #expect(reason.contains("together with a manifest"))
        }
        #expect(world.snapshot() == before)
    }

    @Test func aStoredCheckpointNotSignedByTheLogKeyIsRefused() throws {
        let world = try LogWorld()
        try world.publish([try world.root()])
        try world.publish([try world.nextManifest()])
        let forged = try SignedNote.sign(
            text: "\(LogWorld.origin)\n1\n\(Base64.encode([UInt8](repeating: 7, count: 32)))\n",
            keyName: LogWorld.origin, signer: Ed25519NoteSigner(key: try makeKey()), hasher: sodium.hasher)
        let path = world.scopeDirectory + "/log/checkpoint"
        try Data(
            SignedNote(
                text: "\(LogWorld.origin)\n1\n\(Base64.encode([UInt8](repeating: 7, count: 32)))\n",
                signatures: [forged]
            ).bytes
        )
        .write(to: URL(fileURLWithPath: path))
        let before = world.snapshot()
        let next = try world.nextManifest()
        do {
            try world.publish([next])
            Issue.record("extended a log from a forged checkpoint")
        } catch {
            guard case .refused(nil, let reason) = error else { throw error }
            #expect(reason.contains("not signed by the log key"))
        }
        #expect(world.snapshot() == before)
    }

    @Test func aRewrittenTileIsRefused() throws {
        let world = try LogWorld()
        try world.publish([try world.root()])
        try world.publish([try world.nextManifest()])
        let tile = world.scopeDirectory + "/log/tile/0/000.p/1"
        var bytes = try #require(FileManager.default.contents(atPath: tile)).map { $0 }
        bytes[0] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: tile))
        let before = world.snapshot()
        let next = try world.nextManifest()
        do {
            try world.publish([next])
            Issue.record("extended a log whose tiles disagree with its checkpoint")
        } catch {
            guard case .refused(nil, let reason) = error else { throw error }
            #expect(reason.contains("do not match"))
        }
        #expect(world.snapshot() == before)
    }

    @Test func aWitnessBehindTheLogIsBroughtUpWithAConsistencyProof() throws {
        let world = try LogWorld()
        try world.publish([try world.root()])
        world.witnesses[2].isDown = true
        try world.publish([try world.nextManifest()])
        try world.publish([try world.nextManifest()])
        #expect(world.witnesses[2].latestSize == nil)
        world.witnesses[2].isDown = false
        let outcome = try world.publish([try world.nextManifest()])
        #expect(outcome.log?.cosigners.count == 3, "the lagging witness answered 409 and cosigned on the retry")
        #expect(world.witnesses[2].latestSize == 3)
    }
}
