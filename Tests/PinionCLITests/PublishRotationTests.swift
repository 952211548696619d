// `pinion root rotate` and `pinion publish` across root rotations (docs/DESIGN.md §4, §9):
// pinsRoleSince, several envelopes in one step, the refused lone root, index.json's roots.

import Foundation
import PinionCore
import PinionCrypto
import PinionTestSupport
import Testing

@Suite struct PublishRotationTests {
    let scopeDir = "tree/v1/com.example.app"

    /// root.json and manifest m1.json (under root 1) published.
    func world() throws -> Workspace {
        let w = try Workspace()
        w.standardRoot()
        w.ok(["publish", "--repo", "@tree", "@root.json"])
        w.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@p1.json"])
        w.ok(["manifest", "set-domain", "@p1.json", "api.example.com", "--pin", pinA, "--pin", pinB])
        w.ok(["sign", "--key", "@pins.key", "@p1.json", "-o", "@m1.json"])
        w.ok(["publish", "--repo", "@tree", "@m1.json"])
        return w
    }

    /// Signs root 2 from `r2.json` with root.key.
    func signRoot(_ w: Workspace) {
        w.ok(["sign", "--key", "@root.key", "@r2.json", "-o", "@root2.json"])
    }

    /// The next manifest m2.json under root2.json, signed with `key`.
    func signManifest2(_ w: Workspace, key: String) {
        w.ok([
            "manifest", "init", "--previous", "@m1.json", "--root", "@root2.json", "--expires-in", "30d", "-o",
            "@p2.json",
        ])
        w.ok(["sign", "--key", "@\(key).key", "--root", "@root2.json", "@p2.json", "-o", "@m2.json"])
    }

    func index(_ w: Workspace) throws -> PublishedIndex {
        try PublishedIndex.parse(try w.readBytes("\(scopeDir)/index.json"))
    }

    @Test func aRotationThatKeepsThePinsRoleIsPublishedAlone() throws {
        let w = try world()
        w.quickKey("root-b")
        let rotate = w.ok([
            "root", "rotate", "--previous", "@root.json", "--add-root-key", "@root-b.pub", "-o", "@r2.json",
        ])
        #expect(rotate.out.contains("pinsRoleSince 1"))
        #expect(try RootPayload.parse(try w.readBytes("r2.json"), crypto: sodium).pinsRoleSince == 1)
        w.ok(["sign", "--key", "@root.key", "--key", "@root-b.key", "@r2.json", "-o", "@root2.json"])
        let published = w.ok(["publish", "--repo", "@tree", "@root2.json"])
        #expect(published.out.contains("published root version 2"))
        #expect(try w.readBytes("\(scopeDir)/root/2.json") == (try w.readBytes("root2.json")))
        let listed = try index(w)
        #expect(listed.roots.map(\.version) == [1, 2])
        #expect(listed.roots.map(\.sequence) == [1, 3])
        #expect(listed.manifests.map(\.sequence) == [2])
        // The manifest under root 1 still verifies under root 2: the audit passes.
        let audit = w.run(["audit", "--root", "@root.json", "@tree"])
        #expect(audit.status == 0, "\(audit.out)")
    }

    @Test func aRootThatCutsOffTheLatestManifestIsRefusedAlone() throws {
        let w = try world()
        w.quickKey("pins-2")
        let rotate = w.ok([
            "root", "rotate", "--previous", "@root.json", "--add-pins-key", "@pins-2.pub", "--remove-pins-key",
            "@pins.pub", "-o", "@r2.json",
        ])
        #expect(rotate.out.contains("pinsRoleSince 2"))
        signRoot(w)
        let indexBefore = try w.readBytes("\(scopeDir)/index.json")
        let alone = w.run(["publish", "--repo", "@tree", "@root2.json"])
        #expect(alone.status == 1)
        #expect(alone.err.contains("root version 2 would cut clients off"))
        #expect(alone.err.contains("publish the root together with a manifest signed under it"))
        #expect(!w.exists("\(scopeDir)/root/2.json"))
        #expect(try w.readBytes("\(scopeDir)/index.json") == indexBefore)

        // Together with the manifest re-signed under it: one step, root written last.
        signManifest2(w, key: "pins-2")
        let together = w.ok(["publish", "--repo", "@tree", "@m2.json", "@root2.json"])
        #expect(together.out.contains("published root version 2"))
        #expect(together.out.contains("published manifest version 2 (rootVersion 2)"))
        #expect(try w.readBytes("\(scopeDir)/manifest.json") == (try w.readBytes("m2.json")))
        let listed = try index(w)
        #expect(listed.roots.map(\.version) == [1, 2])
        #expect(listed.roots[1].sequence == listed.manifests[1].sequence)
        #expect(listed.manifests.map(\.version) == [1, 2])
        // Again: a no-op.
        let again = w.ok(["publish", "--repo", "@tree", "@root2.json", "@m2.json"])
        #expect(again.out.contains("root version 2 is already published (no change)"))
        #expect(again.out.contains("manifest version 2 is already published (no change)"))
        #expect(try index(w) == listed)
        #expect(w.run(["audit", "--root", "@root.json", "@tree"]).status == 0)
    }

