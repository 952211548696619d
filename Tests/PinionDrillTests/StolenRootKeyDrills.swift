// Drills: root keys are stolen (docs/THREAT_MODEL.md, "Stolen root key below threshold" and
// "at threshold"). The team's root role is alice, bob and carol, 2 of 3.

import Foundation
import PinionCore
import PinionLinux
import PinionTestSupport
import Testing

/// The thief's keys and root rotation, made with the real CLI: a root role and a pins role
/// of the thief's own keys only, signed by `stolen` (and the thief's new root key).
private func thiefRotation(
    _ team: Team, previous: String, removing: [String], stolen: [String], out: String, at time: Timestamp
) throws -> (rootID: String, pinsID: String) {
    let desk = team.desk
    var ids: [String] = []
    for name in ["evil-root", "evil-pins"] where !FileManager.default.fileExists(atPath: desk.path(name + ".pub")) {
        try desk.require(["keygen", "--out", "@" + name, "--insecure-no-passphrase"], at: time)
    }
    for name in ["evil-root", "evil-pins"] {
        ids.append(
            try desk.require(["key", "id", "@\(name).pub"], at: time).out.trimmingCharacters(
                in: .whitespacesAndNewlines))
    }
    try desk.require(
        ["root", "rotate", "--previous", "@" + previous, "--add-root-key", "@evil-root.pub"]
            + removing.flatMap { ["--remove-root-key", "@\($0).pub"] }
            + [
                "--root-threshold", "1", "--add-pins-key", "@evil-pins.pub", "--remove-pins-key", "@pins.pub",
                "--issued-at", time.description, "--expires-in", "1y", "-o", "@\(out).payload.json",
            ], at: time)
    try desk.require(
        ["sign"] + (stolen + ["evil-root"]).flatMap { ["--key", "@\($0).key"] } + [
            "@\(out).payload.json", "-o",
            "@\(out).json",
        ], at: time)
    return (ids[0], ids[1])
}

@Suite struct StolenRootKeyBelowThresholdDrill {
    @Test func oneStolenKeyCannotRotateAndIsRotatedOut() throws {
        let team = try Team("root-below")
        let device = try team.device(at: t0.adding(seconds: 3600))
        #expect(device.refresh() == .updated(1, 1))

        // The thief holds carol's key: a rotation to its own keys has 1 valid signature of
        // root 1's root role, below the threshold of 2.
        let attack = t0.adding(seconds: day)
        _ = try thiefRotation(
            team, previous: "root-1.json", removing: ["alice", "bob", "carol"], stolen: ["carol"], out: "evil-root-2",
            at: attack)
        let shortfall = "1 valid signature(s) from the root role of root version 1; threshold is 2"
        let published = team.publish("evil-root-2.json", at: attack)
        #expect(published.status == 1)
        #expect(published.err.contains(shortfall))
        let verified = team.desk.run(["verify", "--root", "@root-1.json", "@evil-root-2.json"], at: attack)
        #expect(verified.status == 1)
        #expect(verified.err.contains(shortfall))
        // Written straight into a copy of the tree: the auditor names it, the SDK refuses it.
        try team.desk.copy("tree", to: "edge")
        try team.desk.writeBytes("edge/v1/\(appScope)/root/2.json", try team.desk.readBytes("evil-root-2.json"))
        let audit = team.audit(team.desk.path("edge"), at: attack)
        #expect(audit.status == 1)
        #expect(audit.out.contains("root/2.json (version 2): [root-rotation]"))
        let edge = try Server(tree: team.desk.path("edge"), leaf: .publisher, pki: team.pki)
        try device.install(embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: edge)
        device.clock.now = attack.adding(seconds: 60)
        #expect(
            device.refresh() == .rejected(.trust(.thresholdNotMet(role: .root, rootVersion: 1, valid: 1, threshold: 2)))
        )
        #expect(device.client.trustedState.chain.newest.version == 1)
        #expect(device.connect(to: team.api) == .trusted(try team.typedPin(.primary)))

