// Which hosts `pinion serve --reports` takes reports for: the rule on its own at explicit
// times, then over HTTP with a tree whose history dropped a host, and configured baselines.

import Foundation
import PinionCore
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

@testable import PinionPublisher

@Suite struct ReportHostAcceptanceTests {
    private let retention: Int64 = 30 * day

    private func policy(_ domains: [ManifestPayload.Domain], expiresAt: Timestamp) -> ReportHostPolicy {
        var policy = ReportHostPolicy()
        policy.add(manifestDomains: domains, expiresAt: expiresAt)
        return policy
    }

    @Test func theNotedHostnameMustNameAPinnedEntryAndTheHostMustMatchIt() {
        let pinned = policy(
            [
                .init(name: "api.example.com", pins: [pin(1)]),
                .init(name: "cdn.example.com", includeSubdomains: true, pins: [pin(2)]),
            ], expiresAt: t0.adding(seconds: 30 * day))
        func refusal(_ host: String, _ noted: String) -> String? {
            pinned.refusal(hostname: host, notedHostname: noted, at: t0, retentionSeconds: retention)
        }
        #expect(refusal("api.example.com", "api.example.com") == nil)
        #expect(refusal("img.cdn.example.com", "cdn.example.com") == nil)
        #expect(refusal("a.b.cdn.example.com", "cdn.example.com") == nil)
        #expect(refusal("evil.example.net", "evil.example.net")?.contains("is not pinned") == true)
        #expect(refusal("evil.example.net", "api.example.com")?.contains("does not match") == true)
        #expect(
            refusal("x.api.example.com", "api.example.com")?.contains("does not include subdomains") == true,
            "api.example.com does not include subdomains")
        #expect(refusal("evilcdn.example.com", "cdn.example.com") != nil, "a suffix that is not a label boundary")
        #expect(refusal("example.com", "cdn.example.com") != nil, "the parent is not a subdomain")
    }

    /// Clients on an older manifest still report its hosts for the retention period after
    /// that version expired; then they are refused.
    @Test func aDroppedHostIsAcceptedForTheRetentionPeriodAfterItsLastVersionExpired() {
        var pinned = policy([.init(name: "old.example.com", pins: [pin(1)])], expiresAt: t0)
        pinned.add(
            manifestDomains: [.init(name: "api.example.com", pins: [pin(1)])], expiresAt: t0.adding(seconds: 60 * day))
        func refusal(at time: Timestamp) -> String? {
            pinned.refusal(
                hostname: "old.example.com", notedHostname: "old.example.com", at: time, retentionSeconds: retention)
        }
        #expect(refusal(at: t0.adding(seconds: 30 * day - 1)) == nil)
        #expect(refusal(at: t0.adding(seconds: 30 * day)) != nil)
        // A later version holding it again extends it.
        pinned.add(
            manifestDomains: [.init(name: "old.example.com", pins: [pin(3)])], expiresAt: t0.adding(seconds: 10 * day))
        #expect(refusal(at: t0.adding(seconds: 30 * day)) == nil)
        #expect(refusal(at: t0.adding(seconds: 40 * day)) != nil)
    }

    @Test func baselineHostsAreAlwaysAccepted() throws {
        var pinned = ReportHostPolicy()
        pinned.add(
            baseline: try Baseline(domains: [
                PinnedDomain(name: "app.example.org", includeSubdomains: true, pins: [pin(1)])
            ]))
        #expect(
            pinned.refusal(
                hostname: "eu.app.example.org", notedHostname: "app.example.org", at: t0.adding(seconds: 3_650 * day),
                retentionSeconds: retention) == nil)
        #expect(
            pinned.refusal(
                hostname: "other.example.org", notedHostname: "other.example.org", at: t0, retentionSeconds: retention)
                != nil)
    }

    /// A report text the server refuses shows no attacker control characters in its reason.
    @Test func theRefusalEscapesTheNames() {
        let text =
            ReportHostPolicy().refusal(
                hostname: "a.example.com", notedHostname: "a\u{1b}[31m.example.com", at: t0, retentionSeconds: retention
            )
            ?? ""
        #expect(!text.unicodeScalars.contains { $0.value == 0x1b })
    }

    /// history/1.json pinned old.example.com (expired 20 days ago), history/2.json pinned
    /// gone.example.com (expired 40 days ago), the served version 3 pins api.example.com.
    private func treeWithHistory() throws -> EnvelopeTree {
        let tree = try EnvelopeTree(domains: reportDomains)
        let key = try makeKey()
        let history = "\(tree.directory)/v1/\(tree.scope)/history"
        for (version, host, expiry) in [(1, "old.example.com", -20 * day), (2, "gone.example.com", -40 * day)] {
            let payload = manifestPayload(
                version: Int64(version), issuedAt: t0.adding(seconds: expiry - 30 * day), lifetime: 30 * day,
                domains: [.init(name: host, pins: [pin(1)])])
            try Data(try sign(.pins, payload.serialized(), with: [key]).serialized()).write(
                to: URL(fileURLWithPath: "\(history)/\(version).json"))
        }
        // Garbage in history adds nothing and breaks nothing.
        try Data("not an envelope".utf8).write(to: URL(fileURLWithPath: "\(history)/4.json"))
        return tree
    }

    @Test func unrelatedHostsGet422WithTheReasonAndAreCounted() throws {
        let collector = try ReportCollectionTests.Collector(tree: try treeWithHistory()) { $0.rateBurst = 100 }
        let chain = try reportCertificates()
        let accepted = try collector.post(reportBody(chain: [chain.first]))
        #expect(accepted.status == 204)
        let dropped = try collector.post(
            reportBody(hostname: "old.example.com", notedHostname: "old.example.com", chain: [chain.first]))
        #expect(dropped.status == 204, "version 1 expired 20 days ago, within the 30-day retention")
        for (host, noted, reason) in [
            ("evil.example.net", "evil.example.net", "noted-hostname evil.example.net is not pinned"),
            ("gone.example.com", "gone.example.com", "noted-hostname gone.example.com is not pinned"),
            ("evil.example.net", "api.example.com", "hostname evil.example.net does not match"),
        ] {
            let result = try collector.post(reportBody(hostname: host, notedHostname: noted, chain: [chain.first]))
            #expect(result.status == 422, "\(host) / \(noted)")
            let object = try? JSONSerialization.jsonObject(with: Data(result.body.utf8)) as? [String: String]
            #expect(object?["error"]?.contains(reason) == true, "\(result.body)")
        }
        #expect(
            try sqlite3(collector.database, "SELECT hostname FROM reports ORDER BY hostname")
                == ["api.example.com", "old.example.com"])
        let metrics = try #require(collector.publisher.metrics)
        #expect(metrics.refusals(.unpinnedHost) == 3)
        let scraped = try PrometheusText.parse(try curl([(collector.publisher.metricsURL ?? "") + "/metrics"]).body)
        #expect(scraped.value("pinion_reports_refused_total", ["reason": "unpinned_host"]) == 3)
    }

    @Test func aConfiguredBaselineAddsItsHosts() throws {
        let baseline = try Baseline.parse(
            Array(
                """
                {"type": "pinion.baseline", "specVersion": 1, "domains": [
                  {"name": "app.example.org", "includeSubdomains": true, "pins": ["\(pin(9).description)"]}]}
                """.utf8))
        let collector = try ReportCollectionTests.Collector { $0.baselines = [baseline] }
        let chain = try reportCertificates()
        #expect(
            try collector.post(
                reportBody(hostname: "eu.app.example.org", notedHostname: "app.example.org", chain: [chain.first])
            ).status == 204)
        #expect(
            try collector.post(
                reportBody(hostname: "else.example.org", notedHostname: "else.example.org", chain: [chain.first])
            ).status == 422)
    }

    /// A version published while the server runs is read at the next report.
    @Test func aNewlyPublishedVersionsHostsAreAcceptedAtOnce() throws {
        let tree = try EnvelopeTree(domains: reportDomains)
        let collector = try ReportCollectionTests.Collector(tree: tree)
        let chain = try reportCertificates()
        let body = reportBody(hostname: "new.example.com", notedHostname: "new.example.com", chain: [chain.first])
        #expect(try collector.post(body).status == 422)
        let payload = manifestPayload(
            version: 4, domains: reportDomains + [.init(name: "new.example.com", pins: [pin(1)])])
        try Data(try sign(.pins, payload.serialized(), with: [try makeKey()]).serialized()).write(
            to: URL(fileURLWithPath: "\(tree.directory)/v1/\(tree.scope)/history/4.json"))
        #expect(try collector.post(body).status == 204)
    }
}
