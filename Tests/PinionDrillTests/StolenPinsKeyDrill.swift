// Drill: the pins key is stolen (docs/THREAT_MODEL.md, "Stolen pins key"). The thief signs
// a manifest with the highest version and every pin revoked and serves it to some clients;
// a root rotation replacing the pins key and a new manifest restore them.

import Foundation
import PinionCore
import PinionLinux
import PinionTestSupport
import Testing

@Suite struct StolenPinsKeyDrill {
    /// The highest version a document may carry (2^53 - 1).
    static let hugeVersion: Int64 = 9_007_199_254_740_991

    @Test func thiefsManifestBricksItsVictimsUntilThePinsKeyIsReplaced() throws {
        let team = try Team("pins-key")
        let start = t0.adding(seconds: 3600)
        let victim = try team.device(at: start)
        let bystander = try team.device(at: start)
        #expect(victim.refresh() == .updated(1, 1))
        #expect(bystander.refresh() == .updated(1, 1))

        // The thief holds a copy of pins.key and the public root 1. With the real CLI and a
        // hand edit of the payload's version: every pin of api.example.test revoked.
        let attack = t0.adding(seconds: day)
        let desk = team.desk
        try desk.require(
            [
                "manifest", "init", "--root", "@root-1.json", "--issued-at", attack.description, "--expires-in", "30d",
                "-o", "@evil.payload.json",
            ], at: attack)
        try desk.require(
            [
                "manifest", "set-domain", "@evil.payload.json", apiHost, "--pin", team.pin(.primary), "--pin",
                team.pin(.backup),
            ], at: attack)
        try desk.require(["manifest", "revoke-pin", "@evil.payload.json", team.pin(.primary)], at: attack)
        try desk.require(["manifest", "revoke-pin", "@evil.payload.json", team.pin(.backup)], at: attack)
        let payload = try desk.read("evil.payload.json")
        try #require(payload.contains("\"version\": 1,"))
        try desk.writeBytes(
            "evil.payload.json",
            Array(payload.replacingOccurrences(of: "\"version\": 1,", with: "\"version\": \(Self.hugeVersion),").utf8))
        try desk.require(
            [
                "sign", "--key", "@pins.key", "--allow-single-pin", "--root", "@root-1.json", "@evil.payload.json",
                "-o",
                "@evil.json",
            ], at: attack)

        // pinion publish refuses it on the real tree; the thief serves it from an edge it
        // controls instead (a copy of the tree whose manifest.json is replaced).
        let refused = team.publish("evil.json", at: attack)
        #expect(refused.status == 1)
        #expect(refused.err.contains("version \(Self.hugeVersion) is not the next version 2"))
        try desk.copy("tree", to: "edge")
        try desk.writeBytes("edge/v1/\(appScope)/manifest.json", try desk.readBytes("evil.json"))
        let edge = try Server(tree: desk.path("edge"), leaf: .publisher, pki: team.pki)

        // The victim's refreshes go through the edge: it accepts the manifest (it is signed
        // by the pins role) and api.example.test has no usable pin left, baseline included.
        try victim.install(embeddedRoot: try desk.readBytes("root-1.json"), publisher: edge)
        victim.clock.now = attack.adding(seconds: 3600)
        #expect(victim.refresh() == .updated(1, Self.hugeVersion))
        #expect(victim.apiPins == [])
        #expect(victim.connect(to: team.api) == .refused(.noUsablePin))
        // The bystander never saw it.
        bystander.clock.now = attack.adding(seconds: 3600)
        #expect(bystander.refresh() == .unchanged)
        #expect(bystander.connect(to: team.api) == .trusted(try team.typedPin(.primary)))
        // The auditor names the edge's manifest.json.
        let edgeAudit = team.audit(desk.path("edge"), at: attack.adding(seconds: 3600))
        #expect(edgeAudit.status == 1)
        #expect(
            edgeAudit.out.contains(
                "manifest.json (version \(Self.hugeVersion)): [manifest-ahead-of-index] holds version \(Self.hugeVersion), beyond the latest version 1 of index.json"
            ))

