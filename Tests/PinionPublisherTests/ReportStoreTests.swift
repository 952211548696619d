// The report database on its own: STRICT schema and migrations, refusals of foreign or
// newer files, retention and the size cap at explicit times, and `pinion reports`.

import Foundation
import PinionCore
import PinionCrypto
import PinionSystem
import PinionTestSupport
import Testing

@testable import PinionPublisher

@Suite struct ReportStoreTests {
    let directory: String
    let chain: (first: String, second: String)

    init() throws {
        directory = try makeTemporaryDirectory(prefix: "pinion-report-store")
        chain = try reportCertificates()
    }

    private func report(host: String = "api.example.com", certificate: String? = nil, appVersion: String? = "2.1")
        throws -> ReceivedReport
    {
        try ReceivedReport.parse(
            Array(reportBody(hostname: host, chain: [certificate ?? chain.first], appVersion: appVersion).utf8))
    }

    @Test func createsAStrictVersionedSchemaInWALMode() throws {
        let path = directory + "/a.sqlite"
        let store = try ReportStore(path: path, create: true)
        #expect(try sqlite3(path, "SELECT version FROM schema_version") == ["\(ReportStore.schemaVersion)"])
        #expect(try sqlite3(path, "PRAGMA journal_mode") == ["wal"])
        let strict = try sqlite3(path, "SELECT name, strict FROM pragma_table_list WHERE schema = 'main' ORDER BY name")
        #expect(strict.contains("reports|1"))
        #expect(strict.contains("report_days|1"))
        #expect(strict.contains("schema_version|1"))
        // Client addresses are personal data: owner-only, the WAL too.
        try withExtendedLifetime(store) {
            for file in [path, path + "-wal"] {
                let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
                #expect(mode == 0o600, "\(file)")
            }
        }
        // Opening again migrates nothing and keeps one version row.
        _ = try ReportStore(path: path, create: false)
        #expect(try sqlite3(path, "SELECT count(*) FROM schema_version") == ["1"])
    }

