// When a connection of `pinion serve` times out: each phase's deadline, decided from instants the event loop passes in.

/// The timeouts of a server connection, in nanoseconds on a `MonotonicClock`. Pure: it never
/// reads a clock, so every decision can be tested with explicit instants.
package struct ConnectionDeadlines: Sendable, Equatable {
    /// The phase a deadline belongs to.
    package enum Kind: Sendable, Equatable {
        /// From accept (TLS handshake included), or from the first byte of a later request on
        /// a kept-alive connection, to a complete request head (slowloris). Not extended by
        /// further bytes.
        case header
        /// A kept-alive connection waiting, with nothing received, for its next request.
        case idle
        /// Sending one response, however slowly the peer reads.
        case write
        /// A report POST waiting for the writer thread to commit it (no answer before that).
        case commit
        /// After close_notify and the half-close: reading and discarding what the peer sends.
        case linger
    }

    /// Nanoseconds of each kind.
    package let header: UInt64
    package let idle: UInt64
    package let write: UInt64
    package let linger: UInt64

    /// - Parameters: seconds each (negative or NaN count as 0; beyond 2^64 ns as forever).
    ///   `commit` uses the write timeout.
    package init(headerTimeout: Double, idleTimeout: Double, writeTimeout: Double, lingerTimeout: Double) {
        header = Self.nanoseconds(headerTimeout)
        idle = Self.nanoseconds(idleTimeout)
        write = Self.nanoseconds(writeTimeout)
        linger = Self.nanoseconds(lingerTimeout)
    }

    /// The length of `kind`'s deadline, in nanoseconds.
    package func length(of kind: Kind) -> UInt64 {
        switch kind {
        case .header: return header
        case .idle: return idle
        case .write, .commit: return write
        case .linger: return linger
        }
    }

    /// `seconds` in whole nanoseconds, clamped to 0...UInt64.max.
    package static func nanoseconds(_ seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }  // also NaN
        let value = seconds * 1_000_000_000
        return value >= 18_446_744_073_709_551_616.0 ? .max : UInt64(value)
    }
}

/// One connection's current deadline. The event loop tells it what happened and when; it
/// answers whether the connection has run out of time. A deadline expires at its instant
/// exactly (`now >= deadline`), and instants never wrap (sums saturate).
package struct ConnectionTimer: Sendable, Equatable {
    /// The timeouts in force.
    package let deadlines: ConnectionDeadlines
    /// The phase being timed.
    package private(set) var kind: ConnectionDeadlines.Kind
    /// The instant at which the connection times out, in nanoseconds.
    package private(set) var deadline: UInt64

    /// A connection accepted at `now`: the header deadline runs from now (handshake included).
    package init(deadlines: ConnectionDeadlines, acceptedAt now: UInt64) {
        self.deadlines = deadlines
        kind = .header
        deadline = Self.adding(now, deadlines.header)
    }

    /// True while a kept-alive connection waits for the first byte of its next request.
    package var awaitsRequest: Bool { kind == .idle }

    /// The first byte of a request arrived at `now`. On an idle connection the header
    /// deadline starts then; while a head is already being received nothing changes, so a
    /// client that sends a byte at a time gets no fresh time.
    ///
    /// - Returns: true when this started a new request.
    @discardableResult
    package mutating func requestStarted(at now: UInt64) -> Bool {
        guard kind == .idle else { return false }
        set(.header, from: now)
        return true
    }

    /// A response began at `now`: the write deadline runs from now.
    package mutating func responding(at now: UInt64) { set(.write, from: now) }

    /// A report was queued for the writer at `now`: the commit deadline runs from now.
    package mutating func awaitingCommit(at now: UInt64) { set(.commit, from: now) }

    /// The response was sent completely at `now`. With bytes of a next request already
    /// received (pipelining) its header deadline starts now; otherwise the idle deadline.
    package mutating func responded(at now: UInt64, pipelined: Bool) {
        set(pipelined ? .header : .idle, from: now)
    }

    /// A graceful close began at `now`: the linger deadline runs from now.
    package mutating func closing(at now: UInt64) { set(.linger, from: now) }

    /// Whether the connection has run out of time at `now`.
    package func hasExpired(at now: UInt64) -> Bool { now >= deadline }

    private mutating func set(_ kind: ConnectionDeadlines.Kind, from now: UInt64) {
        self.kind = kind
        deadline = Self.adding(now, deadlines.length(of: kind))
    }

    private static func adding(_ now: UInt64, _ length: UInt64) -> UInt64 {
        let (sum, overflow) = now.addingReportingOverflow(length)
        return overflow ? .max : sum
    }
}
