// The audit report as one self-contained HTML page (`pinion audit --html`): a verdict banner,
// the findings grouped by cause in plain language, per domain a pin timeline drawn as inline
// SVG with text labels, the roots and their key changes, and the log's and witnesses' state.
// No script, no fetch: the Content-Security-Policy allows only the page's own style sheet.

import PinionCore
import PinionSystem
import PinionTrust

/// Renders an `AuditReport` as HTML (`HTMLWriter`: every value escaped and capped).
public enum AuditHTML {
    /// The most pins drawn as lanes per domain (those present most recently); the segment
    /// table lists every pin of the segments it shows.
    public static let maxLanes = 40
    /// The most segments listed per domain: the first and last halves are shown, and the
    /// page says how many were left out.
    public static let maxSegmentRows = 200
    /// The most findings listed under one cause, and the most groups listed per section.
    public static let maxFollowers = 100
    public static let maxGroups = 500
    /// The most rows of the manifests table (runs of versions with one root, signers and
    /// verdict) and of the revocations table.
    public static let maxTableRows = 200
    /// The most changes claimed by failing versions listed per domain.
    public static let maxUntrusted = 50

    /// - Parameters:
    ///   - report: what the audit found.
    ///   - hasher: SHA-256 for the style sheet's CSP hash.
    /// - Returns: the page as UTF-8 bytes.
    public static func render(_ report: AuditReport, hasher: any SHA256Hasher) -> [UInt8] {
        var page = HTMLWriter()
        page.element("h1", "Audit of scope \(report.scope)")
        verdict(report, &page)
        page.element("section", [("aria-labelledby", "facts")]) { page in
            page.element("h2", [("id", "facts")], "What was audited")
            page.element("dl") { page in
                let last = report.manifests.last?.version
                let first = report.manifests.first?.version
                let failing = report.manifests.filter { !$0.verified }.count
                let range: String = first.map { ", versions \($0) to \(last ?? $0)" } ?? ""
                let held: String = report.manifestJSONVersion.map { "version \($0)" } ?? "no readable version"
                let coverage: String =
                    report.coverage.map { "\($0.from) to \($0.until), \(report.gaps.count) gap(s)" } ?? "none"
                let facts: [(String, String)] = [
                    ("Tree", report.location), ("Given root version", String(report.anchorVersion)),
                    ("Judged at", report.at.description), ("Manifests", "\(report.manifests.count)\(range)"),
                    ("Failing verification", "\(failing) version(s)"), ("manifest.json holds", held),
                    ("Expiry coverage", coverage),
                ]
                for (term, value) in facts {
                    page.element("dt", term)
                    page.element("dd", value)
                }
            }
        }
        findings("Violations", "violations", report.violations, report, &page)
        findings("Warnings", "warnings", report.warnings, report, &page)
        timeline(report, &page)
        manifests(report, &page)
        roots(report, &page)
        log(report, &page)
        return HTMLWriter.document(title: "pinion audit: \(report.scope)", style: style, body: page, hasher: hasher)
    }

    static func verdict(_ report: AuditReport, _ page: inout HTMLWriter) {
        let text =
            report.passed
            ? "PASS: every rule holds (\(report.warnings.count) warning(s))"
            : "FAIL: \(report.violations.count) violation(s), \(report.warnings.count) warning(s)"
        page.element("div", [("class", report.passed ? "verdict pass" : "verdict fail"), ("role", "status")]) { page in
            page.element("p", [("class", "verdict-word")], text)
            if let version = report.givenRootDiffers {
                page.element(
                    "p", "The tree's root \(version) differs from the root you gave: is this the root your app embeds?")
            }
        }
    }

