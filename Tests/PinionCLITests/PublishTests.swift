// `pinion publish`: the tree it writes and every step it refuses (docs/DESIGN.md §9).

import Foundation
import PinionCore
import PinionCrypto
import PinionSystem
import PinionTestSupport
import Testing

@Suite struct PublishTests {
    let scopeDir = "tree/v1/com.example.app"

    /// A workspace with root.json published and manifest payloads signed in sequence.
    func world() throws -> Workspace {
        let w = try Workspace()
        w.standardRoot()
        w.ok(["publish", "--repo", "@tree", "@root.json"])
        return w
    }

    /// Signs version 1 (m1.json), then each next version chained to the previous.
    func signChain(_ w: Workspace, count: Int, edit: (Int) -> [String] = { _ in [] }) {
        w.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@p1.json"])
        w.ok(["manifest", "set-domain", "@p1.json", "api.example.com", "--pin", pinA, "--pin", pinB])
        w.ok(["sign", "--key", "@pins.key", "@p1.json", "-o", "@m1.json"])
        guard count > 1 else { return }
        for version in 2...count {
            w.ok([
                "manifest", "init", "--previous", "@m\(version - 1).json", "--expires-in", "30d", "-o",
                "@p\(version).json",
            ])
            for extra in [edit(version)] where !extra.isEmpty { w.ok(extra) }
            w.ok(["sign", "--key", "@pins.key", "@p\(version).json", "-o", "@m\(version).json"])
        }
    }

    @Test func aOneCharacterRelativeRepositoryAndStateDirectoryWork() throws {
        // Foundation's NSString.deletingLastPathComponent traps on "t"; publish and the state
        // storage walk parents with PathText instead (a child process: the path is relative).
        let w = try world()
        signChain(w, count: 1)
        let publish = try runProgram(
            pinionExecutable, ["publish", "--repo", "t", "root.json", "m1.json"], in: w.directory.path,
            mergeStandardError: true)
        #expect(publish.status == 0, "\(publish.out)")
        #expect(try w.readBytes("t/v1/com.example.app/manifest.json") == (try w.readBytes("m1.json")))
        let refresh = try runProgram(
            pinionExecutable,
            [
                "client", "refresh", "--root", "root.json", "--scope", "com.example.app", "--state", "s", "--url",
                "https://127.0.0.1:1/",
            ], in: w.directory.path, mergeStandardError: true)
        #expect(refresh.status == 3, "a network failure, not a crash: \(refresh.out)")
        #expect(FileManager.default.fileExists(atPath: w.path("s")))
    }

    @Test func stepsCountUpByOneAlsoAfterAStepOfSeveralEnvelopes() throws {
        let w = try Workspace()
        w.standardRoot()
        signChain(w, count: 2)
        w.ok(["publish", "--repo", "@tree", "@root.json", "@m1.json"])
        w.ok(["publish", "--repo", "@tree", "@m2.json"])
        let index = try PublishedIndex.parse(try w.readBytes("\(scopeDir)/index.json"))
        #expect(index.roots.map(\.sequence) == [1])
        #expect(index.manifests.map(\.sequence) == [1, 2], "the second step is 2, not 3")
        #expect(index.nextSequence == 3)
    }

    @Test func theParentOfAPathIsComputedAsText() {
        #expect(PathText.parent(of: "t") == "")
        #expect(PathText.parent(of: "tree") == "")
        #expect(PathText.parent(of: "a/t") == "a")
        #expect(PathText.parent(of: "a/b/") == "a")
        #expect(PathText.parent(of: "/t") == "/")
        #expect(PathText.parent(of: "/srv//pins") == "/srv")
        #expect(PathText.parent(of: "/") == "/")
    }

    @Test func writesTheTreeWithManifestLast() throws {
        let w = try world()
        signChain(w, count: 2)
        w.ok(["publish", "--repo", "@tree", "@m1.json"])
        w.ok(["publish", "--repo", "@tree", "@m2.json"])
        #expect(try w.readBytes("\(scopeDir)/root/1.json") == (try w.readBytes("root.json")))
        #expect(try w.readBytes("\(scopeDir)/history/1.json") == (try w.readBytes("m1.json")))
        #expect(try w.readBytes("\(scopeDir)/history/2.json") == (try w.readBytes("m2.json")))
        #expect(try w.readBytes("\(scopeDir)/manifest.json") == (try w.readBytes("m2.json")))
        let index = try PublishedIndex.parse(try w.readBytes("\(scopeDir)/index.json"))
        #expect(index.manifests.map(\.version) == [1, 2])
        let payload = try Envelope.parse(try w.readBytes("m2.json")).payload
        #expect(index.manifests[1].payloadSHA256 == CryptoProvider.sodium.hasher.sha256(payload))
    }

