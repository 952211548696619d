// `pinion status` results for machines: JSON (values, never prose) and the Prometheus text
// exposition format 0.0.4 for a node exporter's textfile collector.

import PinionCore
import PinionSystem
import PinionTrust

extension PublisherStatus {
    /// The status as JSON: numbers, RFC 3339 UTC times, enum strings and key ids; null for
    /// what is unknown (no manifest verified, no HTTP headers from a directory).
    ///
    /// Members: `scope`, `location`, `at`, `warnBefore` (s), `expectVersion`, `anchorVersion`,
    /// `health` (healthy | warning | broken | unreachable), `exitCode`, `root` {`version`,
    /// `issuedAt`, `expiresAt`, `secondsLeft`, `maxManifestLifetime`}, `manifest` {`version`,
    /// `rootVersion`, `issuedAt`, `expiresAt`, `secondsLeft`, `signers`, `payloadSHA256`,
    /// `domains`}, `narrowsAt`, `secondsUntilNarrowing`, `publisher` {`etag`, `cacheControl`},
    /// `problems` [{`code`, `file`}], and `log` (null without a verified manifest.proof)
    /// {`origin`, `size`, `rootHash` (base64), `quorumTime` (POSIX s), `quorumTimeAt`,
    /// `checkpointAge` (s), `maxCheckpointAge`, `checkpointGrace`, `cosigners`}.
    public func json() -> JSONValue {
        func number(_ value: Int64) -> JSONValue { .number(String(value)) }
        func time(_ value: Timestamp) -> JSONValue { .string(value.description) }
        func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        let rootValue: JSONValue =
            root.map { root in
                .object(
                    JSONObject([
                        .init("version", number(root.version)), .init("issuedAt", time(root.issuedAt)),
                        .init("expiresAt", time(root.expiresAt)), .init("secondsLeft", number(root.secondsLeft)),
                        .init("maxManifestLifetime", number(root.maxManifestLifetime)),
                    ]))
            } ?? .null
        let manifestValue: JSONValue =
            manifest.map { manifest in
                .object(
                    JSONObject([
                        .init("version", number(manifest.version)), .init("rootVersion", number(manifest.rootVersion)),
                        .init("issuedAt", time(manifest.issuedAt)), .init("expiresAt", time(manifest.expiresAt)),
                        .init("secondsLeft", number(manifest.secondsLeft)),
                        .init("signers", .array(manifest.signers.map { .string($0) })),
                        .init("payloadSHA256", .string("sha256:" + Hex.encode(manifest.payloadSHA256))),
                        .init("domains", number(Int64(manifest.domainCount))),
                    ]))
            } ?? .null
        let publisherValue: JSONValue =
            headers.map { headers in
                .object(
                    JSONObject([.init("etag", text(headers.etag)), .init("cacheControl", text(headers.cacheControl))]))
            } ?? .null
        let logValue: JSONValue =
            log.map { log in
                .object(
                    JSONObject([
                        .init("origin", .string(log.origin)), .init("size", .number(String(log.size))),
                        .init("rootHash", .string(Base64.encode(log.rootHash))),
                        .init("quorumTime", number(log.quorumTime)),
                        .init("quorumTimeAt", time(Timestamp(secondsSince1970: log.quorumTime))),
                        .init("checkpointAge", number(log.age)),
                        .init("maxCheckpointAge", number(log.maxCheckpointAge)),
                        .init("checkpointGrace", number(log.checkpointGrace)),
                        .init("cosigners", .array(log.cosigners.map { .string($0) })),
                    ]))
            } ?? .null
        let problemValues: [JSONValue] = problems.map { problem in
            .object(JSONObject([.init("code", .string(problem.code)), .init("file", text(problem.file))]))
        }
        return .object(
            JSONObject([
                .init("scope", .string(scope)), .init("location", .string(location)), .init("at", time(options.at)),
                .init("warnBefore", number(options.warnBefore)),
                .init("expectVersion", options.expectVersion.map(number) ?? .null),
                .init("anchorVersion", number(anchorVersion)), .init("health", .string(health.rawValue)),
                .init("exitCode", number(Int64(health.exitCode))), .init("root", rootValue),
                .init("manifest", manifestValue), .init("narrowsAt", narrowsAt.map(time) ?? .null),
                .init(
                    "secondsUntilNarrowing",
                    narrowsAt.map { number($0.secondsSince1970 - options.at.secondsSince1970) } ?? .null),
                .init("publisher", publisherValue), .init("problems", .array(problemValues)),
                .init("log", logValue),
            ]))
    }
}

