// Drill: the TLS key of api.example.test is stolen (docs/THREAT_MODEL.md, "Stolen server
// key"): revoke its pin, rotate the server to the backup key, publish.

import Foundation
import PinionCore
import PinionLinux
import PinionTestSupport
import Testing

@Suite struct StolenServerKeyDrill {
    @Test func revokedKeyIsRefusedAtTheNextRefreshAndTheBackupKeyIsTrusted() throws {
        let team = try Team("server-key")
        let device = try team.device(at: t0.adding(seconds: 3600))
        #expect(device.refresh() == .updated(1, 1))
        #expect(device.connect(to: team.api) == .trusted(try team.typedPin(.primary)))
        // The thief's server presents the stolen key with its real certificate.
        let thief = try Server(api: .primary, pki: team.pki)

        // The runbook, at t0 + 2 days: a manifest without the stolen pin that revokes it,
        // reviewed with diff, signed, verified, published; then the server's key rotation.
        let incident = t0.adding(seconds: 2 * day)
        try team.nextManifest(
            "manifest-2", previous: "manifest-1.json", root: "root-1.json", at: incident,
            edits: [
                ["set-domain", "PAYLOAD", apiHost, "--pin", team.pin(.backup), "--pin", team.pin(.spare)],
                ["revoke-pin", "PAYLOAD", team.pin(.primary)],
            ])
        let diff = try team.desk.require(["diff", "@manifest-1.json", "@manifest-2.json"], at: incident).out
        #expect(diff.contains("  ~ \(apiHost)\n      + pin \(team.pin(.spare))\n      - pin \(team.pin(.primary))"))
        #expect(diff.contains("revokedPins\n  + \(team.pin(.primary))  revoked"))
        try team.desk.require(
            ["verify", "--root", "@root-1.json", "@manifest-2.json", "--at", incident.description], at: incident)
        let published = team.publish("manifest-2.json", at: incident)
        #expect(published.status == 0, "\(published.err)")
        #expect(published.out.contains("published manifest version 2 (rootVersion 1)"))
        // Until its next refresh the device still trusts the stolen key.
        #expect(device.apiPins == [try team.typedPin(.primary), try team.typedPin(.backup)])
        try team.api.rotate(to: .backup, pki: team.pki)

        // At its next refresh the device refuses the stolen key before sending a byte, and
        // trusts the rotated server.
        device.clock.now = incident.adding(seconds: 3600)
        #expect(device.refresh() == .updated(1, 2))
        #expect(device.client.trustedState.revoked.contains(try team.typedPin(.primary)))
        #expect(device.connect(to: thief) == .refused(.noMatchingPin))
        #expect(thief.healthRequests == 0)
        #expect(device.connect(to: team.api) == .trusted(try team.typedPin(.backup)))

        // After manifest 2 expires the merge is fail-closed: baseline ∩ manifest minus the
        // revoked set, so the baseline's copy of the stolen pin never comes back.
        device.clock.now = incident.adding(seconds: 15 * day)
        #expect(device.manifestCurrent == false)
        #expect(device.apiPins == [try team.typedPin(.backup)])
        #expect(device.connect(to: thief) == .refused(.noMatchingPin))
        #expect(device.connect(to: team.api) == .trusted(try team.typedPin(.backup)))

        // The auditor's view: the history passes and the timeline names the revocation.
        let audit = team.audit(team.tree, at: incident.adding(seconds: 3600))
        #expect(audit.status == 0, "\(audit.out)")
        #expect(audit.out.contains("v2      \(incident)  revoked \(team.pin(.primary))"))
        #expect(audit.out.contains("result      PASS: every rule holds (0 warning(s))"))
    }

    @Test func aFreshInstallTrustsTheBaselineUntilItsFirstRefresh() throws {
        let team = try Team("server-key-install")
        let incident = t0.adding(seconds: 2 * day)
        try team.nextManifest(
            "manifest-2", previous: "manifest-1.json", root: "root-1.json", at: incident,
            edits: [
                ["set-domain", "PAYLOAD", apiHost, "--pin", team.pin(.backup), "--pin", team.pin(.spare)],
                ["revoke-pin", "PAYLOAD", team.pin(.primary)],
            ])
        #expect(team.publish("manifest-2.json", at: incident).status == 0)
        let thief = try Server(api: .primary, pki: team.pki)

        // Installed after the incident: only the baseline (primary and backup) until it
        // refreshes. First-install trust is the baseline's.
        let device = try team.device(at: incident.adding(seconds: 3600))
        #expect(device.connect(to: thief) == .trusted(try team.typedPin(.primary)))
        #expect(device.refresh() == .updated(1, 2))
        #expect(device.connect(to: thief) == .refused(.noMatchingPin))

        // The operator's check from a shell: pinion client refresh, then client connect.
        let common = [
            "--root", "@root-1.json", "--scope", appScope, "--state", "@ops-state", "--cafile", team.pki.caFile,
        ]
        let now = incident.adding(seconds: 3600)
        let refreshed = team.desk.run(
            ["client", "refresh", "--url", team.publisher.url.absoluteString] + common, at: now)
        #expect(refreshed.status == 0, "\(refreshed.err)")
        #expect(refreshed.out.contains("outcome     updated to (rootVersion 1, version 2)"))
        let connect = team.desk.run(
            ["client", "connect", "--connect-to", "127.0.0.1", "\(apiHost):\(thief.port)"] + common, at: now)
        #expect(connect.status == 1)
        #expect(connect.err.contains("rejected: \(apiHost): no key in the verified chain matches a pin"))
    }
}
