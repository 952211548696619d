// The monotonic clock `pinion serve`'s deadlines are measured on: CLOCK_MONOTONIC in production, a hand-set one in tests.

import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A source of monotonic instants in nanoseconds: never goes back, unaffected by changes
/// of the wall clock. The server's header, idle, write, commit and linger deadlines are
/// measured on it (see `ConnectionDeadlines`).
package protocol MonotonicClock: Sendable {
    /// Now, in nanoseconds since an arbitrary fixed origin.
    func nanoseconds() -> UInt64
}

/// `CLOCK_MONOTONIC` (POSIX `clock_gettime`).
package struct SystemMonotonicClock: MonotonicClock {
    package init() {}

    package func nanoseconds() -> UInt64 { monotonicNanoseconds() }
}

/// A clock that moves only when told to, so tests decide when a deadline passes instead of
/// sleeping until it does. Safe to advance from one thread while workers read it.
package final class ManualMonotonicClock: MonotonicClock {
    private let now: Atomic<UInt64>

    /// - Parameter start: the first reading, in nanoseconds (not 0, so that a deadline
    ///   computed before any advance is distinguishable from "unset").
    package init(start: UInt64 = 1_000_000_000) { now = Atomic(start) }

    package func nanoseconds() -> UInt64 { now.load(ordering: .sequentiallyConsistent) }

    /// Moves the clock forward by `nanoseconds`.
    package func advance(nanoseconds: UInt64) {
        now.wrappingAdd(nanoseconds, ordering: .sequentiallyConsistent)
    }

    /// Moves the clock forward by `seconds` (at least 0).
    package func advance(seconds: Double) {
        advance(nanoseconds: ConnectionDeadlines.nanoseconds(seconds))
    }
}

/// Nanoseconds on `CLOCK_MONOTONIC`.
package func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
