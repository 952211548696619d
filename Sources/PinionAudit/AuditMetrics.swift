// The audit's result as Prometheus text-format gauges, for a monitor run from cron (a node
// exporter's textfile collector reads the file).

import PinionCore
import PinionSystem

/// The monitor's verdict on one audit, and its gauges (Prometheus text exposition format
/// 0.0.4). `pinion audit --save-checkpoint` exits 0, 4 or 1 for ok, warning and critical.
public enum AuditMetrics {
    /// ok: every rule holds, no warning; warning: warnings only; critical: a violation.
    public enum Level: Int, Sendable {
        case ok = 0
        case warning = 1
        case critical = 2
    }

    /// The level of a report.
    public static func level(_ report: AuditReport) -> Level {
        if !report.violations.isEmpty { return .critical }
        return report.warnings.isEmpty ? .ok : .warning
    }

    /// The gauges of `report`, one sample each labelled with the scope.
    ///
    /// - Returns: the file's text: `pinion_audit_level`, `pinion_audit_violations`,
    ///   `pinion_audit_warnings`, one `pinion_audit_findings` per rule found,
    ///   `pinion_audit_log_size` when the log was read, `pinion_audit_timestamp_seconds`.
    public static func render(_ report: AuditReport) -> String {
        let scope = ("scope", report.scope)
        var out = ExpositionWriter()
        func gauge(_ name: String, _ help: String, _ samples: [(labels: [(String, String)], value: String)]) {
            out.family(name, .gauge, help: help)
            for sample in samples { out.sample(name, sample.labels, sample.value) }
        }
        gauge(
            "pinion_audit_level", "Result of the last audit: 0 ok, 1 warning, 2 critical.",
            [([scope], String(level(report).rawValue))])
        gauge(
            "pinion_audit_violations", "Violations found by the last audit.",
            [([scope], String(report.violations.count))]
        )
        gauge("pinion_audit_warnings", "Warnings found by the last audit.", [([scope], String(report.warnings.count))])
        var counts: [String: Int] = [:]
        for finding in report.violations + report.warnings { counts[finding.rule.rawValue, default: 0] += 1 }
        gauge(
            "pinion_audit_findings", "Findings of the last audit by rule.",
            counts.keys.sorted().map { ([scope, ("rule", $0)], String(counts[$0] ?? 0)) })
        if let size = report.log?.checkpoint?.size {
            gauge("pinion_audit_log_size", "Tree size of the published log checkpoint.", [([scope], String(size))])
        }
        gauge(
            "pinion_audit_timestamp_seconds", "Time the last audit judged at, POSIX seconds.",
            [([scope], String(report.at.secondsSince1970))])
        return out.text
    }
}
