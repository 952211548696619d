// The audit report and document diffs as JSON (`pinion audit --json`, `pinion diff --json`):
// the same facts as the tables, for machines.

import PinionCore
import PinionTrust

extension AuditReport {
    /// The report as a JSON object: scope, location, audit time, result, the version whose
    /// tree root differs from the given root (`givenRootDiffers`, or null), roots,
    /// manifests (with signers, `verified` and `failure`; unreadable members null),
    /// manifest.json's version, domain timelines (each event `trusted` or not),
    /// revocations, coverage gaps, violations and warnings (each with `advice` and
    /// `followsFrom`), the log's facts (null without a log). Times are RFC 3339, hashes
    /// `sha256:` + hex, durations seconds.
    public func json() -> JSONValue {
        func number(_ value: Int64) -> JSONValue { .number(String(value)) }
        func time(_ value: Timestamp) -> JSONValue { .string(value.description) }
        func hash(_ bytes: [UInt8]) -> JSONValue { .string("sha256:" + Hex.encode(bytes)) }
        func strings(_ values: [String]) -> JSONValue { .array(values.map { .string($0) }) }
        func role(_ role: RootPayload.Role) -> JSONValue {
            .object(
                JSONObject([.init("keyids", strings(role.keyIDs)), .init("threshold", number(Int64(role.threshold)))]))
        }
        func finding(_ finding: AuditFinding) -> JSONValue {
            .object(
                JSONObject([
                    .init("rule", .string(finding.rule.rawValue)),
                    .init("version", finding.version.map(number) ?? .null),
                    .init("file", .string(finding.file)), .init("message", .string(finding.message)),
                    .init("advice", .string(finding.advice)),
                    .init("followsFrom", finding.followsFrom.map { .string($0.rawValue) } ?? .null),
                ]))
        }
        let rootValues: [JSONValue] = roots.map { root in
            .object(
                JSONObject([
                    .init("version", number(root.version)), .init("file", .string(root.file)),
                    .init("payloadSHA256", hash(root.payloadSHA256)), .init("issuedAt", time(root.issuedAt)),
                    .init("expiresAt", time(root.expiresAt)),
                    .init("maxManifestLifetime", number(root.maxManifestLifetime)),
                    .init("rootRole", role(root.rootRole)), .init("pinsRole", role(root.pinsRole)),
                    .init("signers", strings(root.signers)), .init("pinsRoleChanged", .bool(root.pinsRoleChanged)),
                ]))
        }
        let manifestValues: [JSONValue] = manifests.map { manifest in
            .object(
                JSONObject([
                    .init("version", number(manifest.version)),
                    .init("rootVersion", manifest.rootVersion.map(number) ?? .null),
                    .init("issuedAt", manifest.issuedAt.map(time) ?? .null),
                    .init("expiresAt", manifest.expiresAt.map(time) ?? .null),
                    .init("payloadSHA256", manifest.payloadSHA256.map(hash) ?? .null),
                    .init("signers", strings(manifest.signers)), .init("inIndex", .bool(manifest.inIndex)),
                    .init("verified", .bool(manifest.verified)),
                    .init("failure", manifest.failure.map { .string($0.rawValue) } ?? .null),
                ]))
        }
        let domainValues: [JSONValue] = domains.map { timeline in
            .object(
                JSONObject([
                    .init("name", .string(timeline.name)),
                    .init(
                        "events",
                        .array(
                            timeline.entries.map { entry in
                                var members: [JSONObject.Member] = [
                                    .init("version", number(entry.version)), .init("date", time(entry.date)),
                                    .init("trusted", .bool(entry.trusted)),
                                ]
                                members += Self.eventMembers(entry.event)
                                return .object(JSONObject(members))
                            })),
                ]))
        }
        let revocationValues: [JSONValue] = revocations.map { event in
            .object(
                JSONObject([
                    .init("version", number(event.version)), .init("date", time(event.date)),
                    .init("pin", .string(event.pin.description)),
                    .init("change", .string(event.lifted ? "lifted" : "revoked")),
                ]))
        }
        let gapValues: [JSONValue] = gaps.map { gap in
            .object(
                JSONObject([
                    .init("from", time(gap.from)), .init("until", time(gap.until)),
                    .init("seconds", number(gap.seconds)),
                    .init("afterVersion", number(gap.afterVersion)),
                    .init("beforeVersion", gap.beforeVersion.map(number) ?? .null),
                    .init("open", .bool(gap.beforeVersion == nil)),
                ]))
        }
        var coverageValue = JSONValue.null
        if let coverage {
            coverageValue = .object(
                JSONObject([.init("from", time(coverage.from)), .init("until", time(coverage.until))]))
        }
        return .object(
            JSONObject([
                .init("scope", .string(scope)), .init("location", .string(location)), .init("at", time(at)),
                .init("result", .string(passed ? "pass" : "fail")), .init("anchorVersion", number(anchorVersion)),
                .init("givenRootDiffers", givenRootDiffers.map(number) ?? .null),
                .init("roots", .array(rootValues)), .init("manifests", .array(manifestValues)),
                .init("manifestJSONVersion", manifestJSONVersion.map(number) ?? .null),
                .init("domains", .array(domainValues)), .init("revocations", .array(revocationValues)),
                .init("coverage", coverageValue), .init("gaps", .array(gapValues)),
                .init("violations", .array(violations.map(finding))), .init("warnings", .array(warnings.map(finding))),
                .init("log", log?.json() ?? .null),
            ]))
    }

