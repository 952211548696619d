// The questions `pinion reports` asks the report store: failures by host, served key (SPKI
// pin), app version and day, which served keys the pins refused, and from how many networks.

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
    /// True for the reports of that day whose rows were evicted at the size cap: their count
    /// is kept (per host, served key and day), their app version is not (`appVersion` nil).
    public var evicted: Bool = false
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
    /// App versions that sent them (nil member: reports without `app-version`), sorted;
    /// from the rows still stored (evicted rows keep their count only).
    public var appVersions: [String]
    /// Distinct source networks (IPv4 /24, IPv6 /64) that reported this key in the period.
    /// Reports are unauthenticated: one sender can forge any count, so few networks behind
    /// a high count is a sign of forgery, and many networks are no proof either.
    public var sourcePrefixes: Int64 = 0
}

extension RefusedKey {
    /// The most app versions `appVersionList` names: a client can send any version string,
    /// so the list is bounded on screen (`pinion reports --json` has them all).
    public static let shownAppVersions = 10

    /// `appVersions` for people: at most `shownAppVersions`, comma-separated, then how many
    /// more (`2.0, 2.1 (+3 more)`); `-` when there is none.
    public var appVersionList: String {
        guard !appVersions.isEmpty else { return "-" }
        let shown = appVersions.prefix(Self.shownAppVersions).joined(separator: ", ")
        let more = appVersions.count - Self.shownAppVersions
        return more > 0 ? shown + " (+\(more) more)" : shown
    }

    /// Reports per (scope, host) over `keys`: the summed count and the number of served keys,
    /// most reported first, then by scope and host name. What `pinion reports` and its HTML
    /// page list as failures by host.
    ///
    /// - Parameter keys: refused keys, as `ReportStore.refusedKeys` returns them.
    /// - Returns: one row per (scope, host).
    public static func hostTotals(_ keys: [RefusedKey]) -> [(scope: String, hostname: String, count: Int64, keys: Int)]
    {
        var totals: [String: (scope: String, hostname: String, count: Int64, keys: Int)] = [:]
        for key in keys {
            let id = key.scope + "\u{0}" + key.hostname
            var entry = totals[id] ?? (key.scope, key.hostname, 0, 0)
            entry.count += key.count
            entry.keys += 1
            totals[id] = entry
        }
        return totals.values.sorted { ($1.count, $0.scope, $0.hostname) < ($0.count, $1.scope, $1.hostname) }
    }
}

extension ReportStore {
    /// Failures by scope, host, served key, app version and day, from `since` (by day) on.
    /// Reports whose rows were evicted count in one row per scope, host, served key and day
    /// with `evicted` set.
    ///
    /// - Parameters:
    ///   - scope: only this scope, or all.
    ///   - since: the first instant counted (whole UTC days from its day on).
    /// - Returns: rows ordered by day, host, served key and app version (evicted last).
    /// - Throws: `ReportStoreError.database`.
    public func dayCounts(scope: String?, since: Timestamp) throws(ReportStoreError) -> [ReportDayCount] {
        let day = String(since.description.prefix(10))
        let rows = try run(
            """
            SELECT r.scope, r.hostname, r.served_pin, r.app_version, d.day, sum(d.count)
            FROM report_days d JOIN reports r ON r.id = d.report_id
            WHERE d.day >= ? AND (? IS NULL OR r.scope = ?)
            GROUP BY r.scope, r.hostname, r.served_pin, r.app_version, d.day
            """, [.text(day), scopeValue(scope), scopeValue(scope)])
        var counts = rows.map { row in
            ReportDayCount(
                scope: row[0].text ?? "", hostname: row[1].text ?? "", servedPin: row[2].text ?? "",
                appVersion: row[3].text, day: row[4].text ?? "", count: row[5].integer ?? 0)
        }
        var detailed: [[String]: Int64] = [:]
        for row in counts { detailed[[row.scope, row.hostname, row.servedPin, row.day], default: 0] += row.count }
        let kept = try run(
            """
            SELECT scope, hostname, served_pin, day, count FROM key_days
            WHERE day >= ? AND (? IS NULL OR scope = ?)
            """, [.text(day), scopeValue(scope), scopeValue(scope)])
        for row in kept {
            let key = [row[0].text ?? "", row[1].text ?? "", row[2].text ?? "", row[3].text ?? ""]
            let missing = (row[4].integer ?? 0) - (detailed[key] ?? 0)
            guard missing > 0 else { continue }
            counts.append(
                ReportDayCount(
                    scope: key[0], hostname: key[1], servedPin: key[2], appVersion: nil, day: key[3], count: missing,
                    evicted: true))
        }
        // SQL's order: NULL app versions before others; evicted rows after a key's others.
        func order(_ row: ReportDayCount) -> [String] {
            [
                row.day, row.scope, row.hostname, row.servedPin, row.evicted ? "1" : "0",
                row.appVersion.map { "1" + $0 } ?? "0",
            ]
        }
        return counts.sorted { order($0).lexicographicallyPrecedes(order($1)) }
    }

