// `pinion reports`: what the pin-failure reports collected by `pinion serve --reports` say,
// by host, served key, app version and day (docs/DESIGN.md §14).

import Foundation
import PinionCore
import PinionPublisher

struct ReportsCommand: Command {
    static let path = ["reports"]
    static let summary = "summarise collected pin-failure reports by host, served key, app version and day"
    static let options: [OptionSpec] = [.value("scope"), .value("since"), .value("at"), .flag("json"), .value("html")]
    static let help = """
        usage: pinion reports DB.sqlite [--scope S] [--since 7d] [--at TIME] [--json] [--html OUT.html]

        Reads the database written by `pinion serve --reports DB.sqlite` (it may be running)
        and answers the question to ask before enforcing a report-only entry: which keys do
        clients see that our pins refuse? It lists each served key (SPKI SHA-256, RFC 7469
        §2.4) with its host, report count, app versions and first and last receive times,
        most reported first (after the totals per host), with the number of distinct source
        networks (IPv4 /24, IPv6 /64) that reported it, then the counts by day, host, served
        key and app version ("evicted" for reports whose rows were evicted at the size cap;
        their counts are kept).

        Reports are unauthenticated: anyone can send them, from many networks, so a count can
        be forged to coax a team into adding an attacker's key as a pin. Check a key yourself
        (`pinion check-host`, the certificate's issuer) before pinning it.

        options:
          --scope S     only reports POSTed to /v1/S/reports
          --since T     from this long before --at (whole UTC days; default 7d)
          --at TIME     the time to count back from (RFC 3339; default now)
          --json        the same as JSON: {"since", "distinctReports", "receivedReports",
                        "hosts": [...], "refusedKeys": [...], "days": [...], "warning"};
                        each refused key has "sourcePrefixes", each day "evicted"

          --html F      also write the same as one self-contained HTML page (atomically):
                        failures by host, served key and day, with charts; no script, no fetch

        Text lists at most 10 app versions per key, then "(+N more)"; --json lists them all.

        Exit codes: 0 (also when there are no reports), 1 not a report database or one
        written by a newer pinion, 3 cannot open it.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let database = try arguments.positional(["DB"])[0]
        let scope = arguments.value("scope")
        if let scope {
            do { try Scope.validate(scope) } catch { throw CLIError.usage("--scope: \(error)") }
        }
        let window = try DurationText.seconds(arguments.value("since") ?? "7d", option: "since")
        let now =
            try arguments.value("at").map { (text) throws(CLIError) in try DurationText.time(text, option: "at") }
            ?? context.now()
        let since = now.adding(seconds: -window)
        guard FileManager.default.fileExists(atPath: database) else {
            throw CLIError.io("\(database): no such file")
        }
        let htmlPath = arguments.value("html")
        if let htmlPath { _ = try Files.existingRegularFileMode(htmlPath) }
        let keys: [RefusedKey]
        let days: [ReportDayCount]
        let totals: (distinct: Int64, received: Int64)
        do {
            let store = try ReportStore(path: database, create: false)
            keys = try store.refusedKeys(scope: scope, since: since)
            days = try store.dayCounts(scope: scope, since: since)
            totals = try store.totals()
        } catch {
            switch error {
            case .database: throw CLIError.io("\(database): \(error)")
            default: throw CLIError.failure("\(database): \(error)")
            }
        }
        if let htmlPath {
            let page = ReportsHTML.render(
                since: since, scope: scope, keys: keys, days: days, totals: totals, hasher: crypto.hasher)
            try Files.writeAtomically(page, to: htmlPath, replace: true, mode: 0o644)
        }
        if arguments.flag("json") {
            context.out(String(decoding: JSONWriter.write(json(since: since, keys, days, totals)), as: UTF8.self))
            return
        }
        let sinceDay = String(since.description.prefix(10))
        let counted = keys.reduce(Int64(0)) { $0 + $1.count }
        context.print(
            "pin-failure reports since \(sinceDay)\(scope.map { " for scope \($0)" } ?? ""): \(counted) "
                + "(\(totals.distinct) distinct, \(totals.received) received in the database)")
        guard !keys.isEmpty else {
            context.print("no served key was refused")
            return
        }
        context.print("warning: " + unauthenticatedWarning)
        context.print("hosts, most reported first:")
        for host in RefusedKey.hostTotals(keys) {
            context.print(
                TerminalText.escape("  \(host.count)  \(host.scope)  \(host.hostname)  \(host.keys) served key(s)"))
        }
        context.print("served keys the pins refused, most reported first:")
        for key in keys {
            let versions = key.appVersionList
            context.print(
                TerminalText.escape(
                    "  \(key.count)  \(key.scope)  \(key.hostname)  pin-sha256=\"\(key.servedPin)\"  "
                        + "app \(versions)  first \(key.firstSeen)  last \(key.lastSeen)  "
                        + "from \(key.sourcePrefixes) source network(s)"))
            context.print("      known pins: " + key.knownPins.map { "pin-sha256=\"\($0)\"" }.joined(separator: " "))
        }
        context.print("by day:")
        for row in days {
            context.print(
                TerminalText.escape(
                    "  \(row.day)  \(row.count)  \(row.scope)  \(row.hostname)  pin-sha256=\"\(row.servedPin)\"  "
                        + (row.evicted ? "evicted (count kept)" : "app \(row.appVersion ?? "-")")))
        }
    }

    /// Printed before the keys, and in the JSON as `warning`.
    static let unauthenticatedWarning =
        "reports are unauthenticated: anyone can send them, so counts and source networks can be forged "
        + "to coax you into pinning an attacker's key; check a key yourself before adding it as a pin"

    private static func json(
        since: Timestamp, _ keys: [RefusedKey], _ days: [ReportDayCount], _ totals: (distinct: Int64, received: Int64)
    ) -> JSONValue {
        let keyValues = keys.map { key -> JSONValue in
            .object(
                JSONObject([
                    .init("scope", .string(key.scope)), .init("hostname", .string(key.hostname)),
                    .init("servedPin", .string(key.servedPin)), .init("count", .number(String(key.count))),
                    .init("firstSeen", .string(key.firstSeen.description)),
                    .init("lastSeen", .string(key.lastSeen.description)),
                    .init("appVersions", .array(key.appVersions.map { .string($0) })),
                    .init("appVersionCount", .number(String(key.appVersions.count))),
                    .init("knownPins", .array(key.knownPins.map { .string($0) })),
                    .init("sourcePrefixes", .number(String(key.sourcePrefixes))),
                ]))
        }
        let hostValues = RefusedKey.hostTotals(keys).map { host -> JSONValue in
            .object(
                JSONObject([
                    .init("scope", .string(host.scope)), .init("hostname", .string(host.hostname)),
                    .init("count", .number(String(host.count))), .init("servedKeys", .number(String(host.keys))),
                ]))
        }
        let dayValues = days.map { row -> JSONValue in
            .object(
                JSONObject([
                    .init("day", .string(row.day)), .init("scope", .string(row.scope)),
                    .init("hostname", .string(row.hostname)), .init("servedPin", .string(row.servedPin)),
                    .init("appVersion", row.appVersion.map { .string($0) } ?? .null),
                    .init("count", .number(String(row.count))), .init("evicted", .bool(row.evicted)),
                ]))
        }
        return .object(
            JSONObject([
                .init("since", .string(String(since.description.prefix(10)))),
                .init("distinctReports", .number(String(totals.distinct))),
                .init("receivedReports", .number(String(totals.received))),
                .init("hosts", .array(hostValues)),
                .init("refusedKeys", .array(keyValues)), .init("days", .array(dayValues)),
                .init("warning", .string(unauthenticatedWarning)),
            ]))
    }
}
