// Drill: root rotations without outages (docs/DESIGN.md §4, §5, §9). A rotation that keeps
// the pins role goes out alone and clients stay connected to a key only the manifest
// grants; one that changes it goes out with its manifest, and a client that sees the new
// manifest before the new root refuses it and keeps what it has.

import Foundation
import PinionCore
import PinionLinux
import PinionTestSupport
import Testing

@Suite struct RootRotationDrill {
    /// Manifest 2 adds the spare key (in no baseline) and the API server switches to it.
    func spareInService(_ team: Team, at time: Timestamp) throws {
        try team.nextManifest(
            "manifest-2", previous: "manifest-1.json", root: "root-1.json", at: time,
            edits: [["set-domain", "PAYLOAD", apiHost, "--pin", team.pin(.primary), "--pin", team.pin(.spare)]])
        #expect(team.publish("manifest-2.json", at: time).status == 0)
        try team.api.rotate(to: .spare, pki: team.pki)
    }

    @Test func aRotationThatKeepsThePinsRoleKeepsClientsConnected() throws {
        let team = try Team("rotation-keep")
        let desk = team.desk
        let start = t0.adding(seconds: 3600)
        try spareInService(team, at: start)
        let device = try team.device(at: start.adding(seconds: 60))
        #expect(device.refresh() == .updated(1, 2))
        #expect(device.connect(to: team.api) == .trusted(try team.typedPin(.spare)))

        // Carol's root key is replaced by dave's; the pins role and cap are untouched, so
        // root 2 keeps pinsRoleSince 1 and is published alone.
        let rotation = start.adding(seconds: day)
        try desk.require(["keygen", "--out", "@dave", "--insecure-no-passphrase"], at: rotation)
        let rotate = try desk.require(
            [
                "root", "rotate", "--previous", "@root-1.json", "--add-root-key", "@dave.pub", "--remove-root-key",
                "@carol.pub", "--issued-at", rotation.description, "--expires-in", "1y", "-o", "@root-2.payload.json",
            ], at: rotation)
        #expect(rotate.out.contains("pinsRoleSince 1: manifests signed under root 1 or later stay valid"))
        #expect(try desk.read("root-2.payload.json").contains("\"pinsRoleSince\": 1"))
        try desk.require(
            ["sign", "--key", "@alice.key", "--key", "@bob.key", "@root-2.payload.json", "-o", "@root-2.json"],
            at: rotation)
        let published = team.publish("root-2.json", at: rotation)
        #expect(published.status == 0, "\(published.err)")

        // The device walks to root 2; manifest 2 (rootVersion 1) stays current and the key
        // only it grants is still trusted.
        device.clock.now = rotation.adding(seconds: 60)
        _ = device.takeEvents()
        #expect(device.refresh() == .unchanged)
        let events = device.takeEvents()
        #expect(events.contains(.rootAccepted(version: 2)))
        #expect(!events.contains { if case .manifestNotCurrent = $0 { return true } else { return false } })
        #expect(device.manifestCurrent)
        #expect(device.connect(to: team.api) == .trusted(try team.typedPin(.spare)))

        // An app update that embeds root 2: at start-up the stored manifest (rootVersion 1,
        // older than the embedded root) is re-verified under root 2 and stays current.
        try device.install(embeddedRoot: try desk.readBytes("root-2.json"), publisher: team.publisher)
        #expect(device.manifestCurrent)
        #expect(device.connect(to: team.api) == .trusted(try team.typedPin(.spare)))

        // The next manifest is signed under root 2 and accepted as usual.
        let later = rotation.adding(seconds: 3600)
        try team.nextManifest(
            "manifest-3", previous: "manifest-2.json", root: "root-2.json", at: later,
            edits: [["set-domain", "PAYLOAD", apiHost, "--pin", team.pin(.primary), "--pin", team.pin(.spare)]])
        #expect(team.publish("manifest-3.json", at: later).status == 0)
        device.clock.now = later.adding(seconds: 60)
        #expect(device.refresh() == .updated(2, 3))
        #expect(device.connect(to: team.api) == .trusted(try team.typedPin(.spare)))
        let audit = team.audit(team.tree, at: later.adding(seconds: 120))
        #expect(audit.status == 0, "\(audit.out)")
    }

    @Test func aManifestSeenBeforeItsRootIsRefusedAndTheCurrentOneKept() throws {
        let team = try Team("rotation-window")
        let desk = team.desk
        let start = t0.adding(seconds: 3600)
        try spareInService(team, at: start)
        let device = try team.device(at: start.adding(seconds: 60))
        #expect(device.refresh() == .updated(1, 2))

        // A new pins key: root 2 (pinsRoleSince 2) and manifest 3 under it, one publish.
        let rotation = start.adding(seconds: day)
        try desk.require(["keygen", "--out", "@pins-2", "--insecure-no-passphrase"], at: rotation)
        try desk.require(
            [
                "root", "rotate", "--previous", "@root-1.json", "--add-pins-key", "@pins-2.pub", "--remove-pins-key",
                "@pins.pub", "--issued-at", rotation.description, "--expires-in", "1y", "-o", "@root-2.payload.json",
            ], at: rotation)
        try desk.require(
            ["sign", "--key", "@alice.key", "--key", "@bob.key", "@root-2.payload.json", "-o", "@root-2.json"],
            at: rotation)
        try team.nextManifest(
            "manifest-3", previous: "manifest-2.json", root: "root-2.json", at: rotation, pinsKeys: ["pins-2"],
            edits: [["set-domain", "PAYLOAD", apiHost, "--pin", team.pin(.primary), "--pin", team.pin(.spare)]])
        let published = desk.run(["publish", "--repo", "@tree", "@root-2.json", "@manifest-3.json"], at: rotation)
        #expect(published.status == 0, "\(published.err)")

        // The window of that publish (manifest.json written, root/2.json not yet): a mirror
        // of the tree as it was at that instant.
        try desk.copy("tree", to: "window")
        try FileManager.default.removeItem(atPath: desk.path("window/v1/\(appScope)/root/2.json"))
        let window = try Server(tree: desk.path("window"), leaf: .publisher, pki: team.pki)
        try device.install(embeddedRoot: try desk.readBytes("root-1.json"), publisher: window)
        let stateBefore = device.client.trustedState
        device.clock.now = rotation.adding(seconds: 60)
        // Signatures are checked first: the new pins key means nothing under root 1.
        #expect(
            device.refresh() == .rejected(.trust(.thresholdNotMet(role: .pins, rootVersion: 1, valid: 0, threshold: 1)))
        )
        #expect(device.client.trustedState == stateBefore)
        #expect(device.manifestCurrent)
        #expect(device.connect(to: team.api) == .trusted(try team.typedPin(.spare)))

        // Once the root is there too, both are taken in one refresh.
        try device.install(embeddedRoot: try desk.readBytes("root-1.json"), publisher: team.publisher)
        #expect(device.refresh() == .updated(2, 3))
        #expect(device.connect(to: team.api) == .trusted(try team.typedPin(.spare)))
    }
}
