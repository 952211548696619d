// `pinion serve --reports` children killed with SIGKILL while they evict, at seeded moments
// (PINION_CRASH_SEED replays): one kept at its size cap by four senders, so its writer
// evicts as it commits; one started with a lowered cap, so it evicts hundreds of rows in
// one transaction before it listens. The database passes SQLite's integrity check, every
// acknowledged report is still counted, and the rows and aggregates agree.

import Foundation
import PinionCore
import PinionPublisher
import PinionTestSupport
import Testing

@Suite(.serialized) struct ReportEvictionCrashTests {
    @Test func theDatabaseStaysWholeWhenKilledDuringEviction() throws {
        var generator = SplitMix(state: crashSeed() &+ 25)
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
            // Each sender's reports come from seven networks of its own; a seeded pause inside a
            // commit cycle makes the kill land at varied points.
            let ledger = sendReportsUntilKilled(
                server, scope: tree.scope, round: round, certificate: certificate, killAfter: killAfter,
                maxPolls: 12_000, pauseBeforeKill: Double(generator.next() % 20) / 1_000,
                forwardedFor: { sender, index in "10.\(sender).\(index % 7).1" })

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

    /// The rows and aggregates of a report database, for comparing a killed run with a clean one.
    private func facts(_ database: String) throws -> (rows: Int, counted: String, integrity: [String]) {
        (
            Int(try sqlite3(database, "SELECT count(*) FROM reports").first ?? "") ?? -1,
            try sqlite3(database, "SELECT sum(count) FROM key_days").first ?? "",
            try sqlite3(database, "PRAGMA integrity_check")
        )
    }

    @Test func aKillDuringTheStartUpEvictionOfALoweredCapLeavesAllOrNothing() throws {
        var generator = SplitMix(state: crashSeed() &+ 26)
        let credentials = try ServerCredentials.shared()
        let certificate = try reportCertificates().first
        let directory = try makeTemporaryDirectory(prefix: "pinion-evict-start")
        let tree = try EnvelopeTree(manifestLifetime: 3_650 * day, domains: reportDomains)
        // 1,200 reports under an 8 MiB cap, from 40 networks.
        let full = directory + "/full.sqlite"
        do {
            let store = try ReportStore(path: full, create: true, limits: ReportStoreLimits(maxBytes: 8 << 20))
            var batch: [(report: ReceivedReport, scope: String, client: String)] = []
            for index in 0..<1_200 {
                let body = reportBody(hostname: "h\(index).api.example.com", chain: [certificate])
                batch.append(
                    (try ReceivedReport.parse(Array(body.utf8)), tree.scope, "10.\(index % 40).\(index % 3).1"))
                if batch.count == 100 {
                    _ = try store.commit(batch, at: t0).get()
                    batch = []
                }
            }
            #expect(store.evictedCount == 0)
        }
        let before = try facts(full)
        #expect(before.rows == 1_200)
        func serve(_ database: String) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: pinionExecutable)
            process.arguments = [
                "serve", "--repo", tree.directory, "--cert", credentials.certificate, "--key", credentials.key,
                "--listen", "127.0.0.1:0", "--access-log", "off", "--reports", database, "--reports-max-bytes",
                String(1 << 20),
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        func copy(_ name: String) throws -> String {
            let path = directory + "/" + name
            try FileManager.default.copyItem(atPath: full, toPath: path)
            return path
        }
        // A clean run gives the outcome a finished eviction leaves, and how long start-up takes.
        let clean = try copy("clean.sqlite")
        let started = Date()
        let server = try ServeProcess([
            "--repo", tree.directory, "--cert", credentials.certificate, "--key", credentials.key, "--listen",
            "127.0.0.1:0", "--access-log", "off", "--reports", clean, "--reports-max-bytes", String(1 << 20),
        ])
        let startUp = Date().timeIntervalSince(started)
        server.signal(SIGTERM)
        #expect(server.waitForExit(timeout: 30) == 0)
        let after = try facts(clean)
        #expect(
            after.rows < before.rows / 2 && after.rows > 0, "the lowered cap evicted what it needed: \(after.rows) left"
        )
        #expect(after.counted == before.counted, "eviction keeps every count")

        // For the record: how much of start-up the eviction takes (coverage, not correctness).
        let timed = try copy("timed.sqlite")
        let evictionStarted = Date()
        _ = try ReportStore(path: timed, create: false, limits: ReportStoreLimits(maxBytes: 1 << 20)).evictToCap()
        let eviction = Date().timeIntervalSince(evictionStarted)

        var outcomes: [Int: Int] = [:]
        for round in 0..<6 {
            let database = try copy("killed-\(round).sqlite")
            let process = try serve(database)
            // Seeded moments over the whole start-up, eviction included.
            Thread.sleep(forTimeInterval: startUp * Double(generator.next() % 1_000) / 1_000)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let killed = try facts(database)
            #expect(killed.integrity == ["ok"], "round \(round)")
            #expect(try sqlite3(database, "PRAGMA foreign_key_check").isEmpty, "round \(round)")
            #expect(killed.rows == before.rows || killed.rows == after.rows, "round \(round): \(killed.rows) rows")
            #expect(killed.counted == before.counted, "round \(round)")
            outcomes[killed.rows, default: 0] += 1
            // Opened again, it finishes the eviction.
            let store = try ReportStore(path: database, create: false, limits: ReportStoreLimits(maxBytes: 1 << 20))
            try store.evictToCap()
            #expect(try store.totals().distinct == Int64(after.rows), "round \(round)")
        }
        print(
            "start-up eviction kills: rows left \(outcomes) (\(before.rows) before, \(after.rows) after); "
                + "start-up \(Int(startUp * 1_000)) ms, eviction alone \(Int(eviction * 1_000)) ms")
    }
}