    static func findings(
        _ title: String, _ id: String, _ list: [AuditFinding], _ report: AuditReport, _ page: inout HTMLWriter
    ) {
        page.element("section", [("aria-labelledby", id)]) { page in
            page.element("h2", [("id", id)], "\(title) (\(list.count))")
            guard !list.isEmpty else {
                page.element("p", "None.")
                return
            }
            let groups = AuditFinding.groups(list)
            for group in groups.prefix(maxGroups) {
                page.element("article", [("class", "finding")]) { page in
                    if let cause = group.cause {
                        finding(cause, heading: true, &page)
                    } else {
                        page.element("h3", "Findings whose cause is not listed")
                    }
                    guard !group.followers.isEmpty else { return }
                    let why = group.followers.first?.followsFrom.map { followsText($0, report) } ?? ""
                    page.element("p", [("class", "follows")], "Follows from this (\(group.followers.count)): \(why)")
                    page.element("ul") { page in
                        for follower in group.followers.prefix(maxFollowers) {
                            page.element("li") { finding(follower, heading: false, &$0) }
                        }
                    }
                    if group.followers.count > maxFollowers {
                        page.element(
                            "p", [("class", "cap")],
                            "\(group.followers.count - maxFollowers) more not shown: pinion audit --json lists them all."
                        )
                    }
                }
            }
            if groups.count > maxGroups {
                page.element(
                    "p", [("class", "cap")],
                    "\(groups.count - maxGroups) more causes not shown: pinion audit --json lists them all.")
            }
        }
    }

    static func finding(_ finding: AuditFinding, heading: Bool, _ page: inout HTMLWriter) {
        let place = finding.version.map { "\(finding.file) (version \($0))" } ?? finding.file
        if heading {
            page.element("h3", finding.advice)
        } else {
            page.element("p", [("class", "advice")], finding.advice)
        }
        page.element("p", [("class", "detail")]) { page in
            page.element("code", "[\(finding.rule.rawValue)]")
            page.text(" \(place): \(finding.message)")
        }
    }

    static func followsText(_ cause: FindingCause, _ report: AuditReport) -> String {
        switch cause {
        case .unverifiedContent:
            return "these are about content whose signature does not verify."
        case .givenRoot:
            return
                "these do not occur with the tree's own root \(report.givenRootDiffers.map(String.init) ?? "") instead of the root you gave."
        }
    }

    // MARK: pin timeline

    static func timeline(_ report: AuditReport, _ page: inout HTMLWriter) {
        page.element("section", [("aria-labelledby", "timeline")]) { page in
            page.element("h2", [("id", "timeline")], "Pin timeline (\(report.domains.count) domain(s))")
            page.element(
                "p",
                "Each row is one pin (SPKI SHA-256); its bar spans the versions whose verified manifest lists it. Dashed lines mark a change of the domain's pins (a rotation), ✕ a revocation, hatched columns labelled FAILING the versions that failed verification (what they claim is listed apart, never as the domain's pins), dotted columns labelled EXPIRED the spans without an unexpired manifest. Runs of versions with the same pins are one segment."
            )
            guard let first = report.manifests.first?.version, let last = report.manifests.last?.version else {
                page.element("p", "No manifest was read.")
                return
            }
            let failing = failingRuns(report.manifests)
            for (index, domain) in report.domains.enumerated() {
                let segments = DomainPinSegments(domain, last: last)
                page.element("section", [("class", "domain"), ("aria-labelledby", "domain-\(index)")]) { page in
                    page.element("h3", [("id", "domain-\(index)")], domain.name)
                    chart(segments, first: first, last: last, failing: failing, report: report, &page)
                    segmentTable(segments, &page)
                    untrustedList(segments, &page)
                }
            }
        }
    }

    /// Consecutive versions that failed verification, as (from, until, rule) runs.
    static func failingRuns(_ manifests: [ManifestSummary]) -> [(from: Int64, until: Int64, rule: String)] {
        var runs: [(from: Int64, until: Int64, rule: String)] = []
        for manifest in manifests {
            guard let failure = manifest.failure else { continue }
            if let lastRun = runs.last, lastRun.until + 1 == manifest.version, lastRun.rule == failure.rawValue {
                runs[runs.count - 1].until = manifest.version
            } else {
                runs.append((manifest.version, manifest.version, failure.rawValue))
            }
        }
        return runs
    }

