// A publish with a log stopped after every one of its writes (as SIGKILL between two atomic writes would), then re-run: the tree it completes is the one an uninterrupted publish writes.

import Foundation
import PinionCore
import PinionCrypto
@testable import PinionPublisher
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

@Suite struct PublishLogCrashTests {
    @Test func aPublishStoppedAfterAnyWriteIsCompletedByRunningItAgain() throws {
        let world = try LogWorld()
        let root = try world.root()
        try world.publish([root])
        try world.publish([try world.nextManifest()])
        let saved = world.repo + "-saved"
        try FileManager.default.copyItem(atPath: world.repo, toPath: saved)
        defer { try? FileManager.default.removeItem(atPath: saved) }
        let witnessState = world.witnesses.map(\.latestCheckpoint)
        func restore() throws {
            try FileManager.default.removeItem(atPath: world.repo)
            try FileManager.default.copyItem(atPath: saved, toPath: world.repo)
            for (witness, latest) in zip(world.witnesses, witnessState) { witness.latestCheckpoint = latest }
        }
        let next = try world.nextManifest()
        try world.publish([next])
        let reference = world.snapshot(under: world.repo + "/v1")
        var stops = 0
        for writes in 0..<40 {
            try restore()
            do {
                try world.publish([next], crashAfterWrites: writes)
                break  // this many writes complete the publish: every earlier stop was tried
            } catch {
                guard case .refused(nil, "simulated crash") = error else { throw error }
            }
            stops += 1
            // What a client sees meanwhile: manifest.json is never ahead of manifest.proof.
            let served = try ManifestPayload.parse(try Envelope.parse(try #require(world.read("manifest.json"))).payload)
            if served.version == 2 {
                #expect(throws: Never.self, "stopped after \(writes) writes") {
                    _ = try PublishLogTests().verifyServed(world, newestRoot: root)
                }
            }
            try world.publish([next])
            #expect(world.snapshot(under: world.repo + "/v1") == reference, "stopped after \(writes) writes")
            #expect(!FileManager.default.fileExists(atPath: world.repo + "/pending/com.example.app"))
        }
        // history, index.json, two tiles, the pending envelope and checkpoint, manifest.proof,
        // log/checkpoint, manifest.json: every one of them was a stop.
        #expect(stops == 9)
    }
}
