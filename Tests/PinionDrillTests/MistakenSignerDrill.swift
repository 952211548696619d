// Drill: a signer makes a mistake (docs/THREAT_MODEL.md, "A mistaken signer"): a pin still in
// service dropped, a revocation lifted, two different manifests for one version.

import Foundation
import PinionCore
import PinionLinux
import PinionTestSupport
import Testing

@Suite struct MistakenSignerDrill {
    @Test func diffShowsTheDroppedPinAndTheNextVersionRestoresIt() throws {
        let team = try Team("dropped-pin")
        let device = try team.device(at: t0.adding(seconds: 3600))
        #expect(device.refresh() == .updated(1, 1))
        #expect(device.connect(to: team.api) == .trusted(try team.typedPin(.primary)))

        // The signer replaces the pin set and forgets the key in service. The co-signer's
        // diff shows it before anyone signs.
        let mistake = t0.adding(seconds: day)
        try team.nextManifest(
            "manifest-2", previous: "manifest-1.json", root: "root-1.json", at: mistake,
            edits: [["set-domain", "PAYLOAD", apiHost, "--pin", team.pin(.backup), "--pin", team.pin(.spare)]])
        let diff = try team.desk.require(["diff", "@manifest-1.json", "@manifest-2.payload.json"], at: mistake).out
        #expect(diff.contains("  ~ \(apiHost)\n      + pin \(team.pin(.spare))\n      - pin \(team.pin(.primary))"))

        // Published anyway: at their next refresh clients refuse the server (an outage, not
        // a breach: nothing became unpinned).
        #expect(team.publish("manifest-2.json", at: mistake).status == 0)
        device.clock.now = mistake.adding(seconds: 3600)
        #expect(device.refresh() == .updated(1, 2))
        #expect(device.connect(to: team.api) == .refused(.noMatchingPin))

        // The fix is the next version with the pin back (it was dropped, not revoked).
        let fix = mistake.adding(seconds: 2 * 3600)
        try team.nextManifest(
            "manifest-3", previous: "manifest-2.json", root: "root-1.json", at: fix,
            edits: [
                [
                    "set-domain", "PAYLOAD", apiHost, "--pin", team.pin(.primary), "--pin", team.pin(.backup), "--pin",
                    team.pin(.spare),
                ]
            ])
        #expect(team.publish("manifest-3.json", at: fix).status == 0)
        device.clock.now = fix.adding(seconds: 60)
        #expect(device.refresh() == .updated(1, 3))
        #expect(device.connect(to: team.api) == .trusted(try team.typedPin(.primary)))
        let audit = team.audit(team.tree, at: fix.adding(seconds: 60))
        #expect(audit.status == 0)
        #expect(audit.out.contains("v2      \(mistake)  - pin \(team.pin(.primary))"))
        #expect(audit.out.contains("v3      \(fix)  + pin \(team.pin(.primary))"))
    }