    static func chart(
        _ domain: DomainPinSegments, first: Int64, last: Int64,
        failing: [(from: Int64, until: Int64, rule: String)], report: AuditReport, _ page: inout HTMLWriter
    ) {
        // Lanes: the pins present most recently, newest last.
        var lanes: [Pin] = []
        for bar in domain.bars.sorted(by: { $0.until > $1.until }) where !lanes.contains(bar.pin) {
            lanes.append(bar.pin)
        }
        let allPins = lanes.count
        lanes = Array(lanes.prefix(maxLanes))
        let labelWidth = 220
        let plotWidth = 720
        let laneHeight = 18
        let top = 22
        let height = top + max(1, lanes.count) * laneHeight + 40
        let span = Double(max(1, last - first + 1))
        func x(_ version: Int64) -> Int { labelWidth + Int(Double(version - first) / span * Double(plotWidth)) }
        func xEnd(_ version: Int64) -> Int {
            max(x(version) + 1, labelWidth + Int(Double(version - first + 1) / span * Double(plotWidth)))
        }
        let bottom = top + max(1, lanes.count) * laneHeight
        let caption =
            "Pins of \(domain.name) over versions \(first) to \(last): \(domain.bars.count) bar(s), \(domain.segments.count) segment(s)"
            + (allPins > lanes.count ? "; the \(lanes.count) pins present most recently of \(allPins) are drawn" : "")
        page.element("figure") { page in
            page.element(
                "svg",
                [
                    ("xmlns", "http://www.w3.org/2000/svg"), ("role", "img"), ("aria-label", caption),
                    ("viewBox", "0 0 \(labelWidth + plotWidth + 10) \(height)"), ("width", "100%"),
                ]
            ) { svg in
                svg.element("defs") { defs in
                    defs.element(
                        "pattern",
                        [
                            ("id", "hatch"), ("width", "6"), ("height", "6"), ("patternUnits", "userSpaceOnUse"),
                            ("patternTransform", "rotate(45)"),
                        ]
                    ) { pattern in
                        pattern.empty(
                            "line",
                            [
                                ("x1", "0"), ("y1", "0"), ("x2", "0"), ("y2", "6"), ("stroke", "#b00020"),
                                ("stroke-width", "3"),
                            ])
                    }
                    defs.element(
                        "pattern",
                        [("id", "dots"), ("width", "6"), ("height", "6"), ("patternUnits", "userSpaceOnUse")]
                    ) { pattern in
                        pattern.empty("circle", [("cx", "3"), ("cy", "3"), ("r", "1.2"), ("fill", "#555")])
                    }
                }
                for gap in report.gaps {
                    let from = gap.afterVersion + 1
                    let until = gap.beforeVersion.map { $0 - 1 } ?? last
                    guard from <= until || gap.beforeVersion == nil else { continue }
                    let left = x(min(from, last))
                    svg.element("g", [("class", "expired")]) { g in
                        g.element("title", "No unexpired manifest from \(gap.from) to \(gap.until)")
                        g.empty(
                            "rect",
                            [
                                ("x", "\(left)"), ("y", "\(top)"),
                                ("width", "\(max(2, xEnd(max(from, until)) - left))"), ("height", "\(bottom - top)"),
                                ("fill", "url(#dots)"),
                            ])
                        g.element("text", [("x", "\(left)"), ("y", "\(top - 4)")], "EXPIRED")
                    }
                }
                for run in failing {
                    let left = x(run.from)
                    svg.element("g", [("class", "failing")]) { g in
                        g.element("title", "Versions \(run.from) to \(run.until) failed verification [\(run.rule)]")
                        g.empty(
                            "rect",
                            [
                                ("x", "\(left)"), ("y", "\(top)"), ("width", "\(max(3, xEnd(run.until) - left))"),
                                ("height", "\(bottom - top)"), ("fill", "url(#hatch)"),
                            ])
                        g.element(
                            "text", [("x", "\(left)"), ("y", "\(top - 10)")],
                            run.from == run.until ? "FAILING v\(run.from)" : "FAILING v\(run.from)–\(run.until)")
                    }
                }
                for (lane, pin) in lanes.enumerated() {
                    let y = top + lane * laneHeight
                    svg.element("text", [("x", "4"), ("y", "\(y + 13)"), ("class", "lane")], short(pin))
                    for bar in domain.bars where bar.pin == pin {
                        let left = x(bar.from)
                        svg.element("g", [("class", "bar")]) { g in
                            g.element("title", "\(pin) listed in versions \(bar.from) to \(bar.until)")
                            g.empty(
                                "rect",
                                [
                                    ("x", "\(left)"), ("y", "\(y + 3)"), ("width", "\(max(2, xEnd(bar.until) - left))"),
                                    ("height", "\(laneHeight - 6)"), ("fill", "#3a6ea5"),
                                ])
                        }
                    }
                    for mark in domain.revocations where mark.pin == pin {
                        svg.element(
                            "text", [("x", "\(x(mark.version))"), ("y", "\(y + 13)"), ("class", "mark")],
                            mark.lifted ? "↺ lifted v\(mark.version)" : "✕ revoked v\(mark.version)")
                    }
                }
                for segment in domain.segments.dropFirst() {
                    svg.empty(
                        "line",
                        [
                            ("x1", "\(x(segment.from))"), ("y1", "\(top)"), ("x2", "\(x(segment.from))"),
                            ("y2", "\(bottom)"), ("stroke", "#222"), ("stroke-dasharray", "3 3"),
                        ])
                }
                // The axis: versions, with the issue date of each tick's version.
                svg.empty(
                    "line",
                    [
                        ("x1", "\(labelWidth)"), ("y1", "\(bottom + 2)"), ("x2", "\(labelWidth + plotWidth)"),
                        ("y2", "\(bottom + 2)"), ("stroke", "#222"),
                    ])
                let dates = Dictionary(
                    report.manifests.map { ($0.version, $0.issuedAt) }, uniquingKeysWith: { a, _ in a })
                let ticks = Set((0...4).map { first + (last - first) * Int64($0) / 4 }).sorted()
                for tick in ticks {
                    let date = dates[tick].flatMap { $0 }.map { " " + String($0.description.prefix(10)) } ?? ""
                    svg.element("text", [("x", "\(x(tick))"), ("y", "\(bottom + 16)"), ("class", "tick")], "v\(tick)")
                    svg.element("text", [("x", "\(x(tick))"), ("y", "\(bottom + 30)"), ("class", "tick")], date)
                }
            }
            page.element("figcaption", caption + ". Axis: version numbers, with the date each was issued.")
        }
    }