    /// Served keys that clients saw and the pins refused, most reported first: the question a
    /// team asks before enforcing a report-only entry. Counts, times and source networks come
    /// from the per-key aggregates, which eviction keeps; known pins and app versions from
    /// the rows still stored.
    ///
    /// - Parameters:
    ///   - scope: only this scope, or all.
    ///   - since: the first instant counted (whole UTC days from its day on).
    /// - Returns: one entry per scope, host and served key.
    /// - Throws: `ReportStoreError.database`.
    public func refusedKeys(scope: String?, since: Timestamp) throws(ReportStoreError) -> [RefusedKey] {
        let day = String(since.description.prefix(10))
        let scopeValues = [scopeValue(scope), scopeValue(scope)]
        let keys = try run(
            """
            SELECT scope, hostname, served_pin, sum(count), min(first_seen), max(last_seen) FROM key_days
            WHERE day >= ? AND (? IS NULL OR scope = ?)
            GROUP BY scope, hostname, served_pin
            """, [.text(day)] + scopeValues)
        var sources: [[String]: Int64] = [:]
        for row in try run(
            """
            SELECT scope, hostname, served_pin, count(*) FROM key_sources
            WHERE last_day >= ? AND (? IS NULL OR scope = ?) GROUP BY scope, hostname, served_pin
            """, [.text(day)] + scopeValues)
        {
            sources[[row[0].text ?? "", row[1].text ?? "", row[2].text ?? ""]] = row[3].integer ?? 0
        }
        var versions: [[String]: [String]] = [:]
        for row in try run(
            """
            SELECT r.scope, r.hostname, r.served_pin, group_concat(DISTINCT coalesce(r.app_version, ''))
            FROM report_days d JOIN reports r ON r.id = d.report_id
            WHERE d.day >= ? AND (? IS NULL OR r.scope = ?)
            GROUP BY r.scope, r.hostname, r.served_pin
            """, [.text(day)] + scopeValues)
        {
            versions[[row[0].text ?? "", row[1].text ?? "", row[2].text ?? ""]] =
                (row[3].text ?? "").split(separator: ",", omittingEmptySubsequences: true).map(String.init).sorted()
        }
        // The pins of each key's latest row: printf makes (last_seen, id) one sortable text,
        // and SQLite takes a bare column from the row holding the max().
        var pins: [[String]: [String]] = [:]
        for row in try run(
            """
            SELECT scope, hostname, served_pin, known_pins, max(printf('%020d%020d', last_seen, id))
            FROM reports WHERE (? IS NULL OR scope = ?) GROUP BY scope, hostname, served_pin
            """, scopeValues)
        {
            pins[[row[0].text ?? "", row[1].text ?? "", row[2].text ?? ""]] =
                (row[3].text ?? "").split(separator: " ").map(String.init)
        }
        let found = keys.map { row -> RefusedKey in
            let key = [row[0].text ?? "", row[1].text ?? "", row[2].text ?? ""]
            return RefusedKey(
                scope: key[0], hostname: key[1], servedPin: key[2], knownPins: pins[key] ?? [],
                count: row[3].integer ?? 0, firstSeen: Timestamp(secondsSince1970: row[4].integer ?? 0),
                lastSeen: Timestamp(secondsSince1970: row[5].integer ?? 0), appVersions: versions[key] ?? [],
                sourcePrefixes: sources[key] ?? 0)
        }
        return found.sorted { a, b in
            (b.count, a.scope, a.hostname, a.servedPin) < (a.count, b.scope, b.hostname, b.servedPin)
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
