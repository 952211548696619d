// Drill: the publisher, the CDN or the network path to it is compromised
// (docs/THREAT_MODEL.md, "Publisher or CDN compromise"), and the limit of what a local
// attacker with write access to the state directory can undo.

import Foundation
import PinionCore
import PinionLinux
import PinionTestSupport
import Testing

@Suite struct PublisherCompromiseDrill {
    /// Manifest 2 (t0 + 1 day, 14 days): api.example.test gains the spare key.
    func publishSpare(_ team: Team) throws -> Timestamp {
        let time = t0.adding(seconds: day)
        try team.nextManifest(
            "manifest-2", previous: "manifest-1.json", root: "root-1.json", at: time,
            edits: [
                [
                    "set-domain", "PAYLOAD", apiHost, "--pin", team.pin(.primary), "--pin", team.pin(.backup), "--pin",
                    team.pin(.spare),
                ]
            ])
        #expect(team.publish("manifest-2.json", at: time).status == 0)
        return time
    }

    /// A copy of the tree as it is now, served by a server the attacker controls.
    func frozenEdge(_ team: Team, _ name: String) throws -> Server {
        try team.desk.copy("tree", to: name)
        return try Server(tree: team.desk.path(name), leaf: .publisher, pki: team.pki)
    }

    @Test func withholdingIsBoundedByExpiryForWhatTheManifestGranted() throws {
        let team = try Team("freeze")
        let issued = try publishSpare(team)
        let edge = try frozenEdge(team, "edge")
        let device = try team.device(publisher: edge, at: issued.adding(seconds: 3600))
        let graceful = try team.device(publisher: edge, at: issued.adding(seconds: 3600), staleGrace: day)
        #expect(device.refresh() == .updated(1, 2))
        #expect(graceful.refresh() == .updated(1, 2))

        // The team revokes the primary key in manifest 3; the edge withholds it.
        let revocation = issued.adding(seconds: day)
        try team.nextManifest(
            "manifest-3", previous: "manifest-2.json", root: "root-1.json", at: revocation,
            edits: [
                ["set-domain", "PAYLOAD", apiHost, "--pin", team.pin(.backup), "--pin", team.pin(.spare)],
                ["revoke-pin", "PAYLOAD", team.pin(.primary)],
            ])
        #expect(team.publish("manifest-3.json", at: revocation).status == 0)
        let spareServer = try Server(api: .spare, pki: team.pki)
        let expiry = issued.adding(seconds: 14 * day)

        // Just before manifest 2 expires the frozen device still trusts everything it granted,
        // and re-serving it is a quiet no-op.
        device.clock.now = expiry.adding(seconds: -60)
        #expect(device.refresh() == .unchanged)
        #expect(device.manifestCurrent)
        #expect(device.connect(to: spareServer) == .trusted(try team.typedPin(.spare)))
        // From expiresAt on the manifest only takes trust away: the spare key it granted is
        // refused. The refresh reports .unchanged (nothing newer), and the app is told the
        // manifest is no longer current.
        device.clock.now = expiry
        _ = device.takeEvents()
        #expect(device.refresh() == .unchanged)
        #expect(
            device.takeEvents().contains {
                if case .manifestNotCurrent(let reason) = $0 { return reason.contains("offers nothing newer") }
                return false
            })
        #expect(device.manifestCurrent == false)
        #expect(device.apiPins == [try team.typedPin(.primary), try team.typedPin(.backup)])
        #expect(device.connect(to: spareServer) == .refused(.noMatchingPin))
        // What expiry does NOT bound: the withheld revocation. The primary key is in the
        // baseline, so the frozen device keeps trusting it after expiry.
        #expect(device.connect(to: team.api) == .trusted(try team.typedPin(.primary)))

        // staleGrace (1 day here) extends the freeze explicitly, and no further.
        graceful.clock.now = expiry.adding(seconds: 12 * 3600)
        #expect(graceful.manifestCurrent)
        #expect(graceful.connect(to: spareServer) == .trusted(try team.typedPin(.spare)))
        graceful.clock.now = expiry.adding(seconds: day)
        #expect(graceful.manifestCurrent == false)
        #expect(graceful.connect(to: spareServer) == .refused(.noMatchingPin))

        // The auditor sees the frozen edge as a tree whose latest manifest expired: a
        // violation, since clients have no current manifest at that moment.
        let audit = team.audit(team.desk.path("edge"), at: expiry)
        #expect(audit.status == 1)
        #expect(audit.out.contains("history/2.json (version 2): [latest-expired] the latest manifest expired at"))