    static func short(_ pin: Pin) -> String {
        let text = pin.description
        return text.count > 22 ? String(text.prefix(22)) + "…" : text
    }

    static func segmentTable(_ domain: DomainPinSegments, _ page: inout HTMLWriter) {
        let segments = domain.segments
        let half = maxSegmentRows / 2
        let shown: [PinSegment?] =
            segments.count <= maxSegmentRows
            ? segments.map { $0 } : segments.prefix(half).map { $0 } + [nil] + segments.suffix(half).map { $0 }
        page.element("table") { table in
            table.element(
                "caption",
                "Segments of \(domain.name): runs of versions with the same verified pins (\(segments.count))")
            table.element("thead") { head in
                head.element("tr") { row in
                    for title in ["Versions", "From", "Mode", "Pins", "Changed by the first version"] {
                        row.element("th", [("scope", "col")], title)
                    }
                }
            }
            table.element("tbody") { body in
                for segment in shown {
                    guard let segment else {
                        body.element("tr", [("class", "cap")]) {
                            $0.element(
                                "td", [("colspan", "5")],
                                "\(segments.count - maxSegmentRows) segments not shown (the first and last \(half) are): pinion audit --json lists every change."
                            )
                        }
                        continue
                    }
                    body.element("tr") { row in
                        row.element(
                            "td", segment.from == segment.until ? "\(segment.from)" : "\(segment.from)–\(segment.until)"
                        )
                        row.element("td", segment.date.description)
                        row.element(
                            "td",
                            segment.listed
                                ? (segment.enforce ? "enforce" : "report-only")
                                    + (segment.includeSubdomains ? ", includeSubdomains" : "") : "not listed")
                        row.element("td", segment.pins.map(\.description).joined(separator: " "))
                        row.element("td", segment.changes.joined(separator: "; "))
                    }
                }
            }
        }
    }

