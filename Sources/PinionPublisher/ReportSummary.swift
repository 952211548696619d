// The questions `pinion reports` asks the report store: failures by host, served key (SPKI
// pin), app version and day, and which served keys the pins refused.

import PinionCore
import PinionSystem

/// Failures counted for one host, served key, app version and day.
public struct ReportDayCount: Sendable, Equatable {
    /// The report's scope (the `{scope}` of the POST path).
    public var scope: String
    /// The host the clients connected to.
    public var hostname: String
    /// The served key: base64 SPKI SHA-256 (RFC 7469 §2.4).
    public var servedPin: String
    /// TrustKit's `app-version`, nil when the reports carried none.
    public var appVersion: String?
    /// The UTC day received, `YYYY-MM-DD`.
    public var day: String
    /// Reports received that day.
    public var count: Int64
}

/// One served key that the pins refused, over the whole period asked for.
public struct RefusedKey: Sendable, Equatable {
    /// The report's scope.
    public var scope: String
    /// The host.
    public var hostname: String
    /// The served key: base64 SPKI SHA-256.
    public var servedPin: String
    /// The pins that applied when it was refused (base64), as the last report listed them.
    public var knownPins: [String]
    /// Reports received in the period.
    public var count: Int64
    /// First and last receive times in the period.
    public var firstSeen: Timestamp
    public var lastSeen: Timestamp
    /// App versions that sent them (nil member: reports without `app-version`), sorted.
    public var appVersions: [String]
}

extension ReportStore {
    /// Failures by scope, host, served key, app version and day, from `since` (by day) on.
    ///
    /// - Parameters:
    ///   - scope: only this scope, or all.
    ///   - since: the first instant counted (whole UTC days from its day on).
    /// - Returns: rows ordered by day, host, served key and app version.
    /// - Throws: `ReportStoreError.database`.
    public func dayCounts(scope: String?, since: Timestamp) throws(ReportStoreError) -> [ReportDayCount] {
        let rows = try run(
            """
            SELECT r.scope, r.hostname, r.served_pin, r.app_version, d.day, sum(d.count)
            FROM report_days d JOIN reports r ON r.id = d.report_id
            WHERE d.day >= ? AND (? IS NULL OR r.scope = ?)
            GROUP BY r.scope, r.hostname, r.served_pin, r.app_version, d.day
            ORDER BY d.day, r.scope, r.hostname, r.served_pin, r.app_version
            """, [.text(String(since.description.prefix(10))), scopeValue(scope), scopeValue(scope)])
        return rows.map { row in
            ReportDayCount(
                scope: row[0].text ?? "", hostname: row[1].text ?? "", servedPin: row[2].text ?? "",
                appVersion: row[3].text, day: row[4].text ?? "", count: row[5].integer ?? 0)
        }
    }

    /// Served keys that clients saw and the pins refused, most reported first: the question a
    /// team asks before enforcing a report-only entry.
    ///
    /// - Parameters:
    ///   - scope: only this scope, or all.
    ///   - since: the first instant counted (whole UTC days from its day on).
    /// - Returns: one entry per scope, host and served key.
    /// - Throws: `ReportStoreError.database`.
    public func refusedKeys(scope: String?, since: Timestamp) throws(ReportStoreError) -> [RefusedKey] {
        let day = String(since.description.prefix(10))
        let rows = try run(
            """
            SELECT r.scope, r.hostname, r.served_pin, sum(d.count), min(r.first_seen), max(r.last_seen),
                (SELECT x.known_pins FROM reports x WHERE x.scope = r.scope AND x.hostname = r.hostname
                    AND x.served_pin = r.served_pin ORDER BY x.last_seen DESC, x.id DESC LIMIT 1),
                group_concat(DISTINCT coalesce(r.app_version, ''))
            FROM report_days d JOIN reports r ON r.id = d.report_id
            WHERE d.day >= ? AND (? IS NULL OR r.scope = ?)
            GROUP BY r.scope, r.hostname, r.served_pin
            ORDER BY sum(d.count) DESC, r.scope, r.hostname, r.served_pin
            """, [.text(day), scopeValue(scope), scopeValue(scope)])
        return rows.map { row in
            let versions = (row[7].text ?? "").split(separator: ",", omittingEmptySubsequences: true).map(String.init)
            return RefusedKey(
                scope: row[0].text ?? "", hostname: row[1].text ?? "", servedPin: row[2].text ?? "",
                knownPins: (row[6].text ?? "").split(separator: " ").map(String.init), count: row[3].integer ?? 0,
                firstSeen: Timestamp(secondsSince1970: row[4].integer ?? 0),
                lastSeen: Timestamp(secondsSince1970: row[5].integer ?? 0), appVersions: versions.sorted())
        }
    }

    /// Distinct reports stored and their total count (all scopes, all time).
    ///
    /// - Throws: `ReportStoreError.database`.
    public func totals() throws(ReportStoreError) -> (distinct: Int64, received: Int64) {
        let rows = try run("SELECT count(*), coalesce(sum(count), 0) FROM reports", [])
        return (rows.first?[0].integer ?? 0, rows.first?[1].integer ?? 0)
    }

    private func scopeValue(_ scope: String?) -> SQLiteValue { scope.map(SQLiteValue.text) ?? .null }

    private func run(_ sql: String, _ values: [SQLiteValue]) throws(ReportStoreError) -> [[SQLiteValue]] {
        do { return try database.query(sql, values) } catch { throw .database(error) }
    }
}
