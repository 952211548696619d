// A `pinion serve --reports` child killed with SIGKILL while four clients POST reports, at
// seeded moments (PINION_CRASH_SEED replays): the database opens, passes SQLite's
// integrity check, and holds every report that was acknowledged with 204.

import Foundation
import PinionCore
import PinionPublisher
import PinionTestSupport
import Testing

@Suite(.serialized) struct ReportCrashTests {
    @Test func everyAcknowledgedReportSurvivesSIGKILLDuringWrites() throws {
        var generator = SplitMix(state: crashSeed() &+ 7)
        let credentials = try ServerCredentials.shared()
        let certificate = try reportCertificates().first
        for round in 0..<3 {
            let tree = try EnvelopeTree(manifestLifetime: 3_650 * day, domains: reportDomains)
            let database = try makeTemporaryDirectory(prefix: "pinion-report-crash") + "/reports.sqlite"
            let server = try ServeProcess([
                "--repo", tree.directory, "--cert", credentials.certificate, "--key", credentials.key, "--listen",
                "127.0.0.1:0", "--workers", "2", "--access-log", "off", "--reports", database, "--reports-burst",
                "1000000", "--reports-per-minute", "1000000",
            ])
            let killAfter = 10 + Int(generator.next() % 60)
            let ledger = sendReportsUntilKilled(
                server, scope: tree.scope, round: round, certificate: certificate, killAfter: killAfter,
                maxPolls: 6_000)

            let acknowledged = ledger.acknowledged.withLock { $0 }
            let sent = ledger.sent.withLock { $0 }
            #expect(acknowledged.count >= killAfter, "round \(round): only \(acknowledged.count) acknowledged")
            #expect(try sqlite3(database, "PRAGMA integrity_check") == ["ok"], "round \(round)")
            let stored = Set(try sqlite3(database, "SELECT hostname FROM reports"))
            #expect(
                acknowledged.isSubset(of: stored), "round \(round): lost \(acknowledged.subtracting(stored).sorted())")
            #expect(stored.isSubset(of: sent), "round \(round)")
            // And the store itself opens it again (the WAL is recovered).
            let store = try ReportStore(path: database, create: false)
            #expect(try store.totals().distinct == Int64(stored.count))
        }
    }
}