    @Test func aBatchIsCheckedAsAWhole() throws {
        let w = try world()
        w.quickKey("pins-2")
        w.ok([
            "root", "rotate", "--previous", "@root.json", "--add-pins-key", "@pins-2.pub", "--remove-pins-key",
            "@pins.pub", "-o", "@r2.json",
        ])
        signRoot(w)
        // The manifest is signed by the replaced key: neither it nor the root is published.
        w.ok([
            "manifest", "init", "--previous", "@m1.json", "--root", "@root2.json", "--expires-in", "30d", "-o",
            "@p2-old.json",
        ])
        w.ok(["sign", "--key", "@pins.key", "@p2-old.json", "-o", "@m2-old-key.json"])
        let indexBefore = try w.readBytes("\(scopeDir)/index.json")
        let refused = w.run(["publish", "--repo", "@tree", "@root2.json", "@m2-old-key.json"])
        #expect(refused.status == 1)
        #expect(refused.err.contains("m2-old-key.json"))
        #expect(!w.exists("\(scopeDir)/root/2.json"))
        #expect(!w.exists("\(scopeDir)/history/2.json"))
        #expect(try w.readBytes("\(scopeDir)/index.json") == indexBefore)
        #expect(try w.readBytes("\(scopeDir)/manifest.json") == (try w.readBytes("m1.json")))
        // A rollback inside a batch is refused too.
        signManifest2(w, key: "pins-2")
        let rollback = w.run(["publish", "--repo", "@tree", "@root2.json", "@m2.json", "@m1.json"])
        #expect(rollback.status == 1)
        #expect(!w.exists("\(scopeDir)/root/2.json"))
    }

    @Test func cutOffManifestsForcesANewPinsRoleSince() throws {
        let w = try world()
        let rotate = w.ok(["root", "rotate", "--previous", "@root.json", "--cut-off-manifests", "-o", "@r2.json"])
        #expect(rotate.out.contains("pinsRoleSince 2"))
        #expect(try RootPayload.parse(try w.readBytes("r2.json"), crypto: sodium).pinsRoleSince == 2)
        signRoot(w)
        #expect(w.run(["publish", "--repo", "@tree", "@root2.json"]).status == 1)
        // A raised cap moves it too.
        let raised = w.ok([
            "root", "rotate", "--previous", "@root.json", "--max-manifest-lifetime", "400d", "-o", "@r2b.json",
        ])
        #expect(raised.out.contains("pinsRoleSince 2"))
    }

    @Test func refusesARootThatKeepsPinsRoleSinceOverAChangedPinsRole() throws {
        let w = try world()
        w.quickKey("pins-2")
        w.ok([
            "root", "rotate", "--previous", "@root.json", "--add-pins-key", "@pins-2.pub", "-o", "@r2.json",
        ])
        // Hand-edited to keep manifests of root 1 although the pins role gained a key.
        var payload = try RootPayload.parse(try w.readBytes("r2.json"), crypto: sodium)
        payload.pinsRoleSince = 1
        try w.writeBytes("r2.json", payload.serialized())
        signRoot(w)
        let refused = w.run(["publish", "--repo", "@tree", "@root2.json"])
        #expect(refused.status == 1)
        #expect(refused.err.contains("pinsRoleSince must be 2, not 1"))
        #expect(!w.exists("\(scopeDir)/root/2.json"))
        // The verifier refuses it too, and so does the auditor when it is copied in by hand.
        #expect(w.run(["verify", "--root", "@root.json", "@root2.json"]).status == 1)
        try w.copy("root2.json", to: "\(scopeDir)/root/2.json")
        let audit = w.run(["audit", "--root", "@root.json", "@tree"])
        #expect(audit.status == 1)
        #expect(audit.out.contains("root/2.json (version 2): [root-rotation] root version 2 changes the pins role"))
    }

    @Test func refusesEnvelopesOfTwoScopesOrOneVersionTwice() throws {
        let w = try world()
        let other = try Workspace()
        other.standardRoot(scope: "com.other.app")
        try w.writeBytes("other-root.json", try other.readBytes("root.json"))
        let scopes = w.run(["publish", "--repo", "@tree", "@m1.json", "@other-root.json"])
        #expect(scopes.status == 2)
        #expect(scopes.err.contains("one publish holds one scope"))
        let twice = w.run(["publish", "--repo", "@tree", "@m1.json", "@m1.json"])
        #expect(twice.status == 2)
        #expect(twice.err.contains("manifest version 1 is given twice"))
        #expect(w.run(["publish", "--repo", "@tree"]).status == 2)
    }

