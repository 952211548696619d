// Which hosts `pinion serve --reports` takes reports for: those a manifest version of the
// scope pinned while unexpired within the retention period, or a configured baseline pins.

import Foundation
import PinionCore
import PinionSystem
import PinionTrust
import Synchronization

/// The pinned entries reports may name, and the rule a report must meet (pure).
///
/// An entry is a policy entry's name and whether it includes subdomains. A manifest entry is
/// live at `now` while the last manifest version holding it expired after `now` minus the
/// retention period: a client that fetched that version may still be running it, so hosts
/// the newest manifest dropped are still accepted for that long. Baseline entries are
/// always live (apps carry them).
///
/// A report is accepted when its `noted-hostname` names a live entry and its `hostname` is
/// that name, or a subdomain of it when a live entry of that name includes subdomains.
public struct ReportHostPolicy: Sendable, Equatable {
    /// Manifest entries: name, includeSubdomains -> the latest expiry of a version holding it.
    public private(set) var manifestEntries: [String: [Bool: Timestamp]] = [:]
    /// Baseline entries: name -> includeSubdomains of any baseline entry of that name.
    public private(set) var baselineEntries: [String: Bool] = [:]

    /// An empty policy: every report is refused.
    public init() {}

    /// Adds the domains of one manifest version.
    ///
    /// - Parameters:
    ///   - domains: the version's entries.
    ///   - expiresAt: the version's `expiresAt`.
    public mutating func add(manifestDomains domains: [ManifestPayload.Domain], expiresAt: Timestamp) {
        for domain in domains {
            let known = manifestEntries[domain.name]?[domain.includeSubdomains]
            if known.map({ $0 < expiresAt }) ?? true {
                manifestEntries[domain.name, default: [:]][domain.includeSubdomains] = expiresAt
            }
        }
    }

    /// Adds a baseline's domains.
    public mutating func add(baseline: Baseline) {
        for domain in baseline.domains {
            baselineEntries[domain.name] = (baselineEntries[domain.name] ?? false) || domain.includeSubdomains
        }
    }

    /// Judges a report's host names.
    ///
    /// - Parameters:
    ///   - hostname: the report's `hostname` (lowercase, no trailing dot).
    ///   - notedHostname: the report's `noted-hostname`.
    ///   - now: the receive time.
    ///   - retentionSeconds: how long after its expiry a version's entries stay live.
    /// - Returns: nil when accepted, else the reason (the 422 body).
    public func refusal(hostname: String, notedHostname: String, at now: Timestamp, retentionSeconds: Int64)
        -> String?
    {
        let liveAfter = now.adding(seconds: -retentionSeconds)
        var live: [Bool] = []
        if let subdomains = baselineEntries[notedHostname] { live.append(subdomains) }
        for (subdomains, expiry) in manifestEntries[notedHostname] ?? [:] where expiry > liveAfter {
            live.append(subdomains)
        }
        let noted = TerminalText.escape(notedHostname)
        guard !live.isEmpty else {
            return "noted-hostname \(noted) is not pinned by a configured baseline or by a manifest of this scope "
                + "unexpired in the last \(retentionSeconds / 86_400) day(s)"
        }
        if hostname == notedHostname { return nil }
        if hostname.hasSuffix("." + notedHostname), live.contains(true) { return nil }
        return "hostname \(TerminalText.escape(hostname)) does not match the pinned entry \(noted)"
            + (hostname.hasSuffix("." + notedHostname) ? ", which does not include subdomains" : "")
    }
}

/// The host policy of each scope of a served tree, read from its `history/` and its
/// `manifest.json` and kept up to date: both are checked (a `stat` each) on every use, and
/// only history versions not read before are read (history files never change).
final class ReportHostIndex: Sendable {
    /// Largest history file read, in bytes.
    static let maxFileBytes = Limits.standard.maxEnvelopeBytes

    private struct ScopeState {
        var source: DirectoryTreeSource
        var stamp: [Int64]
        /// The stamp was taken within `racySeconds` of its modification time: a change in the
        /// same clock tick would not show, so the next use reads again (git's "racy" rule).
        var racy: Bool
        var seen: Set<Int64>
        var policy: ReportHostPolicy
    }

    /// How close to a modification a stamp cannot be trusted, in seconds (file times move in
    /// clock ticks, not nanoseconds).
    static let racySeconds = 2.0

    private let repository: String
    private let baselines: ReportHostPolicy
    private let scopes = Mutex<[String: ScopeState]>([:])

    /// - Parameters:
    ///   - repository: the served tree.
    ///   - baselines: the configured baselines, live for every scope.
    init(repository: String, baselines: [Baseline]) {
        self.repository = repository
        var policy = ReportHostPolicy()
        for baseline in baselines { policy.add(baseline: baseline) }
        self.baselines = policy
    }

    /// The policy of `scope` now: the baselines plus every readable manifest version of the
    /// scope's `history/`. Versions that cannot be read or parsed add nothing.
    func policy(scope: String) -> ReportHostPolicy {
        let stamp = historyStamp(scope)
        return scopes.withLock { states -> ReportHostPolicy in
            var state =
                states[scope]
                ?? ScopeState(
                    source: DirectoryTreeSource(repo: repository, scope: scope), stamp: [], racy: true, seen: [],
                    policy: baselines)
            if state.stamp != stamp || stamp.isEmpty || state.racy {
                state.stamp = stamp
                let newest = max(stamp.count > 1 ? stamp[1] : 0, stamp.count > 4 ? stamp[4] : 0)
                state.racy = Date().timeIntervalSince1970 - Double(newest) / 1e9 < Self.racySeconds
                let versions = (try? state.source.list(.history))??.versions ?? []
                var files = versions.filter { !state.seen.contains($0) }.map(TreeFile.history)
                files.append(.manifest)
                for file in files {
                    if case .history(let version) = file { state.seen.insert(version) }
                    guard let bytes = try? state.source.read(file, limit: Self.maxFileBytes) ?? nil,
                        let envelope = try? Envelope.parse(bytes), envelope.kind == .pins,
                        let payload = try? ManifestPayload.parse(envelope.payload), payload.scope == scope
                    else { continue }
                    state.policy.add(manifestDomains: payload.domains, expiresAt: payload.expiresAt)
                }
            }
            states[scope] = state
            return state.policy
        }
    }

    /// The inode, modification time and size of the history directory and of manifest.json:
    /// a publish changes them. Empty when neither exists.
    private func historyStamp(_ scope: String) -> [Int64] {
        var stamp: [Int64] = []
        for name in ["history", "manifest.json"] {
            guard
                let attributes = try? FileManager.default.attributesOfItem(
                    atPath: "\(repository)/v1/\(scope)/\(name)")
            else {
                stamp += [0, 0, 0]
                continue
            }
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            stamp += [
                (attributes[.systemFileNumber] as? Int64) ?? Int64((attributes[.systemFileNumber] as? Int) ?? 0),
                Int64(modified * 1_000_000_000),
                (attributes[.size] as? Int64) ?? Int64((attributes[.size] as? Int) ?? 0),
            ]
        }
        return stamp.allSatisfy { $0 == 0 } ? [] : stamp
    }
}