    static func untrustedList(_ domain: DomainPinSegments, _ page: inout HTMLWriter) {
        guard !domain.untrusted.isEmpty else { return }
        page.element("p", "Claimed by versions that failed verification (UNTRUSTED, never the domain's pins):")
        page.element("ul", [("class", "untrusted")]) { list in
            for entry in domain.untrusted.prefix(maxUntrusted) {
                list.element("li", "UNTRUSTED v\(entry.version) \(entry.date): \(describe(entry.event))")
            }
        }
        if domain.untrusted.count > maxUntrusted {
            page.element("p", [("class", "cap")], "\(domain.untrusted.count - maxUntrusted) more not shown.")
        }
    }

    static func describe(_ event: DomainEvent) -> String {
        switch event {
        case .added(let enforce, _, let pins):
            return
                "listed (\(enforce ? "enforce" : "report-only")) with \(pins.map(\.description).joined(separator: " "))"
        case .claimed(let enforce, _, let pins):
            return
                "claims (no verified version before it) \(enforce ? "enforce" : "report-only") with \(pins.map(\.description).joined(separator: " "))"
        case .removed: return "removed"
        case .pinAdded(let pin): return "+ \(pin)"
        case .pinRemoved(let pin): return "- \(pin)"
        case .enforceChanged(let value): return value ? "enforce" : "report-only"
        case .includeSubdomainsChanged(let value): return "includeSubdomains \(value)"
        case .pinRevoked(let pin): return "revoked \(pin)"
        case .revocationLifted(let pin): return "revocation lifted \(pin)"
        }
    }

    // MARK: manifests, roots, log

