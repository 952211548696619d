// The deadline decisions of `pinion serve`'s connections (PinionSystem's ConnectionTimer) at explicit monotonic instants, and the clocks they run on.

import PinionSystem
import Testing

struct ConnectionDeadlineTests {
    private static let second: UInt64 = 1_000_000_000
    /// 10 s header, 30 s idle, 20 s write, 2 s linger: all different, so a wrong kind shows.
    private let deadlines = ConnectionDeadlines(headerTimeout: 10, idleTimeout: 30, writeTimeout: 20, lingerTimeout: 2)
    private let accept: UInt64 = 5_000 * second

    @Test func theHeaderDeadlineRunsFromTheAcceptAndExpiresExactlyAtItsInstant() {
        let timer = ConnectionTimer(deadlines: deadlines, acceptedAt: accept)
        #expect(timer.kind == .header)
        #expect(timer.deadline == accept + 10 * Self.second)
        #expect(!timer.hasExpired(at: accept))
        #expect(!timer.hasExpired(at: accept + 10 * Self.second - 1))
        #expect(timer.hasExpired(at: accept + 10 * Self.second))
        #expect(timer.hasExpired(at: accept + 11 * Self.second))
        #expect(!timer.awaitsRequest)
    }

    @Test func bytesOfAHeadAlreadyBeingReceivedGiveNoFreshTime() {
        var timer = ConnectionTimer(deadlines: deadlines, acceptedAt: accept)
        // A dribbler: a byte every second does not move the deadline.
        for step in 1...9 {
            let started = timer.requestStarted(at: accept + UInt64(step) * Self.second)
            #expect(!started)
            #expect(timer.deadline == accept + 10 * Self.second)
        }
        #expect(timer.hasExpired(at: accept + 10 * Self.second))
    }

    @Test func aSentResponseStartsTheIdleDeadlineAndTheNextRequestsFirstByteTheHeaderOne() {
        var timer = ConnectionTimer(deadlines: deadlines, acceptedAt: accept)
        timer.responding(at: accept + Self.second)
        timer.responded(at: accept + 2 * Self.second, pipelined: false)
        #expect(timer.kind == .idle && timer.awaitsRequest)
        let idleEnd = accept + 32 * Self.second
        #expect(timer.deadline == idleEnd)
        // The header deadline (10 s) would have passed; idle (30 s) has not.
        #expect(!timer.hasExpired(at: accept + 12 * Self.second))
        #expect(!timer.hasExpired(at: idleEnd - 1))
        #expect(timer.hasExpired(at: idleEnd))

        // Progress: the next request's first byte, 25 s later, resets to the header deadline from then.
        let firstByte = accept + 27 * Self.second
        let started = timer.requestStarted(at: firstByte)
        #expect(started)
        #expect(timer.kind == .header && !timer.awaitsRequest)
        #expect(timer.deadline == firstByte + 10 * Self.second)
        #expect(!timer.hasExpired(at: idleEnd))
        #expect(timer.hasExpired(at: firstByte + 10 * Self.second))
        // And only the first byte: the rest of that head gets nothing more.
        let startedAgain = timer.requestStarted(at: firstByte + 5 * Self.second)
        #expect(!startedAgain)
        #expect(timer.deadline == firstByte + 10 * Self.second)
    }

    @Test func aPipelinedRequestGetsTheHeaderDeadlineFromTheEndOfTheResponse() {
        var timer = ConnectionTimer(deadlines: deadlines, acceptedAt: accept)
        timer.responding(at: accept + Self.second)
        timer.responded(at: accept + 3 * Self.second, pipelined: true)
        #expect(timer.kind == .header)
        #expect(timer.deadline == accept + 13 * Self.second)
        #expect(!timer.awaitsRequest, "bytes are there already: no idle wait")
    }

