// What `pinion client refresh/connect` print about the transparency log (docs/DESIGN.md §12): the stored checkpoint, its t_q age and freshness, and a log refusal's reason code.

import PinionCore
import PinionLinux
import PinionLog

/// Text and JSON for the client's log state.
enum ClientLogOutput {
    /// The log reason code of a refusal (`log-quorum-not-met`), or nil for another outcome.
    static func reasonCode(_ outcome: RefreshOutcome) -> String? {
        switch outcome {
        case .rejected(let error), .networkFailure(let error): return error.logRefusal?.reasonCode
        default: return nil
        }
    }

    /// The freshness of the stored checkpoint at `now` under the newest root's log, or nil
    /// when there is no log or no checkpoint.
    static func freshness(_ state: TrustedState, at now: Timestamp) -> (StoredCheckpoint, LogPolicy, LogFreshness)? {
        guard let policy = state.chain.newest.payload.log, let stored = state.persisted.logCheckpoint else {
            return nil
        }
        return (
            stored, policy,
            LogFreshness.evaluate(quorumTime: stored.quorumTime, now: now.secondsSince1970, policy: policy)
        )
    }

    static func freshnessName(_ freshness: LogFreshness) -> (name: String, age: Int64?) {
        switch freshness {
        case .unchecked: return ("unchecked", nil)
        case .fresh(let age): return ("fresh", age)
        case .stale(let age): return ("stale", age)
        case .expired(let age): return ("expired", age)
        }
    }

    /// One `log` line for the text output, plus one for a kept equivocation.
    static func lines(_ state: TrustedState, evidence: Equivocation?, at now: Timestamp) -> [String] {
        var lines: [String] = []
        if state.chain.newest.payload.log == nil {
            lines.append("log         none (the newest root has no log)")
        } else if let (stored, policy, freshness) = freshness(state, at: now) {
            let (name, age) = freshnessName(freshness)
            let quorumTime = Timestamp(secondsSince1970: stored.quorumTime)
            let ageText = age.map { " age \($0)s" } ?? ""
            lines.append(
                "log         \(policy.origin) checkpoint \(stored.checkpoint.size) entries, t_q \(quorumTime)\(ageText) (\(name))"
            )
        } else {
            lines.append("log         no verified checkpoint yet: the manifest does not count as current")
        }
        if let evidence {
            lines.append(
                "log         EQUIVOCATION kept as evidence in \(LogEquivocationRecord.fileName): two trees of size \(evidence.stored.size) for \(evidence.stored.origin)"
            )
        }
        return lines
    }

    /// The `log` member of `--json`: null without a log, else origin, checkpoint size, t_q
    /// (RFC 3339 and POSIX seconds), age in seconds, freshness and whether equivocation
    /// evidence is kept.
    static func json(_ state: TrustedState, evidence: Equivocation?, at now: Timestamp) -> JSONValue {
        guard let policy = state.chain.newest.payload.log else { return .null }
        var members: [JSONObject.Member] = [.init("origin", .string(policy.origin))]
        if let (stored, _, freshness) = freshness(state, at: now) {
            let (name, age) = freshnessName(freshness)
            members += [
                .init("checkpointSize", .number(String(stored.checkpoint.size))),
                .init("quorumTime", .string(Timestamp(secondsSince1970: stored.quorumTime).description)),
                .init("quorumTimeSeconds", .number(String(stored.quorumTime))),
                .init("ageSeconds", age.map { .number(String($0)) } ?? .null),
                .init("freshness", .string(name)),
            ]
        } else {
            members += [
                .init("checkpointSize", .null), .init("quorumTime", .null), .init("quorumTimeSeconds", .null),
                .init("ageSeconds", .null), .init("freshness", .string("missing")),
            ]
        }
        members.append(.init("equivocationEvidence", .bool(evidence != nil)))
        return .object(JSONObject(members))
    }
}
