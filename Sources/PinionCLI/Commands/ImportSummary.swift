// What an import's summary says to do next, so that `sign` refusing the payload is no surprise.

import PinionCore

enum ImportSummary {
    /// `next: ...` naming the enforced domains with fewer than two usable pins (which
    /// `pinion sign` refuses, RFC 7469 §4.3) and the two ways on; nil when there are none.
    static func nextStep(_ payload: ManifestPayload, target: String) -> String? {
        let single = payload.domains.filter { domain in
            domain.enforce && domain.pins.filter { !payload.revokedPins.contains($0) }.count < 2
        }.map(\.name)
        guard !single.isEmpty else { return nil }
        return
            "next: \(single.joined(separator: ", ")) \(single.count == 1 ? "has" : "have") a single pin, which pinion sign refuses: add a backup pin (pinion manifest set-domain \(target) NAME --pin ... --pin ...), or sign with --allow-single-pin"
    }
}