    static func manifests(_ report: AuditReport, _ page: inout HTMLWriter) {
        var runs: [(ManifestSummary, ManifestSummary)] = []
        for manifest in report.manifests {
            if let run = runs.last, run.1.version + 1 == manifest.version, run.0.rootVersion == manifest.rootVersion,
                run.0.signers == manifest.signers, run.0.failure == manifest.failure
            {
                runs[runs.count - 1].1 = manifest
            } else {
                runs.append((manifest, manifest))
            }
        }
        page.element("section", [("aria-labelledby", "manifests")]) { page in
            page.element("h2", [("id", "manifests")], "Manifests (\(report.manifests.count))")
            page.element("table") { table in
                table.element(
                    "caption", "Runs of versions with one root, one set of signers and one verdict (\(runs.count))")
                table.element("thead") { head in
                    head.element("tr") { row in
                        for title in ["Versions", "Root", "Issued", "Verdict", "Signed by (key ids)"] {
                            row.element("th", [("scope", "col")], title)
                        }
                    }
                }
                table.element("tbody") { body in
                    for (a, b) in runs.prefix(maxTableRows) {
                        body.element("tr", [("class", a.verified ? "ok" : "failing-row")]) { row in
                            row.element("td", a.version == b.version ? "\(a.version)" : "\(a.version)–\(b.version)")
                            row.element("td", a.rootVersion.map(String.init) ?? "?")
                            row.element(
                                "td",
                                (a.issuedAt?.description ?? "(unreadable)")
                                    + (a.version == b.version
                                        ? "" : " … " + (b.issuedAt?.description ?? "(unreadable)")))
                            row.element("td", a.failure.map { "FAILING [\($0.rawValue)]" } ?? "verified")
                            row.element(
                                "td",
                                a.signers.isEmpty ? "(no valid pins-role signature)" : a.signers.joined(separator: " "))
                        }
                    }
                }
            }
            if runs.count > maxTableRows {
                page.element(
                    "p", [("class", "cap")],
                    "\(runs.count - maxTableRows) more runs not shown: pinion audit lists them all.")
            }
            if !report.revocations.isEmpty {
                page.element("table") { table in
                    table.element("caption", "Revocations (\(report.revocations.count))")
                    table.element("tbody") { body in
                        for event in report.revocations.prefix(maxTableRows) {
                            body.element("tr") { row in
                                row.element("td", "v\(event.version)")
                                row.element("td", event.date.description)
                                row.element("td", event.lifted ? "lifted" : "revoked")
                                row.element("td", event.pin.description)
                            }
                        }
                    }
                }
            }
            if !report.gaps.isEmpty {
                page.element("p", "Spans with no unexpired manifest (clients kept expired data, fail-closed):")
                page.element("ul") { list in
                    for gap in report.gaps.prefix(maxTableRows) {
                        list.element(
                            "li",
                            "\(gap.from) to \(gap.until): after version \(gap.afterVersion) expired, "
                                + (gap.beforeVersion.map { "until version \($0) was issued" }
                                    ?? "still open at the audit time"))
                    }
                }
            }
        }
    }

    static func roots(_ report: AuditReport, _ page: inout HTMLWriter) {
        page.element("section", [("aria-labelledby", "roots")]) { page in
            page.element("h2", [("id", "roots")], "Roots and key changes (\(report.roots.count))")
            page.element("table") { table in
                table.element("caption", "Each root's roles, its signers, and the keys it changed from the root before")
                table.element("thead") { head in
                    head.element("tr") { row in
                        for title in [
                            "Root", "Issued", "Expires", "Root role", "Pins role", "Signed by", "Key changes",
                        ] {
                            row.element("th", [("scope", "col")], title)
                        }
                    }
                }
                table.element("tbody") { body in
                    var previous: RootSummary?
                    for root in report.roots.prefix(maxTableRows) {
                        body.element("tr") { row in
                            row.element("td", "\(root.version)")
                            row.element("td", root.issuedAt.description)
                            row.element("td", root.expiresAt.description)
                            row.element(
                                "td",
                                "\(root.rootRole.threshold) of \(root.rootRole.keyIDs.count): \(root.rootRole.keyIDs.joined(separator: " "))"
                            )
                            row.element(
                                "td",
                                "\(root.pinsRole.threshold) of \(root.pinsRole.keyIDs.count): \(root.pinsRole.keyIDs.joined(separator: " "))"
                            )
                            row.element(
                                "td",
                                root.signers.isEmpty
                                    ? "(no valid signature counted)" : root.signers.joined(separator: " "))
                            row.element("td", keyChanges(previous, root))
                        }
                        previous = root
                    }
                }
            }
        }
    }

    static func keyChanges(_ old: RootSummary?, _ new: RootSummary) -> String {
        guard let old else { return "first root" }
        var changes: [String] = []
        for (role, before, after) in [("root", old.rootRole, new.rootRole), ("pins", old.pinsRole, new.pinsRole)] {
            let added = after.keyIDs.filter { !before.keyIDs.contains($0) }
            let removed = before.keyIDs.filter { !after.keyIDs.contains($0) }
            if !added.isEmpty { changes.append("\(role) role + \(added.joined(separator: " "))") }
            if !removed.isEmpty { changes.append("\(role) role - \(removed.joined(separator: " "))") }
            if before.threshold != after.threshold {
                changes.append(
                    "\(role) threshold \(before.threshold) → \(after.threshold)"
                        + (after.threshold < before.threshold ? " (LOWERED)" : ""))
            }
        }
        return changes.isEmpty ? "no key change" : changes.joined(separator: "; ")
    }