/// The Prometheus text of a status check, and the last success read back from a previous
/// file so that an unreachable publisher does not reset it.
public enum StatusMetrics {
    /// Name of the last-success gauge (seconds since the Unix epoch).
    public static let lastSuccessName = "pinion_status_last_success_timestamp_seconds"

    /// Renders the gauges of `status`, each family with `# HELP` and `# TYPE`, one
    /// `scope` label, ending with a newline.
    ///
    /// Families: `pinion_status_healthy` (1 when clients are not narrowing: health healthy
    /// or warning), `pinion_status_warning` (1 when something expires within the window),
    /// `pinion_status_up` (0 when unreachable), `pinion_status_exit_code`,
    /// `pinion_status_last_run_timestamp_seconds`, `pinion_status_last_success_timestamp_seconds`
    /// (the check time when healthy or warning, else `previousSuccess`; omitted when never),
    /// and when known `pinion_status_root_version`, `pinion_status_root_expires_at_seconds`,
    /// `pinion_status_manifest_version`, `pinion_status_manifest_expires_at_seconds`, and with a
    /// log `pinion_status_checkpoint_size`, `pinion_status_checkpoint_quorum_time_seconds` (t_q)
    /// and `pinion_status_checkpoint_age_seconds`.
    ///
    /// - Parameters:
    ///   - status: the check's findings.
    ///   - previousSuccess: the last success of the file being replaced, in seconds.
    public static func render(_ status: PublisherStatus, previousSuccess: Int64?) -> String {
        var out = ExpositionWriter()
        func gauge(_ name: String, _ help: String, _ value: Int64?) {
            guard let value else { return }
            out.family(name, .gauge, help: help)
            out.sample(name, [("scope", status.scope)], String(value))
        }
        let health = status.health
        let succeeded = health == .healthy || health == .warning
        gauge(
            "pinion_status_healthy", "1 when what the publisher serves verifies and is current (clients not narrowing)",
            succeeded ? 1 : 0)
        gauge(
            "pinion_status_warning", "1 when the newest root or the manifest expires within --warn-before",
            health == .warning ? 1 : 0)
        gauge("pinion_status_up", "0 when the publisher or tree could not be read", health == .unreachable ? 0 : 1)
        gauge(
            "pinion_status_exit_code", "exit code of the last pinion status run (0, 1, 3 or 4)",
            Int64(health.exitCode))
        gauge(
            "pinion_status_last_run_timestamp_seconds", "time of the last pinion status run, Unix seconds",
            status.options.at.secondsSince1970)
        gauge(
            lastSuccessName, "time of the last run that found the publisher healthy or warning, Unix seconds",
            succeeded ? status.options.at.secondsSince1970 : previousSuccess)
        gauge("pinion_status_root_version", "version of the newest verified root", status.root?.version)
        gauge(
            "pinion_status_root_expires_at_seconds", "expiresAt of the newest verified root, Unix seconds",
            status.root?.expiresAt.secondsSince1970)
        gauge("pinion_status_manifest_version", "version of the served manifest", status.manifest?.version)
        gauge(
            "pinion_status_manifest_expires_at_seconds", "expiresAt of the served manifest, Unix seconds",
            status.manifest?.expiresAt.secondsSince1970)
        gauge(
            "pinion_status_checkpoint_size", "tree size of the log checkpoint in manifest.proof",
            status.log.map { Int64(clamping: $0.size) })
        gauge(
            "pinion_status_checkpoint_quorum_time_seconds",
            "t_q, the quorum-th newest witness cosignature time of the checkpoint, Unix seconds", status.log?.quorumTime
        )
        gauge(
            "pinion_status_checkpoint_age_seconds",
            "seconds between t_q and the run (clients go stale past maxCheckpointAge)",
            status.log?.age)
        return out.text
    }

    /// The last-success value for `scope` in a file written by `render`, or nil when the
    /// text holds none (or is not such a file: anything unparsable counts as no success).
    public static func lastSuccess(in text: String, scope: String) -> Int64? {
        let prefix = lastSuccessName + ExpositionWriter.labelSet([("scope", scope)]) + " "
        for line in text.split(separator: "\n") where line.hasPrefix(prefix) {
            guard let value = Int64(line.dropFirst(prefix.count)), value >= 0 else { return nil }
            return value
        }
        return nil
    }
}
