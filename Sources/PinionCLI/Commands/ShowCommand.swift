// `pinion manifest show`: a payload or envelope as a table (or JSON) for people to review.

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
        let payloadBytes: [UInt8]
        var signatures: [Envelope.Signature]?
        var kind: PayloadKind
        switch try Load.document(file) {
        case .envelope(let envelope, _):
            payloadBytes = envelope.payload
            signatures = envelope.signatures
            kind = envelope.kind
        case .rootPayload(_, let bytes):
            payloadBytes = bytes
            kind = .root
        case .manifestPayload(_, let bytes):
            payloadBytes = bytes
            kind = .pins
        }
        let hash = "sha256:" + Hex.encode(crypto.hasher.sha256(payloadBytes))
        do throws(FormatError) {
            switch kind {
            case .pins:
                let payload = try ManifestPayload.parse(payloadBytes)
                if arguments.flag("json") {
                    context.out(
                        String(decoding: json(payload, hash: hash, signatures: signatures), as: UTF8.self))
                } else {
                    table(payload, hash: hash, signatures: signatures, context: context)
                }
            case .root:
                let payload = try RootPayload.parse(payloadBytes, crypto: crypto)
                if arguments.flag("json") {
                    context.out(
                        String(decoding: json(payload, hash: hash, signatures: signatures), as: UTF8.self))
                } else {
                    table(payload, hash: hash, signatures: signatures, context: context)
                }
            }
        } catch {
            throw CLIError.failure(Load.located(error, file).description)
        }
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(1, width - text.count))
    }

    static func duration(_ seconds: Int64) -> String {
        if seconds % 86_400 == 0 { return "\(seconds / 86_400)d" }
        if seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        return "\(seconds)s"
    }

    static func signatureLines(_ signatures: [Envelope.Signature]?, context: CLIContext) {
        guard let signatures else {
            context.print("signatures  none (unsigned payload)")
            return
        }
        context.print("signatures  \(signatures.count) (not verified here; use pinion verify)")
        for signature in signatures { context.print("  keyid \(signature.keyID)") }
    }

    static func table(
        _ payload: ManifestPayload, hash: String, signatures: [Envelope.Signature]?, context: CLIContext
    ) {
        context.print(
            "manifest    scope \(payload.scope)  version \(payload.version)  rootVersion \(payload.rootVersion)"
        )
        context.print("issuedAt    \(payload.issuedAt)")
        context.print("expiresAt   \(payload.expiresAt)  (lifetime \(duration(payload.lifetime)))")
        context.print(
            "previous    \(payload.previous.map { "sha256:" + Hex.encode($0) } ?? "none (first version)")"
        )
        context.print("payload     \(hash)")
        signatureLines(signatures, context: context)
        context.print("domains     \(payload.domains.count)")
        if !payload.domains.isEmpty {
            let width = max(6, payload.domains.map(\.name.count).max() ?? 0) + 2
            context.print("  " + pad("NAME", width) + pad("MODE", 13) + pad("SUBDOMAINS", 12) + "PINS")
            for domain in payload.domains {
                let mode = domain.enforce ? "enforce" : "report-only"
                let subdomains = domain.includeSubdomains ? "yes" : "no"
                for (index, pin) in domain.pins.enumerated() {
                    let revoked = payload.revokedPins.contains(pin) ? "  (revoked)" : ""
                    if index == 0 {
                        context.print(
                            "  " + pad(domain.name, width) + pad(mode, 13) + pad(subdomains, 12) + pin.description
                                + revoked)
                    } else {
                        context.print(
                            "  " + String(repeating: " ", count: width + 25) + pin.description + revoked)
                    }
                }
            }
        }
        context.print("revokedPins \(payload.revokedPins.count)")
        for pin in payload.revokedPins { context.print("  \(pin)") }
    }

    static func table(
        _ payload: RootPayload, hash: String, signatures: [Envelope.Signature]?, context: CLIContext
    ) {
        context.print("root        scope \(payload.scope)  version \(payload.version)")
        context.print("issuedAt    \(payload.issuedAt)")
        context.print("expiresAt   \(payload.expiresAt)")
        context.print("manifest lifetime cap  \(duration(payload.maxManifestLifetime))")
        context.print("payload     \(hash)")
        signatureLines(signatures, context: context)
        for name in RoleName.allCases {
            let role = payload.role(name)
            context.print("role \(name.rawValue)   threshold \(role.threshold) of \(role.keyIDs.count)")
            for id in role.keyIDs { context.print("  keyid \(id)") }
        }
    }

    static func signatureJSON(_ signatures: [Envelope.Signature]?) -> JSONValue {
        guard let signatures else { return .null }
        return .array(signatures.map { .string($0.keyID) })
    }

    static func json(_ payload: ManifestPayload, hash: String, signatures: [Envelope.Signature]?)
        -> [UInt8]
    {
        let domains: [JSONValue] = payload.domains.map { domain in
            .object(
                JSONObject([
                    .init("name", .string(domain.name)), .init("enforce", .bool(domain.enforce)),
                    .init("includeSubdomains", .bool(domain.includeSubdomains)),
                    .init("pins", .array(domain.pins.map { .string($0.description) })),
                ]))
        }
        return JSONWriter.write(
            .object(
                JSONObject([
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
                ])))
    }

    static func json(_ payload: RootPayload, hash: String, signatures: [Envelope.Signature]?)
        -> [UInt8]
    {
        func role(_ role: RootPayload.Role) -> JSONValue {
            .object(
                JSONObject([
                    .init("keyids", .array(role.keyIDs.map { .string($0) })),
                    .init("threshold", .number(String(role.threshold))),
                ]))
        }
        return JSONWriter.write(
            .object(
                JSONObject([
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
                ])))
    }
}
