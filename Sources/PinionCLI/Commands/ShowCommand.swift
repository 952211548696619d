// `pinion manifest show`: a payload or envelope as a table (or JSON) for people to review.

import PinionAudit
import PinionCore
import PinionCrypto

struct ManifestShowCommand: Command {
    static let path = ["manifest", "show"]
    static let summary = "print a payload or envelope (root or manifest) as a table or JSON"
    static let options: [OptionSpec] = [.flag("json")]
    static let help = """
        usage: pinion manifest show FILE [--json]

        Prints a manifest or root, bare payload or envelope: versions, dates, previous
        hash, payload SHA-256, signers' key ids (NOT verified here: use pinion verify),
        and the domains with their flags and pins (or the root's keys and roles).
        --json prints the same facts as JSON.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let file = try arguments.positional(["FILE"])[0]
        let document = try ReviewedDocument.load(file)
        if arguments.flag("json") {
            context.out(String(decoding: JSONWriter.write(json(document)), as: UTF8.self))
            return
        }
        for line in lines(document) { context.print(TerminalText.escape(line)) }
    }

    /// The table of `document`: every member of the payload and envelope, those the table
    /// does not name listed under "other members".
    static func lines(_ document: ReviewedDocument) -> [String] {
        let hash = "sha256:" + Hex.encode(crypto.hasher.sha256(document.payload))
        var output: [String] = []
        if let manifest = document.manifest {
            output = table(manifest, hash: hash, signatures: document.envelope?.signatures)
        } else if let root = document.root {
            output = table(root, hash: hash, signatures: document.envelope?.signatures)
        }
        let others = document.otherMembers
        output.append(
            "other members  \(others.isEmpty ? "none" : "\(others.count) (listed as written; Pinion does not act on them)")"
        )
        for member in others { output.append("  \(member.path) = \(member.value)") }
        return output
    }

    /// The JSON form of `document`, `otherMembers` included.
    static func json(_ document: ReviewedDocument) -> JSONValue {
        let hash = "sha256:" + Hex.encode(crypto.hasher.sha256(document.payload))
        var object: JSONObject
        if let manifest = document.manifest {
            object = json(manifest, hash: hash, signatures: document.envelope?.signatures)
        } else if let root = document.root {
            object = json(root, hash: hash, signatures: document.envelope?.signatures)
        } else {
            object = JSONObject()
        }
        object.set(
            "otherMembers",
            .array(
                document.otherMembers.map {
                    .object(JSONObject([.init("path", .string($0.path)), .init("value", .string($0.value))]))
                }))
        return .object(object)
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(1, width - text.count))
    }

    static func duration(_ seconds: Int64) -> String {
        if seconds % 86_400 == 0 { return "\(seconds / 86_400)d" }
        if seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        return "\(seconds)s"
    }

    static func signatureLines(_ signatures: [Envelope.Signature]?) -> [String] {
        guard let signatures else { return ["signatures  none (unsigned payload)"] }
        return ["signatures  \(signatures.count) (not verified here; use pinion verify)"]
            + signatures.map { "  keyid \($0.keyID)  sig \(Base64.encode($0.signature))" }
    }

    static func table(_ payload: ManifestPayload, hash: String, signatures: [Envelope.Signature]?) -> [String] {
        var output: [String] = []
        output.append(
            "manifest    scope \(payload.scope)  version \(payload.version)  rootVersion \(payload.rootVersion)"
        )
        output.append("issuedAt    \(payload.issuedAt)")
        output.append("expiresAt   \(payload.expiresAt)  (lifetime \(duration(payload.lifetime)))")
        output.append(
            "previous    \(payload.previous.map { "sha256:" + Hex.encode($0) } ?? "none (first version)")"
        )
        output.append("payload     \(hash)")
        output += signatureLines(signatures)
        output.append("domains     \(payload.domains.count)")
        if !payload.domains.isEmpty {
            let width = max(6, payload.domains.map(\.name.count).max() ?? 0) + 2
            output.append("  " + pad("NAME", width) + pad("MODE", 13) + pad("SUBDOMAINS", 12) + "PINS")
            for domain in payload.domains {
                let mode = domain.enforce ? "enforce" : "report-only"
                let subdomains = domain.includeSubdomains ? "yes" : "no"
                for (index, pin) in domain.pins.enumerated() {
                    let revoked = payload.revokedPins.contains(pin) ? "  (revoked)" : ""
                    if index == 0 {
                        output.append(
                            "  " + pad(domain.name, width) + pad(mode, 13) + pad(subdomains, 12) + pin.description
                                + revoked)
                    } else {
                        output.append(
                            "  " + String(repeating: " ", count: width + 25) + pin.description + revoked)
                    }
                }
            }
        }
        output.append("revokedPins \(payload.revokedPins.count)")
        for pin in payload.revokedPins { output.append("  \(pin)") }
        return output
    }

    static func table(_ payload: RootPayload, hash: String, signatures: [Envelope.Signature]?) -> [String] {
        var output: [String] = []
        output.append("root        scope \(payload.scope)  version \(payload.version)")
        output.append("issuedAt    \(payload.issuedAt)")
        output.append("expiresAt   \(payload.expiresAt)")
        output.append("manifest lifetime cap  \(duration(payload.maxManifestLifetime))")
        output.append("payload     \(hash)")
        output += signatureLines(signatures)
        for name in RoleName.allCases {
            let role = payload.role(name)
            output.append("role \(name.rawValue)   threshold \(role.threshold) of \(role.keyIDs.count)")
            for id in role.keyIDs { output.append("  keyid \(id)") }
        }
        output.append(
            "pinsRoleSince \(payload.pinsRoleSince.map(String.init) ?? "absent (this root's own version, \(payload.version))")"
        )
        output.append("keys        \(payload.keys.count)")
        for key in payload.keys { output.append("  keyid \(key.keyID)  ed25519 \(Base64.encode(key.publicKey))") }
        output += logLines(payload.log)
        return output
    }

    /// The `log` member: origin, log key, each witness (name, key id, URL), quorum and ages.
    static func logLines(_ log: LogPolicy?) -> [String] {
        guard let log else { return ["log         none (clients require no transparency log proof)"] }
        var output = ["log         origin \(log.origin)"]
        output.append("  log key   \(noteKey(log.logKey))")
        for witness in log.witnesses {
            output.append("  witness   \(noteKey(witness.key))  url \(witness.url)")
        }
        output.append("  quorum    \(log.quorum) of \(log.witnesses.count) witnesses")
        output.append(
            "  maxCheckpointAge \(log.maxCheckpointAge == 0 ? "0 (freshness off)" : HumanDuration.text(log.maxCheckpointAge))"
        )
        output.append("  checkpointGrace  \(HumanDuration.text(log.checkpointGrace))")
        return output
    }

    /// A note verifier key as `name  key id HEX  (TEXT)`.
    static func noteKey(_ key: NoteVerifierKey) -> String {
        "\(key.name)  key id \(Hex.encode(NoteVerifierKey.bigEndian(key.keyID)))  (\(key.text))"
    }

    /// Each signature's key id and bytes (base64), nil for a bare payload.
    static func signaturesJSON(_ signatures: [Envelope.Signature]?) -> JSONValue {
        guard let signatures else { return .null }
        return .array(
            signatures.map {
                .object(
                    JSONObject([
                        .init("keyid", .string($0.keyID)), .init("sig", .string(Base64.encode($0.signature))),
                    ]))
            })
    }

    static func signatureJSON(_ signatures: [Envelope.Signature]?) -> JSONValue {
        guard let signatures else { return .null }
        return .array(signatures.map { .string($0.keyID) })
    }

    static func json(_ payload: ManifestPayload, hash: String, signatures: [Envelope.Signature]?) -> JSONObject {
        let domains: [JSONValue] = payload.domains.map { domain in
            .object(
                JSONObject([
                    .init("name", .string(domain.name)), .init("enforce", .bool(domain.enforce)),
                    .init("includeSubdomains", .bool(domain.includeSubdomains)),
                    .init("pins", .array(domain.pins.map { .string($0.description) })),
                ]))
        }
        return JSONObject([
            .init("kind", .string("pins")), .init("scope", .string(payload.scope)),
            .init("version", .number(String(payload.version))),
            .init("rootVersion", .number(String(payload.rootVersion))),
            .init("issuedAt", .string(payload.issuedAt.description)),
            .init("expiresAt", .string(payload.expiresAt.description)),
            .init("previous", payload.previous.map { .string("sha256:" + Hex.encode($0)) } ?? .null),
            .init("payloadSHA256", .string(hash)),
            .init("signatureKeyIDs", signatureJSON(signatures)),
            .init("signaturesVerified", .bool(false)), .init("domains", .array(domains)),
            .init("revokedPins", .array(payload.revokedPins.map { .string($0.description) })),
            .init("signatures", signaturesJSON(signatures)),
        ])
    }

    static func json(_ payload: RootPayload, hash: String, signatures: [Envelope.Signature]?) -> JSONObject {
        func role(_ role: RootPayload.Role) -> JSONValue {
            .object(
                JSONObject([
                    .init("keyids", .array(role.keyIDs.map { .string($0) })),
                    .init("threshold", .number(String(role.threshold))),
                ]))
        }
        return JSONObject([
            .init("kind", .string("root")), .init("scope", .string(payload.scope)),
            .init("version", .number(String(payload.version))),
            .init("issuedAt", .string(payload.issuedAt.description)),
            .init("expiresAt", .string(payload.expiresAt.description)),
            .init("maxManifestLifetime", .number(String(payload.maxManifestLifetime))),
            .init("payloadSHA256", .string(hash)),
            .init("signatureKeyIDs", signatureJSON(signatures)),
            .init("signaturesVerified", .bool(false)),
            .init(
                "roles",
                .object(
                    JSONObject([
                        .init("root", role(payload.rootRole)), .init("pins", role(payload.pinsRole)),
                    ]))),
            .init("pinsRoleSince", payload.pinsRoleSince.map { .number(String($0)) } ?? .null),
            .init(
                "keys",
                .array(
                    payload.keys.map {
                        .object(
                            JSONObject([
                                .init("keyid", .string($0.keyID)),
                                .init("public", .string(Base64.encode($0.publicKey))),
                            ]))
                    })),
            .init("log", ReviewJSON.log(payload.log)),
            .init("signatures", signaturesJSON(signatures)),
        ])
    }
}
