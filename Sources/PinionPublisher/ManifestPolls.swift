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
/// Labels come from a fixed set per served version, so a client cannot create series. The
/// label is a value, not text, so that counting a request makes no string; the text is made
/// when /metrics is scraped.
enum PollLabel: Hashable, Sendable {
    case none, invalid, other
    /// A held version: 0 or one of the window.
    case version(Int64)

    /// The label of a request's query when `served` is the version served (nil when no
    /// manifest can be read).
    init(query: Substring?, served: Int64?) {
        guard let query, !query.isEmpty else {
            self = .none
            return
        }
        guard let held = PollToken.heldVersion(query: query), let have = Int64(exactly: held) else {
            self = .invalid
            return
        }
        if have == 0 {
            self = .version(0)
        } else if let served, have <= served, served - have < Int64(ManifestPolls.window) {
            self = .version(have)
        } else {
            self = .other
        }
    }

    /// The label value: `none`, `invalid`, `other` or the version in decimal.
    var text: String {
        switch self {
        case .none: return "none"
        case .invalid: return "invalid"
        case .other: return "other"
        case .version(let version): return String(version)
        }
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
        let have: PollLabel
    }

    private let counts = Mutex<[Series: UInt64]>([:])

    /// Counts one answered manifest request.
    ///
    /// - Parameters:
    ///   - scope: the scope whose `manifest.json` was served.
    ///   - query: the request target's query (after `?`), nil without one.
    ///   - served: the version of the manifest served, nil when it could not be read.
    func count(scope: String, query: Substring?, served: Int64?) {
        let series = Series(scope: scope, have: PollLabel(query: query, served: served))
        counts.withLock { $0[series, default: 0] += 1 }
    }

    /// Every series so far, ordered by scope, then numeric labels by version, then the others
    /// by label text.
    func snapshot() -> [(scope: String, have: String, count: UInt64)] {
        let all = counts.withLock { $0 }
        return all.sorted { lhs, rhs in
            if lhs.key.scope != rhs.key.scope { return lhs.key.scope < rhs.key.scope }
            switch (lhs.key.have, rhs.key.have) {
            case (.version(let left), .version(let right)): return left < right
            case (.version, _): return true
            case (_, .version): return false
            default: return lhs.key.have.text < rhs.key.have.text
            }
        }.map { (scope: $0.key.scope, have: $0.key.have.text, count: $0.value) }
    }
}