    @Test func writeAndCommitDeadlinesRunFromTheirStartWithTheWriteTimeout() {
        var timer = ConnectionTimer(deadlines: deadlines, acceptedAt: accept)
        let start = accept + 4 * Self.second
        timer.responding(at: start)
        #expect(timer.kind == .write)
        #expect(timer.deadline == start + 20 * Self.second)
        #expect(!timer.hasExpired(at: start + 20 * Self.second - 1))
        #expect(timer.hasExpired(at: start + 20 * Self.second))
        // A slow reader gets no more time from the header deadline having been later.
        let started = timer.requestStarted(at: start + Self.second)
        #expect(!started)
        #expect(timer.deadline == start + 20 * Self.second)

        var parked = ConnectionTimer(deadlines: deadlines, acceptedAt: accept)
        parked.awaitingCommit(at: start)
        #expect(parked.kind == .commit)
        #expect(parked.deadline == start + 20 * Self.second)
        #expect(parked.hasExpired(at: start + 20 * Self.second))
    }

    @Test func aClosingConnectionLingersForTheLingerDeadlineOnly() {
        var timer = ConnectionTimer(deadlines: deadlines, acceptedAt: accept)
        timer.responded(at: accept + Self.second, pipelined: false)
        timer.closing(at: accept + 2 * Self.second)
        #expect(timer.kind == .linger)
        #expect(timer.deadline == accept + 4 * Self.second)
        #expect(!timer.hasExpired(at: accept + 4 * Self.second - 1))
        #expect(timer.hasExpired(at: accept + 4 * Self.second))
        let started = timer.requestStarted(at: accept + 3 * Self.second)
        #expect(!started, "a lingering connection starts no request")
    }

    @Test func instantsNearTheEndOfTheClockSaturateInsteadOfWrapping() {
        let late = UInt64.max - Self.second
        var timer = ConnectionTimer(deadlines: deadlines, acceptedAt: late)
        #expect(timer.deadline == .max, "a wrapped deadline would expire at once")
        #expect(!timer.hasExpired(at: late + Self.second / 2))
        #expect(timer.hasExpired(at: .max))
        timer.closing(at: late)
        #expect(timer.deadline == .max)
    }

    @Test func aZeroTimeoutExpiresAtOnceAndBadSecondsAreClamped() {
        let zero = ConnectionDeadlines(headerTimeout: 0, idleTimeout: -5, writeTimeout: .nan, lingerTimeout: .infinity)
        #expect(zero.header == 0 && zero.idle == 0 && zero.write == 0)
        #expect(zero.linger == .max)
        let timer = ConnectionTimer(deadlines: zero, acceptedAt: accept)
        #expect(timer.hasExpired(at: accept))
        #expect(ConnectionDeadlines.nanoseconds(1.5) == 1_500_000_000)
        #expect(ConnectionDeadlines.nanoseconds(0.000_000_001) == 1)
        #expect(ConnectionDeadlines.nanoseconds(1e30) == .max)
        #expect(deadlines.length(of: .commit) == deadlines.length(of: .write))
        #expect(deadlines.length(of: .idle) == 30 * Self.second)
    }

    @Test func theManualClockMovesOnlyWhenAdvanced() {
        let clock = ManualMonotonicClock(start: 7)
        #expect(clock.nanoseconds() == 7)
        #expect(clock.nanoseconds() == 7)
        clock.advance(nanoseconds: 3)
        #expect(clock.nanoseconds() == 10)
        clock.advance(seconds: 2)
        #expect(clock.nanoseconds() == 10 + 2 * Self.second)
        clock.advance(seconds: -1)
        #expect(clock.nanoseconds() == 10 + 2 * Self.second, "a clock that went back would not be monotonic")
    }

    @Test func theSystemClockNeverGoesBack() {
        let clock = SystemMonotonicClock()
        var previous = clock.nanoseconds()
        for _ in 0..<1000 {
            let now = clock.nanoseconds()
            #expect(now >= previous)
            previous = now
        }
        #expect(previous > 0)
    }
}