        // The runbook: a new key for dave, root 2 without carol, signed by alice and bob (2 of
        // root 1's role and 2 of root 2's), the manifest re-signed under root 2.
        let response = attack.adding(seconds: 3600)
        try team.desk.require(["keygen", "--out", "@dave", "--insecure-no-passphrase"], at: response)
        try team.desk.require(
            [
                "root", "rotate", "--previous", "@root-1.json", "--add-root-key", "@dave.pub", "--remove-root-key",
                "@carol.pub", "--issued-at", response.description, "--expires-in", "1y", "-o", "@root-2.payload.json",
            ], at: response)
        let rootDiff = try team.desk.require(["diff", "@root-1.json", "@root-2.payload.json"], at: response).out
        #expect(rootDiff.contains("  - keyid \(team.keyIDs["carol"] ?? "?")"))
        try team.desk.require(
            ["sign", "--key", "@alice.key", "--key", "@bob.key", "@root-2.payload.json", "-o", "@root-2.json"],
            at: response)
        #expect(team.publish("root-2.json", at: response).status == 0)
        try team.nextManifest("manifest-2", previous: "manifest-1.json", root: "root-2.json", at: response)
        #expect(team.publish("manifest-2.json", at: response).status == 0)
        #expect(team.audit(team.tree, at: response).status == 0)
        try device.install(embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: team.publisher)
        device.clock.now = response.adding(seconds: 60)
        #expect(device.refresh() == .updated(2, 2))

        // Carol's key now counts for nothing: with bob's signature as well (which would have
        // made 2 of 3 under root 1), a rotation from root 2 has 1 valid signature.
        let later = response.adding(seconds: day)
        _ = try thiefRotation(
            team, previous: "root-2.json", removing: ["alice", "bob", "dave"], stolen: ["carol", "bob"],
            out: "evil-root-3", at: later)
        let again = team.publish("evil-root-3.json", at: later)
        #expect(again.status == 1)
        #expect(again.err.contains("1 valid signature(s) from the root role of root version 2; threshold is 2"))
        try team.desk.copy("tree", to: "edge-2")
        try team.desk.writeBytes("edge-2/v1/\(appScope)/root/3.json", try team.desk.readBytes("evil-root-3.json"))
        let edge2 = try Server(tree: team.desk.path("edge-2"), leaf: .publisher, pki: team.pki)
        try device.install(embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: edge2)
        device.clock.now = later.adding(seconds: 60)
        #expect(
            device.refresh() == .rejected(.trust(.thresholdNotMet(role: .root, rootVersion: 2, valid: 1, threshold: 2)))
        )
        #expect(device.client.trustedState.chain.newest.version == 2)
    }
}

@Suite struct StolenRootKeysAtThresholdDrill {
    /// The thief's takeover with alice's and bob's keys, published with pinion publish on a
    /// copy of the tree (an edge the thief controls): root 2 of its own keys, then a
    /// manifest pinning api.example.test to the rogue certificate's key.
    func takeOver(_ team: Team, at attack: Timestamp, manifestVersion: Int64? = nil) throws -> (Server, String) {
        let (rootID, _) = try thiefRotation(
            team, previous: "root-1.json", removing: ["alice", "bob", "carol"], stolen: ["alice", "bob"],
            out: "evil-root-2", at: attack)
        try team.desk.copy("tree", to: "edge")
        try team.desk.require(
            [
                "manifest", "init", "--previous", "@manifest-1.json", "--root", "@evil-root-2.json", "--issued-at",
                attack.description, "--expires-in", "30d", "-o", "@evil-2.payload.json",
            ], at: attack)
        try team.desk.require(
            [
                "manifest", "set-domain", "@evil-2.payload.json", apiHost, "--pin", team.pin(.rogue), "--pin",
                team.pin(.spare),
            ], at: attack)
        if let manifestVersion {
            let text = try team.desk.read("evil-2.payload.json")
            try #require(text.contains("\"version\": 2,"))
            try team.desk.writeBytes(
                "evil-2.payload.json",
                Array(text.replacingOccurrences(of: "\"version\": 2,", with: "\"version\": \(manifestVersion),").utf8))
        }
        try team.desk.require(
            [
                "sign", "--key", "@evil-pins.key", "--root", "@evil-root-2.json", "@evil-2.payload.json", "-o",
                "@evil-2.json",
            ], at: attack)
        if manifestVersion == nil {
            // Root 2 replaces the pins role, so it goes out in one step with its manifest.
            try team.desk.require(["publish", "--repo", "@edge", "@evil-root-2.json", "@evil-2.json"], at: attack)
        } else {
            try team.desk.writeBytes("edge/v1/\(appScope)/root/2.json", try team.desk.readBytes("evil-root-2.json"))
            try team.desk.writeBytes("edge/v1/\(appScope)/manifest.json", try team.desk.readBytes("evil-2.json"))
        }
        return (try Server(tree: team.desk.path("edge"), leaf: .publisher, pki: team.pki), rootID)
    }

