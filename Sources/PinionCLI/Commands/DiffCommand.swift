// `pinion diff`: what changed between two manifests or two roots (payloads or envelopes),
// so a co-signer sees what they are about to sign.

import PinionAudit
import PinionCore
import PinionCrypto

struct DiffCommand: Command {
    static let path = ["diff"]
    static let summary = "show what changed between two manifests or two roots"
    static let options: [OptionSpec] = [.flag("json")]
    static let help = """
        usage: pinion diff OLD NEW [--json]

        Compares two manifests or two roots, each a bare payload or a signed envelope
        (signatures are listed, NOT verified: use pinion verify). For manifests: version,
        rootVersion, issuedAt, expiresAt, whether NEW's previous is OLD's payload hash,
        domains added and removed, pins added and removed per domain, enforce /
        report-only and includeSubdomains changes, revocations added and lifted. For
        roots: version, dates, manifest lifetime cap, keys, and each role's key ids and
        threshold. A root is never compared with a manifest, nor documents of two scopes.
        Roots also show pinsRoleSince and the transparency log (origin, log key, each
        witness's name, key id and URL, quorum, maxCheckpointAge, checkpointGrace).
        Members the tables do not name (x- extensions at any depth, in the payload or
        the envelope) are listed as written, and a signature whose bytes changed under
        the same key id is shown. Changes that lower protection or widen trust (a log
        removed or its key replaced, a quorum lowered, freshness off, manifests cut off,
        a threshold lowered, keys added to a role, a longer lifetime, pins added, enforce
        off, a domain dropped, a revocation lifted) come first, under "attention".
        --json prints the same facts as JSON.
        Exit 0 compared (whether or not anything changed), 1 unreadable document, 2 usage
        (a root against a manifest, different scopes), 3 I/O.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let files = try arguments.positional(["OLD", "NEW"])
        let old = try ReviewedDocument.load(files[0])
        let new = try ReviewedDocument.load(files[1])
        let (lines, json) = try compare(old, new)
        if arguments.flag("json") {
            context.out(JSONWriter.terminalSafeText(.object(json)))
            return
        }
        for line in lines { context.print(TerminalText.escape(line)) }
    }

    /// The marked comparison of two documents: text lines (concerns first) and the JSON form.
    ///
    /// - Throws: `CLIError.usage` for a root against a manifest or two scopes.
    static func compare(_ old: ReviewedDocument, _ new: ReviewedDocument) throws(CLIError) -> ([String], JSONObject) {
        guard old.kind == new.kind else {
            throw CLIError.usage("\(old.file), \(new.file): \(DiffError.kindsDiffer(old: old.kind, new: new.kind))")
        }
        let oldHash = crypto.hasher.sha256(old.payload)
        let newHash = crypto.hasher.sha256(new.payload)
        var body: [String]
        var json: JSONObject
        let concerns: [ReviewConcern]
        if let oldPayload = old.manifest, let newPayload = new.manifest {
            let diff: ManifestDiff
            do { diff = try ManifestDiff.between(oldPayload, newPayload) } catch {
                throw CLIError.usage("\(old.file), \(new.file): \(error)")
            }
            let chains = newPayload.previous == oldHash
            json = object(diff.json())
            json.set("chainsToOld", .bool(chains))
            body = manifestLines(diff, chains: chains, oldHash: oldHash)
            concerns = diff.concerns
        } else if let oldPayload = old.root, let newPayload = new.root {
            let diff: RootDiff
            do { diff = try RootDiff.between(oldPayload, newPayload) } catch {
                throw CLIError.usage("\(old.file), \(new.file): \(error)")
            }
            json = object(diff.json())
            body = rootLines(diff)
            concerns = diff.concerns
        } else {
            throw CLIError.usage("\(old.file), \(new.file): not two parsed documents")
        }
        var lines = [
            "old         \(old.file)  payload sha256:\(Hex.encode(oldHash))",
            "new         \(new.file)  payload sha256:\(Hex.encode(newHash))",
        ]
        if oldHash == newHash { lines.append("payload     identical") }
        if concerns.isEmpty {
            lines.append("attention   no change lowers protection or widens trust")
        } else {
            lines.append("attention   \(concerns.count) change(s) lower protection or widen trust:")
            for concern in concerns { lines.append("  ! \(concern)") }
        }
        lines += body
        let others = ReviewedDocument.otherChanges(old, new)
        lines.append(
            "other members \(others.isEmpty ? "no change" : "changed (listed as written; Pinion does not act on them)")"
        )
        for change in others { lines.append("  " + DocumentMembers.line(change)) }
        json.set("otherMembers", ReviewJSON.changes(others))
        json.set("payloadIdentical", .bool(oldHash == newHash))
        json.set("oldPayloadSHA256", .string("sha256:" + Hex.encode(oldHash)))
        json.set("newPayloadSHA256", .string("sha256:" + Hex.encode(newHash)))
        guard let oldEnvelope = old.envelope, let newEnvelope = new.envelope else {
            json.set("signatures", .null)
            let bare = [old, new].filter { $0.envelope == nil }.map(\.file).joined(separator: ", ")
            lines.append("signatures  not compared: \(bare) is a bare payload")
            return (lines, json)
        }
        let signatures = SignatureDiff.between(oldEnvelope, newEnvelope)
        let replaced = newEnvelope.signatures.filter { signature in
            oldEnvelope.signatures.contains { $0.keyID == signature.keyID }
                && !oldEnvelope.signatures.contains(signature)
        }.map(\.keyID)
        json.set(
            "signatures",
            .object(
                JSONObject([
                    .init("added", .array(signatures.added.map { .string($0) })),
                    .init("removed", .array(signatures.removed.map { .string($0) })),
                    .init("replaced", .array(replaced.map { .string($0) })),
                    .init("verified", .bool(false)),
                ])))
        if signatures.added.isEmpty && signatures.removed.isEmpty && replaced.isEmpty {
            lines.append("signatures  same signers, same signature bytes (not verified here; use pinion verify)")
        } else {
            lines.append("signatures  (not verified here; use pinion verify)")
            for id in signatures.added { lines.append("  + keyid \(id)") }
            for id in signatures.removed { lines.append("  - keyid \(id)") }
            for id in replaced { lines.append("  ~ keyid \(id)  signature bytes differ") }
        }
        return (lines, json)
    }

    /// The `log` member before and after: each member that changed, old and new.
    static func logLines(_ log: Change<LogPolicy?>) -> [String] {
        guard log.changed else { return ["log         \(log.new == nil ? "none" : "no change")"] }
        guard let old = log.old else {
            return ["log         added"] + ManifestShowCommand.logLines(log.new).dropFirst().map { "  +" + $0 }
        }
        guard let new = log.new else {
            return ["log         REMOVED (clients stop requiring a transparency log proof)"]
                + ManifestShowCommand.logLines(old).dropFirst().map { "  -" + $0 }
        }
        var lines = ["log         changed"]
        if old.origin != new.origin { lines.append("  origin \(old.origin) -> \(new.origin)") }
        if old.logKey != new.logKey {
            lines.append(
                "  log key \(ManifestShowCommand.noteKey(old.logKey)) -> \(ManifestShowCommand.noteKey(new.logKey))")
        }
        for witness in new.witnesses where !old.witnesses.contains(witness) {
            lines.append("  + witness \(ManifestShowCommand.noteKey(witness.key))  url \(witness.url)")
        }
        for witness in old.witnesses where !new.witnesses.contains(witness) {
            lines.append("  - witness \(ManifestShowCommand.noteKey(witness.key))  url \(witness.url)")
        }
        if old.quorum != new.quorum { lines.append("  quorum \(old.quorum) -> \(new.quorum)") }
        if old.maxCheckpointAge != new.maxCheckpointAge {
            lines.append("  maxCheckpointAge \(old.maxCheckpointAge) -> \(new.maxCheckpointAge) seconds")
        }
        if old.checkpointGrace != new.checkpointGrace {
            lines.append("  checkpointGrace \(old.checkpointGrace) -> \(new.checkpointGrace) seconds")
        }
        return lines
    }

    static func object(_ value: JSONValue) -> JSONObject {
        if case .object(let object) = value { return object }
        return JSONObject()
    }

    static func scalar<T: CustomStringConvertible>(_ name: String, _ change: Change<T>) -> String {
        ManifestShowCommand.pad(name, 12)
            + (change.changed ? "\(change.old) -> \(change.new)" : "\(change.new) (unchanged)")
    }

    static func manifestLines(_ diff: ManifestDiff, chains: Bool, oldHash: [UInt8]) -> [String] {
        var lines = ["manifest    scope \(diff.scope)"]
        lines.append(scalar("version", diff.version))
        lines.append(scalar("rootVersion", diff.rootVersion))
        lines.append(scalar("issuedAt", diff.issuedAt))
        lines.append(scalar("expiresAt", diff.expiresAt))
        if chains {
            lines.append("previous    NEW chains to OLD (sha256:\(Hex.encode(oldHash)))")
        } else {
            let text = diff.previous.new.map { "sha256:" + Hex.encode($0) } ?? "none"
            lines.append("previous    \(text): NEW does not chain to OLD")
        }
        let changes = diff.domainsAdded.count + diff.domainsRemoved.count + diff.domainsChanged.count
        lines.append("domains     \(changes == 0 ? "no change" : "\(changes) changed")")
        for domain in diff.domainsAdded {
            lines.append(
                "  + \(domain.name)  \(domain.enforce ? "enforce" : "report-only"), includeSubdomains \(domain.includeSubdomains)"
            )
            for pin in domain.pins { lines.append("      pin \(pin)") }
        }
        for domain in diff.domainsRemoved { lines.append("  - \(domain.name)") }
        for change in diff.domainsChanged {
            lines.append("  ~ \(change.name)")
            for pin in change.pinsAdded { lines.append("      + pin \(pin)") }
            for pin in change.pinsRemoved { lines.append("      - pin \(pin)") }
            if let enforce = change.enforce {
                lines.append(
                    "      enforce \(enforce.old) -> \(enforce.new)\(enforce.new ? "" : " (report-only: failures no longer refused)")"
                )
            }
            if let include = change.includeSubdomains {
                lines.append("      includeSubdomains \(include.old) -> \(include.new)")
            }
        }
        if diff.revocationsAdded.isEmpty && diff.revocationsLifted.isEmpty {
            lines.append("revokedPins no change")
        } else {
            lines.append("revokedPins")
            for pin in diff.revocationsAdded { lines.append("  + \(pin)  revoked") }
            for pin in diff.revocationsLifted {
                lines.append("  - \(pin)  lifted (publish needs --allow-lift; the auditor warns)")
            }
        }
        return lines
    }

    static func rootLines(_ diff: RootDiff) -> [String] {
        var lines = ["root        scope \(diff.scope)"]
        lines.append(scalar("version", diff.version))
        lines.append(scalar("issuedAt", diff.issuedAt))
        lines.append(scalar("expiresAt", diff.expiresAt))
        lines.append(
            ManifestShowCommand.pad("lifetime cap", 12)
                + (diff.maxManifestLifetime.changed
                    ? "\(ManifestShowCommand.duration(diff.maxManifestLifetime.old)) -> \(ManifestShowCommand.duration(diff.maxManifestLifetime.new))"
                    : "\(ManifestShowCommand.duration(diff.maxManifestLifetime.new)) (unchanged)"))
        lines.append("keys        \(diff.keysAdded.isEmpty && diff.keysRemoved.isEmpty ? "no change" : "changed")")
        for id in diff.keysAdded { lines.append("  + \(id)") }
        for id in diff.keysRemoved { lines.append("  - \(id)") }
        for (name, role) in [("root role", diff.rootRole), ("pins role", diff.pinsRole)] {
            lines.append(ManifestShowCommand.pad(name, 12) + (role.isEmpty ? "no change" : "changed"))
            for id in role.keyIDsAdded { lines.append("  + keyid \(id)") }
            for id in role.keyIDsRemoved { lines.append("  - keyid \(id)") }
            if let threshold = role.threshold { lines.append("  threshold \(threshold.old) -> \(threshold.new)") }
        }
        func since(_ value: Int64?) -> String { value.map(String.init) ?? "absent" }
        lines.append(
            "pinsRoleSince \(diff.pinsRoleSince.changed ? "\(since(diff.pinsRoleSince.old)) -> \(since(diff.pinsRoleSince.new))" : "\(since(diff.pinsRoleSince.new)) (unchanged)")"
        )
        lines += logLines(diff.log)
        return lines
    }
}
