// Drill: the device clock is wrong or manipulated (docs/THREAT_MODEL.md, "Device clock
// manipulation"). Expiry is judged on max(device clock, lastKnownTime).

import Foundation
import PinionCore
import PinionLinux
import PinionTestSupport
import Testing

@Suite struct ClockDrill {
    @Test func clockSetBackCannotReviveAManifestOnceARefreshSawItExpire() throws {
        let team = try Team("clock-back")
        let device = try team.device(at: t0.adding(seconds: 3600))
        #expect(device.refresh() == .updated(1, 1))
        // A successful refresh after manifest 1 expired (t0 + 14 days) moves lastKnownTime.
        let late = t0.adding(seconds: 15 * day)
        device.clock.now = late
        #expect(device.refresh() == .unchanged)
        #expect(device.client.trustedState.persisted.lastKnownTime == late)
        #expect(device.manifestCurrent == false)

        // The clock set back into manifest 1's life: reported, and the last known time wins.
        let back = t0.adding(seconds: 2 * day)
        device.clock.now = back
        _ = device.takeEvents()
        #expect(device.refresh() == .unchanged)
        #expect(device.takeEvents().contains(.clockSteppedBack(wallClock: back, lastKnownTime: late)))
        #expect(device.client.effectiveNow == late)
        #expect(device.manifestCurrent == false)
    }

    @Test func clockHeldBackWhileRefreshesFailKeepsTheManifestCurrent() throws {
        let team = try Team("clock-held")
        let device = try team.device(at: t0.adding(seconds: 3600))
        #expect(device.refresh() == .updated(1, 1))
        // The publisher becomes unreachable and the clock never passes t0 + 1 day: nothing
        // moves lastKnownTime, so the manifest stays current however long this lasts.
        try device.install(embeddedRoot: try team.desk.readBytes("root-1.json"), publisher: nil)
        device.clock.now = t0.adding(seconds: day)
        guard case .networkFailure = device.refresh() else {
            Issue.record("expected a network failure")
            return
        }
        #expect(device.manifestCurrent)
        #expect(device.client.effectiveNow == t0.adding(seconds: day))
    }

    @Test func clockSetForwardExpiresEarlyAndRatchetsLastKnownTime() throws {
        let team = try Team("clock-forward")
        let device = try team.device(at: t0.adding(seconds: 3600))
        #expect(device.refresh() == .updated(1, 1))
        // The clock jumps 100 days ahead: the manifest counts as expired at once (fail-closed)
        // and one successful refresh records the future time.
        let future = t0.adding(seconds: 100 * day)
        device.clock.now = future
        #expect(device.manifestCurrent == false)
        #expect(device.refresh() == .unchanged)
        #expect(device.client.trustedState.persisted.lastKnownTime == future)

        // Corrected to the real time, the device still judges expiry at the future time: the
        // team's fresh manifest is refused as expired until that time passes.
        let real = t0.adding(seconds: 2 * day)
        try team.nextManifest("manifest-2", previous: "manifest-1.json", root: "root-1.json", at: real)
        #expect(team.publish("manifest-2.json", at: real).status == 0)
        device.clock.now = real
        _ = device.takeEvents()
        #expect(
            device.refresh()
                == .rejected(
                    .trust(.manifestExpired(version: 2, expiresAt: real.adding(seconds: 14 * day), now: future))))
        #expect(device.takeEvents().contains(.clockSteppedBack(wallClock: real, lastKnownTime: future)))
        #expect(device.manifestCurrent == false)
    }

    @Test func clockBehindAcceptsAFutureDatedManifestAndReportsIt() throws {
        let team = try Team("clock-behind")
        // Ten days behind: manifest 1 (issued t0) looks future-dated; it is accepted, reported,
        // and lastKnownTime stays at the device's own start time.
        let behind = t0.adding(seconds: -10 * day)
        let device = try team.device(at: behind)
        #expect(device.refresh() == .updated(1, 1))
        #expect(device.takeEvents().contains(.futureDated(issuedAt: t0, startTime: behind)))
        #expect(device.client.trustedState.persisted.lastKnownTime == behind)
    }
}