        // Recovery is reaching the real publisher (another path, or the CDN fixed).
        try device.install(embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: team.publisher)
        device.clock.now = revocation.adding(seconds: 3600)
        #expect(device.refresh() == .updated(1, 3))
        #expect(device.connect(to: team.api) == .refused(.noMatchingPin))
    }

    @Test func replayedOlderManifestIsRefusedAsARollback() throws {
        let team = try Team("replay")
        let issued = try publishSpare(team)
        let device = try team.device(at: issued.adding(seconds: 3600))
        #expect(device.refresh() == .updated(1, 2))
        let before = device.client.trustedState

        // The compromised publisher serves version 1 again (still signed, still unexpired).
        let edge = try frozenEdge(team, "edge")
        try team.desk.writeBytes(
            "edge/v1/\(appScope)/manifest.json", try team.desk.readBytes("tree/v1/\(appScope)/history/1.json"))
        try device.install(embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: edge)
        #expect(device.refresh() == .rejected(.rollback(offered: ManifestOrder(1, 1), floor: ManifestOrder(1, 2))))
        #expect(device.client.trustedState == before)
        let audit = team.audit(team.desk.path("edge"), at: issued.adding(seconds: 3600))
        #expect(audit.status == 1)
        #expect(
            audit.out.contains(
                "manifest.json (version 1): [manifest-not-latest] holds version 1, not the latest version 2 of the history"
            ))

        // What the floor cannot do: a fresh install has no floor, so it takes any unexpired
        // version the publisher offers.
        let fresh = try team.device(publisher: edge, at: issued.adding(seconds: 3600))
        #expect(fresh.refresh() == .updated(1, 1))

        // Repair: publishing the latest history file again rewrites manifest.json.
        let repaired = team.desk.run(
            ["publish", "--repo", "@edge", "@edge/v1/\(appScope)/history/2.json"], at: issued.adding(seconds: 3600))
        #expect(repaired.status == 0, "\(repaired.err)")
        #expect(repaired.out.contains("published manifest version 2"))
        #expect(team.audit(team.desk.path("edge"), at: issued.adding(seconds: 3600)).status == 0)
        #expect(fresh.refresh() == .updated(1, 2))
        #expect(device.refresh() == .unchanged)
    }

    @Test func forgedOrModifiedFilesAreRefusedAndTheAuditNamesThem() throws {
        let team = try Team("forgery")
        let issued = try publishSpare(team)
        let device = try team.device(at: issued.adding(seconds: 3600))
        #expect(device.refresh() == .updated(1, 2))
        let before = device.client.trustedState

        // The attacker swaps the spare pin for the rogue certificate's in manifest 3's payload
        // (a copy of version 2 with its version raised) and keeps version 2's signature; the
        // history file and manifest.json both get it.
        let original = try Envelope.parse(try team.desk.readBytes("manifest-2.json"))
        var payload = try ManifestPayload.parse(original.payload)
        payload.version = 3
        payload.previous = nil
        payload.domains[0].pins = [try team.typedPin(.primary), try team.typedPin(.rogue)]
        let forged = Envelope(kind: .pins, payload: payload.serialized(), signatures: original.signatures).serialized()
        let edge = try frozenEdge(team, "edge")
        try team.desk.writeBytes("edge/v1/\(appScope)/history/3.json", forged)
        try team.desk.writeBytes("edge/v1/\(appScope)/manifest.json", forged)
        try device.install(embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: edge)
        #expect(
            device.refresh() == .rejected(.trust(.thresholdNotMet(role: .pins, rootVersion: 1, valid: 0, threshold: 1)))
        )
        #expect(device.client.trustedState == before)
        let rogue = try Server(api: .rogue, pki: team.pki)
        #expect(device.connect(to: rogue) == .refused(.noMatchingPin))
        let audit = team.audit(team.desk.path("edge"), at: issued.adding(seconds: 3600))
        #expect(audit.status == 1)
        #expect(audit.out.contains("history/3.json (version 3): [manifest-signature]"))
        #expect(audit.out.contains("[previous-link]"))

        // A forged root 2 (the attacker's own key, no root-role signature) stops the walk.
        try team.desk.require(["keygen", "--out", "@forger", "--insecure-no-passphrase"], at: issued)
        try team.desk.require(
            [
                "root", "rotate", "--previous", "@root-1.json", "--add-pins-key", "@forger.pub", "--remove-pins-key",
                "@pins.pub", "--issued-at", issued.description, "--expires-in", "1y", "-o", "@forged-root.payload.json",
            ], at: issued)
        try team.desk.require(
            ["sign", "--key", "@forger.key", "@forged-root.payload.json", "-o", "@forged-root.json"], at: issued)
        try team.desk.writeBytes("edge/v1/\(appScope)/root/2.json", try team.desk.readBytes("forged-root.json"))
        #expect(
            device.refresh() == .rejected(.trust(.thresholdNotMet(role: .root, rootVersion: 1, valid: 0, threshold: 2)))
        )
        #expect(device.client.trustedState.chain.newest.version == 1)
        let rootAudit = team.audit(team.desk.path("edge"), at: issued.adding(seconds: 3600))
        #expect(rootAudit.out.contains("root/2.json (version 2): [root-rotation]"))
    }

    @Test func localAttackerWithTheStateDirectoryResetsTheFloor() throws {
        let team = try Team("local")
        let issued = try publishSpare(team)
        // Manifest 3 revokes the primary key; the device takes it.
        let revocation = issued.adding(seconds: 3600)
        try team.nextManifest(
            "manifest-3", previous: "manifest-2.json", root: "root-1.json", at: revocation,
            edits: [
                ["set-domain", "PAYLOAD", apiHost, "--pin", team.pin(.backup), "--pin", team.pin(.spare)],
                ["revoke-pin", "PAYLOAD", team.pin(.primary)],
            ])
        #expect(team.publish("manifest-3.json", at: revocation).status == 0)
        let device = try team.device(at: revocation.adding(seconds: 60))
        #expect(device.refresh() == .updated(1, 3))
        #expect(device.connect(to: team.api) == .refused(.noMatchingPin))

        // The disk (or someone who can write the state directory) damages ONE copy of the
        // state. At start-up the other copy is used and the damaged one rewritten: the floor
        // and the revoked set stay, so a replayed, unexpired version 1 is a rollback.
        try team.desk.copy("tree", to: "edge")
        try team.desk.writeBytes("edge/v1/\(appScope)/manifest.json", try team.desk.readBytes("manifest-1.json"))
        let edge = try Server(tree: team.desk.path("edge"), leaf: .publisher, pki: team.pki)
        func flipABit(_ file: String, of device: Device) throws {
            let path = device.stateDirectory + "/" + file
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            // One bit in the envelope's base64 text: the JSON still parses, the checksum fails.
            bytes[bytes.count / 2] ^= 0x01
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        try flipABit(StateStore.copyFileNames[0], of: device)
        _ = device.takeEvents()
        try device.install(embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: edge)
        #expect(
            device.takeEvents().contains {
                if case .stateCopyLost(StateStore.copyFileNames[0], _) = $0 { return true }
                return false
            })
        #expect(device.client.trustedState.floor == ManifestOrder(rootVersion: 1, version: 3))
        #expect(
            device.refresh()
                == .rejected(
                    .rollback(
                        offered: ManifestOrder(rootVersion: 1, version: 1),
                        floor: ManifestOrder(rootVersion: 1, version: 3))))
        #expect(device.connect(to: team.api) == .refused(.noMatchingPin))

        // Both copies damaged: the store is dropped and api.example.test is refused until a
        // fresh manifest... but the floor and the revoked set went with it: the replayed
        // version 1 is accepted and the revoked key is trusted again (docs/THREAT_MODEL.md:
        // write access to the state directory is out of scope).
        for file in StateStore.copyFileNames { try flipABit(file, of: device) }
        try device.install(embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: edge)
        #expect(
            device.takeEvents().contains {
                if case .storeDropped = $0 { return true }
                return false
            })
        #expect(device.connect(to: team.api) == .refused(.noUsablePin))
        #expect(device.refresh() == .updated(1, 1))
        #expect(device.client.trustedState.revoked.isEmpty)
        #expect(device.connect(to: team.api) == .trusted(try team.typedPin(.primary)))

        // Deleting both copies is even quieter: no drop event, the baseline applies at once
        // (a fresh install has no floor).
        let other = try team.device(at: revocation.adding(seconds: 60))
        #expect(other.refresh() == .updated(1, 3))
        for name in StateStore.copyFileNames {
            try FileManager.default.removeItem(atPath: other.stateDirectory + "/" + name)
        }
        _ = other.takeEvents()
        try other.install(embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: edge)
        #expect(other.takeEvents().isEmpty)
        #expect(other.connect(to: team.api) == .trusted(try team.typedPin(.primary)))
        #expect(other.client.trustedState.floor == nil)
    }
}