    static func log(_ report: AuditReport, _ page: inout HTMLWriter) {
        page.element("section", [("aria-labelledby", "log")]) { page in
            page.element("h2", [("id", "log")], "Transparency log and witnesses")
            guard let log = report.log else {
                page.element("p", "The newest root has no log member: no transparency log was checked.")
                return
            }
            page.element("dl") { list in
                list.element("dt", "Origin")
                list.element("dd", log.origin)
                list.element("dt", "Checkpoint")
                list.element(
                    "dd",
                    log.checkpoint.map {
                        "size \($0.size), root \(Base64.encode($0.rootHash))"
                            + (log.checkpointVerified ? " (verified: log signature, quorum, tiles)" : " (NOT verified)")
                    } ?? "unreadable")
                list.element("dt", "Heads")
                list.element(
                    "dd",
                    "\(log.expectedHeads) recomputed from index.json, \(log.loggedEntries.map(String.init) ?? "?") in the log"
                )
                list.element("dt", "Cosigned by")
                list.element("dd", log.cosigners.isEmpty ? "no listed witness" : log.cosigners.joined(separator: " "))
                if let quorumTime = log.quorumTime {
                    list.element("dt", "Quorum time (t_q)")
                    list.element(
                        "dd",
                        "\(Timestamp(secondsSince1970: quorumTime)) (\(log.freshness?.parts.word ?? "unknown")"
                            + (log.freshness?.parts.age.map { ", age \($0) s" } ?? "") + ")")
                }
            }
            page.element("table") { table in
                table.element("caption", "Witnesses (\(log.witnesses.count))")
                table.element("thead") { head in
                    head.element("tr") { row in
                        for title in ["Name", "URL", "State", "Checkpoint size", "Detail"] {
                            row.element("th", [("scope", "col")], title)
                        }
                    }
                }
                table.element("tbody") { body in
                    for witness in log.witnesses.prefix(maxTableRows) {
                        body.element("tr") { row in
                            row.element("td", witness.name)
                            row.element("td", witness.url)
                            row.element("td", witness.state.code)
                            row.element("td", witness.state.size.map(String.init) ?? "-")
                            if case .unavailable(let reason) = witness.state {
                                row.element("td", reason)
                            } else {
                                row.element("td", "")
                            }
                        }
                    }
                }
            }
        }
    }

    static let style: StaticString = """
        body{font-family:sans-serif;margin:1.5em;color:#111;max-width:1100px}
        .verdict{border:3px solid;padding:.5em 1em;margin:1em 0}
        .verdict.pass{border-color:#1b6e20;background:#e8f5e9}
        .verdict.fail{border-color:#b00020;background:#fdecea}
        .verdict-word{font-size:1.4em;font-weight:bold}
        .finding{border-left:4px solid #888;padding-left:.8em;margin:1em 0}
        .detail,.follows,.cap{font-size:.9em}
        .cap{font-style:italic}
        table{border-collapse:collapse;margin:1em 0;font-size:.85em}
        th,td{border:1px solid #bbb;padding:.2em .4em;text-align:left;vertical-align:top;overflow-wrap:anywhere}
        caption{text-align:left;font-weight:bold;padding:.3em 0}
        tr.failing-row td{background:#fdecea}
        figure{margin:1em 0}
        svg text{font-size:11px;font-family:monospace}
        svg text.mark{font-weight:bold}
        code{font-family:monospace}
        dt{font-weight:bold}
        dd{margin:0 0 .4em 1.5em;overflow-wrap:anywhere}
        """
}
