// `pinion serve`'s /metrics: what one scrape shows, in the Prometheus text exposition format
// written by PinionSystem's ExpositionWriter.

import Foundation
import PinionCore
import PinionSystem

/// Everything one scrape shows, gathered at one moment.
struct MetricsSnapshot {
    let metrics: ServerMetrics
    let openConnections: Int
    let connectionCap: Int
    let scopes: [ScopeStatus]
    let health: HealthVerdict
    let reportsEnabled: Bool
    let reportQueueCapacity: Int

    /// The exposition text.
    func render() -> String {
        var out = ExpositionWriter()
        out.family("pinion_http_requests_total", .counter, help: "HTTPS responses sent, by path class and status code.")
        for pathClass in RequestPathClass.allCases {
            for code in WorkerMetrics.statusCodes {
                out.sample(
                    "pinion_http_requests_total", [("path_class", pathClass.label), ("code", String(code))],
                    String(metrics.responses(pathClass, status: code)))
            }
            out.sample(
                "pinion_http_requests_total", [("path_class", pathClass.label), ("code", "other")],
                String(metrics.responses(pathClass, status: 0)))
        }
        out.family("pinion_http_response_body_bytes_total", .counter, help: "Response body bytes sent over HTTPS.")
        out.sample("pinion_http_response_body_bytes_total", String(metrics.sum(\.bodyBytes)))
        out.family("pinion_open_connections", .gauge, help: "HTTPS connections open now.")
        out.sample("pinion_open_connections", String(openConnections))
        out.family("pinion_connection_cap", .gauge, help: "Most HTTPS connections open at once.")
        out.sample("pinion_connection_cap", String(connectionCap))
        out.family(
            "pinion_connection_cap_refusals_total", .counter,
            help: "Connections closed at accept because the connection cap was reached.")
        out.sample("pinion_connection_cap_refusals_total", String(metrics.sum(\.capRefusals)))
        out.family("pinion_tls_handshakes_total", .counter, help: "TLS handshakes completed.")
        out.sample("pinion_tls_handshakes_total", String(metrics.sum(\.handshakes)))
        out.family("pinion_tls_handshake_failures_total", .counter, help: "TLS handshakes that failed or timed out.")
        out.sample("pinion_tls_handshake_failures_total", String(metrics.sum(\.handshakeFailures)))
        out.family(
            "pinion_reloads_total", .counter, help: "SIGHUP reloads of the certificate and key, by result.")
        out.sample("pinion_reloads_total", [("result", "success")], String(metrics.reloadSuccesses.value))
        out.sample("pinion_reloads_total", [("result", "failure")], String(metrics.reloadFailures.value))
        renderScopes(&out)
        out.family(
            "pinion_manifest_polls_total", .counter,
            help:
                "GETs of manifest.json answered 200 or 304, by scope and the manifest version the poll token says the client holds: a version, 0 (none held), other, invalid (another query), none (no query)."
        )
        for series in metrics.polls.snapshot() {
            out.sample(
                "pinion_manifest_polls_total", [("scope", series.scope), ("have", series.have)], String(series.count))
        }
        out.family("pinion_healthy", .gauge, help: "1 while no served manifest or newest root has expired, else 0.")
        out.sample("pinion_healthy", health.isHealthy ? "1" : "0")
        if reportsEnabled { renderReports(&out) }
        return out.text
    }

    private func renderScopes(_ out: inout ExpositionWriter) {
        let withManifest = scopes.compactMap { scope in scope.manifest.map { (scope.scope, $0) } }
        let withRoot = scopes.compactMap { scope in scope.root.map { (scope.scope, $0) } }
        out.family("pinion_manifest_version", .gauge, help: "Version of the served manifest.json, per scope.")
        for (scope, manifest) in withManifest {
            out.sample("pinion_manifest_version", [("scope", scope)], String(manifest.version))
        }
        out.family(
            "pinion_manifest_expires_at_seconds", .gauge,
            help: "expiresAt of the served manifest, in seconds since the Unix epoch, per scope.")
        for (scope, manifest) in withManifest {
            out.sample(
                "pinion_manifest_expires_at_seconds", [("scope", scope)], String(manifest.expiresAt.secondsSince1970))
        }
        out.family("pinion_root_version", .gauge, help: "Version of the newest root, per scope.")
        for (scope, root) in withRoot { out.sample("pinion_root_version", [("scope", scope)], String(root.version)) }
        out.family(
            "pinion_root_expires_at_seconds", .gauge,
            help: "expiresAt of the newest root, in seconds since the Unix epoch, per scope.")
        for (scope, root) in withRoot {
            out.sample("pinion_root_expires_at_seconds", [("scope", scope)], String(root.expiresAt.secondsSince1970))
        }
        out.family(
            "pinion_tree_unreadable_files", .gauge, help: "Files of the tree that cannot be read or decoded, per scope."
        )
        for scope in scopes {
            out.sample("pinion_tree_unreadable_files", [("scope", scope.scope)], String(scope.unreadable.count))
        }
    }

    private func renderReports(_ out: inout ExpositionWriter) {
        out.family(
            "pinion_reports_accepted_total", .counter, help: "Pin-failure reports accepted into the write queue.")
        out.sample("pinion_reports_accepted_total", String(metrics.reportsAccepted.value))
        out.family(
            "pinion_reports_received_total", .counter,
            help: "Pin-failure reports committed, by result (new row or repeat of a stored one).")
        out.sample("pinion_reports_received_total", [("result", "stored")], String(metrics.reportsStored.value))
        out.sample("pinion_reports_received_total", [("result", "repeated")], String(metrics.reportsRepeated.value))
        out.family(
            "pinion_reports_evicted_total", .counter,
            help: "Pin-failure report rows evicted at the size cap (their per-key daily counts are kept).")
        out.sample("pinion_reports_evicted_total", String(metrics.reportsEvicted.value))
        out.family("pinion_reports_refused_total", .counter, help: "Pin-failure reports refused, by reason.")
        for reason in ReportRefusal.allCases {
            out.sample("pinion_reports_refused_total", [("reason", reason.label)], String(metrics.refusals(reason)))
        }
        out.family("pinion_reports_queued", .gauge, help: "Pin-failure reports waiting to be written.")
        out.sample("pinion_reports_queued", String(metrics.reportsQueued.load(ordering: .relaxed)))
        out.family("pinion_reports_queue_capacity", .gauge, help: "Most pin-failure reports waiting at once.")
        out.sample("pinion_reports_queue_capacity", String(reportQueueCapacity))
    }
}