    @Test func refusesNewerSchemasForeignDatabasesAndGarbage() throws {
        let newer = directory + "/newer.sqlite"
        _ = try ReportStore(path: newer, create: true)
        _ = try sqlite3(newer, "UPDATE schema_version SET version = 99")
        #expect(throws: ReportStoreError.newerSchema(found: 99, known: ReportStore.schemaVersion)) {
            try ReportStore(path: newer, create: false)
        }
        let foreign = directory + "/foreign.sqlite"
        _ = try sqlite3(foreign, "CREATE TABLE t (x INTEGER)")
        #expect(throws: ReportStoreError.self) { try ReportStore(path: foreign, create: false) }
        #expect(try sqlite3(foreign, "SELECT name FROM sqlite_schema WHERE type = 'table'") == ["t"], "left alone")
        let garbage = directory + "/garbage.sqlite"
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: garbage))
        #expect(throws: ReportStoreError.self) { try ReportStore(path: garbage, create: false) }
        #expect(throws: ReportStoreError.self) { try ReportStore(path: directory + "/missing.sqlite", create: false) }

        for (path, status) in [(newer, Int32(1)), (foreign, 1), (garbage, 1), (directory + "/missing.sqlite", 3)] {
            let result = runPinion(["reports", path])
            #expect(result.status == status, "\(path): \(result.err)")
            #expect(!result.err.isEmpty)
        }
    }

    @Test func aSymbolicLinkAsTheDatabaseIsRefusedAndKept() throws {
        // Dangling: never replaced by a new database (the operator's link stays).
        let dangling = directory + "/dangling.sqlite"
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: directory + "/nowhere.sqlite")
        #expect(throws: ReportStoreError.symbolicLink(dangling)) { try ReportStore(path: dangling, create: true) }
        let kept = try FileManager.default.attributesOfItem(atPath: dangling)[.type] as? FileAttributeType
        #expect(kept == .typeSymbolicLink)
        #expect(!FileManager.default.fileExists(atPath: directory + "/nowhere.sqlite"), "nothing created behind it")
        // Live, to a real report database: refused with a message naming the link, not SQLite's code.
        let real = directory + "/real.sqlite"
        _ = try ReportStore(path: real, create: true)
        let live = directory + "/live.sqlite"
        try FileManager.default.createSymbolicLink(atPath: live, withDestinationPath: real)
        #expect(throws: ReportStoreError.symbolicLink(live)) { try ReportStore(path: live, create: true) }
        let result = runPinion(["reports", live])
        #expect(result.status != 0)
        #expect(result.err.contains("is a symbolic link"), "\(result.err)")
    }

    @Test func repeatsAreCountedPerDayAndExpireAfterTheRetentionPeriod() throws {
        let store = try ReportStore(
            path: directory + "/r.sqlite", create: true, limits: ReportStoreLimits(retentionSeconds: 30 * day))
        let first = try report()
        #expect(try store.commit([(first, "s", "10.0.0.1")], at: t0).get() == [.stored])
        #expect(try store.commit([(first, "s", "10.0.0.2")], at: t0.adding(seconds: day)).get() == [.repeated])
        #expect(try store.commit([(try report(host: "other.example.com"), "s", "10.0.0.3")], at: t0).get() == [.stored])
        let days = try store.dayCounts(scope: nil, since: t0)
        #expect(days.map(\.count) == [1, 1, 1])
        #expect(try store.totals().distinct == 2)
        #expect(try store.totals().received == 3)
        // 30 days after its last sighting a report is still kept; a second later it is gone.
        #expect(try store.prune(at: t0.adding(seconds: 30 * day)) == 0)
        #expect(try store.prune(at: t0.adding(seconds: 30 * day + 1)) == 1, "other.example.com was last seen at t0")
        #expect(try store.totals().received == 2)
        #expect(try store.prune(at: t0.adding(seconds: 31 * day)) == 0)
        #expect(try store.prune(at: t0.adding(seconds: 31 * day + 1)) == 1)
        #expect(try store.totals().distinct == 0)
        #expect(try store.dayCounts(scope: nil, since: t0).isEmpty, "day counts go with their report")
        #expect(try sqlite3(directory + "/r.sqlite", "SELECT count(*) FROM report_days") == ["0"])
    }

    private func size(_ file: String) -> Int {
        guard FileManager.default.fileExists(atPath: file) else { return 0 }
        return (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? Int.max
    }

    /// A flood from one network fills the store; then reports from other networks still go
    /// in, the flood's own rows are what is evicted, and every report stays counted.
    @Test func atTheCapTheLargestSourceNetworkIsEvictedAndCountsAreKept() throws {
        let path = directory + "/capped.sqlite"
        let cap: Int64 = 1 << 20
        let store = try ReportStore(path: path, create: true, limits: ReportStoreLimits(maxBytes: cap))
        // Rare genuine reports first, from three networks.
        for (index, client) in ["192.0.2.7", "198.51.100.9", "2001:db8:5::1"].enumerated() {
            let genuine = try report(host: "g\(index).api.example.com", certificate: chain.second)
            #expect(try store.commit([(genuine, "s", client)], at: t0).get() == [.stored])
        }
        // The flood: distinct reports from many addresses of one /64, far beyond the cap.
        var flooded = 0
        for index in 0..<1_500 {
            let junk = try report(host: "junk\(index).api.example.com")
            let outcome = store.commit([(junk, "s", "2001:db8:bad:1::\(String(index, radix: 16))")], at: t0)
            #expect(throws: Never.self) { try outcome.get() }
            flooded += 1
        }
        #expect(store.evictedCount > 0, "the cap was reached")
        // A new genuine report from another network is accepted at the cap.
        let late = try report(host: "late.api.example.com", certificate: chain.second)
        #expect(try store.commit([(late, "s", "203.0.113.50")], at: t0).get() == [.stored])
        let owners = try sqlite3(path, "SELECT source, count(*) FROM reports GROUP BY source ORDER BY source")
        #expect(
            owners.filter { !$0.hasPrefix("2001:db8:bad:1::/64|") }
                == ["192.0.2.0/24|1", "198.51.100.0/24|1", "2001:db8:5::/64|1", "203.0.113.0/24|1"],
            "only the flooding network lost rows: \(owners)")
        // Every report is still counted per host, served key and day.
        #expect(try sqlite3(path, "SELECT sum(count) FROM key_days") == ["\(flooded + 4)"])
        let keys = try store.refusedKeys(scope: "s", since: t0)
        let secondPin = try opensslPin(ofCertificateFile: try ServerCredentials.shared().secondCertificate)
        let genuineKeys = keys.filter { $0.servedPin == secondPin }
        #expect(genuineKeys.count == 4)
        #expect(genuineKeys.allSatisfy { $0.count == 1 && $0.sourcePrefixes == 1 })
        let days = try store.dayCounts(scope: "s", since: t0)
        #expect(days.filter(\.evicted).reduce(0) { $0 + $1.count } == Int64(store.evictedCount))
        #expect(days.reduce(0) { $0 + $1.count } == Int64(flooded + 4))
        #expect(try sqlite3(path, "PRAGMA integrity_check") == ["ok"])
        // The cap covers the database file and its write-ahead log together.
        #expect(size(path) + size(path + "-wal") <= Int(cap), "db \(size(path)) + wal \(size(path + "-wal"))")
        // No address is stored, only networks.
        #expect(try sqlite3(path, "SELECT count(*) FROM reports WHERE last_source NOT LIKE '%/%'") == ["0"])
    }

    /// Eviction lowers the largest networks to one level, never one below a smaller one.
    @Test func evictionLevelsTheLargestNetworksFirst() {
        #expect(ReportStore.levelling([10, 5, 1], needed: 3) == [3, 0, 0])
        #expect(ReportStore.levelling([10, 5, 1], needed: 8) == [7, 1, 0])
        #expect(ReportStore.levelling([30, 30, 30, 30], needed: 10) == [3, 3, 2, 2])
        #expect(ReportStore.levelling([500, 1, 1], needed: 40) == [40, 0, 0], "a flood goes before any rare report")
        #expect(
            ReportStore.levelling([1, 1, 1, 1, 1], needed: 2) == [1, 1, 0, 0, 0], "whole rows: no more than needed")
        #expect(ReportStore.levelling([10, 10, 10], needed: 4) == [2, 1, 1])
        #expect(ReportStore.levelling([3, 2], needed: 100) == [3, 2])
        #expect(ReportStore.levelling([], needed: 1) == [])
    }

    /// A flood of distinct hosts from one network outgrows even the per-key aggregates: its
    /// source-network rows go next, and the store stays within its cap and keeps accepting.
    @Test func aggregatesAreEvictedLastAndTheStoreKeepsAccepting() throws {
        let path = directory + "/aggregates-cap.sqlite"
        let cap: Int64 = 1 << 20
        let store = try ReportStore(path: path, create: true, limits: ReportStoreLimits(maxBytes: cap))
        let small = try ReceivedReport.parse(
            Array(
                """
                {"date-time": "2026-11-30T09:00:00Z", "hostname": "api.example.com", "port": 443,
                 "noted-hostname": "api.example.com", "include-subdomains": true, "trustkit-version": "1.7",
                 "validated-certificate-chain": [\(String(reflecting: chain.first))], "known-pins": []}
                """.utf8))
        for batch in 0..<100 {
            let reports = (0..<100).map { index -> (report: ReceivedReport, scope: String, client: String) in
                var report = small
                report.hostname = "h\(batch)-\(index).api.example.com"
                report.servedPin = Base64.encode(Array(SodiumSHA256().sha256(Array(report.hostname.utf8))))
                return (report, "s", "2001:db8:bad::\(batch + 1)")
            }
            #expect(throws: Never.self) { try store.commit(reports, at: t0).get() }
        }
        let floodSources = Int(try sqlite3(path, "SELECT count(*) FROM key_sources").first ?? "") ?? -1
        #expect(floodSources < 10_000, "the flood's source-network rows were evicted too: \(floodSources) left")
        let genuine = try report(host: "late.api.example.com", certificate: chain.second)
        #expect(try store.commit([(genuine, "s", "203.0.113.9")], at: t0).get() == [.stored])
        #expect(try sqlite3(path, "PRAGMA integrity_check") == ["ok"])
        #expect(size(path) + size(path + "-wal") <= Int(cap))
        #expect(try store.refusedKeys(scope: "s", since: t0).contains { $0.hostname == "late.api.example.com" })
    }

    /// A store too small for even one report after eviction still refuses cleanly.
    @Test func aReportLargerThanTheRoomLeftIsRefusedAsFull() throws {
        let path = directory + "/tiny.sqlite"
        let store = try ReportStore(path: path, create: true, limits: ReportStoreLimits(maxBytes: 65_536))
        let large = try ReceivedReport.parse(
            Array(reportBody(chain: Array(repeating: chain.first, count: ReceivedReport.maxChainLength)).utf8))
        let result = store.commit([(large, "s", "10.0.0.1")], at: t0)
        #expect(throws: ReportStoreError.full) { try result.get() }
        #expect(try sqlite3(path, "PRAGMA integrity_check") == ["ok"])
    }

    /// A version 1 database (full client addresses) is migrated in one transaction: each
    /// address becomes its network, and the per-key aggregates are filled from the rows.
    @Test func migratesAVersion1DatabaseKeepingOnlyNetworks() throws {
        let path = directory + "/v1.sqlite"
        let certificate = chain.first
        let body = Array(reportBody(chain: [certificate]).utf8)
        let parsed = try ReceivedReport.parse(body)
        let v1 = ReportStore.migrations[0]
        _ = try sqlite3(
            path,
            """
            PRAGMA journal_mode = WAL;
            CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT;
            INSERT INTO schema_version VALUES (1);
            \(v1)
            INSERT INTO reports (id, identity, scope, hostname, port, noted_hostname, include_subdomains, served_pin,
                known_pins, validated_chain, served_chain, first_seen, last_seen, count, last_client)
            VALUES (1, x'01', 's', 'api.example.com', 443, 'api.example.com', 0, '\(parsed.servedPin)', '', '[]', '[]',
                \(t0.secondsSince1970), \(t0.secondsSince1970 + day), 3, '203.0.113.77'),
                (2, x'02', 's', 'api.example.com', 443, 'api.example.com', 0, '\(parsed.servedPin)', '', '[]', '[]',
                \(t0.secondsSince1970), \(t0.secondsSince1970), 1, '2001:db8:1:2:3:4:5:6');
            INSERT INTO report_days VALUES (1, '2026-11-30', 2), (1, '2026-12-01', 1), (2, '2026-11-30', 1);
            """)
        let store = try ReportStore(path: path, create: false)
        #expect(try sqlite3(path, "SELECT version FROM schema_version") == ["2"])
        #expect(
            try sqlite3(path, "SELECT id, source, last_source FROM reports ORDER BY id")
                == ["1|203.0.113.0/24|203.0.113.0/24", "2|2001:db8:1:2::/64|2001:db8:1:2::/64"])
        #expect(
            try sqlite3(path, "SELECT day, count FROM key_days ORDER BY day") == ["2026-11-30|3", "2026-12-01|1"])
        let keys = try store.refusedKeys(scope: "s", since: t0)
        #expect(keys.count == 1)
        #expect(keys.first?.count == 4)
        #expect(keys.first?.sourcePrefixes == 2)
        #expect(keys.first?.firstSeen == t0)
        #expect(keys.first?.lastSeen == t0.adding(seconds: day))
        #expect(try sqlite3(path, "PRAGMA integrity_check") == ["ok"])
        // Nothing of the addresses is left in the file's pages either.
        let bytes =
            try Data(contentsOf: URL(fileURLWithPath: path))
            + ((try? Data(contentsOf: URL(fileURLWithPath: path + "-wal"))) ?? Data())
        #expect(bytes.range(of: Data("203.0.113.77".utf8)) == nil)
        #expect(bytes.range(of: Data("2001:db8:1:2:3:4:5:6".utf8)) == nil)
    }

    /// Rows of report_days, key_days and key_sources older than the retention period go too.
    @Test func retentionPrunesTheAggregates() throws {
        let path = directory + "/aggregates.sqlite"
        let store = try ReportStore(path: path, create: true, limits: ReportStoreLimits(retentionSeconds: 10 * day))
        _ = try store.commit([(try report(), "s", "10.0.0.1")], at: t0).get()
        _ = try store.commit([(try report(), "s", "10.0.1.1")], at: t0.adding(seconds: 5 * day)).get()
        try store.prune(at: t0.adding(seconds: 12 * day))
        #expect(try sqlite3(path, "SELECT day, count FROM key_days") == ["2026-12-05|1"])
        #expect(try sqlite3(path, "SELECT prefix FROM key_sources") == ["10.0.1.0/24"])
        #expect(try sqlite3(path, "SELECT day FROM report_days") == ["2026-12-05"])
        #expect(try store.refusedKeys(scope: nil, since: t0).first?.count == 1)
    }

    @Test func theWriteAheadLogStaysWithinItsBudgetUnderManyCommits() throws {
        let path = directory + "/wal.sqlite"
        let cap: Int64 = 1 << 20
        let store = try ReportStore(path: path, create: true, limits: ReportStoreLimits(maxBytes: cap))
        // Repeats rewrite the same rows: the database stays small, the WAL would grow
        // without bound if nothing checkpointed and truncated it.
        _ = store.commit([(try report(host: "h.example.com"), "s", "10.0.0.1")], at: t0)
        for index in 0..<400 {
            _ = store.commit(
                [(try report(host: "h.example.com"), "s", "10.0.0.1")], at: t0.adding(seconds: Int64(index)))
        }
        let wal = (try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? Int.max
        #expect(Int64(wal) <= ReportStore.walBudget(maxBytes: cap, pageSize: 4096), "wal \(wal)")
        #expect(ReportStore.walBudget(maxBytes: cap, pageSize: 4096) == cap / 4)
        #expect(ReportStore.walBudget(maxBytes: 1 << 40, pageSize: 4096) == 2048 * 4120 + 32)
        #expect(ReportStore.walBudget(maxBytes: 4096, pageSize: 4096) == 2 * 4120 + 32)
    }

    /// A client may send any app-version string: text shows 10 per key and how many more.
    @Test func manyAppVersionsAreBoundedInText() throws {
        let path = directory + "/versions.sqlite"
        let store = try ReportStore(path: path, create: true)
        for index in 0..<25 {
            _ = store.commit([(try report(appVersion: "9.\(index)"), "com.example.app", "10.0.0.1")], at: t0)
        }
        let text = runPinion(["reports", path, "--at", t0.adding(seconds: 60).description])
        #expect(text.status == 0, "\(text.err)")
        #expect(text.out.contains("(+15 more)"), "\(text.out)")
        let line = text.out.split(separator: "\n").first { $0.contains("(+15 more)") } ?? ""
        #expect(line.components(separatedBy: ", ").count == 10, "10 versions shown: \(line)")
        let json = runPinion(["reports", path, "--at", t0.adding(seconds: 60).description, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        let keys = try #require(object["refusedKeys"] as? [[String: Any]])
        #expect((keys.first?["appVersions"] as? [String])?.count == 25)
        #expect(keys.first?["appVersionCount"] as? Int == 25)
    }

    @Test func pinionReportsAnswersWhichKeysThePinsRefused() throws {
        let path = directory + "/summary.sqlite"
        let store = try ReportStore(path: path, create: true)
        let firstKey = try report()
        let secondKey = try report(certificate: chain.second, appVersion: "2.0")
        _ = store.commit([(firstKey, "com.example.app", "10.0.0.1")], at: t0.adding(seconds: -10 * day))
        for offset in [0, 0, day] {
            _ = store.commit([(firstKey, "com.example.app", "10.0.0.1")], at: t0.adding(seconds: offset))
        }
        _ = store.commit([(secondKey, "com.example.app", "10.0.0.2")], at: t0)
        _ = store.commit([(try report(host: "elsewhere.example.org"), "org.example", "10.0.0.3")], at: t0)
        let credentials = try ServerCredentials.shared()
        let firstPin = try opensslPin(ofCertificateFile: credentials.certificate)
        let secondPin = try opensslPin(ofCertificateFile: credentials.secondCertificate)

        let result = runPinion(
            [
                "reports", path, "--scope", "com.example.app", "--since", "7d", "--at",
                t0.adding(seconds: 2 * day).description, "--json",
            ])
        #expect(result.status == 0, "\(result.err)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any])
        let keys = try #require(json["refusedKeys"] as? [[String: Any]])
        #expect(keys.count == 2)
        #expect(keys.first?["servedPin"] as? String == firstPin)
        #expect(keys.first?["count"] as? Int == 3, "the report 10 days back is outside --since 7d")
        #expect(keys.first?["appVersions"] as? [String] == ["2.1"])
        #expect(keys.last?["servedPin"] as? String == secondPin)
        #expect(keys.last?["count"] as? Int == 1)
        #expect(keys.allSatisfy { $0["hostname"] as? String == "api.example.com" }, "the other scope is left out")
        let days = try #require(json["days"] as? [[String: Any]])
        #expect(days.compactMap { $0["count"] as? Int }.sorted() == [1, 1, 2])
        #expect(days.map { $0["day"] as? String } == ["2026-11-30", "2026-11-30", "2026-12-01"])
        #expect(json["receivedReports"] as? Int == 6)
        let hosts = try #require(json["hosts"] as? [[String: Any]])
        #expect(hosts.count == 1)
        #expect(hosts.first?["count"] as? Int == 4)
        #expect(hosts.first?["servedKeys"] as? Int == 2)

        let text = runPinion(["reports", path, "--at", t0.adding(seconds: 2 * day).description, "--since", "30d"])
        #expect(text.status == 0)
        #expect(text.out.contains("pin-failure reports since 2026-11-02: 6"))
        #expect(text.out.contains("  4  com.example.app  api.example.com  pin-sha256=\"\(firstPin)\"  app 2.1"))
        #expect(text.out.contains("org.example  elsewhere.example.org"))
        #expect(
            text.out.contains("hosts, most reported first:\n  5  com.example.app  api.example.com  2 served key(s)"))

        let empty = runPinion(["reports", path, "--scope", "nothing.here", "--at", t0.description])
        #expect(empty.status == 0)
        #expect(empty.out.contains("no served key was refused"))
        #expect(runPinion(["reports", path, "--since", "soon"]).status == 2)
        #expect(runPinion(["reports", path, "--scope", "Bad Scope"]).status == 2)
    }
}
