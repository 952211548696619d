// `pinion publish --log-key` SIGKILLed at seeded moments while two real witnesses cosign (the seed is printed; PINION_CRASH_SEED replays): re-running the same publish always completes it, and what is served always verifies.

import Foundation
import PinionCore
import PinionLog
import PinionTestSupport
import PinionTrust
import Testing

@Suite(.serialized) struct PublishLogKillTests {
    static let kills = 24

    @Test func aKilledLoggedPublishIsCompletedByRunningItAgain() throws {
        let world = try WitnessedWorkspace()
        try #require(try world.publish(["@root.json"]).status == 0)
        try world.signManifest(1)
        let first = try timedRun(world.publishArguments(["@m1.json"]))
        try #require(first.status == 0)
        var generator = SplitMix(state: crashSeed())
        var killed = 0
        for version in 2...(Self.kills + 1) {
            try world.signManifest(version)
            let arguments = world.publishArguments(["@m\(version).json"])
            // Kill moments spread over one publish's duration (measured on the previous one).
            let delay = Double.random(in: 0...(first.seconds * 1.5), using: &generator)
            if try runAndKill(arguments, after: delay) { killed += 1 }
            // What clients see meanwhile: a consistent state, or (between the two writes)
            // the new proof one step ahead of manifest.json; never manifest.json ahead of it.
            do { _ = try world.verifyServed(now: Int64(Date().timeIntervalSince1970)) } catch {
                let scope = "tree/v1/com.example.app/"
                let proof = try TlogProof.parse(try world.workspace.readBytes(scope + "manifest.proof"))
                let head = try HeadRecord.parse(try #require(proof.extra))
                let served = try ManifestPayload.parse(
                    try Envelope.parse(try world.workspace.readBytes(scope + "manifest.json")).payload)
                #expect(
                    head.manifestVersion == served.version + 1,
                    "after the kill of version \(version): \(error); proof names \(head.manifestVersion), manifest.json is \(served.version)"
                )
            }
            let again = try world.workspace.pinion(arguments)
            #expect(again.status == 0, "re-run of version \(version): \(again.err)")
            let verified = try world.verifyServed(now: Int64(Date().timeIntervalSince1970))
            #expect(verified.head.manifestVersion == Int64(version))
            #expect(verified.head.sequence == Int64(version - 1), "one head per step, none lost or doubled")
            #expect(!world.workspace.exists("tree/pending/com.example.app"))
        }
        print("killed \(killed) of \(Self.kills) logged publishes mid-way")
        #expect(killed > 0, "no kill landed inside a publish: the delays are too long")
    }
}
