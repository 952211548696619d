// The SQLite store of pin-failure reports (docs/DESIGN.md §14): schema and migrations, repeat
// counting, per-key daily aggregates, eviction at the size cap, and the retention period.

import Foundation
import PinionCore
import PinionCrypto
import PinionSystem
import Synchronization

/// Why the report store could not be opened or written.
public enum ReportStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The database path lies inside the served tree (it would be served, or served over).
    case insideServedTree(database: String, tree: String)
    /// The database path is a symbolic link (dangling or not): refused, never replaced or
    /// followed, so an operator's link is neither deleted nor redirected.
    case symbolicLink(String)
    /// The file was written by a newer Pinion (schema version above what this one knows).
    case newerSchema(found: Int64, known: Int64)
    /// The file is not a Pinion report store (no or a damaged schema version table).
    case notAReportStore(String)
    /// The size cap is reached and eviction freed too little room for the report.
    case full
    /// SQLite failed.
    case database(SQLiteError)

    public var description: String {
        switch self {
        case .symbolicLink(let path):
            return "\(path): the report database is a symbolic link; give the path of the file itself"
        case .insideServedTree(let database, let tree):
            return "\(database): the report database must not be inside the served tree \(tree)"
        case .newerSchema(let found, let known):
            return "the report database has schema version \(found); this pinion knows up to \(known)"
        case .notAReportStore(let reason): return "not a pinion report database: \(reason)"
        case .full: return "the report database is full (size cap reached)"
        case .database(let error): return error.description
        }
    }
}

/// How a committed report was stored.
public enum StoredOutcome: Sendable, Equatable {
    /// A new row.
    case stored
    /// A repeat of a stored report: its count and last-seen time were raised.
    case repeated
}

/// Retention and size settings of the store.
public struct ReportStoreLimits: Sendable, Equatable {
    /// Seconds a report is kept after it was last seen (source networks are personal data).
    public var retentionSeconds: Int64
    /// Largest size on disk of the database file and its write-ahead log together, in bytes.
    /// The WAL gets a budget (`walBudget`: a quarter of the cap, 2 to 2,048 pages), held by
    /// checkpointing at half of it (`wal_autocheckpoint`) and truncating to it
    /// (`journal_size_limit`); the database file gets the rest (`max_page_count`). Near it,
    /// reports are evicted (`ReportStore.evict`). (The shared-memory index, 32 KiB, is not
    /// counted.)
    public var maxBytes: Int64

    /// - Parameters: seconds of retention (default 30 days) and bytes (default 256 MiB).
    public init(retentionSeconds: Int64 = 30 * 86_400, maxBytes: Int64 = 256 << 20) {
        self.retentionSeconds = retentionSeconds
        self.maxBytes = maxBytes
    }
}

/// The report store. One instance per connection; used by one thread at a time.
///
/// Each report row is owned by the source network (IPv4 /24, IPv6 /64) that first sent it;
/// no more of a client's address is stored. Besides the rows, every report also counts in
/// two aggregates that eviction leaves alone: `key_days` (reports per scope, host, served
/// key and UTC day) and `key_sources` (the source networks that reported each served key).
/// When the database nears its cap, rows are evicted from the source network holding the
/// most rows first (`evict`), so a flood from a few networks is what goes, and rare genuine
/// reports stay counted.
public final class ReportStore: Sendable {
    /// The newest schema version this code writes and reads.
    public static let schemaVersion: Int64 = 2

    /// Share of `max_page_count` in use above which a commit evicts first, in percent.
    static let evictAbovePercent: Int64 = 85
    /// Share in use that eviction brings the database back to, in percent.
    static let evictToPercent: Int64 = 75

