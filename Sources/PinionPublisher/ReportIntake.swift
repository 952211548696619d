// `POST /v1/{scope}/reports` of `pinion serve --reports`: the checks in order (scope, client
// address, rate limit per source network, body, pinned host), then the queue; every refusal
// gets its status and reason.

import Foundation
import PinionCore
import PinionSystem
import Synchronization

/// What the worker does with a report POST.
enum ReportIntakeDecision {
    /// Answer now: the status, the reason (the body) and an optional Retry-After in seconds.
    case respond(status: Int, reason: String, retryAfter: Int?)
    /// Queued; the completion will give the answer.
    case queued
}

/// Checks report POSTs and queues them for the collector.
final class ReportIntake: Sendable {
    let collector: ReportCollector
    private let limiter: Mutex<ReportRateLimiter>
    private let trustedProxies: [IPRange]
    private let repository: String
    private let metrics: ServerMetrics?
    private let hosts: ReportHostIndex
    private let retentionSeconds: Int64
    private let clock: @Sendable () -> Timestamp

    init(
        settings: ReportSettings, collector: ReportCollector, repository: String, metrics: ServerMetrics?,
        clock: @escaping @Sendable () -> Timestamp
    ) {
        self.collector = collector
        limiter = Mutex(ReportRateLimiter(burst: settings.rateBurst, perMinute: settings.ratePerMinute))
        trustedProxies = settings.trustedProxies
        self.repository = repository
        self.metrics = metrics
        hosts = ReportHostIndex(repository: repository, baselines: settings.baselines)
        retentionSeconds = settings.storeLimits.retentionSeconds
        self.clock = clock
    }

    /// The scope of a `/v1/{scope}/reports` path, or nil for any other path.
    static func scope(ofPath path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].isEmpty, parts[1] == "v1", parts[3] == "reports" else { return nil }
        let scope = String(parts[2])
        do { try Scope.validate(scope) } catch { return nil }
        return scope
    }

    /// Checks one report POST and queues it.
    ///
    /// - Parameters:
    ///   - scope: from `scope(ofPath:)`.
    ///   - head: the request head (for `X-Forwarded-For`).
    ///   - body: the request body.
    ///   - peer: the connection's peer, `IP:PORT`.
    ///   - monotonicSeconds: now, for the rate limit.
    ///   - completion: called on the writer thread with the final status and reason when queued.
    func receive(
        scope: String, head: HTTPRequestHead, body: [UInt8], peer: String, monotonicSeconds: Double,
        completion: @escaping @Sendable (Int, String) -> Void
    ) -> ReportIntakeDecision {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: "\(repository)/v1/\(scope)", isDirectory: &isDirectory),
            isDirectory.boolValue
        else {
            metrics?.refuse(.unknownScope)
            return .respond(status: 404, reason: "no such scope", retryAfter: nil)
        }
        let client: String
        do {
            client = ReportClientAddress.sourcePrefix(
                of: try ReportClientAddress.resolve(
                    peer: peer, forwardedFor: head.headers.filter { $0.name == "x-forwarded-for" }.map(\.value),
                    trustedProxies: trustedProxies))
        } catch {
            metrics?.refuse(.malformed)
            return .respond(status: 400, reason: error.description, retryAfter: nil)
        }
        if let wait = limiter.withLock({ $0.take(client, at: monotonicSeconds) }) {
            metrics?.refuse(.rateLimited)
            return .respond(
                status: 429, reason: "too many reports from this network (\(client))", retryAfter: wait)
        }
        let contentType = head.header("content-type")?.lowercased() ?? ""
        guard contentType.hasPrefix("application/json") || contentType.hasPrefix("application/csp-report") else {
            metrics?.refuse(.malformed)
            return .respond(status: 400, reason: "Content-Type must be application/json", retryAfter: nil)
        }
        let report: ReceivedReport
        do {
            report = try ReceivedReport.parse(body)
        } catch {
            if case .tooLarge = error {
                metrics?.refuse(.tooLarge)
                return .respond(status: 413, reason: error.description, retryAfter: nil)
            }
            metrics?.refuse(.malformed)
            return .respond(status: 400, reason: error.description, retryAfter: nil)
        }
        if let refusal = hosts.policy(scope: scope).refusal(
            hostname: report.hostname, notedHostname: report.notedHostname, at: clock(),
            retentionSeconds: retentionSeconds)
        {
            metrics?.refuse(.unpinnedHost)
            return .respond(status: 422, reason: refusal, retryAfter: nil)
        }
        let job = ReportJob(report: report, scope: scope, client: client) { result in
            switch result {
            case .committed: completion(204, "")
            case .failed(.full): completion(503, "the report store is full")
            case .failed: completion(503, "the report could not be stored")
            }
        }
        guard collector.submit(job) else {
            metrics?.refuse(.queueFull)
            return .respond(status: 503, reason: "the report queue is full", retryAfter: 5)
        }
        return .queued
    }
}