    /// The team's own root 2 on the real publisher: a new root role (carol, erin, frank, 2 of
    /// 3) and a new pins key, signed by alice and bob (old role) and erin and frank (new
    /// role); manifest 2 re-signed under it.
    func teamRotation(_ team: Team, at time: Timestamp) throws {
        let desk = team.desk
        for name in ["erin", "frank", "pins-2"] {
            try desk.require(["keygen", "--out", "@" + name, "--insecure-no-passphrase"], at: time)
        }
        try desk.require(
            [
                "root", "rotate", "--previous", "@root-1.json", "--add-root-key", "@erin.pub", "--add-root-key",
                "@frank.pub", "--remove-root-key", "@alice.pub", "--remove-root-key", "@bob.pub", "--add-pins-key",
                "@pins-2.pub", "--remove-pins-key", "@pins.pub", "--issued-at", time.description, "--expires-in", "1y",
                "-o", "@root-2.payload.json",
            ], at: time)
        try desk.require(
            [
                "sign", "--key", "@alice.key", "--key", "@bob.key", "--key", "@erin.key", "--key", "@frank.key",
                "@root-2.payload.json", "-o", "@root-2.json",
            ], at: time)
        try team.nextManifest(
            "manifest-2", previous: "manifest-1.json", root: "root-2.json", at: time, pinsKeys: ["pins-2"])
        // A new pins role: root 2 goes out in one step with the manifest signed under it.
        #expect(desk.run(["publish", "--repo", "@tree", "@root-2.json", "@manifest-2.json"], at: time).status == 0)
    }

