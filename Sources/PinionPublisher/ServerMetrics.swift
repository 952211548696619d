// Counters of `pinion serve` for /metrics: one shard of relaxed atomics per worker (no lock,
// no shared cache line on the request path), summed only when scraped.

import Synchronization

/// What kind of path a request named, for the `path_class` label.
public enum RequestPathClass: Int, Sendable, CaseIterable {
    case manifest, index, root, history, otherFile, healthz, reports, other

    /// The label value.
    public var label: String {
        switch self {
        case .manifest: return "manifest"
        case .index: return "index"
        case .root: return "root"
        case .history: return "history"
        case .otherFile: return "file"
        case .healthz: return "healthz"
        case .reports: return "reports"
        case .other: return "other"
        }
    }

    /// Classifies a request path (without its query) by its shape only, with a few byte
    /// comparisons of its UTF-8 (no Unicode normalisation on the request path); whether the
    /// file exists is the status's business.
    public init(path: String) {
        self = Self.classify(path.utf8.span)
    }

    private static func classify(_ bytes: Span<UInt8>) -> RequestPathClass {
        func matches(_ part: String, at offset: Int) -> Bool {
            let part = part.utf8.span
            guard offset >= 0, offset + part.count <= bytes.count else { return false }
            for index in 0..<part.count where bytes[offset + index] != part[index] { return false }
            return true
        }
        func endsWith(_ suffix: String) -> Bool { matches(suffix, at: bytes.count - suffix.utf8.count) }
        func contains(_ part: String) -> Bool {
            (0..<max(0, bytes.count - part.utf8.count + 1)).contains { matches(part, at: $0) }
        }
        if bytes.count == 8, matches("/healthz", at: 0) {
            return .healthz
        } else if !matches("/v1/", at: 0) {
            return .other
        } else if endsWith("/manifest.json") {
            return .manifest
        } else if endsWith("/index.json") {
            return .index
        } else if endsWith("/reports") {
            return .reports
        } else if contains("/root/") {
            return .root
        } else if contains("/history/") {
            return .history
        } else {
            return .otherFile
        }
    }
}

/// A monotonically increasing count, updated with relaxed atomics.
public final class MetricCounter: Sendable {
    private let storage = Atomic<UInt64>(0)

    public init() {}

    /// Adds `amount`.
    @inline(__always)
    public func add(_ amount: UInt64 = 1) { storage.wrappingAdd(amount, ordering: .relaxed) }

    /// The count now.
    public var value: UInt64 { storage.load(ordering: .relaxed) }
}

/// One worker's counters. Only that worker adds to them; the scraper reads them.
public final class WorkerMetrics: Sendable {
    /// The status codes counted one by one; any other code counts as `other`.
    public static let statusCodes = [200, 204, 304, 400, 404, 405, 408, 413, 414, 429, 431, 500, 503, 505]

    /// Responses, indexed by `path class * (statusCodes.count + 1) + status index`.
    let requests: [MetricCounter]
    /// Response body bytes sent.
    let bodyBytes = MetricCounter()
    /// Connections closed at accept because the connection cap was reached.
    let capRefusals = MetricCounter()
    /// TLS handshakes completed.
    let handshakes = MetricCounter()
    /// TLS handshakes that failed or timed out.
    let handshakeFailures = MetricCounter()

    init() {
        requests = (0..<(RequestPathClass.allCases.count * (Self.statusCodes.count + 1))).map { _ in MetricCounter() }
    }

    @inline(__always)
    static func statusIndex(_ status: Int) -> Int {
        switch status {
        case 200: return 0
        case 204: return 1
        case 304: return 2
        case 400: return 3
        case 404: return 4
        case 405: return 5
        case 408: return 6
        case 413: return 7
        case 414: return 8
        case 429: return 9
        case 431: return 10
        case 500: return 11
        case 503: return 12
        case 505: return 13
        default: return 14
        }
    }

    /// Counts one response.
    @inline(__always)
    func countResponse(_ pathClass: RequestPathClass, status: Int, bodyBytes bytes: Int) {
        requests[pathClass.rawValue * (Self.statusCodes.count + 1) + Self.statusIndex(status)].add()
        if bytes > 0 { bodyBytes.add(UInt64(bytes)) }
    }
}

/// Why a pin-failure report was not stored, for `pinion_reports_refused_total{reason}`.
public enum ReportRefusal: Int, Sendable, CaseIterable {
    case malformed, tooLarge, rateLimited, queueFull, storeFull, writeFailed, unknownScope, unpinnedHost

    /// The label value.
    public var label: String {
        switch self {
        case .malformed: return "malformed"
        case .tooLarge: return "too_large"
        case .rateLimited: return "rate_limited"
        case .queueFull: return "queue_full"
        case .storeFull: return "store_full"
        case .writeFailed: return "write_failed"
        case .unknownScope: return "unknown_scope"
        case .unpinnedHost: return "unpinned_host"
        }
    }
}

/// Every counter of a running server: the workers' shards and the process-wide ones.
public final class ServerMetrics: Sendable {
    /// One shard per worker, in worker order.
    let shards: [WorkerMetrics]
    /// SIGHUP reloads of the certificate and key that worked.
    public let reloadSuccesses = MetricCounter()
    /// SIGHUP reloads that failed (the old credentials stayed).
    public let reloadFailures = MetricCounter()
    /// Reports accepted into the write queue.
    public let reportsAccepted = MetricCounter()
    /// Reports committed as a new row.
    public let reportsStored = MetricCounter()
    /// Reports committed as a repeat of a stored one (its count raised).
    public let reportsRepeated = MetricCounter()
    /// Report rows evicted at the store's size cap (their per-key counts stay).
    public let reportsEvicted = MetricCounter()
    /// Refused reports, by reason (`ReportRefusal.rawValue`).
    let reportsRefused: [MetricCounter]
    /// Reports waiting in the write queue.
    let reportsQueued = Atomic<Int>(0)
    /// Manifest requests by scope and the version the client holds.
    let polls = ManifestPolls()

    /// - Parameter workers: the number of worker shards (at least 1).
    public init(workers: Int) {
        shards = (0..<max(1, workers)).map { _ in WorkerMetrics() }
        reportsRefused = ReportRefusal.allCases.map { _ in MetricCounter() }
    }

    /// Counts a refused report.
    public func refuse(_ reason: ReportRefusal) { reportsRefused[reason.rawValue].add() }

    /// The refusals counted for `reason`.
    public func refusals(_ reason: ReportRefusal) -> UInt64 { reportsRefused[reason.rawValue].value }

    /// Responses counted for a path class and status, summed over the workers.
    public func responses(_ pathClass: RequestPathClass, status: Int) -> UInt64 {
        let index = pathClass.rawValue * (WorkerMetrics.statusCodes.count + 1) + WorkerMetrics.statusIndex(status)
        return shards.reduce(0) { $0 &+ $1.requests[index].value }
    }

    /// A counter of the shards, summed.
    func sum(_ counter: KeyPath<WorkerMetrics, MetricCounter>) -> UInt64 {
        shards.reduce(0) { $0 &+ $1[keyPath: counter].value }
    }
}
