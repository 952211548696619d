// The pin-failure reports as one self-contained HTML page (`pinion reports --html`): which
// served keys clients see that the pins refuse, by host, served key and day. Every value comes
// from unauthenticated clients, so all of it goes through `HTMLWriter` (escaped, capped).

import PinionCore
import PinionSystem

/// Renders the report store's summary (`refusedKeys`, `dayCounts`, `totals`) as HTML.
public enum ReportsHTML {
    /// The most rows per table (hosts, served keys, day rows); the page says how many more.
    public static let maxRows = 500
    /// The most days drawn in the chart (the newest).
    public static let maxDays = 120

    /// - Parameters:
    ///   - since: the first instant counted.
    ///   - scope: the scope asked for, nil for all.
    ///   - keys: `ReportStore.refusedKeys`, most reported first.
    ///   - days: `ReportStore.dayCounts`, in day order.
    ///   - totals: `ReportStore.totals` (distinct reports, reports received).
    ///   - hasher: SHA-256 for the style sheet's CSP hash.
    /// - Returns: the page as UTF-8 bytes.
    public static func render(
        since: Timestamp, scope: String?, keys: [RefusedKey], days: [ReportDayCount],
        totals: (distinct: Int64, received: Int64), hasher: any SHA256Hasher
    ) -> [UInt8] {
        let sinceDay = String(since.description.prefix(10))
        let counted = keys.reduce(Int64(0)) { $0 + $1.count }
        var page = HTMLWriter()
        page.element("h1", "Pin-failure reports since \(sinceDay)" + (scope.map { " for scope \($0)" } ?? ""))
        page.element("div", [("class", keys.isEmpty ? "verdict pass" : "verdict fail"), ("role", "status")]) { box in
            box.element(
                "p", [("class", "verdict-word")],
                keys.isEmpty
                    ? "No served key was refused."
                    : "\(counted) report(s) of \(keys.count) served key(s) that the pins refuse, on \(RefusedKey.hostTotals(keys).count) host(s)."
            )
            box.element("p", "\(totals.distinct) distinct reports, \(totals.received) received in the database.")
            box.element(
                "p",
                "Reports are not authenticated: anyone can send them, so counts can be forged to coax a team into adding a pin. Confirm a served key on the server itself before pinning it."
            )
        }
        hostSection(keys, &page)
        keySection(keys, &page)
        daySection(days, &page)
        return HTMLWriter.document(title: "pinion reports since \(sinceDay)", style: style, body: page, hasher: hasher)
    }

    /// A labelled horizontal bar: the count is written beside it, so the length is never the
    /// only cue.
    static func bar(_ count: Int64, of maximum: Int64, _ page: inout HTMLWriter) {
        let width = maximum > 0 ? max(1, Int(Double(count) / Double(maximum) * 200)) : 1
        page.element(
            "svg",
            [
                ("xmlns", "http://www.w3.org/2000/svg"), ("width", "260"), ("height", "14"),
                ("role", "img"), ("aria-label", "\(count) report(s)"),
            ]
        ) { svg in
            svg.empty("rect", [("x", "0"), ("y", "2"), ("width", "\(width)"), ("height", "10"), ("fill", "#b00020")])
            svg.element("text", [("x", "\(width + 4)"), ("y", "12")], "\(count)")
        }
    }

    static func hostSection(_ keys: [RefusedKey], _ page: inout HTMLWriter) {
        let rows = RefusedKey.hostTotals(keys)
        page.element("section", [("aria-labelledby", "hosts")]) { page in
            page.element("h2", [("id", "hosts")], "Failures by host (\(rows.count))")
            page.element("table") { table in
                table.element("caption", "Hosts whose served keys the pins refused, most reported first")
                header(["Host", "Scope", "Reports", "Served keys refused"], &table)
                table.element("tbody") { body in
                    for host in rows.prefix(maxRows) {
                        body.element("tr") { row in
                            row.element("td", host.hostname)
                            row.element("td", host.scope)
                            row.element("td") { bar(host.count, of: rows.first?.count ?? 0, &$0) }
                            row.element("td", "\(host.keys)")
                        }
                    }
                }
            }
            more(rows.count, &page)
        }
    }

    static func keySection(_ keys: [RefusedKey], _ page: inout HTMLWriter) {
        page.element("section", [("aria-labelledby", "keys")]) { page in
            page.element(
                "h2", [("id", "keys")], "Which keys do clients see that our pins would refuse? (\(keys.count))")
            page.element("table") { table in
                table.element(
                    "caption", "Served keys (SPKI SHA-256, RFC 7469 §2.4) the pins refused, most reported first")
                header(
                    [
                        "Served key", "Host", "Reports", "Source networks", "App versions", "First seen", "Last seen",
                        "Pins that applied",
                    ],
                    &table)
                table.element("tbody") { body in
                    for key in keys.prefix(maxRows) {
                        body.element("tr") { row in
                            row.element("td") { $0.element("code", "pin-sha256=\"\(key.servedPin)\"") }
                            row.element("td", key.hostname)
                            row.element("td") { bar(key.count, of: keys.first?.count ?? 0, &$0) }
                            row.element("td", "\(key.sourcePrefixes)")
                            row.element("td", key.appVersionList)
                            row.element("td", key.firstSeen.description)
                            row.element("td", key.lastSeen.description)
                            row.element("td", key.knownPins.map { "pin-sha256=\"\($0)\"" }.joined(separator: " "))
                        }
                    }
                }
            }
            more(keys.count, &page)
        }
    }