    @Test func thiefTakesOverClientsOfTheOldAppAndOnlyAnAppReleaseRecovers() throws {
        let team = try Team("root-at")
        let follower = try team.device(at: t0.adding(seconds: 3600))
        #expect(follower.refresh() == .updated(1, 1))

        // With 2 of 3 root keys the thief's rotation is indistinguishable from the team's:
        // pinion publish takes it and the audit passes. Only a person reading the root
        // role's key ids can tell.
        let attack = t0.adding(seconds: day)
        let (edge, thiefRootID) = try takeOver(team, at: attack)
        let audit = team.audit(team.desk.path("edge"), at: attack)
        #expect(audit.status == 0, "\(audit.out)")
        #expect(audit.out.contains("    root role 1 of 1: \(thiefRootID)"))

        // Clients of the app built with root 1 follow the thief's chain and trust its key.
        let rogue = try Server(api: .rogue, pki: team.pki)
        try follower.install(embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: edge)
        follower.clock.now = attack.adding(seconds: 60)
        _ = follower.takeEvents()
        #expect(follower.refresh() == .updated(2, 2))
        #expect(follower.takeEvents().contains(.rootAccepted(version: 2)))
        #expect(follower.connect(to: rogue) == .trusted(try team.typedPin(.rogue)))
        #expect(follower.connect(to: team.api) == .refused(.noMatchingPin))
        // So does every fresh install of that build whose path the thief is on.
        let fresh = try team.device(publisher: edge, at: attack.adding(seconds: 60))
        #expect(fresh.refresh() == .updated(2, 2))
        #expect(fresh.connect(to: rogue) == .trusted(try team.typedPin(.rogue)))

        // The team's own rotation cannot bring the follower back: the follower's newest root
        // is the thief's, whose pins role did not sign the team's manifest, and root 3 would
        // need the thief's root key.
        let response = attack.adding(seconds: 3600)
        try teamRotation(team, at: response)
        // It does protect the old app's clients that reach the real publisher first: once they
        // hold the team's root 2, the thief's chain no longer verifies for them.
        let early = try team.device(at: response.adding(seconds: 60))
        #expect(early.refresh() == .updated(2, 2))
        try early.install(embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: edge)
        #expect(
            early.refresh() == .rejected(.trust(.thresholdNotMet(role: .pins, rootVersion: 2, valid: 0, threshold: 1))))
        #expect(early.connect(to: rogue) == .refused(.noMatchingPin))
        try follower.install(embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: team.publisher)
        follower.clock.now = response.adding(seconds: 60)
        #expect(
            follower.refresh()
                == .rejected(.trust(.thresholdNotMet(role: .pins, rootVersion: 2, valid: 0, threshold: 1))))
        #expect(follower.connect(to: rogue) == .trusted(try team.typedPin(.rogue)))

        // Recovery: an app release embedding the team's root 2. At start-up the stored thief
        // manifest no longer verifies; its domains are refused until the refresh.
        try follower.install(embeddedRoot: try team.desk.readBytes("root-2.json"), publisher: team.publisher)
        #expect(
            follower.takeEvents().contains {
                if case .storeDropped(let reason) = $0 {
                    return reason.hasPrefix("the stored manifest no longer verifies")
                }
                return false
            })
        #expect(follower.connect(to: rogue) == .refused(.noUsablePin))
        #expect(follower.refresh() == .updated(2, 2))
        #expect(follower.connect(to: rogue) == .refused(.noMatchingPin))
        #expect(follower.connect(to: team.api) == .trusted(try team.typedPin(.primary)))
        // The new build refuses the thief's chain even on the thief's path.
        try follower.install(embeddedRoot: try team.desk.readBytes("root-2.json"), publisher: edge)
        #expect(
            follower.refresh()
                == .rejected(.trust(.thresholdNotMet(role: .pins, rootVersion: 2, valid: 0, threshold: 1))))
        #expect(follower.connect(to: team.api) == .trusted(try team.typedPin(.primary)))
    }

    @Test func aReleaseEmbeddingTheTeamsRootDropsTheFloorOfTheThiefsFork() throws {
        let team = try Team("root-at-floor")
        let follower = try team.device(at: t0.adding(seconds: 3600))
        #expect(follower.refresh() == .updated(1, 1))
        let attack = t0.adding(seconds: day)
        let huge: Int64 = 9_007_199_254_740_991
        let (edge, _) = try takeOver(team, at: attack, manifestVersion: huge)
        try follower.install(embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: edge)
        follower.clock.now = attack.adding(seconds: 60)
        #expect(follower.refresh() == .updated(2, huge))

        // A release embedding the team's root 2: the stored root 2 (the thief's) is a fork of
        // the embedded chain, so the floor (2, 2^53 - 1) it set is dropped with it, and the
        // team's manifest (2, 2) is accepted.
        let response = attack.adding(seconds: 3600)
        try teamRotation(team, at: response)
        try follower.install(embeddedRoot: try team.desk.readBytes("root-2.json"), publisher: team.publisher)
        follower.clock.now = response.adding(seconds: 60)
        #expect(follower.refresh() == .updated(2, 2))
        #expect(follower.connect(to: team.api) == .trusted(try team.typedPin(.primary)))

        // Later rotations go on as usual: root 3 (signed by erin and frank) in a next release.
        let second = response.adding(seconds: 3600)
        try team.desk.require(
            [
                "root", "rotate", "--previous", "@root-2.json", "--issued-at", second.description, "--expires-in", "1y",
                "-o", "@root-3.payload.json",
            ], at: second)
        try team.desk.require(
            ["sign", "--key", "@erin.key", "--key", "@frank.key", "@root-3.payload.json", "-o", "@root-3.json"],
            at: second)
        #expect(team.publish("root-3.json", at: second).status == 0)
        try team.nextManifest(
            "manifest-3", previous: "manifest-2.json", root: "root-3.json", at: second, pinsKeys: ["pins-2"])
        #expect(team.publish("manifest-3.json", at: second).status == 0)
        try follower.install(embeddedRoot: try team.desk.readBytes("root-3.json"), publisher: team.publisher)
        follower.clock.now = second.adding(seconds: 60)
        #expect(follower.refresh() == .updated(3, 3))
        #expect(follower.connect(to: team.api) == .trusted(try team.typedPin(.primary)))
    }
}
