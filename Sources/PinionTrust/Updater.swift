// The polling loop around refreshes: refresh now, or every interval with jitter and
// back-off; cancellable. The refresh itself is injected, so tests drive the loop without
// a network and without real sleeping.

/// What one refresh attempt reports to the loop.
public struct RefreshReport: Sendable, Equatable {
    public var outcome: RefreshOutcome
    /// Cache-Control max-age of the manifest response, in seconds, if any.
    public var maxAge: Double?
    /// The published file a rejection concerns (`root/4.json`, `manifest.json`), if any.
    public var document: String?
    /// For a manifest refused for its signatures, the cause a signer can act on, if known.
    public var diagnosis: String?

    /// - Parameters:
    ///   - outcome: what the refresh did.
    ///   - maxAge: Cache-Control max-age of the manifest response, in seconds.
    ///   - document: the published file a rejection concerns.
    ///   - diagnosis: the cause of a signature refusal, in words a signer can act on.
    public init(outcome: RefreshOutcome, maxAge: Double? = nil, document: String? = nil, diagnosis: String? = nil) {
        self.outcome = outcome
        self.maxAge = maxAge
        self.document = document
        self.diagnosis = diagnosis
    }

    /// Whether the attempt counts as a failure for back-off (rejections and network failures).
    public var failed: Bool {
        switch outcome {
        case .updated, .unchanged: return false
        case .rejected, .networkFailure: return true
        }
    }
}

/// Runs refreshes one at a time: on demand (`refreshNow`) or in a loop (`start`) with the
/// delays of an `UpdateSchedule`. Concurrent callers never run two refreshes at once.
public actor Updater {
    public typealias RefreshAction = @Sendable () async -> RefreshReport
    public typealias Sleep = @Sendable (Double) async throws -> Void

    private let schedule: UpdateSchedule
    private let action: RefreshAction
    private let sleep: Sleep
    private let random: @Sendable () -> Double
    private var loop: Task<Void, Never>?
    private var running: Task<RefreshReport, Never>?
    /// Failed refreshes in a row.
    public private(set) var consecutiveFailures = 0

    /// - Parameters:
    ///   - schedule: intervals, jitter and back-off.
    ///   - sleep: waits the given seconds; throws when cancelled (default `Task.sleep`).
    ///   - random: a number in 0 ... 1 for jitter.
    ///   - refresh: one complete refresh.
    public init(
        schedule: UpdateSchedule = UpdateSchedule(),
        sleep: @escaping Sleep = { seconds in try await Task.sleep(nanoseconds: UInt64(max(seconds, 0) * 1e9)) },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
        refresh: @escaping RefreshAction
    ) {
        self.schedule = schedule
        self.action = refresh
        self.sleep = sleep
        self.random = random
    }

    /// Runs a refresh now, or joins the one already running.
    @discardableResult
    public func refreshNow() async -> RefreshReport {
        if let running { return await running.value }
        let task = Task { await action() }
        running = task
        let report = await task.value
        running = nil
        consecutiveFailures = report.failed ? consecutiveFailures + 1 : 0
        lastMaxAge = report.failed ? lastMaxAge : report.maxAge
        return report
    }

    private var lastMaxAge: Double?

    /// The delay the loop waits before its next refresh.
    public func nextDelay() -> Double {
        schedule.delay(consecutiveFailures: consecutiveFailures, maxAge: lastMaxAge, random: random())
    }

    /// Starts polling: a refresh at once, then after each delay. Calling it again while
    /// running does nothing.
    public func start() {
        guard loop == nil else { return }
        loop = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                await self.refreshNow()
                let delay = await self.nextDelay()
                do { try await self.sleep(delay) } catch { return }
            }
        }
    }

    /// Stops polling (a refresh in progress completes; no new one starts).
    public func stop() {
        loop?.cancel()
        loop = nil
    }

    /// Whether the loop is running.
    public var isPolling: Bool { loop != nil }
}