    static func daySection(_ days: [ReportDayCount], _ page: inout HTMLWriter) {
        var perDay: [(day: String, count: Int64)] = []
        for row in days {
            if perDay.last?.day == row.day {
                perDay[perDay.count - 1].count += row.count
            } else {
                perDay.append((row.day, row.count))
            }
        }
        let drawn = perDay.suffix(maxDays)
        let maximum = drawn.map(\.count).max() ?? 0
        page.element("section", [("aria-labelledby", "days")]) { page in
            page.element("h2", [("id", "days")], "Failures by day (\(perDay.count) day(s))")
            if !drawn.isEmpty {
                let height = 160
                let step = 24
                page.element("figure") { figure in
                    figure.element(
                        "svg",
                        [
                            ("xmlns", "http://www.w3.org/2000/svg"), ("role", "img"),
                            ("aria-label", "Reports per day, \(drawn.first?.day ?? "") to \(drawn.last?.day ?? "")"),
                            ("viewBox", "0 0 \(drawn.count * step + 10) \(height + 40)"),
                            ("width", "\(min(1000, drawn.count * step + 10))"),
                        ]
                    ) { svg in
                        for (index, day) in drawn.enumerated() {
                            let barHeight =
                                maximum > 0 ? max(1, Int(Double(day.count) / Double(maximum) * Double(height - 20))) : 1
                            let x = index * step + 4
                            svg.element("g") { g in
                                g.element("title", "\(day.day): \(day.count) report(s)")
                                g.empty(
                                    "rect",
                                    [
                                        ("x", "\(x)"), ("y", "\(height - barHeight)"), ("width", "\(step - 6)"),
                                        ("height", "\(barHeight)"), ("fill", "#b00020"),
                                    ])
                                g.element("text", [("x", "\(x)"), ("y", "\(height - barHeight - 3)")], "\(day.count)")
                                g.element(
                                    "text", [("x", "\(x)"), ("y", "\(height + 14)"), ("class", "day")],
                                    String(day.day.suffix(5)))
                            }
                        }
                    }
                    figure.element(
                        "figcaption",
                        "Reports received per UTC day (MM-DD under each bar, the count above it)"
                            + (perDay.count > maxDays
                                ? "; the newest \(maxDays) of \(perDay.count) days are drawn" : ""))
                }
            }
            page.element("table") { table in
                table.element("caption", "Reports by day, host, served key and app version")
                header(["Day", "Host", "Served key", "App version", "Reports"], &table)
                table.element("tbody") { body in
                    for row in days.suffix(maxRows) {
                        body.element("tr") { cells in
                            cells.element("td", row.day)
                            cells.element("td", row.hostname)
                            cells.element("td") { $0.element("code", "pin-sha256=\"\(row.servedPin)\"") }
                            cells.element("td", row.appVersion ?? "-")
                            cells.element("td", "\(row.count)")
                        }
                    }
                }
            }
            if days.count > maxRows {
                page.element(
                    "p", [("class", "cap")],
                    "The newest \(maxRows) of \(days.count) rows are shown: pinion reports --json lists them all.")
            }
        }
    }

    static func header(_ titles: [String], _ table: inout HTMLWriter) {
        table.element("thead") { head in
            head.element("tr") { row in
                for title in titles { row.element("th", [("scope", "col")], title) }
            }
        }
    }

    static func more(_ count: Int, _ page: inout HTMLWriter) {
        guard count > maxRows else { return }
        page.element(
            "p", [("class", "cap")], "\(count - maxRows) more not shown: pinion reports --json lists them all.")
    }

    static let style: StaticString = """
        body{font-family:sans-serif;margin:1.5em;color:#111;max-width:1200px}
        .verdict{border:3px solid;padding:.5em 1em;margin:1em 0}
        .verdict.pass{border-color:#1b6e20;background:#e8f5e9}
        .verdict.fail{border-color:#b00020;background:#fdecea}
        .verdict-word{font-size:1.3em;font-weight:bold}
        .cap{font-style:italic;font-size:.9em}
        table{border-collapse:collapse;margin:1em 0;font-size:.85em}
        th,td{border:1px solid #bbb;padding:.2em .4em;text-align:left;vertical-align:top;overflow-wrap:anywhere}
        caption{text-align:left;font-weight:bold;padding:.3em 0}
        svg text{font-size:11px;font-family:monospace}
        code{font-family:monospace}
        """
}