    @Test func liftedRevocationNeedsAllowLiftIsFlaggedAndStaysInForceWhereItArrived() throws {
        let team = try Team("lift")
        let early = try team.device(at: t0.adding(seconds: 3600))
        #expect(early.refresh() == .updated(1, 1))

        // Version 2 revokes the backup key by mistake; one device takes it.
        let mistake = t0.adding(seconds: day)
        try team.nextManifest(
            "manifest-2", previous: "manifest-1.json", root: "root-1.json", at: mistake,
            edits: [
                ["set-domain", "PAYLOAD", apiHost, "--pin", team.pin(.primary), "--pin", team.pin(.spare)],
                ["revoke-pin", "PAYLOAD", team.pin(.backup)],
            ])
        #expect(team.publish("manifest-2.json", at: mistake).status == 0)
        early.clock.now = mistake.adding(seconds: 60)
        #expect(early.refresh() == .updated(1, 2))

        // Version 3 lifts it (no command does that: the payload is edited by hand).
        let lift = mistake.adding(seconds: 3600)
        try team.desk.require(
            [
                "manifest", "init", "--previous", "@manifest-2.json", "--root", "@root-1.json", "--issued-at",
                lift.description, "--expires-in", "14d", "-o", "@manifest-3.payload.json",
            ], at: lift)
        try team.desk.require(
            [
                "manifest", "set-domain", "@manifest-3.payload.json", apiHost, "--pin", team.pin(.primary), "--pin",
                team.pin(.backup),
            ], at: lift)
        var payload = try ManifestPayload.parse(try team.desk.readBytes("manifest-3.payload.json"))
        payload.revokedPins = []
        try team.desk.writeBytes("manifest-3.payload.json", payload.serialized())
        let diff = try team.desk.require(["diff", "@manifest-2.json", "@manifest-3.payload.json"], at: lift).out
        #expect(
            diff.contains("  - \(team.pin(.backup))  lifted (publish needs --allow-lift; the auditor warns)"))
        try team.desk.require(
            [
                "sign", "--key", "@pins.key", "--root", "@root-1.json", "@manifest-3.payload.json", "-o",
                "@manifest-3.json",
            ], at: lift)
        let refused = team.publish("manifest-3.json", at: lift)
        #expect(refused.status == 1)
        #expect(refused.err.contains("revocation(s) of the latest version missing: \(team.pin(.backup))"))
        let lifted = team.desk.run(["publish", "--repo", "@tree", "@manifest-3.json", "--allow-lift"], at: lift)
        #expect(lifted.status == 0)
        #expect(lifted.err.contains("lifting revocation(s) of \(team.pin(.backup)) (--allow-lift)"))
        let audit = team.audit(team.tree, at: lift)
        #expect(audit.status == 0)
        #expect(audit.out.contains("history/3.json (version 3): [revocation-lifted]"))
        #expect(audit.out.contains("result      PASS: every rule holds (1 warning(s))"))

        // Clients keep the union of revocations since the pins role last changed: the device
        // that saw version 2 still refuses the backup key; one that skipped it trusts it.
        let backupServer = try Server(api: .backup, pki: team.pki)
        early.clock.now = lift.adding(seconds: 60)
        #expect(early.refresh() == .updated(1, 3))
        #expect(early.connect(to: backupServer) == .refused(.noMatchingPin))
        let late = try team.device(at: lift.adding(seconds: 60))
        #expect(late.refresh() == .updated(1, 3))
        #expect(late.connect(to: backupServer) == .trusted(try team.typedPin(.backup)))
    }

    @Test func twoManifestsForOneVersionAreRefusedAndReported() throws {
        let team = try Team("equivocation")
        let time = t0.adding(seconds: day)
        // Two signers each make a version 2.
        try team.nextManifest(
            "manifest-2", previous: "manifest-1.json", root: "root-1.json", at: time,
            edits: [["set-domain", "PAYLOAD", apiHost, "--pin", team.pin(.primary), "--pin", team.pin(.spare)]])
        try team.nextManifest(
            "other-2", previous: "manifest-1.json", root: "root-1.json", at: time, lifetime: "7d")
        #expect(team.publish("manifest-2.json", at: time).status == 0)
        let second = team.publish("other-2.json", at: time)
        #expect(second.status == 1)
        #expect(second.err.contains("version 2 is already published with other bytes"))

        // A mirror serves the other one to a device that has the first: equivocation.
        let device = try team.device(at: time.adding(seconds: 60))
        #expect(device.refresh() == .updated(1, 2))
        try team.desk.copy("tree", to: "mirror")
        try team.desk.writeBytes("mirror/v1/\(appScope)/manifest.json", try team.desk.readBytes("other-2.json"))
        let mirror = try Server(tree: team.desk.path("mirror"), leaf: .publisher, pki: team.pki)
        try device.install(embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: mirror)
        _ = device.takeEvents()
        #expect(device.refresh() == .rejected(.equivocation(order: ManifestOrder(1, 2))))
        #expect(device.takeEvents().contains(.equivocation(ManifestOrder(1, 2))))
        let audit = team.audit(team.desk.path("mirror"), at: time.adding(seconds: 60))
        #expect(audit.status == 1)
        #expect(audit.out.contains("manifest.json (version 2): [version-published-twice]"))
    }
}
