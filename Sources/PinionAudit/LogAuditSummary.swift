// What the auditor found about the scope's transparency log (docs/DESIGN.md §12), for the report.

import PinionCore
import PinionLog
import PinionTrust

/// One witness as the auditor saw it (`GET {url}/{origin hash}/checkpoint`).
public struct WitnessView: Sendable, Equatable {
    /// How the witness's latest checkpoint relates to the publisher's.
    public enum State: Sendable, Equatable {
        /// Not fetched (no witness source given to the audit).
        case notChecked
        /// Fetch failed or the answer was not a checkpoint the witness cosigned: a warning.
        case unavailable(String)
        /// Same tree, or an older tree the publisher's extends (verified consistency proof).
        case consistent(size: UInt64)
        /// A larger tree the tiles contain, or a publish in progress or stalled (a warning).
        case ahead(size: UInt64)
        /// Not consistent with the publisher's checkpoint: a split view (a violation).
        case splitView(size: UInt64)
        /// A log-signed larger tree the tiles do not contain, past the publish grace and not
        /// the pending checkpoint: entries the publisher never published (a violation).
        case unpublished(size: UInt64)
    }

    /// The witness's name (its verifier key's name).
    public var name: String
    /// Its URL from the root.
    public var url: String
    /// What was found.
    public var state: State
    /// The witness's cosignature time on its checkpoint, POSIX seconds, when verified.
    public var cosignedAt: Int64?

    /// - Parameters:
    ///   - name: the witness's name.
    ///   - url: its URL from the root.
    ///   - state: what was found.
    ///   - cosignedAt: its cosignature time, POSIX seconds, when verified.
    public init(name: String, url: String, state: State, cosignedAt: Int64? = nil) {
        self.name = name
        self.url = url
        self.state = state
        self.cosignedAt = cosignedAt
    }
}

/// The log's facts: its checkpoint, quorum time, heads and witnesses.
public struct LogAuditSummary: Sendable, Equatable {
    /// The log's origin (the root's `log.origin`).
    public var origin: String
    /// The publisher's checkpoint (`log/checkpoint`), when it parsed.
    public var checkpoint: Checkpoint?
    /// Its note bytes as read, for `--save-checkpoint`.
    public var checkpointNote: [UInt8]?
    /// True when the note carries a valid log signature and a quorum of valid cosignatures,
    /// and the tiles reproduce it: a checkpoint a monitor may save.
    public var checkpointVerified: Bool = false
    /// Names of the listed witnesses whose cosignatures verified.
    public var cosigners: [String] = []
    /// t_q: the quorum-th newest valid cosignature time, POSIX seconds.
    public var quorumTime: Int64?
    /// Freshness of t_q at the audit time.
    public var freshness: LogFreshness?
    /// Heads recomputed from index.json (one per listed manifest).
    public var expectedHeads: Int = 0
    /// Entries the tiles held, when they were read to the end.
    public var loggedEntries: UInt64?
    /// Size of the `--since` checkpoint, when one was given and parsed.
    public var sinceSize: UInt64?
    /// The witnesses, in root order.
    public var witnesses: [WitnessView] = []

    /// - Parameter origin: the log's origin.
    public init(origin: String) { self.origin = origin }
}

extension WitnessView.State {
    /// A stable word for scripts (`--json`): not-checked, unavailable, consistent, ahead,
    /// split-view, unpublished-entries.
    public var code: String {
        switch self {
        case .notChecked: return "not-checked"
        case .unavailable: return "unavailable"
        case .consistent: return "consistent"
        case .ahead: return "ahead"
        case .splitView: return "split-view"
        case .unpublished: return "unpublished-entries"
        }
    }

    /// The witness's checkpoint size, when it was compared.
    public var size: UInt64? {
        switch self {
        case .consistent(let size), .ahead(let size), .splitView(let size), .unpublished(let size): return size
        case .notChecked, .unavailable: return nil
        }
    }
}

extension LogFreshness {
    /// `unchecked`, `fresh`, `stale` or `expired`, and the age in seconds.
    public var parts: (word: String, age: Int64?) {
        switch self {
        case .unchecked: return ("unchecked", nil)
        case .fresh(let age): return ("fresh", age)
        case .stale(let age): return ("stale", age)
        case .expired(let age): return ("expired", age)
        }
    }
}

extension LogAuditSummary {
    /// The summary as JSON: origin, checkpoint (size, rootHash base64), verified, cosigners,
    /// quorumTime (POSIX seconds), freshness and age (seconds), expectedHeads, loggedEntries,
    /// sinceSize, and per witness name, url, state, size and cosignedAt.
    public func json() -> JSONValue {
        func number<T: BinaryInteger>(_ value: T?) -> JSONValue { value.map { .number(String($0)) } ?? .null }
        let witnessValues: [JSONValue] = witnesses.map { witness in
            var members: [JSONObject.Member] = [
                .init("name", .string(witness.name)), .init("url", .string(witness.url)),
                .init("state", .string(witness.state.code)), .init("size", number(witness.state.size)),
                .init("cosignedAt", number(witness.cosignedAt)),
            ]
            if case .unavailable(let reason) = witness.state { members.append(.init("reason", .string(reason))) }
            return .object(JSONObject(members))
        }
        return .object(
            JSONObject([
                .init("origin", .string(origin)), .init("size", number(checkpoint?.size)),
                .init("rootHash", checkpoint.map { .string(Base64.encode($0.rootHash)) } ?? .null),
                .init("verified", .bool(checkpointVerified)),
                .init("cosigners", .array(cosigners.map { .string($0) })),
                .init("quorumTime", number(quorumTime)),
                .init("freshness", freshness.map { .string($0.parts.word) } ?? .null),
                .init("age", number(freshness?.parts.age)),
                .init("expectedHeads", number(expectedHeads)), .init("loggedEntries", number(loggedEntries)),
                .init("sinceSize", number(sinceSize)), .init("witnesses", .array(witnessValues)),
            ]))
    }

    /// The summary as text lines for people (`pinion audit`).
    public var lines: [String] {
        var lines = ["", "log         origin \(origin)"]
        if let checkpoint {
            lines.append(
                "  checkpoint size \(checkpoint.size), root \(Base64.encode(checkpoint.rootHash)) (\(checkpointVerified ? "verified: log signature, quorum, tiles" : "NOT verified"))"
            )
        } else {
            lines.append("  checkpoint unreadable")
        }
        lines.append(
            "  heads      \(expectedHeads) recomputed from index.json, \(loggedEntries.map(String.init) ?? "?") in the log"
        )
        lines.append("  cosigned   by \(cosigners.isEmpty ? "no listed witness" : cosigners.joined(separator: " "))")
        if let quorumTime {
            var fresh = freshness?.parts.word ?? "unknown"
            if let age = freshness?.parts.age { fresh += ", age \(age) s" }
            lines.append("  t_q        \(Timestamp(secondsSince1970: quorumTime)) (\(fresh))")
        }
        if let sinceSize { lines.append("  since      checkpoint of size \(sinceSize)") }
        for witness in witnesses {
            var text = "  witness    \(witness.name) \(witness.url): \(witness.state.code)"
            if let size = witness.state.size { text += " (size \(size))" }
            if case .unavailable(let reason) = witness.state { text += " (\(reason))" }
            lines.append(text)
        }
        return lines
    }
}
