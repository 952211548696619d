// `pinion_manifest_polls_total{scope, have}`: the manifest requests `pinion serve` answered,
// by the version each client says it holds (the poll token, docs/DESIGN.md §6), so that an
// operator can see how many clients have taken a new manifest before a server switches keys
// (docs/OPERATIONS.md, the adoption gate).

import PinionCore
import PinionTrust
import Synchronization

/// The `have` label of one manifest request, from its query and the version being served.
///
/// - `none`: no query (an SDK without the poll token, a monitor, curl);
/// - `invalid`: a query other than exactly `have=V&base=B` (V a decimal without leading
///   zeros that fits in 63 bits, B 16 lowercase hex digits);
/// - `0`: a client that holds no manifest (it runs on its baseline alone);
/// - `V`: one of the `ManifestPolls.window` newest versions up to the one served;
/// - `other`: any older version, or one newer than the served manifest (no client can
///   hold it), or any version while no manifest can be read.
///
/// Labels come from a fixed set per served version, so a client cannot create series.
enum PollLabel {
    static func label(query: Substring?, served: Int64?) -> String {
        guard let query, !query.isEmpty else { return "none" }
        guard let token = PollToken(query: query), let have = Int64(exactly: token.have) else { return "invalid" }
        if have == 0 { return "0" }
        guard let served, have <= served, served - have < Int64(ManifestPolls.window) else { return "other" }
        return String(have)
    }
}

/// Counts of manifest requests by scope and `have` label (`PollLabel`). Only a scope whose
/// `manifest.json` was served is counted, so requests for scopes not in the tree create no
/// series.
final class ManifestPolls: Sendable {
    /// How many of the newest versions get a label of their own.
    static let window = 64

    private struct Series: Hashable {
        let scope: String
        let have: String
    }

    private let counts = Mutex<[Series: UInt64]>([:])

    /// Counts one answered manifest request.
    ///
    /// - Parameters:
    ///   - scope: the scope whose `manifest.json` was served.
    ///   - query: the request target's query (after `?`), nil without one.
    ///   - served: the version of the manifest served, nil when it could not be read.
    func count(scope: String, query: Substring?, served: Int64?) {
        let series = Series(scope: scope, have: PollLabel.label(query: query, served: served))
        counts.withLock { $0[series, default: 0] += 1 }
    }

    /// Every series so far, ordered by scope, then numeric labels by version, then the others.
    func snapshot() -> [(scope: String, have: String, count: UInt64)] {
        let all = counts.withLock { $0 }
        return all.map { (scope: $0.key.scope, have: $0.key.have, count: $0.value) }.sorted { lhs, rhs in
            if lhs.scope != rhs.scope { return lhs.scope < rhs.scope }
            switch (Int64(lhs.have), Int64(rhs.have)) {
            case (let left?, let right?): return left < right
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return lhs.have < rhs.have
            }
        }
    }
}