    @Test func readsTheOlderManifestOnlyIndex() throws {
        let hash = String(repeating: "ab", count: 32)
        let old = """
            {"type":"pinion.index","specVersion":1,"scope":"com.example.app","manifests":[
            {"version":1,"rootVersion":1,"payloadSHA256":"\(hash)","issuedAt":"2026-11-30T09:00:00Z","expiresAt":"2026-12-30T09:00:00Z"},
            {"version":2,"rootVersion":1,"payloadSHA256":"sha256:\(hash)","issuedAt":"2026-11-30T09:00:00Z","expiresAt":"2026-12-30T09:00:00Z"}]}
            """
        let parsed = try PublishedIndex.parse(Array(old.utf8))
        #expect(parsed.roots.isEmpty)
        #expect(parsed.manifests.map(\.sequence) == [nil, nil])
        #expect(parsed.manifests[0].payloadSHA256 == parsed.manifests[1].payloadSHA256)
        #expect(parsed.nextSequence == 3)
        // Round trip of the new form, and sequence numbers that go back are refused.
        var current = parsed
        current.roots = [
            .init(sequence: 4, version: 1, payloadSHA256: parsed.manifests[0].payloadSHA256, expiresAt: t0)
        ]
        current.manifests[1].sequence = 5
        #expect(try PublishedIndex.parse(current.serialized()) == current)
        current.roots.append(
            .init(sequence: 3, version: 2, payloadSHA256: parsed.manifests[0].payloadSHA256, expiresAt: t0))
        #expect(throws: FormatError.self) { try PublishedIndex.parse(current.serialized()) }
        current.roots[1].sequence = 0
        #expect(throws: FormatError.self) { try PublishedIndex.parse(current.serialized()) }
    }

    @Test func auditFlagsEveryStepAtWhichTheLatestManifestDidNotVerifyUnderTheNewestRoot() throws {
        let w = try world()
        w.quickKey("pins-2")
        w.ok([
            "root", "rotate", "--previous", "@root.json", "--add-pins-key", "@pins-2.pub", "--remove-pins-key",
            "@pins.pub", "-o", "@r2.json",
        ])
        signRoot(w)
        // Root 2 copied into the tree by hand, as step 3, without the manifest signed under it.
        try w.copy("root2.json", to: "\(scopeDir)/root/2.json")
        var listed = try index(w)
        let root2 = try Envelope.parse(try w.readBytes("root2.json"))
        listed.roots.append(
            .init(
                sequence: 3, version: 2, payloadSHA256: sodium.hasher.sha256(root2.payload),
                expiresAt: try RootPayload.parse(root2.payload, crypto: sodium).expiresAt))
        try w.writeBytes("\(scopeDir)/index.json", listed.serialized())
        let cutOff = w.run(["audit", "--root", "@root.json", "@tree"])
        #expect(cutOff.status == 1)
        #expect(cutOff.out.contains("history/1.json (version 1): [latest-not-under-newest-root] after publish step 3"))
        #expect(cutOff.out.contains("[latest-not-under-newest-root] in the tree as it is") == false)

        // The manifest under root 2 follows as step 4: the tree is whole again, step 3 stays
        // on the record.
        signManifest2(w, key: "pins-2")
        w.ok(["publish", "--repo", "@tree", "@m2.json"])
        #expect(try index(w).manifests.map(\.sequence) == [2, 4])
        let later = w.run(["audit", "--root", "@root.json", "@tree"])
        #expect(later.status == 1)
        #expect(later.out.contains("after publish step 3"))
        #expect(!later.out.contains("version 2): [latest-not-under-newest-root]"))

        // Without index.json's steps, only the tree as it is can be judged.
        try w.writeBytes("\(scopeDir)/root/2.json", try w.readBytes("root2.json"))
        var unsequenced = try index(w)
        unsequenced.roots = []
        for position in unsequenced.manifests.indices { unsequenced.manifests[position].sequence = nil }
        unsequenced.manifests.removeLast()
        try w.writeBytes("\(scopeDir)/index.json", unsequenced.serialized())
        try FileManager.default.removeItem(atPath: w.path("\(scopeDir)/history/2.json"))
        try w.copy("m1.json", to: "\(scopeDir)/manifest.json.new")
        try FileManager.default.removeItem(atPath: w.path("\(scopeDir)/manifest.json"))
        try FileManager.default.moveItem(
            atPath: w.path("\(scopeDir)/manifest.json.new"), toPath: w.path("\(scopeDir)/manifest.json"))
        let asItIs = w.run(["audit", "--root", "@root.json", "@tree"])
        #expect(asItIs.status == 1)
        #expect(asItIs.out.contains("history/1.json (version 1): [latest-not-under-newest-root] in the tree as it is"))
    }

    @Test func auditFlagsAnExpiredNewestRootAndLatestManifestAsViolations() throws {
        let w = try world()
        let fine = w.run(["audit", "--root", "@root.json", "@tree", "--at", t0.adding(seconds: day).description])
        #expect(fine.status == 0, "\(fine.out)")
        let late = t0.adding(seconds: 800 * day)
        let audit = w.run(["audit", "--root", "@root.json", "@tree", "--at", late.description])
        #expect(audit.status == 1)
        #expect(audit.out.contains("history/1.json (version 1): [latest-expired]"))
        #expect(audit.out.contains("root/1.json (version 1): [root-expired]"))
    }
}