    static func eventMembers(_ event: DomainEvent) -> [JSONObject.Member] {
        switch event {
        case .added(let enforce, let includeSubdomains, let pins):
            return [
                .init("change", .string("added")), .init("enforce", .bool(enforce)),
                .init("includeSubdomains", .bool(includeSubdomains)),
                .init("pins", .array(pins.map { .string($0.description) })),
            ]
        case .claimed(let enforce, let includeSubdomains, let pins):
            return [
                .init("change", .string("claimed")), .init("enforce", .bool(enforce)),
                .init("includeSubdomains", .bool(includeSubdomains)),
                .init("pins", .array(pins.map { .string($0.description) })),
            ]
        case .removed: return [.init("change", .string("removed"))]
        case .pinAdded(let pin): return [.init("change", .string("pin-added")), .init("pin", .string(pin.description))]
        case .pinRemoved(let pin):
            return [.init("change", .string("pin-removed")), .init("pin", .string(pin.description))]
        case .enforceChanged(let value): return [.init("change", .string("enforce")), .init("enforce", .bool(value))]
        case .includeSubdomainsChanged(let value):
            return [.init("change", .string("include-subdomains")), .init("includeSubdomains", .bool(value))]
        case .pinRevoked(let pin):
            return [.init("change", .string("pin-revoked")), .init("pin", .string(pin.description))]
        case .revocationLifted(let pin):
            return [.init("change", .string("revocation-lifted")), .init("pin", .string(pin.description))]
        }
    }
}

extension ManifestDiff {
    /// The diff as a JSON object: `kind`, `scope`, each scalar member as `{old, new}`,
    /// domains added, removed and changed, revocations added and lifted.
    public func json() -> JSONValue {
        func previousText(_ hash: [UInt8]?) -> JSONValue { hash.map { .string("sha256:" + Hex.encode($0)) } ?? .null }
        func pins(_ pins: [Pin]) -> JSONValue { .array(pins.map { .string($0.description) }) }
        func domain(_ domain: ManifestPayload.Domain) -> JSONValue {
            .object(
                JSONObject([
                    .init("name", .string(domain.name)), .init("enforce", .bool(domain.enforce)),
                    .init("includeSubdomains", .bool(domain.includeSubdomains)), .init("pins", pins(domain.pins)),
                ]))
        }
        let changed: [JSONValue] = domainsChanged.map { change in
            var members: [JSONObject.Member] = [
                .init("name", .string(change.name)), .init("pinsAdded", pins(change.pinsAdded)),
                .init("pinsRemoved", pins(change.pinsRemoved)),
            ]
            if let enforce = change.enforce {
                members.append(
                    .init(
                        "enforce",
                        .object(JSONObject([.init("old", .bool(enforce.old)), .init("new", .bool(enforce.new))]))))
            }
            if let include = change.includeSubdomains {
                members.append(
                    .init(
                        "includeSubdomains",
                        .object(JSONObject([.init("old", .bool(include.old)), .init("new", .bool(include.new))]))))
            }
            return .object(JSONObject(members))
        }
        return .object(
            JSONObject([
                .init("kind", .string("pins")), .init("scope", .string(scope)), .init("changed", .bool(hasChanges)),
                .init("version", DiffJSON.change(version)), .init("rootVersion", DiffJSON.change(rootVersion)),
                .init("issuedAt", DiffJSON.change(issuedAt)), .init("expiresAt", DiffJSON.change(expiresAt)),
                .init(
                    "previous",
                    .object(
                        JSONObject([.init("old", previousText(previous.old)), .init("new", previousText(previous.new))])
                    )),
                .init("domainsAdded", .array(domainsAdded.map(domain))),
                .init("domainsRemoved", .array(domainsRemoved.map { .string($0.name) })),
                .init("domainsChanged", .array(changed)), .init("revocationsAdded", pins(revocationsAdded)),
                .init("revocationsLifted", pins(revocationsLifted)), .init("concerns", ReviewJSON.concerns(concerns)),
            ]))
    }
}