    @Test func refusesAFirstRootThatIsNotVersionOne() throws {
        let w = try Workspace()
        w.standardRoot()
        w.ok(["root", "rotate", "--previous", "@root.json", "-o", "@r2.json"])
        w.ok(["sign", "--key", "@root.key", "@r2.json", "-o", "@root2.json"])
        let result = w.run(["publish", "--repo", "@tree", "@root2.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("must be version 1"))
        #expect(!w.exists("tree/v1"))
    }

    @Test func refusesAManifestBeforeAnyRoot() throws {
        let w = try Workspace()
        w.standardRoot()
        w.standardManifest()
        let result = w.run(["publish", "--repo", "@tree", "@manifest.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("publish root version 1 first"))
    }

    @Test func rootRotationNeedsBothThresholdsAndTheNextVersion() throws {
        let w = try world()
        w.quickKey("new-root")
        w.ok([
            "root", "rotate", "--previous", "@root.json", "--add-root-key", "@new-root.pub", "--remove-root-key",
            "@root.pub", "-o", "@r2.json",
        ])
        w.ok(["sign", "--key", "@new-root.key", "@r2.json", "-o", "@root2-half.json"])
        #expect(w.run(["publish", "--repo", "@tree", "@root2-half.json"]).status == 1)
        w.ok(["sign", "--key", "@root.key", "@root2-half.json", "-o", "@root2.json"])
        w.ok(["publish", "--repo", "@tree", "@root2.json"])
        #expect(w.exists("\(scopeDir)/root/2.json"))
        // The same root again is a no-op; other bytes for version 2 are refused.
        #expect(w.ok(["publish", "--repo", "@tree", "@root2.json"]).out.contains("already published"))
        #expect(w.run(["publish", "--repo", "@tree", "@root2-half.json"]).status == 1)
    }

    @Test func refusesVersionSkipsBadPreviousAndRollback() throws {
        let w = try world()
        signChain(w, count: 3)
        w.ok(["publish", "--repo", "@tree", "@m1.json"])
        let skip = w.run(["publish", "--repo", "@tree", "@m3.json"])
        #expect(skip.status == 1)
        #expect(skip.err.contains("is not the next version 2"))
        w.ok(["publish", "--repo", "@tree", "@m2.json"])
        let old = w.run(["publish", "--repo", "@tree", "@m1.json"])
        #expect(old.status == 1)
        #expect(old.err.contains("older than the latest (version 2); serving it again would be a rollback"))
        // A version 3 whose previous is not version 2's payload.
        w.ok(["manifest", "init", "--previous", "@m1.json", "--expires-in", "30d", "-o", "@bad.json"])
        let text = try w.read("bad.json").replacingOccurrences(of: "\"version\": 2", with: "\"version\": 3")
        try w.write("bad.json", text)
        w.ok(["sign", "--key", "@pins.key", "@bad.json", "-o", "@bad-m3.json"])
        let badPrevious = w.run(["publish", "--repo", "@tree", "@bad-m3.json"])
        #expect(badPrevious.status == 1)
        #expect(badPrevious.err.contains("previous is sha256:"))
        #expect(try w.readBytes("\(scopeDir)/manifest.json") == (try w.readBytes("m2.json")))
    }

    @Test func refusesLiftingARevocationUnlessAllowed() throws {
        let w = try world()
        signChain(w, count: 3) { version in
            switch version {
            case 2: return ["manifest", "revoke-pin", "@p2.json", pinC]
            default: return []
            }
        }
        // Version 3 drops the revocation of version 2.
        let text = try w.read("p3.json").replacingOccurrences(of: "\"\(pinC)\"", with: "")
            .replacingOccurrences(of: "\"revokedPins\": [\n    \n  ]", with: "\"revokedPins\": []")
        try w.write("p3.json", text)
        w.ok(["sign", "--key", "@pins.key", "@p3.json", "-o", "@m3.json", "--force"])
        w.ok(["publish", "--repo", "@tree", "@m1.json"])
        w.ok(["publish", "--repo", "@tree", "@m2.json"])
        let refused = w.run(["publish", "--repo", "@tree", "@m3.json"])
        #expect(refused.status == 1)
        #expect(refused.err.contains("revocation(s) of the latest version missing"))
        let lifted = w.ok(["publish", "--repo", "@tree", "@m3.json", "--allow-lift"])
        #expect(lifted.err.contains("lifting revocation"))
    }

    @Test func refusesExpiredAndForgedManifests() throws {
        let w = try world()
        signChain(w, count: 1)
        let late = w.run(["publish", "--repo", "@tree", "@m1.json", "--at", "2027-01-15T00:00:00Z"])
        #expect(late.status == 1)
        #expect(late.err.contains("expired"))
        var envelope = try Envelope.parse(try w.readBytes("m1.json"))
        envelope.signatures[0].signature[9] ^= 2
        try w.writeBytes("forged.json", envelope.serialized())
        #expect(w.run(["publish", "--repo", "@tree", "@forged.json"]).status == 1)
        #expect(!w.exists("\(scopeDir)/manifest.json"))
    }

    @Test func aPublishThatDiedMidwayIsCompletedByRunningItAgain() throws {
        let w = try world()
        signChain(w, count: 2)
        w.ok(["publish", "--repo", "@tree", "@m1.json"])
        w.ok(["publish", "--repo", "@tree", "@m2.json"])
        // Simulate a crash after the history file: the index and manifest.json are old.
        try FileManager.default.removeItem(atPath: w.path("\(scopeDir)/manifest.json"))
        try w.writeBytes("\(scopeDir)/manifest.json", try w.readBytes("m1.json"))
        var index = try PublishedIndex.parse(try w.readBytes("\(scopeDir)/index.json"))
        index.manifests.removeLast()
        try w.writeBytes("\(scopeDir)/index.json", index.serialized())
        // Another envelope cannot jump over the unfinished one.
        w.ok(["manifest", "init", "--previous", "@m1.json", "--expires-in", "29d", "-o", "@alt.json"])
        w.ok(["sign", "--key", "@pins.key", "@alt.json", "-o", "@alt-m2.json"])
        let blocked = w.run(["publish", "--repo", "@tree", "@alt-m2.json"])
        #expect(blocked.status == 1)
        w.ok(["publish", "--repo", "@tree", "@m2.json"])
        #expect(try w.readBytes("\(scopeDir)/manifest.json") == (try w.readBytes("m2.json")))
        #expect(try PublishedIndex.parse(try w.readBytes("\(scopeDir)/index.json")).manifests.map(\.version) == [1, 2])
        #expect(w.ok(["publish", "--repo", "@tree", "@m2.json"]).out.contains("already published"))
    }

    @Test func refusesToBuildOnADamagedTree() throws {
        let w = try world()
        signChain(w, count: 3)
        w.ok(["publish", "--repo", "@tree", "@m1.json"])
        w.ok(["publish", "--repo", "@tree", "@m2.json"])
        let pristine = try w.readBytes("\(scopeDir)/index.json")
        // The index says version 2 had another payload than history/2.json holds.
        var index = try PublishedIndex.parse(pristine)
        index.manifests[1].payloadSHA256 = [UInt8](repeating: 0xFF, count: 32)
        try w.writeBytes("\(scopeDir)/index.json", index.serialized())
        #expect(w.run(["publish", "--repo", "@tree", "@m3.json"]).status == 1)
        // An emptied index over existing history.
        index.manifests = []
        try w.writeBytes("\(scopeDir)/index.json", index.serialized())
        let emptied = w.run(["publish", "--repo", "@tree", "@m3.json"])
        #expect(emptied.status == 1)
        #expect(emptied.err.contains("does not list"))
        // Roots lost under existing history, and an index.json that does not list the root
        // given: no new chain may start there.
        try FileManager.default.removeItem(atPath: w.path("\(scopeDir)/root"))
        index.roots = []
        try w.writeBytes("\(scopeDir)/index.json", index.serialized())
        let lost = w.run(["publish", "--repo", "@tree", "@root.json"])
        #expect(lost.status == 1)
        #expect(lost.err.contains("root/ is empty"), "\(lost.err)")
        #expect(!w.exists("\(scopeDir)/root/1.json"))
        // The same root 1 that index.json lists (a first publish that died before its last
        // write, root/1.json) is put back: publishing it again completes that publish.
        try w.writeBytes("\(scopeDir)/index.json", pristine)
        let restored = w.run(["publish", "--repo", "@tree", "@root.json"])
        #expect(restored.status == 0, "\(restored.err)")
        #expect(try w.readBytes("\(scopeDir)/root/1.json") == (try w.readBytes("root.json")))
    }

    @Test func aSymlinkedManifestIsRefusedBeforeAnyWrite() throws {
        let w = try world()
        signChain(w, count: 2)
        w.ok(["publish", "--repo", "@tree", "@m1.json"])
        try FileManager.default.moveItem(atPath: w.path("\(scopeDir)/manifest.json"), toPath: w.path("real.json"))
        try FileManager.default.createSymbolicLink(
            atPath: w.path("\(scopeDir)/manifest.json"), withDestinationPath: w.path("real.json"))
        #expect(w.run(["publish", "--repo", "@tree", "@m2.json"]).status == 1)
        #expect(!w.exists("\(scopeDir)/history/2.json"))
        #expect(try PublishedIndex.parse(try w.readBytes("\(scopeDir)/index.json")).manifests.map(\.version) == [1])
    }
}
