// A `pinion serve --reports` child kept at its size cap, so its writer evicts as it commits,
// killed with SIGKILL at seeded moments (PINION_CRASH_SEED replays): the database passes
// SQLite's integrity check, every acknowledged report is still counted, and the rows and
// aggregates agree.

import Foundation
import PinionCore
import PinionPublisher
import PinionTestSupport
import Synchronization
import Testing

@Suite(.serialized) struct ReportEvictionCrashTests {
    final class Ledger: Sendable {
        let acknowledged = Mutex<Set<String>>([])
        let sent = Mutex<Set<String>>([])
    }

    @Test func theDatabaseStaysWholeWhenKilledDuringEviction() throws {
        var generator = SeededGenerator(seed: crashSeed() &+ 25)
        let credentials = try ServerCredentials.shared()
        let certificate = try reportCertificates().first
        let cap = 1 << 20
        let budget = Date().addingTimeInterval(240)
        for round in 0..<3 where Date() < budget {
            let tree = try EnvelopeTree(manifestLifetime: 3_650 * day, domains: reportDomains)
            let database = try makeTemporaryDirectory(prefix: "pinion-evict-crash") + "/reports.sqlite"
            let server = try ServeProcess([
                "--repo", tree.directory, "--cert", credentials.certificate, "--key", credentials.key, "--listen",
                "127.0.0.1:0", "--workers", "2", "--access-log", "off", "--reports", database, "--reports-burst",
                "1000000", "--reports-per-minute", "1000000", "--reports-max-bytes", String(cap),
                "--trusted-proxy", "127.0.0.1",
            ])
            // The cap holds about 250 of these reports: past that, commits evict.
            let killAfter = 600 + Int(generator.next() % 400)
            let ledger = Ledger()
            let group = DispatchGroup()
            for sender in 0..<4 {
                group.enter()
                let port = server.port
                let scope = tree.scope
                Thread.detachNewThread {
                    defer { group.leave() }
                    guard let client = try? RawTLSClient(port: port, timeout: 10) else { return }
                    for index in 0..<10_000 {
                        let host = "r\(round)-s\(sender)-\(index).api.example.com"
                        let body = reportBody(hostname: host, chain: [certificate])
                        // Each sender's reports come from seven networks of its own.
                        let request =
                            "POST /v1/\(scope)/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                            + "X-Forwarded-For: 10.\(sender).\(index % 7).1\r\n"
                            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
                        ledger.sent.withLock { _ = $0.insert(host) }
                        guard let response = client.request(request, timeout: 10) else { return }
                        guard response.status == 204 else { return }
                        ledger.acknowledged.withLock { _ = $0.insert(host) }
                    }
                }
            }
            for _ in 0..<12_000 where ledger.acknowledged.withLock({ $0.count }) < killAfter {
                Thread.sleep(forTimeInterval: 0.005)
            }
            // A seeded pause inside a commit cycle, so the kill lands at varied points.
            Thread.sleep(forTimeInterval: Double(generator.next() % 20) / 1_000)
            server.signal(SIGKILL)
            _ = server.waitForExit(timeout: 30)
            group.wait()

            let acknowledged = ledger.acknowledged.withLock { $0 }
            let sent = ledger.sent.withLock { $0 }
            #expect(acknowledged.count >= killAfter, "round \(round): only \(acknowledged.count) acknowledged")
            #expect(try sqlite3(database, "PRAGMA integrity_check") == ["ok"], "round \(round)")
            #expect(try sqlite3(database, "PRAGMA foreign_key_check").isEmpty, "round \(round)")
            // Evictions happened: fewer rows than hosts counted.
            let rows = Int(try sqlite3(database, "SELECT count(*) FROM reports").first ?? "") ?? -1
            let counted = Set(try sqlite3(database, "SELECT hostname FROM key_days"))
            #expect(rows < counted.count, "round \(round): \(rows) rows, \(counted.count) hosts counted")
            // Every acknowledged report is still counted; nothing unsent is.
            #expect(
                acknowledged.isSubset(of: counted),
                "round \(round): lost \(acknowledged.subtracting(counted).sorted().prefix(5))")
            #expect(counted.isSubset(of: sent), "round \(round)")
            // Rows and aggregates agree: a row's count is its day counts, and no key's day
            // counts exceed what key_days holds for it.
            #expect(
                try sqlite3(
                    database,
                    """
                    SELECT count(*) FROM reports r
                    WHERE r.count <> (SELECT coalesce(sum(d.count), 0) FROM report_days d WHERE d.report_id = r.id)
                    """) == ["0"], "round \(round)")
            #expect(
                try sqlite3(
                    database,
                    """
                    SELECT count(*) FROM (SELECT r.scope, r.hostname, r.served_pin, d.day, sum(d.count) AS n
                        FROM report_days d JOIN reports r ON r.id = d.report_id
                        GROUP BY r.scope, r.hostname, r.served_pin, d.day) x
                    LEFT JOIN key_days k ON k.scope = x.scope AND k.hostname = x.hostname
                        AND k.served_pin = x.served_pin AND k.day = x.day
                    WHERE k.count IS NULL OR k.count < x.n
                    """) == ["0"], "round \(round)")
            #expect(
                try sqlite3(database, "SELECT count(*) FROM reports WHERE source NOT LIKE '10.%.0/24'") == ["0"],
                "round \(round): only networks are stored")
            let size = (try? FileManager.default.attributesOfItem(atPath: database)[.size] as? Int) ?? Int.max
            #expect(size <= cap, "round \(round): \(size) bytes")
            // And the store opens it again, with the counts readable.
            let store = try ReportStore(path: database, create: false)
            #expect(try store.refusedKeys(scope: nil, since: t0).count == counted.count)
        }
    }
}
