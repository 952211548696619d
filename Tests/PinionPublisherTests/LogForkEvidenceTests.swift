// A thief with the log key, and witness forks: publish and log refresh stop only on a log-signed checkpoint they never published, and name it.

import Foundation
import PinionCore
import PinionCrypto
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

@testable import PinionPublisher

@Suite struct LogForkEvidenceTests {
    /// A scope with root 1 and manifest 1 logged and cosigned by every witness that is up.
    func startedWorld(down: [Int] = []) throws -> LogWorld {
        let world = try LogWorld()
        for index in down { world.witnesses[index].isDown = true }
        try world.publish([try world.root(), try world.nextManifest()])
        for index in down { world.witnesses[index].isDown = false }
        return world
    }

    func refusal(_ body: () throws(PublishError) -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            guard case .refused(nil, let reason) = error else { return "\(error)" }
            return reason
        }
    }

    /// The thief holds the pins key and the log key: it appends its own head, signs size 2 and
    /// has every witness cosign it, writing nothing the publisher serves. The team's next
    /// publish and log refresh stop and name an extension they never published.
    @Test func theThiefsUnpublishedExtensionStopsPublishAndRefreshByName() throws {
        let world = try startedWorld()
        try world.thiefExtends()
        #expect(world.witnesses.allSatisfy { $0.latestSize == 2 }, "every witness cosigned the thief's size 2")
        let before = world.snapshot()
        let next = try world.nextManifest()
        let reason = try #require(refusal { () throws(PublishError) in _ = try world.publish([next]) })
        #expect(reason.contains("an extension we never published"), "\(reason)")
        #expect(reason.contains("likely stolen keys"), "\(reason)")
        #expect(reason.contains("docs/TRANSPARENCY.md"), "the runbook: \(reason)")
        #expect(reason.contains(" | 2 | "), "the witness's note is printed: \(reason)")
        #expect(world.snapshot() == before, "nothing written")
        let refreshed = try Publisher.refreshLog(
            repo: world.repo, at: t0.adding(seconds: 3600), crypto: sodium, log: try world.context())
        guard case .failed(_, .refused(nil, let refreshReason)) = try #require(refreshed.first) else {
            Issue.record("not refused: \(refreshed)")
            return
        }
        #expect(refreshReason.contains("an extension we never published"), "\(refreshReason)")
        #expect(world.snapshot() == before, "nothing written")
    }

    /// One witness holds a log-signed fork at the published size: the publish stops even
    /// though the two other witnesses meet the quorum.
    @Test func aSignedForkStopsAPublishEvenWhenTheQuorumIsMet() throws {
        let world = try startedWorld(down: [2])
        try world.thiefForks(witness: world.witnesses[2])
        let before = world.snapshot()
        let next = try world.nextManifest()
        let reason = try #require(refusal { () throws(PublishError) in _ = try world.publish([next]) })
        #expect(reason.contains("w3.example"), "\(reason)")
        #expect(reason.contains("a fork of ours"), "\(reason)")
        #expect(world.snapshot() == before, "nothing written")
    }

    /// A 422 whose checkpoint carries no log signature is no evidence: it counts against that
    /// witness, and the publish goes on with the other two.
    @Test func anUnsignedConflictCountsAgainstTheWitnessOnly() throws {
        let world = try startedWorld(down: [2])
        try world.thiefForks(witness: world.witnesses[2])
        let served = try #require(world.witnesses[2].servedNote)
        // The witness keeps refusing (422 for another tree of size 1) but serves a note
        // whose log signature is broken.
        var forged = served
        let firstSignature = try #require(forged.indices.first { forged[$0] == 0xE2 })
        forged[firstSignature + 40] ^= 0x01
        world.witnesses[2].servedNote = forged
        let outcome = try world.publish([try world.nextManifest()])
        let log = try #require(outcome.log)
        #expect(log.cosigners.sorted() == ["w1.example", "w2.example"])
        #expect(
            log.failures.contains { $0.contains("w3.example") && $0.contains("nothing we can verify") },
            "\(log.failures)")
    }

    /// Our own pending checkpoint at a witness (a publish below the quorum) is not a
    /// compromise: publishing the same envelopes again completes it.
    @Test func ourOwnPendingCheckpointIsNotEvidence() throws {
        let world = try startedWorld()
        world.witnesses[1].isDown = true
        world.witnesses[2].goDown(afterAnswers: 1)
        let next = try world.nextManifest()
        #expect(refusal { () throws(PublishError) in _ = try world.publish([next]) }?.contains("pending") == true)
        world.witnesses[1].isDown = false
        world.witnesses[2].isDown = false
        let outcome = try world.publish([next])
        #expect(outcome.log?.size == 2)
    }
}
