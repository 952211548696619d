// The report writer of `pinion serve --reports`: a bounded queue in front of one thread
// that commits reports to SQLite in batches, so a slow or failing disk never blocks serving.

import Dispatch
import Foundation
import PinionCore
import PinionSystem
import PinionTrust
import Synchronization

/// Settings of report collection (`pinion serve --reports DB`, docs/DESIGN.md §14).
public struct ReportSettings: Sendable {
    /// The SQLite database file; must lie outside the served tree.
    public var databasePath: String
    /// Retention period and size cap.
    public var storeLimits: ReportStoreLimits
    /// Reports waiting to be written at most; beyond that POSTs get 503.
    public var queueCapacity: Int
    /// Reports one source network (IPv4 /24, IPv6 /64) may send at once, then
    /// `ratePerMinute` a minute.
    public var rateBurst: Int
    public var ratePerMinute: Double
    /// The proxies (a CDN's egress ranges, a load balancer) whose `X-Forwarded-For` is
    /// believed; empty: none.
    public var trustedProxies: [IPRange]
    /// Baselines whose domains are accepted in every scope, besides those of the scope's
    /// manifest versions (`ReportHostPolicy`).
    public var baselines: [Baseline]

    /// - Parameters: the database path; defaults: 30 days, 256 MiB, 1,024 queued, 20 at once
    ///   then 10 a minute, no trusted proxy, no baseline.
    public init(databasePath: String) {
        self.databasePath = databasePath
        storeLimits = ReportStoreLimits()
        queueCapacity = 1_024
        rateBurst = 20
        ratePerMinute = 10
        trustedProxies = []
        baselines = []
    }
}

/// The result of one queued report.
enum ReportWriteResult: Sendable {
    case committed(StoredOutcome)
    case failed(ReportStoreError)
}

/// One report waiting for the writer.
struct ReportJob: Sendable {
    let report: ReceivedReport
    let scope: String
    /// The source network (`ReportClientAddress.sourcePrefix`).
    let client: String
    /// Called on the writer thread once the batch holding this report committed or failed.
    let completion: @Sendable (ReportWriteResult) -> Void
}

/// The bounded queue and its writer thread.
final class ReportCollector: Sendable {
    /// Most reports committed in one transaction.
    static let maxBatch = 64
    /// Seconds between retention sweeps.
    static let pruneInterval: Int64 = 3_600

    private let store: ReportStore
    private let capacity: Int
    private let metrics: ServerMetrics?
    private let clock: @Sendable () -> Timestamp
    private let queue = Mutex<[ReportJob]>([])
    private let signal = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)

    /// Opens the store (refusing a path inside `servedTree`), deletes expired reports and
    /// evicts down to the cap (which may have been lowered since the last run).
    ///
    /// - Throws: `ReportStoreError`.
    init(
        settings: ReportSettings, servedTree: String, metrics: ServerMetrics?,
        clock: @escaping @Sendable () -> Timestamp
    ) throws(ReportStoreError) {
        store = try ReportStore(
            path: settings.databasePath, create: true, servedTree: servedTree, limits: settings.storeLimits)
        try store.prune(at: clock())
        try store.evictToCap()
        capacity = max(1, settings.queueCapacity)
        self.metrics = metrics
        self.clock = clock
    }

    /// The queue's capacity.
    var queueCapacity: Int { capacity }

    /// Queues a report; never blocks.
    ///
    /// - Returns: false when the queue is full (the caller answers 503).
    func submit(_ job: ReportJob) -> Bool {
        let accepted = queue.withLock { jobs -> Bool in
            guard jobs.count < capacity, !stopping.load(ordering: .relaxed) else { return false }
            jobs.append(job)
            return true
        }
        guard accepted else { return false }
        metrics?.reportsQueued.wrappingAdd(1, ordering: .relaxed)
        metrics?.reportsAccepted.add()
        signal.signal()
        return true
    }

    /// Starts the writer thread.
    func start() {
        guard !started.exchange(true, ordering: .sequentiallyConsistent) else { return }
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Writes what is queued, then stops the thread; returns when it has.
    func stop() {
        guard started.load(ordering: .sequentiallyConsistent) else { return }
        guard !stopping.exchange(true, ordering: .sequentiallyConsistent) else { return }
        signal.signal()
        finished.wait()
    }

    private func run() {
        var lastPrune = clock().secondsSince1970
        while true {
            signal.wait()
            while true {
                let batch = queue.withLock { jobs -> [ReportJob] in
                    let taken = Array(jobs.prefix(Self.maxBatch))
                    jobs.removeFirst(taken.count)
                    return taken
                }
                if batch.isEmpty { break }
                metrics?.reportsQueued.wrappingSubtract(batch.count, ordering: .relaxed)
                write(batch)
            }
            let now = clock().secondsSince1970
            if now - lastPrune >= Self.pruneInterval || now < lastPrune {
                lastPrune = now
                _ = try? store.prune(at: clock())
            }
            if stopping.load(ordering: .sequentiallyConsistent), queue.withLock({ $0.isEmpty }) { return }
        }
    }

    private func write(_ batch: [ReportJob]) {
        let evictedBefore = store.evictedCount
        let result = store.commit(batch.map { ($0.report, $0.scope, $0.client) }, at: clock())
        metrics?.reportsEvicted.add(UInt64(max(0, store.evictedCount - evictedBefore)))
        switch result {
        case .success(let outcomes):
            for (job, outcome) in zip(batch, outcomes) {
                switch outcome {
                case .stored: metrics?.reportsStored.add()
                case .repeated: metrics?.reportsRepeated.add()
                }
                job.completion(.committed(outcome))
            }
        case .failure(let error):
            if batch.count > 1, case .full = error {
                // One report may be the one that does not fit: the others are retried alone.
                for job in batch { write([job]) }
                return
            }
            for job in batch {
                metrics?.refuse(error == .full ? .storeFull : .writeFailed)
                job.completion(.failed(error))
            }
        }
    }
}
