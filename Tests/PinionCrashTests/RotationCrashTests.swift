// Crash consistency of a rotation published in one step (docs/DESIGN.md §9): `pinion
// publish ROOT MANIFEST` killed with SIGKILL at random moments never leaves a new root in
// the tree before the manifest that verifies under it, and re-running it completes it.

import Foundation
import PinionCore
import PinionCrypto
import PinionTestSupport
import Testing

@Suite(.serialized) struct RotationCrashTests {
    static let kills = 60

    /// A tree with root 1 and manifest 1, and batches of (root N+1 with a new pins key,
    /// manifest under it) signed on demand.
    final class RotationWorld {
        let rootKey: Ed25519SecretKey
        var pinsKey: Ed25519SecretKey
        let workspace: String
        var rootVersion: Int64 = 1
        var version: Int64 = 1
        var previous: [UInt8]?

        var repo: String { workspace + "/repo" }
        var scope: String { repo + "/v1/com.example.app" }
        var rootFile: String { workspace + "/root-1.json" }

        init() throws {
            rootKey = try makeKey()
            pinsKey = try makeKey()
            workspace =
                FileManager.default.temporaryDirectory.appendingPathComponent("pinion-rotation-crash-\(UUID())")
                .path
            try FileManager.default.createDirectory(atPath: workspace, withIntermediateDirectories: true)
            let root = rootPayload(rootKeys: [rootKey], pinsKeys: [pinsKey])
            try write(try sign(.root, root.serialized(), with: [rootKey]), to: rootFile)
            try publish([rootFile])
            try publish([try signManifest()])
        }

        deinit { try? FileManager.default.removeItem(atPath: workspace) }

        func write(_ envelope: Envelope, to path: String) throws {
            try Data(envelope.serialized()).write(to: URL(fileURLWithPath: path))
        }

        func publish(_ files: [String]) throws {
            let result = runPinion(["publish", "--repo", repo] + files + ["--at", t0.description])
            guard result.status == 0 else { throw SetupFailure(description: "publish \(files): \(result.err)") }
        }

        /// Manifest `version` under `rootVersion`, signed by the current pins key.
        func signManifest() throws -> String {
            var payload = manifestPayload(version: version, rootVersion: rootVersion, issuedAt: t0)
            payload.previous = previous
            let bytes = payload.serialized()
            previous = OpenSSLSupport.sha256(bytes)
            let file = workspace + "/m\(version).json"
            try write(try sign(.pins, bytes, with: [pinsKey]), to: file)
            return file
        }

        /// The next rotation (a new pins key, so pinsRoleSince moves) and its manifest.
        func nextBatch() throws -> [String] {
            rootVersion += 1
            version += 1
            pinsKey = try makeKey()
            let root = rootPayload(version: rootVersion, rootKeys: [rootKey], pinsKeys: [pinsKey])
            let rootFile = workspace + "/root-\(rootVersion).json"
            try write(try sign(.root, root.serialized(), with: [rootKey]), to: rootFile)
            return [rootFile, try signManifest()]
        }

        func servedVersion() throws -> Int64 {
            let envelope = try Envelope.parse(
                [UInt8](try Data(contentsOf: URL(fileURLWithPath: scope + "/manifest.json"))))
            return try ManifestPayload.parse(envelope.payload).version
        }
    }

    @Test func aRotationKilledAtAnyMomentNeverShowsARootBeforeItsManifest() throws {
        let world = try RotationWorld()
        let first = try world.nextBatch()
        let (duration, status) = try timedRun(["publish", "--repo", world.repo] + first + ["--at", t0.description])
        #expect(status == 0)
        var generator = SplitMix(state: crashSeed() &+ 2)
        var killedDuringRun = 0
        var windows = 0
        for kill in 0..<Self.kills {
            let batch = try world.nextBatch()
            let delay = Double.random(in: 0...(duration * 1.2), using: &generator)
            if try runAndKill(["publish", "--repo", world.repo] + batch + ["--at", t0.description], after: delay) {
                killedDuringRun += 1
            }
            let rootWritten = FileManager.default.fileExists(atPath: world.scope + "/root/\(world.rootVersion).json")
            let served = try world.servedVersion()
            #expect(served == world.version || served == world.version - 1, "kill \(kill): manifest.json v\(served)")
            // The root appears only after the manifest that verifies under it.
            if rootWritten { #expect(served == world.version, "kill \(kill): root before its manifest") }
            if !rootWritten && served == world.version { windows += 1 }
            try world.publish(batch)
            #expect(try world.servedVersion() == world.version, "kill \(kill)")
            #expect(FileManager.default.fileExists(atPath: world.scope + "/root/\(world.rootVersion).json"))
        }
        // Under load the timed run says little about later ones: the invariants above are the
        // test; this only makes sure some kills hit a running publish at all.
        #expect(killedDuringRun > 0, "no kill hit a running publish")
        print(
            "rotation crash: \(killedDuringRun) kills during a publish, \(windows) in the manifest-before-root window")
        let audit = runPinion([
            "audit", "--root", world.rootFile, world.repo, "--at", t0.adding(seconds: 60).description,
        ])
        #expect(audit.status == 0, "\(audit.out)")
        let index = try PublishedIndex.parse(
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: world.scope + "/index.json"))))
        #expect(index.roots.map(\.version) == Array(1...world.rootVersion))
        #expect(index.manifests.map(\.version) == Array(1...world.version))
    }
}
