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
        --json prints the same facts as JSON.
        Exit 0 compared (whether or not anything changed), 1 unreadable document, 2 usage
        (a root against a manifest, different scopes), 3 I/O.

        """

    /// One side of the comparison.
    struct Side {
        let kind: PayloadKind
        let payload: [UInt8]
        let envelope: Envelope?
    }

    static func side(_ path: String) throws(CLIError) -> Side {
        switch try Load.document(path) {
        case .envelope(let envelope, _): return Side(kind: envelope.kind, payload: envelope.payload, envelope: envelope)
        case .rootPayload(_, let bytes): return Side(kind: .root, payload: bytes, envelope: nil)
        case .manifestPayload(_, let bytes): return Side(kind: .pins, payload: bytes, envelope: nil)
        }
    }

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let files = try arguments.positional(["OLD", "NEW"])
        let old = try side(files[0])
        let new = try side(files[1])
        guard old.kind == new.kind else {
            throw CLIError.usage("\(files[0]), \(files[1]): \(DiffError.kindsDiffer(old: old.kind, new: new.kind))")
        }
        let oldHash = crypto.hasher.sha256(old.payload)
        let newHash = crypto.hasher.sha256(new.payload)
        var signatures: SignatureDiff?
        if let oldEnvelope = old.envelope, let newEnvelope = new.envelope {
            signatures = SignatureDiff.between(oldEnvelope, newEnvelope)
        }
        let lines: [String]
        var json: JSONObject
        switch old.kind {
        case .pins:
            let oldPayload = try manifest(old, file: files[0])
            let newPayload = try manifest(new, file: files[1])
            let diff: ManifestDiff
            do { diff = try ManifestDiff.between(oldPayload, newPayload) } catch {
                throw CLIError.usage("\(files[0]), \(files[1]): \(error)")
            }
            let chains = newPayload.previous == oldHash
            json = object(diff.json())
            json.set("chainsToOld", .bool(chains))
            lines = manifestLines(diff, chains: chains, oldHash: oldHash)
        case .root:
            let oldPayload = try root(old, file: files[0])
            let newPayload = try root(new, file: files[1])
            let diff: RootDiff
            do { diff = try RootDiff.between(oldPayload, newPayload) } catch {
                throw CLIError.usage("\(files[0]), \(files[1]): \(error)")
            }
            json = object(diff.json())
            lines = rootLines(diff)
        }
        json.set("payloadIdentical", .bool(oldHash == newHash))
        json.set("oldPayloadSHA256", .string("sha256:" + Hex.encode(oldHash)))
        json.set("newPayloadSHA256", .string("sha256:" + Hex.encode(newHash)))
        json.set(
            "signatures",
            signatures.map {
                .object(
                    JSONObject([
                        .init("added", .array($0.added.map { .string($0) })),
                        .init("removed", .array($0.removed.map { .string($0) })),
                        .init("verified", .bool(false)),
                    ]))
            } ?? .null)
        if arguments.flag("json") {
            context.out(JSONWriter.terminalSafeText(.object(json)))
            return
        }
        context.print("old         \(files[0])  payload sha256:\(Hex.encode(oldHash))")
        context.print("new         \(files[1])  payload sha256:\(Hex.encode(newHash))")
        if oldHash == newHash { context.print("payload     identical") }
        for line in lines { context.print(TerminalText.escape(line)) }
        if let signatures {
            if signatures.added.isEmpty && signatures.removed.isEmpty {
                context.print("signatures  same signers (not verified here; use pinion verify)")
            } else {
                context.print("signatures  (not verified here; use pinion verify)")
                for id in signatures.added { context.print("  + keyid \(id)") }
                for id in signatures.removed { context.print("  - keyid \(id)") }
            }
        }
    }

    static func manifest(_ side: Side, file: String) throws(CLIError) -> ManifestPayload {
        do { return try ManifestPayload.parse(side.payload) } catch {
            throw .failure(Load.located(error, file).description)
        }
    }

    static func root(_ side: Side, file: String) throws(CLIError) -> RootPayload {
        do { return try RootPayload.parse(side.payload, crypto: crypto) } catch {
            throw .failure(Load.located(error, file).description)
        }
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
        return lines
    }
}
