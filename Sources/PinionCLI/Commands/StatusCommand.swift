// `pinion status`: check a live publisher (or a tree) as a client would and say how long
// until clients start narrowing; exit 0/1/3/4, JSON and Prometheus output (docs/DESIGN.md §14).

import Foundation
import PinionAudit
import PinionCore
import PinionSystem
import PinionTrust

extension ExitCode {
    /// `pinion status` only: something expires within `--warn-before` (docs/DESIGN.md §11).
    public static let warning: Int32 = 4
}

struct StatusCommand: Command {
    static let path = ["status"]
    static let summary = "check a publisher as a client would; time left before clients narrow"
    static let options: [OptionSpec] = [
        .value("root"), .value("warn-before"), .value("expect-version"), .flag("json"), .value("prometheus"),
        .value("at"), .value("cafile"), .value("warn-checkpoint-age"),
    ]
    static let help = """
        usage: pinion status --root ROOT_ENVELOPE (URL | TREE) [--warn-before 7d]
                             [--expect-version N] [--json] [--prometheus FILE] [--at TIME] [--cafile F]
                             [--warn-checkpoint-age D]

        Checks what the publisher of the root's scope serves, as a client refresh would:
        root/{n+1}.json from the given root on until one is absent (each rotation
        verified), then manifest.json verified under the newest root. TREE is the
        directory given to pinion publish --repo; URL is its https:// server root (the
        base URL a client is given). Prints the newest root and its expiry, the manifest's
        version, signers (key ids) and expiry, the time left for each before clients start
        narrowing (falling back to their baseline pins), and over HTTPS the ETag and
        Cache-Control of manifest.json. Nothing is stored: there is no floor.

        When the newest root has a log, manifest.proof is verified as a client verifies it
        (log signature, quorum of cosignatures, the last entry naming the served manifest
        and newest root) and the checkpoint's size, t_q (the quorum-th newest cosignature
        time) and age are shown. A refused proof, or t_q past maxCheckpointAge +
        checkpointGrace, is broken; t_q past maxCheckpointAge or --warn-checkpoint-age is a
        warning.

        An upload in progress (docs/PUBLISHING.md "Upload plans") is a warning named
        publish-in-progress, not broken: manifest.proof or log/checkpoint naming a later
        manifest than manifest.json, or manifest.json signed under the root right after the
        newest served. Clients keep their state meanwhile.

        options:
          --root F             the trusted root envelope (e.g. the root an app embeds)
          --warn-before D      warn when an expiry is within D (default 7d)
          --expect-version N   the manifest version the signers published; a publisher
                               serving an older one is broken (exit 1)
          --json               the same facts as JSON on standard output
          --prometheus FILE    also write Prometheus text-format gauges to FILE atomically
                               (for a node exporter's textfile collector); an unreachable
                               publisher keeps the file's last success time
          --at TIME            RFC 3339 time to judge expiry at (default: now)
          --cafile F           PEM trust anchors for an https URL (default: the system store)
          --warn-checkpoint-age D
                               warn when the log checkpoint's t_q is older than D (e.g. 12h)

        Exit 0 healthy, 1 broken now (invalid, missing, expired, or lagging behind
        --expect-version), 2 usage, 3 unreachable (network, TLS, HTTP status, an unreadable
        tree or FILE), 4 warning (an expiry within --warn-before, a stale or aging checkpoint).

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let tree = try arguments.positional(["URL or TREE"])[0]
        let rootPath = try arguments.required("root")
        let at =
            try arguments.value("at").map { (text) throws(CLIError) in try DurationText.time(text, option: "at") }
            ?? context.now()
        let warnBefore =
            try arguments.value("warn-before").map { (text) throws(CLIError) in
                try DurationText.seconds(text, option: "warn-before")
            } ?? 7 * 86_400
        let expectVersion = try arguments.integer("expect-version", in: 1...Limits.maxInteger)
        let warnCheckpointAge = try arguments.value("warn-checkpoint-age").map { (text) throws(CLIError) in
            try DurationText.seconds(text, option: "warn-checkpoint-age")
        }
        let prometheusPath = arguments.value("prometheus")
        // Refuse a FIFO, directory or link before any network traffic.
        if let prometheusPath { _ = try Files.existingRegularFileMode(prometheusPath) }

        let anchorBytes = try Files.read(rootPath, limit: maxInputBytes)
        let anchor: RootChain
        do { anchor = try RootChain(anchor: anchorBytes, crypto: crypto) } catch {
            // The operator's input, not the publisher's state: never reported as "broken".
            let plain = CLIError.document(error, file: rootPath, bytes: anchorBytes, expected: "a root envelope")
            throw CLIError.usage("--root \(plain.message)")
        }
        let scope = anchor.newest.payload.scope
        // A directory is not checked up front: a missing or unreadable tree is a finding
        // (unreachable, exit 3) that still updates the --prometheus file.
        let source: any TreeSource
        if tree.contains("://") {
            source = try AuditCommand.makeSource(tree, scope: scope, caFile: arguments.value("cafile"))
        } else {
            if arguments.value("cafile") != nil { throw CLIError.usage("--cafile applies only to an https:// URL") }
            source = DirectoryTreeSource(repo: tree, scope: scope)
        }
        let status = PublisherStatusCheck.check(
            anchor: anchor, source: source, crypto: crypto,
            options: StatusOptions(
                at: at, warnBefore: warnBefore, expectVersion: expectVersion, warnCheckpointAge: warnCheckpointAge))

        if arguments.flag("json") {
            context.out(JSONWriter.terminalSafeText(status.json()))
        } else {
            for line in StatusText.lines(status) { context.print(TerminalText.escape(line)) }
        }
        // After the report, so that a metrics file that cannot be written (exit 3) still
        // leaves the findings on standard output.
        if let prometheusPath { try writeMetrics(status, to: prometheusPath) }
        let health = status.health
        guard health != .healthy else { return }
        let findings = status.problems.filter { $0.health == health }.map(\.description)
        throw CLIError(exitCode: health.exitCode, "status of \(status.location): \(findings.joined(separator: "; "))")
    }

    /// Writes the gauges atomically, keeping the replaced file's last success time.
    static func writeMetrics(_ status: PublisherStatus, to path: String) throws(CLIError) {
        var previous: Int64?
        if try Files.existingRegularFileMode(path) != nil {
            let bytes = try Files.read(path, limit: 1024 * 1024)
            previous = StatusMetrics.lastSuccess(in: String(decoding: bytes, as: UTF8.self), scope: status.scope)
        }
        let text = StatusMetrics.render(status, previousSuccess: previous)
        try Files.writeAtomically(Array(text.utf8), to: path, replace: true, mode: 0o644)
    }
}

/// The status as text for people.
enum StatusText {
    static func left(_ seconds: Int64) -> String {
        if seconds <= 0 { return "expired \(span(-seconds)) ago" }
        return span(seconds) + " left"
    }

    /// A span as days, hours and minutes (`29d 4h`, `3h 12m`, `45s`).
    static func span(_ seconds: Int64) -> String {
        let days = seconds / 86_400
        let hours = seconds % 86_400 / 3600
        let minutes = seconds % 3600 / 60
        if days > 0 { return hours > 0 ? "\(days)d \(hours)h" : "\(days)d" }
        if hours > 0 { return minutes > 0 ? "\(hours)h \(minutes)m" : "\(hours)h" }
        if minutes > 0 { return "\(minutes)m" }
        return "\(seconds)s"
    }

    static func lines(_ status: PublisherStatus) -> [String] {
        var lines: [String] = []
        lines.append(
            "status      scope \(status.scope), given root version \(status.anchorVersion), at \(status.options.at), warn before \(span(status.options.warnBefore))"
        )
        lines.append("publisher   \(status.location)")
        if let root = status.root {
            lines.append(
                "root        version \(root.version), expires \(root.expiresAt) (\(left(root.secondsLeft))), manifest lifetime cap \(span(root.maxManifestLifetime))"
            )
        }
        if let manifest = status.manifest {
            lines.append(
                "manifest    version \(manifest.version) (root \(manifest.rootVersion)), issued \(manifest.issuedAt), expires \(manifest.expiresAt) (\(left(manifest.secondsLeft))), \(manifest.domainCount) domain(s)"
            )
            lines.append("signers     \(manifest.signers.joined(separator: " "))")
        } else {
            lines.append("manifest    none verified")
        }
        if let narrowsAt = status.narrowsAt {
            let seconds = narrowsAt.secondsSince1970 - status.options.at.secondsSince1970
            lines.append(
                seconds > 0
                    ? "narrowing   clients start narrowing at \(narrowsAt), in \(span(seconds))"
                    : "narrowing   clients have been narrowing since \(narrowsAt)")
        }
        if let log = status.log {
            lines.append(
                "log         checkpoint size \(log.size) of \(log.origin), cosigned by \(log.cosigners.joined(separator: " "))"
            )
            lines.append(
                "checkpoint  t_q \(Timestamp(secondsSince1970: log.quorumTime)), age \(span(log.age))\(log.maxCheckpointAge > 0 ? " (stale after \(span(log.maxCheckpointAge)))" : " (freshness off)")"
            )
        }
        if let headers = status.headers {
            lines.append("etag        \(headers.etag ?? "(none)")")
            lines.append("cache       \(headers.cacheControl ?? "(no Cache-Control)")")
        }
        if !status.problems.isEmpty {
            lines.append("")
            lines.append("problems (\(status.problems.count))")
            lines += status.problems.map { "  \($0.health.rawValue): \($0)" }
        }
        lines.append("")
        lines.append("result      \(status.health.rawValue.uppercased()) (exit \(status.health.exitCode))")
        return lines
    }
}
