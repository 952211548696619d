// Drill: a network attacker between the app and api.example.test (docs/THREAT_MODEL.md,
// "Network MITM"), with a certificate a trusted CA mis-issued for the host.

import Foundation
import PinionCore
import PinionLinux
import PinionTestSupport
import Testing

@Suite struct NetworkAttackerDrill {
    @Test func misIssuedCertificateIsRefusedBeforeAnyRequestByte() throws {
        let team = try Team("mitm")
        let device = try team.device(at: t0.adding(seconds: 3600))
        #expect(device.refresh() == .updated(1, 1))
        let interceptor = try Server(api: .rogue, pki: team.pki)
        #expect(device.connect(to: interceptor) == .refused(.noMatchingPin))
        #expect(interceptor.healthRequests == 0)
        // A certificate that fails X.509 (another host name) never reaches the pin check.
        let wrongName = try Server(api: .publisher, pki: team.pki)
        guard case .failed(let error) = device.connect(to: wrongName),
            error.reasonCode == "certificate-verification-failed"
        else {
            Issue.record("expected an X.509 failure")
            return
        }
        #expect(device.connect(to: team.api) == .trusted(try team.typedPin(.primary)))
    }

    @Test func withoutABaselineNothingIsPinnedUntilTheFirstRefresh() throws {
        let team = try Team("mitm-first")
        let interceptor = try Server(api: .rogue, pki: team.pki)
        // The app ships no baseline and the attacker blocks the publisher: X.509 alone decides.
        let bare = try Device(
            embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: nil, at: t0.adding(seconds: 3600),
            pki: team.pki)
        guard case .networkFailure = bare.refresh() else {
            Issue.record("expected a network failure")
            return
        }
        #expect(bare.connect(to: interceptor) == .notPinned)
        // The same app with the baseline refuses the interceptor from its first start.
        let withBaseline = try team.device(offline: true, at: t0.adding(seconds: 3600))
        #expect(withBaseline.connect(to: interceptor) == .refused(.noMatchingPin))
    }
}