    /// Migration `n` (1-based) brings the schema from version n-1 to n; each runs in the
    /// same transaction as its version bump. Version 2 keeps source networks instead of
    /// client addresses, and adds the aggregates eviction keeps.
    static let migrations: [String] = [
        """
        CREATE TABLE reports (
            id INTEGER PRIMARY KEY,
            identity BLOB NOT NULL UNIQUE,
            scope TEXT NOT NULL,
            hostname TEXT NOT NULL,
            port INTEGER NOT NULL,
            noted_hostname TEXT NOT NULL,
            include_subdomains INTEGER NOT NULL,
            served_pin TEXT NOT NULL,
            known_pins TEXT NOT NULL,
            validated_chain TEXT NOT NULL,
            served_chain TEXT NOT NULL,
            effective_expiration INTEGER,
            app_bundle_id TEXT,
            app_version TEXT,
            app_platform TEXT,
            validation_result INTEGER,
            first_seen INTEGER NOT NULL,
            last_seen INTEGER NOT NULL,
            count INTEGER NOT NULL,
            last_client TEXT NOT NULL
        ) STRICT;
        CREATE INDEX reports_last_seen ON reports (last_seen);
        CREATE TABLE report_days (
            report_id INTEGER NOT NULL REFERENCES reports (id) ON DELETE CASCADE,
            day TEXT NOT NULL,
            count INTEGER NOT NULL,
            PRIMARY KEY (report_id, day)
        ) STRICT;
        """,
        """
        ALTER TABLE reports RENAME COLUMN last_client TO last_source;
        ALTER TABLE reports ADD COLUMN source TEXT NOT NULL DEFAULT '';
        CREATE INDEX reports_source ON reports (source, last_seen);
        CREATE TABLE key_days (
            scope TEXT NOT NULL,
            hostname TEXT NOT NULL,
            served_pin TEXT NOT NULL,
            day TEXT NOT NULL,
            count INTEGER NOT NULL,
            first_seen INTEGER NOT NULL,
            last_seen INTEGER NOT NULL,
            PRIMARY KEY (scope, hostname, served_pin, day)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE key_sources (
            scope TEXT NOT NULL,
            hostname TEXT NOT NULL,
            served_pin TEXT NOT NULL,
            prefix TEXT NOT NULL,
            last_day TEXT NOT NULL,
            PRIMARY KEY (scope, hostname, served_pin, prefix)
        ) STRICT, WITHOUT ROWID;
        """,
    ]

    let database: SQLiteDatabase
    /// The settings in force.
    public let limits: ReportStoreLimits
    private let evictedRows = Atomic<Int>(0)
    /// The pages `limits.maxBytes` leaves the database file (`max_page_count`, unless the file
    /// was already larger: SQLite never sets it below the file's size, eviction still aims here).
    private let capPages: Int64

    /// Report rows evicted by this instance since it was opened.
    public var evictedCount: Int { evictedRows.load(ordering: .relaxed) }

    /// The bytes of `maxBytes` the write-ahead log may use: a quarter of it, at least 2 and
    /// at most 2,048 WAL frames (a frame is a page plus 24 bytes; the WAL header 32 bytes).
    ///
    /// - Parameters: `maxBytes` the store's cap and `pageSize` SQLite's page size, both in bytes.
    /// - Returns: the budget in bytes.
    public static func walBudget(maxBytes: Int64, pageSize: Int64) -> Int64 {
        min(max(maxBytes / 4, 2 * (pageSize + 24) + 32), 2048 * (pageSize + 24) + 32)
    }

