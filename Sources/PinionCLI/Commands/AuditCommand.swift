// `pinion audit`: verify a whole published tree (a directory or its https URL) from
// public files, print the pin timeline and every violation (docs/DESIGN.md §10).

import Foundation
import PinionAudit
import PinionCore
import PinionCrypto
import PinionLinux
import PinionLog
import PinionSystem
import PinionTrust

struct AuditCommand: Command {
    static let path = ["audit"]
    static let summary = "verify a published tree's whole history; print the pin timeline"
    static let options: [OptionSpec] = [
        .value("root"), .flag("json"), .value("cafile"), .value("at"), .value("witness-ca"), .flag("no-witnesses"),
        .value("since"), .value("save-checkpoint"), .value("publish-grace"), .value("prometheus"),
        .value("html"),
    ]
    static let help = """
        usage: pinion audit --root ROOT_ENVELOPE TREE [--json] [--cafile F] [--at TIME]
                            [--witness-ca F | --no-witnesses] [--since CHECKPOINT] [--save-checkpoint F]
                            [--publish-grace D] [--prometheus FILE] [--html OUT.html]

        Audits the published tree of the root's scope: TREE is the directory given to
        pinion publish --repo, or its https URL (the server root a client is given).
        Trusting ROOT_ENVELOPE (it must carry a threshold of its own root role), it reads
        root/1.json ... (every rotation: both thresholds, consecutive versions, the given
        root published unchanged), index.json, every history/{version}.json and
        manifest.json, and checks: every manifest signed by the pins role of the root it
        names; rootVersion and issuedAt never going back; versions consecutive from the
        first; each previous equal to the SHA-256 of the prior payload; lifetimes within
        the root's cap; each history file's version equal to its name; index entries equal
        to the files; manifest.json byte-identical to the index's latest; no version with
        two payloads; no file changing between two reads. Signatures are verified over the
        raw payload bytes before the strict parse: a file changed after signing is named as
        such, and what its content breaks is listed under it. Warnings (exit 0): a lifted
        revocation, an invalid extra signature, a history file beyond the index that
        verifies (a publish that died mid-way).

        When the newest root has a log (docs/TRANSPARENCY.md), it also recomputes one head
        per index.json manifest from the documents and requires the log's entries to be
        exactly those heads, rechecks every tile against log/checkpoint, the log signature
        and a quorum of cosignatures, manifest.proof as a client verifies it, and fetches
        each witness's latest checkpoint (GET URL/ORIGIN_HASH/checkpoint): one the witness
        cosigned that the publisher's tiles do not extend is a split view. An unreachable
        witness, a witness ahead within the tiles (a pending publish) and a checkpoint past
        maxCheckpointAge are warnings.

        The report: roots and their keys, signers (key ids) of every version, each
        domain's timeline (pins added and removed, revocations, enforce / report-only and
        includeSubdomains changes, domains added and removed, at which version and date),
        the span the manifests cover and the gaps where no unexpired manifest existed, then
        every violation as FILE (version N): [rule] what was found, with a sentence saying
        what it means and what to do; versions that failed verification are marked FAILING
        and their timeline entries UNTRUSTED. When the tree's root of the given root's
        version differs, the first line asks whether the given root is the one your app
        embeds, and the findings that follow from it are grouped under it.

        options:
          --root F     the trusted root envelope (e.g. the root an app embeds)
          --json       the same facts as JSON on standard output
          --cafile F   PEM trust anchors for an https TREE (default: the system store)
          --at TIME    RFC 3339 time to judge expiry at (default: now)
          --witness-ca F         PEM trust anchors for the witnesses' TLS (default: the system store)
          --no-witnesses         do not contact the witnesses
          --since CHECKPOINT     a checkpoint note saved before: the log must extend it
          --save-checkpoint F    after a passing audit, write log/checkpoint's note to F
                                 (atomically), for the next --since: a cron job is a monitor
          --publish-grace D      a witness ahead of the published log by less than D (by its
                                 cosignature time) is a publish in progress (default 1h);
                                 older, and not the pending checkpoint of a TREE directory
                                 on the publisher host, it is log-unpublished-entries
          --prometheus FILE      also write Prometheus text-format gauges to FILE atomically
                                 (pinion_audit_level 0 ok, 1 warning, 2 critical)
          --html OUT.html        also write the report as one self-contained HTML page
                                 (atomically): verdict, findings by cause, a pin timeline
                                 per domain, roots, log and witnesses; no script, no fetch

        Exit 0 every rule holds (warnings allowed), 1 violations (all listed), 2 usage,
        3 I/O or network error. With --save-checkpoint (a monitor): 0 ok, 4 warnings only,
        1 critical (violations).

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let tree = try arguments.positional(["TREE"])[0]
        let rootPath = try arguments.required("root")
        let at =
            try arguments.value("at").map { (text) throws(CLIError) in try DurationText.time(text, option: "at") }
            ?? context.now()
        let anchorBytes = try Files.read(rootPath, limit: maxInputBytes)
        let anchor: RootChain
        do { anchor = try RootChain(anchor: anchorBytes, crypto: crypto) } catch {
            throw CLIError.from(error, file: rootPath)
        }
        let scope = anchor.newest.payload.scope
        let source = try makeSource(tree, scope: scope, caFile: arguments.value("cafile"))

        let showProgress = Terminal.standardErrorIsTerminal
        let progress: @Sendable (Int, Int) -> Void = { done, total in
            guard showProgress, total >= 500 else { return }
            let step = max(1, total / 100)
            guard done % step == 0 || done == total else { return }
            if done == total {
                context.err("\r" + String(repeating: " ", count: 60) + "\r")
            } else {
                let filled = done * 30 / total
                let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
                context.err("\raudit [\(bar)] \(done)/\(total) history files")
            }
        }
        if arguments.flag("no-witnesses"), arguments.value("witness-ca") != nil {
            throw CLIError.usage("--witness-ca and --no-witnesses exclude each other")
        }
        // A CA file that cannot be read would otherwise show only as unreachable witnesses.
        if let caFile = arguments.value("witness-ca") { try LogKeyOption.checkWitnessCA(caFile) }
        let witnesses: (any WitnessCheckpointSource)? =
            arguments.flag("no-witnesses")
            ? nil : HTTPSWitnessCheckpoints(caFile: arguments.value("witness-ca"), hasher: crypto.hasher)
        let since = try arguments.value("since").map { (path) throws(CLIError) in
            try Files.read(path, limit: NoteLimits.standard.maxBytes)
        }
        var options = AuditOptions(at: at, progress: progress, witnesses: witnesses, since: since)
        if let text = arguments.value("publish-grace") {
            options.publishGrace = text == "0" ? 0 : try DurationText.seconds(text, option: "publish-grace")
        }
        options.pendingCheckpoint = try pendingCheckpoint(tree, scope: scope)
        let prometheusPath = arguments.value("prometheus")
        if let prometheusPath { _ = try Files.existingRegularFileMode(prometheusPath) }
        let htmlPath = arguments.value("html")
        if let htmlPath { _ = try Files.existingRegularFileMode(htmlPath) }
        let report: AuditReport
        do {
            report = try Auditor.audit(anchor: anchor, source: source, crypto: crypto, options: options)
        } catch {
            throw CLIError.io(error.description)
        }
        if let prometheusPath {
            try Files.writeAtomically(
                Array(AuditMetrics.render(report).utf8), to: prometheusPath, replace: true, mode: 0o644)
        }
        if let htmlPath {
            try Files.writeAtomically(
                AuditHTML.render(report, hasher: crypto.hasher), to: htmlPath, replace: true, mode: 0o644)
        }
        if arguments.flag("json") {
            context.out(JSONWriter.terminalSafeText(report.json()))
        } else {
            for line in AuditText.lines(report) { context.print(TerminalText.escape(line)) }
        }
        if report.log == nil, arguments.value("since") != nil {
            throw CLIError.failure("--since: the newest root of scope \(report.scope) has no log")
        }
        if let path = arguments.value("save-checkpoint") {
            guard let log = report.log else {
                throw CLIError.failure("--save-checkpoint: the newest root of scope \(report.scope) has no log")
            }
            if report.passed, log.checkpointVerified, let note = log.checkpointNote {
                try Files.writeAtomically(note, to: path, replace: true)
            } else {
                context.warn("\(path) left unchanged: the audit did not pass")
            }
        }
        guard report.passed else {
            throw CLIError.failure(
                "audit of \(report.location) failed: \(report.violations.count) violation(s), listed \(arguments.flag("json") ? "in the JSON output" : "above")"
            )
        }
        if arguments.value("save-checkpoint") != nil, AuditMetrics.level(report) == .warning {
            throw CLIError(
                exitCode: AuditCommand.warningExit,
                "audit of \(report.location): \(report.warnings.count) warning(s), listed \(arguments.flag("json") ? "in the JSON output" : "above")"
            )
        }
    }

    /// A monitor's exit code for warnings only (as `pinion status`'s).
    static let warningExit: Int32 = 4

    /// The publisher's pending checkpoint note when TREE is a directory with
    /// `pending/{scope}/checkpoint` (the audit runs on the publisher host), else nil.
    static func pendingCheckpoint(_ tree: String, scope: String) throws(CLIError) -> [UInt8]? {
        guard !tree.contains("://") else { return nil }
        let path = tree + "/pending/" + scope + "/checkpoint"
        guard try Files.existingRegularFileMode(path) != nil else { return nil }
        return try Files.read(path, limit: NoteLimits.standard.maxBytes)
    }

    /// A directory source, or an HTTPS one for an https URL.
    static func makeSource(_ tree: String, scope: String, caFile: String?) throws(CLIError) -> any TreeSource {
        if tree.contains("://") {
            guard tree.lowercased().hasPrefix("https://"), let url = URL(string: tree), url.host != nil else {
                throw .usage("\(tree): TREE must be a directory or an https:// URL")
            }
            return HTTPSTreeSource(baseURL: url, scope: scope, configuration: .init(caFile: caFile))
        }
        if caFile != nil { throw .usage("--cafile applies only to an https:// TREE") }
        let source = DirectoryTreeSource(repo: tree, scope: scope)
        do { try source.checkExists() } catch {
            if error.isTreeProperty { throw .failure(error.description) }
            throw .io(error.description)
        }
        return source
    }
}

/// The audit report as text for people.
enum AuditText {
    static func lines(_ report: AuditReport) -> [String] {
        var lines: [String] = []
        if let version = report.givenRootDiffers {
            lines.append(
                "the tree's root \(version) differs from the root you gave: is this the root your app embeds?")
        }
        lines.append("audit       scope \(report.scope), given root version \(report.anchorVersion), at \(report.at)")
        lines.append("tree        \(report.location)")
        lines += rootLines(report)
        lines += manifestLines(report)
        lines += timelineLines(report)
        lines += expiryLines(report)
        lines += report.log?.lines ?? []
        if !report.warnings.isEmpty {
            lines.append("")
            lines.append("warnings (\(report.warnings.count))")
            for warning in report.warnings {
                let mark = warning.followsFrom.map { "  " + followsText($0, report) } ?? ""
                lines.append("  " + warning.description + mark)
                lines.append("      " + warning.advice)
            }
        }
        lines += violationLines(report)
        lines.append("")
        if report.passed {
            lines.append("result      PASS: every rule holds (\(report.warnings.count) warning(s))")
        } else {
            lines.append(
                "result      FAIL: \(report.violations.count) violation(s), \(report.warnings.count) warning(s)")
        }
        return lines
    }

    static func pad(_ text: String, _ width: Int) -> String { ManifestShowCommand.pad(text, width) }

    /// Why a finding is secondary, in words.
    static func followsText(_ cause: FindingCause, _ report: AuditReport) -> String {
        switch cause {
        case .unverifiedContent:
            return "(about content whose signature does not verify: follows from the signature finding)"
        case .givenRoot:
            return
                "(follows from the root you gave: it does not occur with the tree's own root \(report.givenRootDiffers.map(String.init) ?? ""))"
        }
    }

    /// Violations, causes first: each followed by its advice and by the findings that follow
    /// from it (`AuditFinding.groups`), indented under it and marked.
    static func violationLines(_ report: AuditReport) -> [String] {
        let findings = report.violations
        guard !findings.isEmpty else { return [] }
        var lines = ["", "violations (\(findings.count))"]
        for group in AuditFinding.groups(findings) {
            guard let cause = group.cause else {
                for finding in group.followers {
                    lines.append(
                        "  " + finding.description + "  " + followsText(finding.followsFrom ?? .givenRoot, report))
                    lines.append("      " + finding.advice)
                }
                continue
            }
            lines.append("  " + cause.description)
            lines.append("      " + cause.advice)
            guard let kind = group.followers.first?.followsFrom else { continue }
            lines.append("    " + followsText(kind, report) + ":")
            for follower in group.followers {
                lines.append("      " + follower.description)
                lines.append("          " + follower.advice)
            }
        }
        return lines
    }

    static func rootLines(_ report: AuditReport) -> [String] {
        var lines = ["", "roots (\(report.roots.count))"]
        for root in report.roots {
            let changed = root.pinsRoleChanged ? "  (pins role changed)" : ""
            lines.append(
                "  root \(root.version)  issued \(root.issuedAt)  expires \(root.expiresAt)  manifest lifetime cap \(ManifestShowCommand.duration(root.maxManifestLifetime))\(changed)"
            )
            lines.append(
                "    root role \(root.rootRole.threshold) of \(root.rootRole.keyIDs.count): \(root.rootRole.keyIDs.joined(separator: " "))"
            )
            lines.append(
                "    pins role \(root.pinsRole.threshold) of \(root.pinsRole.keyIDs.count): \(root.pinsRole.keyIDs.joined(separator: " "))"
            )
            lines.append(
                "    signed by \(root.signers.isEmpty ? "(no valid signature counted)" : root.signers.joined(separator: " "))"
            )
        }
        return lines
    }

    /// Manifests grouped into runs of consecutive versions with one root and one set of signers.
    static func manifestLines(_ report: AuditReport) -> [String] {
        let manifests = report.manifests
        guard let first = manifests.first, let last = manifests.last else {
            return ["", "manifests (0)"]
        }
        let holder = report.manifestJSONVersion.map { "; manifest.json holds version \($0)" } ?? ""
        let failing = manifests.filter { !$0.verified }.count
        let failingText = failing == 0 ? "" : ", \(failing) FAILING verification"
        var lines = [
            "", "manifests (\(manifests.count), versions \(first.version)...\(last.version)\(failingText)\(holder))",
        ]
        lines.append("  " + pad("VERSIONS", 14) + pad("ROOT", 6) + pad("ISSUED (FIRST ... LAST)", 47) + "SIGNED BY")
        var start = 0
        for position in manifests.indices {
            let next = position + 1
            let runEnds =
                next == manifests.count || manifests[next].version != manifests[position].version + 1
                || manifests[next].rootVersion != manifests[start].rootVersion
                || manifests[next].signers != manifests[start].signers
                || manifests[next].failure != manifests[start].failure
            guard runEnds else { continue }
            let a = manifests[start]
            let b = manifests[position]
            let versions = a.version == b.version ? "\(a.version)" : "\(a.version)-\(b.version)"
            let first = a.issuedAt?.description ?? "(unreadable)"
            let dates = a.version == b.version ? first : "\(first) ... \(b.issuedAt?.description ?? "(unreadable)")"
            var signers = a.signers.isEmpty ? "(no valid pins-role signature)" : a.signers.joined(separator: " ")
            if let failure = a.failure { signers = "FAILING [\(failure.rawValue)] " + signers }
            lines.append(
                "  " + pad(versions, 14) + pad(a.rootVersion.map(String.init) ?? "?", 6) + pad(dates, 47) + signers)
            start = next
        }
        return lines
    }

    static func describe(_ event: DomainEvent) -> String {
        switch event {
        case .added(let enforce, let includeSubdomains, let pins):
            return
                "added (\(enforce ? "enforce" : "report-only"), includeSubdomains \(includeSubdomains)): \(pins.map(\.description).joined(separator: " "))"
        case .claimed(let enforce, let includeSubdomains, let pins):
            return
                "claims, with no verified version before it to compare (\(enforce ? "enforce" : "report-only"), includeSubdomains \(includeSubdomains)): \(pins.map(\.description).joined(separator: " "))"
        case .removed: return "removed"
        case .pinAdded(let pin): return "+ pin \(pin)"
        case .pinRemoved(let pin): return "- pin \(pin)"
        case .enforceChanged(let value): return value ? "enforce (was report-only)" : "report-only (was enforce)"
        case .includeSubdomainsChanged(let value): return "includeSubdomains \(value)"
        case .pinRevoked(let pin): return "revoked \(pin)"
        case .revocationLifted(let pin): return "revocation lifted \(pin)"
        }
    }

    static func timelineLines(_ report: AuditReport) -> [String] {
        var lines = ["", "pin timeline (\(report.domains.count) domain(s))"]
        for timeline in report.domains {
            lines.append("  \(timeline.name)")
            for entry in timeline.entries {
                let untrusted = entry.trusted ? "" : "UNTRUSTED (v\(entry.version) failed verification) "
                lines.append(
                    "    " + pad("v\(entry.version)", 8) + pad(entry.date.description, 22) + untrusted
                        + describe(entry.event))
            }
        }
        if !report.revocations.isEmpty {
            lines.append("")
            lines.append("revocations")
            for event in report.revocations {
                lines.append(
                    "  " + pad("v\(event.version)", 8) + pad(event.date.description, 22)
                        + (event.lifted ? "lifted  " : "revoked ") + event.pin.description)
            }
        }
        return lines
    }

    static func expiryLines(_ report: AuditReport) -> [String] {
        guard let coverage = report.coverage else { return [] }
        var lines = ["", "expiry      manifests cover \(coverage.from) ... \(coverage.until)"]
        if report.gaps.isEmpty {
            lines.append("            no gap: an unexpired manifest existed at every time from the first on")
        } else {
            lines.append("            gaps with no unexpired manifest (clients kept expired data, fail-closed):")
            for gap in report.gaps {
                let end =
                    gap.beforeVersion.map { "until version \($0) was issued" }
                    ?? "still open at the audit time"
                lines.append(
                    "              \(gap.from) ... \(gap.until)  (\(ManifestShowCommand.duration(gap.seconds)))  after version \(gap.afterVersion) expired, \(end)"
                )
            }
        }
        return lines
    }
}
