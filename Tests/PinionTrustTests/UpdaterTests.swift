// The polling loop and its schedule: intervals, Cache-Control bounds, jitter, back-off,
// cancellation. No real sleeping: the sleep is injected.

import Foundation
import PinionTrust
import Testing

/// Records the delays the loop asks for and ends the loop after `limit` sleeps.
final class SleepRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var delays: [Double] = []
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    var recorded: [Double] { lock.withLock { delays } }

    func sleep(_ seconds: Double) async throws {
        let count = lock.withLock {
            delays.append(seconds)
            return delays.count
        }
        if count >= limit { throw CancellationError() }
    }
}

/// Hands out scripted refresh reports in order.
final class ScriptedRefreshes: @unchecked Sendable {
    private let lock = NSLock()
    private var reports: [RefreshReport]
    private(set) var calls = 0

    init(_ reports: [RefreshReport]) { self.reports = reports }

    func next() -> RefreshReport {
        lock.withLock {
            calls += 1
            return reports.isEmpty ? RefreshReport(outcome: .unchanged) : reports.removeFirst()
        }
    }
}

let networkDown = RefreshReport(outcome: .networkFailure(.fetchFailed(resource: "manifest.json", reason: "refused")))

@Suite struct UpdateScheduleTests {
    @Test func successUsesIntervalOrBoundedMaxAge() {
        let schedule = UpdateSchedule(interval: 3600, jitter: 0, minimumInterval: 60, maximumInterval: 7200)
        #expect(schedule.delay(consecutiveFailures: 0, maxAge: nil, random: 0.5) == 3600)
        #expect(schedule.delay(consecutiveFailures: 0, maxAge: 300, random: 0.5) == 300)
        #expect(schedule.delay(consecutiveFailures: 0, maxAge: 5, random: 0.5) == 60)
        #expect(schedule.delay(consecutiveFailures: 0, maxAge: 31_536_000, random: 0.5) == 7200)
    }

    @Test func failuresBackOffExponentiallyUpToTheCap() {
        let schedule = UpdateSchedule(jitter: 0, initialBackoff: 30, maximumBackoff: 600)
        let delays = (1...7).map { schedule.delay(consecutiveFailures: $0, maxAge: nil, random: 0.5) }
        #expect(delays == [30, 60, 120, 240, 480, 600, 600])
        #expect(schedule.delay(consecutiveFailures: 10_000, maxAge: nil, random: 0.5) == 600)
    }

    @Test func jitterStaysWithinItsFraction() {
        let schedule = UpdateSchedule(interval: 1000, jitter: 0.1)
        #expect(schedule.delay(consecutiveFailures: 0, maxAge: nil, random: 0) == 900)
        #expect(schedule.delay(consecutiveFailures: 0, maxAge: nil, random: 1) == 1100)
        #expect(UpdateSchedule(jitter: 7).jitter == 0.5)
    }

    @Test func cacheControlMaxAge() {
        #expect(CacheControl.maxAge("max-age=300") == 300)
        #expect(CacheControl.maxAge("public, MAX-AGE=60, must-revalidate") == 60)
        #expect(CacheControl.maxAge("no-cache") == nil)
        #expect(CacheControl.maxAge("max-age=300, no-store") == nil)
        #expect(CacheControl.maxAge("max-age=-5") == nil)
        #expect(CacheControl.maxAge("max-age=1e9") == nil)
        #expect(CacheControl.maxAge(nil) == nil)
    }
}

@Suite struct UpdaterLoopTests {
    @Test func pollsWithBackOffAfterFailuresAndResetsOnSuccess() async {
        let script = ScriptedRefreshes([networkDown, networkDown, RefreshReport(outcome: .unchanged, maxAge: 120)])
        let recorder = SleepRecorder(limit: 4)
        let updater = Updater(
            schedule: UpdateSchedule(
                interval: 3600, jitter: 0, minimumInterval: 60, initialBackoff: 30, maximumBackoff: 600),
            sleep: { try await recorder.sleep($0) }, random: { 0.5 }, refresh: { script.next() })
        await updater.start()
        // The loop ends itself when the recorder throws (as a cancelled sleep does).
        for _ in 0..<1_000_000 where recorder.recorded.count < 4 { await Task.yield() }
        #expect(recorder.recorded == [30, 60, 120, 3600])
        #expect(script.calls == 4)
    }

    @Test func stopCancelsTheLoop() async {
        let script = ScriptedRefreshes([])
        let updater = Updater(
            sleep: { seconds in try await Task.sleep(nanoseconds: UInt64(seconds * 1e9)) }, random: { 0.5 },
            refresh: { script.next() })
        await updater.start()
        for _ in 0..<1_000_000 where script.calls == 0 { await Task.yield() }
        await updater.stop()
        #expect(await updater.isPolling == false)
        #expect(script.calls == 1)
    }

    @Test func refreshNowCountsFailures() async {
        let script = ScriptedRefreshes([
            networkDown, RefreshReport(outcome: .updated(.init(rootVersion: 1, version: 2))),
        ])
        let updater = Updater(refresh: { script.next() })
        #expect(await updater.refreshNow().failed)
        #expect(await updater.consecutiveFailures == 1)
        #expect(await !updater.refreshNow().failed)
        #expect(await updater.consecutiveFailures == 0)
    }
}