    /// Opens (creating when asked) the store, sets WAL mode and full synchronous commits, and
    /// migrates the schema.
    ///
    /// - Parameters:
    ///   - path: the database file.
    ///   - create: create the file when missing (the server); false for `pinion reports`.
    ///   - servedTree: the served tree's directory; a database inside it is refused.
    ///   - limits: retention and size cap.
    /// - Throws: `ReportStoreError`.
    public init(path: String, create: Bool, servedTree: String? = nil, limits: ReportStoreLimits = ReportStoreLimits())
        throws(ReportStoreError)
    {
        if let type = (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType,
            type == .typeSymbolicLink
        {
            throw .symbolicLink(path)
        }
        if let servedTree { try Self.refuseInside(database: path, tree: servedTree) }
        self.limits = limits
        // Reports hold source networks: a new database (and the WAL and shared-memory files
        // SQLite makes beside it with the same mode) is readable by its owner only.
        if create, !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
            else {
                throw .database(SQLiteError(code: 14, message: "cannot create the file", context: "open \(path)"))
            }
        }
        do {
            database = try SQLiteDatabase(path: path, mode: create ? .readWriteCreate : .readWrite)
            // Before anything is written: a foreign database is left exactly as it was.
            let tables = Set(
                try database.query("SELECT name FROM sqlite_schema WHERE type = 'table'").compactMap { $0.first?.text })
            if !tables.isEmpty, !tables.contains("schema_version") {
                throw ReportStoreError.notAReportStore("it has tables but no schema_version table")
            }
            // A reader (`pinion reports`) never turns an empty file into a store.
            if !create, tables.isEmpty {
                throw ReportStoreError.notAReportStore("it is empty (no tables): nothing was ever stored in it")
            }
            try database.execute("PRAGMA foreign_keys = ON")
            // Evicted and pruned rows are overwritten, not left readable in free pages.
            try database.execute("PRAGMA secure_delete = ON")
            let mode = try database.query("PRAGMA journal_mode = WAL").first?.first?.text ?? ""
            guard mode.lowercased() == "wal" else {
                throw ReportStoreError.notAReportStore("cannot switch to WAL journal mode (got \(mode))")
            }
            // FULL: an acknowledged (204) report survives a power cut, not only a crash.
            try database.execute("PRAGMA synchronous = FULL")
            let pageSize = max(try database.query("PRAGMA page_size").first?.first?.integer ?? 4096, 512)
            let budget = Self.walBudget(maxBytes: limits.maxBytes, pageSize: pageSize)
            // A WAL frame is a page plus a 24-byte header; checkpoint at half the budget.
            try database.query("PRAGMA wal_autocheckpoint = \(max(1, budget / 2 / (pageSize + 24)))")
            try database.query("PRAGMA journal_size_limit = \(budget)")
            let pages = max(8, (limits.maxBytes - budget) / pageSize)
            try database.query("PRAGMA max_page_count = \(pages)")
            capPages = pages
            try migrate()
        } catch let error as ReportStoreError {
            throw error
        } catch let error as SQLiteError {
            throw error.isCorrupt ? .notAReportStore(error.message) : .database(error)
        } catch {
            throw .notAReportStore("\(error)")
        }
    }

    /// Refuses a database path inside the tree, comparing paths with symbolic links resolved
    /// (the file itself may not exist yet: its directory is resolved).
    static func refuseInside(database: String, tree: String) throws(ReportStoreError) {
        let databaseURL = URL(fileURLWithPath: database)
        let directory = databaseURL.deletingLastPathComponent().resolvingSymlinksInPath().path
        let resolved = (directory as NSString).appendingPathComponent(databaseURL.lastPathComponent)
        let treePath = URL(fileURLWithPath: tree).resolvingSymlinksInPath().path
        let prefix = treePath.hasSuffix("/") ? treePath : treePath + "/"
        if resolved == treePath || resolved.hasPrefix(prefix) {
            throw .insideServedTree(database: database, tree: tree)
        }
    }