        // A new manifest under the same root does not help: it is below the victim's floor.
        let reaction = attack.adding(seconds: 2 * 3600)
        try team.nextManifest("manifest-2", previous: "manifest-1.json", root: "root-1.json", at: reaction)
        #expect(team.publish("manifest-2.json", at: reaction).status == 0)
        try victim.install(embeddedRoot: try desk.readBytes("root-1.json"), publisher: team.publisher)
        victim.clock.now = reaction.adding(seconds: 60)
        #expect(
            victim.refresh()
                == .rejected(.rollback(offered: ManifestOrder(1, 2), floor: ManifestOrder(1, Self.hugeVersion))))
        #expect(victim.connect(to: team.api) == .refused(.noUsablePin))

        // Recovery: a new pins key, root 2 signed by the root role (alice and bob, old and
        // new role alike), published; then the next manifest signed by the new key.
        let recovery = attack.adding(seconds: 3 * 3600)
        let newPinsID = try desk.require(["keygen", "--out", "@pins-2", "--insecure-no-passphrase"], at: recovery).out
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let rotate = try desk.require(
            [
                "root", "rotate", "--previous", "@root-1.json", "--add-pins-key", "@pins-2.pub", "--remove-pins-key",
                "@pins.pub", "--issued-at", recovery.description, "--expires-in", "1y", "-o", "@root-2.payload.json",
            ], at: recovery)
        #expect(rotate.out.contains("pinsRoleSince 2: the published manifest stops verifying"))
        try desk.require(
            ["sign", "--key", "@alice.key", "--key", "@bob.key", "@root-2.payload.json", "-o", "@root-2.json"],
            at: recovery)
        try desk.require(
            ["verify", "--root", "@root-1.json", "@root-2.json", "--at", recovery.description], at: recovery)
        // Root 2 alone would cut every client off (manifest 2 does not verify under the new
        // pins role): refused, nothing written. It goes out with the manifest signed under it.
        let treeBefore = try desk.readBytes("tree/v1/\(appScope)/index.json")
        let alone = team.publish("root-2.json", at: recovery)
        #expect(alone.status == 1)
        #expect(alone.err.contains("root version 2 would cut clients off"), "\(alone.err)")
        #expect(!desk.exists("tree/v1/\(appScope)/root/2.json"))
        #expect(try desk.readBytes("tree/v1/\(appScope)/index.json") == treeBefore)
        try team.nextManifest(
            "manifest-3", previous: "manifest-2.json", root: "root-2.json", at: recovery, pinsKeys: ["pins-2"])
        let together = desk.run(["publish", "--repo", "@tree", "@root-2.json", "@manifest-3.json"], at: recovery)
        #expect(together.status == 0, "\(together.err)")
        #expect(desk.exists("tree/v1/\(appScope)/root/2.json"))
        let index = try PublishedIndex.parse(try desk.readBytes("tree/v1/\(appScope)/index.json"))
        #expect(index.roots.map(\.version) == [1, 2])
        #expect(index.manifests.map(\.version) == [1, 2, 3])
        // One step: the root and its manifest share a sequence number, after manifest 2's.
        #expect(index.roots[1].sequence != nil && index.roots[1].sequence == index.manifests[2].sequence)
        #expect((index.manifests[1].sequence ?? 0) < (index.manifests[2].sequence ?? 0))
        let audit = team.audit(team.tree, at: recovery.adding(seconds: 60))
        #expect(audit.status == 0, "\(audit.out)")
        #expect(audit.out.contains("(pins role changed)"))
        #expect(audit.out.contains("    pins role 1 of 1: \(newPinsID)"))

        // The victim walks to root 2 and accepts version 3: a lower version than its floor,
        // but (rootVersion 2, version 3) is above (1, 2^53 - 1). The revoked set restarts.
        victim.clock.now = recovery.adding(seconds: 3600)
        _ = victim.takeEvents()
        #expect(victim.refresh() == .updated(2, 3))
        #expect(victim.takeEvents().contains(.rootAccepted(version: 2)))
        #expect(victim.client.trustedState.revoked.isEmpty)
        #expect(victim.connect(to: team.api) == .trusted(try team.typedPin(.primary)))
        bystander.clock.now = recovery.adding(seconds: 3600)
        #expect(bystander.refresh() == .updated(2, 3))
        #expect(bystander.connect(to: team.api) == .trusted(try team.typedPin(.primary)))

        // From now on the stolen key counts for nothing: the edge's manifest no longer
        // verifies under root 2's pins role.
        try victim.install(embeddedRoot: try desk.readBytes("root-1.json"), publisher: edge)
        #expect(
            victim.refresh() == .rejected(.trust(.thresholdNotMet(role: .pins, rootVersion: 2, valid: 0, threshold: 1)))
        )
        #expect(victim.connect(to: team.api) == .trusted(try team.typedPin(.primary)))
    }
}