extension RootDiff {
    /// The diff as a JSON object: `kind`, `scope`, each scalar member as `{old, new}`,
    /// keys added and removed, and per role the key ids added, removed and the threshold.
    public func json() -> JSONValue {
        func role(_ role: RoleChange) -> JSONValue {
            .object(
                JSONObject([
                    .init("keyIDsAdded", .array(role.keyIDsAdded.map { .string($0) })),
                    .init("keyIDsRemoved", .array(role.keyIDsRemoved.map { .string($0) })),
                    .init(
                        "threshold",
                        role.threshold.map { DiffJSON.change(Change(old: Int64($0.old), new: Int64($0.new))) } ?? .null),
                ]))
        }
        return .object(
            JSONObject([
                .init("kind", .string("root")), .init("scope", .string(scope)), .init("changed", .bool(hasChanges)),
                .init("version", DiffJSON.change(version)), .init("issuedAt", DiffJSON.change(issuedAt)),
                .init("expiresAt", DiffJSON.change(expiresAt)),
                .init("maxManifestLifetime", DiffJSON.change(maxManifestLifetime)),
                .init("keysAdded", .array(keysAdded.map { .string($0) })),
                .init("keysRemoved", .array(keysRemoved.map { .string($0) })), .init("rootRole", role(rootRole)),
                .init("pinsRole", role(pinsRole)),
                .init(
                    "pinsRoleSince",
                    .object(
                        JSONObject([
                            .init("old", pinsRoleSince.old.map { .number(String($0)) } ?? .null),
                            .init("new", pinsRoleSince.new.map { .number(String($0)) } ?? .null),
                        ]))),
                .init(
                    "log",
                    .object(JSONObject([.init("old", ReviewJSON.log(log.old)), .init("new", ReviewJSON.log(log.new))]))),
                .init("concerns", ReviewJSON.concerns(concerns)),
            ]))
    }
}

/// JSON forms shared by `pinion diff` and `pinion manifest show`.
public enum ReviewJSON {
    /// A root's `log` member: origin, log key (text and key id), witnesses (name, key id,
    /// URL), quorum, maxCheckpointAge and checkpointGrace in seconds; `null` without a log.
    public static func log(_ log: LogPolicy?) -> JSONValue {
        guard let log else { return .null }
        func key(_ key: NoteVerifierKey) -> [JSONObject.Member] {
            [
                .init("name", .string(key.name)),
                .init("keyID", .string(Hex.encode(NoteVerifierKey.bigEndian(key.keyID)))),
                .init("key", .string(key.text)),
            ]
        }
        return .object(
            JSONObject([
                .init("origin", .string(log.origin)), .init("key", .object(JSONObject(key(log.logKey)))),
                .init(
                    "witnesses",
                    .array(log.witnesses.map { .object(JSONObject(key($0.key) + [.init("url", .string($0.url))])) })),
                .init("quorum", .number(String(log.quorum))),
                .init("maxCheckpointAge", .number(String(log.maxCheckpointAge))),
                .init("checkpointGrace", .number(String(log.checkpointGrace))),
            ]))
    }

    /// Concerns as `[{kind, text}]`.
    public static func concerns(_ concerns: [ReviewConcern]) -> JSONValue {
        .array(
            concerns.map { (concern) -> JSONValue in
                .object(
                    JSONObject([.init("kind", .string(concern.kind.rawValue)), .init("text", .string(concern.text))]))
            })
    }

    /// Member changes as `[{path, old, new}]` (`null` where absent).
    public static func changes(_ changes: [MemberChange]) -> JSONValue {
        .array(
            changes.map { (change) -> JSONValue in
                let old: JSONValue = change.old.map { .string($0) } ?? .null
                let new: JSONValue = change.new.map { .string($0) } ?? .null
                return .object(
                    JSONObject([.init("path", .string(change.path)), .init("old", old), .init("new", new)]))
            })
    }
}

/// `{old, new}` members shared by the manifest and root diffs.
enum DiffJSON {
    static func change(_ change: Change<Int64>) -> JSONValue {
        .object(JSONObject([.init("old", .number(String(change.old))), .init("new", .number(String(change.new)))]))
    }

    static func change(_ change: Change<Timestamp>) -> JSONValue {
        .object(
            JSONObject([.init("old", .string(change.old.description)), .init("new", .string(change.new.description))]))
    }
}