    private func migrate() throws {
        let migratedFrom = try database.transaction { () throws -> Int64 in
            try database.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL) STRICT")
            let rows = try database.query("SELECT version FROM schema_version")
            var version: Int64 = 0
            if rows.count == 1, let found = rows[0].first?.integer {
                version = found
            } else if rows.count > 1 {
                throw ReportStoreError.notAReportStore("schema_version has \(rows.count) rows")
            } else {
                let tables = try database.query(
                    "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name <> 'schema_version'")
                if tables.first?.first?.integer ?? 0 != 0 {
                    throw ReportStoreError.notAReportStore("tables but no schema version")
                }
                try database.query("INSERT INTO schema_version (version) VALUES (0)")
            }
            guard version <= Self.schemaVersion else {
                throw ReportStoreError.newerSchema(found: version, known: Self.schemaVersion)
            }
            guard version >= 0 else { throw ReportStoreError.notAReportStore("negative schema version") }
            for step in Int(version)..<Int(Self.schemaVersion) {
                try database.execute(Self.migrations[step])
                if step == 1 { try migrateAddressesToSources() }
                try database.query("UPDATE schema_version SET version = ?", [.integer(Int64(step + 1))])
            }
            return version
        }
        if migratedFrom == 1 {
            // The addresses' old pages are in the database file until a checkpoint copies the
            // migrated ones over them; the truncated WAL then holds nothing either.
            try database.query("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// Version 1 kept each report's last client address: it becomes the address's network
    /// (the row's owner too), and the per-key aggregates are filled from the rows.
    private func migrateAddressesToSources() throws {
        for row in try database.query("SELECT id, last_source FROM reports") {
            guard let id = row[0].integer else { continue }
            let prefix = ReportClientAddress.sourcePrefix(of: row[1].text ?? "")
            try database.query(
                "UPDATE reports SET last_source = ?, source = ? WHERE id = ?",
                [.text(prefix), .text(prefix), .integer(id)])
        }
        try database.execute(
            """
            INSERT INTO key_days (scope, hostname, served_pin, day, count, first_seen, last_seen)
            SELECT r.scope, r.hostname, r.served_pin, d.day, sum(d.count),
                min(max(r.first_seen, CAST(strftime('%s', d.day) AS INTEGER))),
                max(min(r.last_seen, CAST(strftime('%s', d.day) AS INTEGER) + 86399))
            FROM report_days d JOIN reports r ON r.id = d.report_id
            GROUP BY r.scope, r.hostname, r.served_pin, d.day;
            INSERT INTO key_sources (scope, hostname, served_pin, prefix, last_day)
            SELECT scope, hostname, served_pin, source, max(strftime('%Y-%m-%d', last_seen, 'unixepoch'))
            FROM reports GROUP BY scope, hostname, served_pin, source;
            """)
    }

    /// The key under which repeats are counted: SHA-256 over the scope, host, port,
    /// noted-hostname, validated chain, known pins and the TrustKit app members (so counts
    /// per app version stay exact), each length-prefixed.
    static func identity(of report: ReceivedReport, scope: String) -> [UInt8] {
        var input: [UInt8] = []
        func add(_ text: String) {
            let bytes = Array(text.utf8)
            let count = UInt32(clamping: bytes.count)
            input += [UInt8(count >> 24), UInt8((count >> 16) & 0xFF), UInt8((count >> 8) & 0xFF), UInt8(count & 0xFF)]
            input.append(contentsOf: bytes)
        }
        add(scope)
        add(report.hostname)
        add(String(report.port))
        add(report.notedHostname)
        add(String(report.validatedChain.count))
        report.validatedChain.forEach(add)
        add(String(report.knownPins.count))
        report.knownPins.forEach(add)
        for text in [report.appBundleID, report.appVersion, report.appPlatform] { add(text.map { "+" + $0 } ?? "-") }
        return SodiumSHA256().sha256(input)
    }

    /// Commits a batch of reports in one transaction, evicting first when the database is
    /// near its cap (`evict`, in the same transaction). When the batch still does not fit,
    /// a second transaction evicts harder and the batch is tried once more.
    ///
    /// - Parameters:
    ///   - batch: each report with its scope and the client it came from: its source
    ///     network (`ReportClientAddress.sourcePrefix`), or an address, which is stored as
    ///     its network.
    ///   - now: the receive time (first-seen, last-seen and the day counted).
    /// - Returns: each report's outcome in order, or, for every report, the error that
    ///   rolled the batch back (`.full` when even eviction made no room).
    public func commit(_ batch: [(report: ReceivedReport, scope: String, client: String)], at now: Timestamp)
        -> Result<[StoredOutcome], ReportStoreError>
    {
        let first = attempt(batch, at: now, force: false)
        guard case .failure(.full) = first else { return first }
        return attempt(batch, at: now, force: true)
    }

    private func attempt(
        _ batch: [(report: ReceivedReport, scope: String, client: String)], at now: Timestamp, force: Bool
    ) -> Result<[StoredOutcome], ReportStoreError> {
        do {
            if force { try database.transaction { _ = try evict(force: true) } }
            let outcomes = try database.transaction { () throws -> [StoredOutcome] in
                if !force { _ = try evict(force: false) }
                return try batch.map { item in
                    try insert(
                        item.report, scope: item.scope, source: ReportClientAddress.sourcePrefix(of: item.client),
                        at: now)
                }
            }
            return .success(outcomes)
        } catch let error as SQLiteError {
            return .failure(error.isFull ? .full : .database(error))
        } catch let error as ReportStoreError {
            return .failure(error)
        } catch {
            return .failure(.notAReportStore("\(error)"))
        }
    }

    /// Pages in use and the cap, from SQLite (in the current transaction's view).
    private func pageUse() throws -> (used: Int64, cap: Int64) {
        let count = try database.query("PRAGMA page_count").first?.first?.integer ?? 0
        let free = try database.query("PRAGMA freelist_count").first?.first?.integer ?? 0
        let cap = try database.query("PRAGMA max_page_count").first?.first?.integer ?? 0
        return (count - free, min(cap, capPages))
    }

    /// Evicts in one transaction until the database is within the cap's eviction threshold:
    /// run when the store opens, so a lowered `maxBytes` takes effect at once (the freed
    /// pages are reused; the file itself shrinks only by `VACUUM`).
    ///
    /// - Returns: the report rows evicted.
    /// - Throws: `ReportStoreError.database`.
    @discardableResult
    public func evictToCap() throws(ReportStoreError) -> Int {
        do {
            return try database.transaction { () throws -> Int in try evict(force: false) }
        } catch let error as SQLiteError {
            throw .database(error)
        } catch {
            throw .notAReportStore("\(error)")
        }
    }

    /// Frees room, inside the caller's transaction, when more than `evictAbovePercent` of
    /// the cap is in use (or whenever `force`), until at most `evictToPercent` is.
    ///
    /// Each round takes from the source networks holding the most: report rows first, the
    /// oldest of each, as many as the room needs at the average row size (at most 4,096 a
    /// round), the largest networks lowered to one common level (`levelling`). A report row weighs 16 `key_sources` rows; when the
    /// network holding the most `key_sources` rows outweighs every network's report rows,
    /// those go instead. Only when neither table holds anything are the oldest `key_days`
    /// counts dropped. The `key_days` and `key_sources` rows of an evicted report stay.
    ///
    /// - Parameter force: evict at least one round even below the threshold.
    /// - Returns: the report rows evicted.
    /// - Throws: `SQLiteError`.
    @discardableResult
    func evict(force: Bool) throws -> Int {
        var use = try pageUse()
        guard use.cap > 0, force || use.used * 100 > use.cap * Self.evictAbovePercent else { return 0 }
        let target = use.cap * Self.evictToPercent / 100
        var evicted = 0
        var rounds = 0
        while use.used > target || (force && rounds == 0) {
            rounds += 1
            let networks = try database.query(
                "SELECT source, count(*) FROM reports GROUP BY source ORDER BY count(*) DESC, source"
            ).map { (source: $0[0].text ?? "", rows: $0[1].integer ?? 0) }
            let sourceRows = try database.query(
                "SELECT prefix, count(*) FROM key_sources GROUP BY prefix ORDER BY count(*) DESC, prefix LIMIT 1")
            let reportRows = networks.first?.rows ?? 0
            let keySourceRows = sourceRows.first?[1].integer ?? 0
            if reportRows > 0, reportRows * 16 >= keySourceRows {
                // Rows needed at the average pages per row, so one round does not empty a
                // network when a tenth of its rows makes the room.
                let rows = networks.reduce(0) { $0 + $1.rows }
                let needed = min(max(1, (use.used - target) * rows / max(1, use.used) + 1), 4_096)
                for (source, take) in Self.levelling(networks.map(\.rows), needed: needed).enumerated()
                where take > 0 {
                    try database.query(
                        """
                        DELETE FROM reports WHERE id IN
                            (SELECT id FROM reports WHERE source = ? ORDER BY last_seen, id LIMIT ?)
                        """, [.text(networks[source].source), .integer(take)])
                    evicted += database.changes
                }
            } else if keySourceRows > 0, let prefix = sourceRows.first?[0].text {
                try database.query(
                    """
                    DELETE FROM key_sources WHERE (scope, hostname, served_pin, prefix) IN
                        (SELECT scope, hostname, served_pin, prefix FROM key_sources WHERE prefix = ?
                         ORDER BY last_day LIMIT 1024)
                    """, [.text(prefix)])
            } else {
                try database.query(
                    """
                    DELETE FROM key_days WHERE (scope, hostname, served_pin, day) IN
                        (SELECT scope, hostname, served_pin, day FROM key_days ORDER BY day, count LIMIT 256)
                    """)
                if database.changes == 0 { break }
            }
            use = try pageUse()
        }
        evictedRows.add(evicted, ordering: .relaxed)
        return evicted
    }

    /// How many rows to take from each network so that at least `needed` go, taken from the
    /// largest first: the largest are lowered to one common level (water-filling), and no
    /// network is lowered below a smaller one.
    ///
    /// - Parameters:
    ///   - counts: rows per network, largest first.
    ///   - needed: rows to free, at least 1.
    /// - Returns: rows to take, per network in the same order.
    static func levelling(_ counts: [Int64], needed: Int64) -> [Int64] {
        var sum: Int64 = 0
        for (index, count) in counts.enumerated() {
            sum += count
            let width = Int64(index + 1)
            let next = index + 1 < counts.count ? counts[index + 1] : 0
            // Lowering the `width` largest to `next` frees sum - width * next.
            guard sum - width * next >= needed else { continue }
            let level = max(next, (sum - needed) / width)
            var takes = counts.enumerated().map { $0.offset <= index ? max(0, $0.element - level) : 0 }
            // The level is whole rows: networks last in order keep one more row each, so no
            // more than `needed` go.
            var excess = takes.reduce(0, +) - needed
            for position in stride(from: index, through: 0, by: -1) where excess > 0 && takes[position] > 0 {
                takes[position] -= 1
                excess -= 1
            }
            return takes
        }
        return counts
    }

    private func insert(_ report: ReceivedReport, scope: String, source: String, at now: Timestamp) throws
        -> StoredOutcome
    {
        let identity = Self.identity(of: report, scope: scope)
        let seconds = Int64(now.secondsSince1970)
        let day = String(now.description.prefix(10))
        let updated = try database.query(
            "UPDATE reports SET count = count + 1, last_seen = max(last_seen, ?), last_source = ? WHERE identity = ? RETURNING id",
            [.integer(seconds), .text(source), .blob(identity)])
        let outcome: StoredOutcome
        let id: Int64
        if let existing = updated.first?.first?.integer {
            id = existing
            outcome = .repeated
        } else {
            let rows = try database.query(
                """
                INSERT INTO reports (identity, scope, hostname, port, noted_hostname, include_subdomains, served_pin,
                    known_pins, validated_chain, served_chain, effective_expiration, app_bundle_id, app_version,
                    app_platform, validation_result, first_seen, last_seen, count, last_source, source)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?) RETURNING id
                """,
                [
                    .blob(identity), .text(scope), .text(report.hostname), .integer(Int64(report.port)),
                    .text(report.notedHostname), .integer(report.includeSubdomains ? 1 : 0), .text(report.servedPin),
                    .text(report.knownPins.joined(separator: " ")), .text(Self.jsonArray(report.validatedChain)),
                    .text(Self.jsonArray(report.servedChain)),
                    report.effectiveExpirationDate.map { .integer($0.secondsSince1970) } ?? .null,
                    report.appBundleID.map(SQLiteValue.text) ?? .null, report.appVersion.map(SQLiteValue.text) ?? .null,
                    report.appPlatform.map(SQLiteValue.text) ?? .null,
                    report.validationResult.map(SQLiteValue.integer) ?? .null, .integer(seconds), .integer(seconds),
                    .text(source), .text(source),
                ])
            guard let inserted = rows.first?.first?.integer else {
                throw ReportStoreError.notAReportStore("INSERT returned no row id")
            }
            id = inserted
            outcome = .stored
        }
        try database.query(
            "INSERT INTO report_days (report_id, day, count) VALUES (?, ?, 1) ON CONFLICT (report_id, day) DO UPDATE SET count = count + 1",
            [.integer(id), .text(day)])
        try database.query(
            """
            INSERT INTO key_days (scope, hostname, served_pin, day, count, first_seen, last_seen)
            VALUES (?, ?, ?, ?, 1, ?, ?)
            ON CONFLICT (scope, hostname, served_pin, day) DO UPDATE SET count = count + 1,
                first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen)
            """,
            [
                .text(scope), .text(report.hostname), .text(report.servedPin), .text(day), .integer(seconds),
                .integer(seconds),
            ])
        try database.query(
            """
            INSERT INTO key_sources (scope, hostname, served_pin, prefix, last_day) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (scope, hostname, served_pin, prefix) DO UPDATE SET last_day = max(last_day, excluded.last_day)
            """, [.text(scope), .text(report.hostname), .text(report.servedPin), .text(source), .text(day)])
        return outcome
    }

    private static func jsonArray(_ texts: [String]) -> String {
        String(decoding: JSONWriter.write(.array(texts.map { .string($0) })), as: UTF8.self)
    }

    /// Deletes reports last seen more than the retention period before `now` (with their
    /// day counts and source networks), and the day counts and per-key source networks of
    /// UTC days before the day of that cutoff.
    ///
    /// - Returns: the number of reports deleted.
    /// - Throws: `ReportStoreError.database`.
    @discardableResult
    public func prune(at now: Timestamp) throws(ReportStoreError) -> Int {
        do {
            let cutoff = now.secondsSince1970 - limits.retentionSeconds
            let cutoffDay = String(Timestamp(secondsSince1970: cutoff).description.prefix(10))
            return try database.transaction { () throws -> Int in
                // A report that expired takes its counts out of the per-key aggregates too
                // (only its last day can be on or after the cutoff day): those outlive only
                // evicted rows.
                let expired = try database.query(
                    """
                    SELECT r.scope, r.hostname, r.served_pin, d.day, sum(d.count)
                    FROM reports r JOIN report_days d ON d.report_id = r.id
                    WHERE r.last_seen < ? AND d.day >= ? GROUP BY r.scope, r.hostname, r.served_pin, d.day
                    """, [.integer(cutoff), .text(cutoffDay)])
                for row in expired {
                    try database.query(
                        """
                        UPDATE key_days SET count = count - ?
                        WHERE scope = ? AND hostname = ? AND served_pin = ? AND day = ?
                        """, [row[4], row[0], row[1], row[2], row[3]])
                }
                try database.query("DELETE FROM key_days WHERE count <= 0")
                try database.query("DELETE FROM reports WHERE last_seen < ?", [.integer(cutoff)])
                let deleted = database.changes
                try database.query("DELETE FROM report_days WHERE day < ?", [.text(cutoffDay)])
                try database.query("DELETE FROM key_days WHERE day < ?", [.text(cutoffDay)])
                try database.query("DELETE FROM key_sources WHERE last_day < ?", [.text(cutoffDay)])
                return deleted
            }
        } catch let error as SQLiteError {
            throw .database(error)
        } catch {
            throw .notAReportStore("\(error)")
        }
    }
}
