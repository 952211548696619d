// `pinion sign`: make an envelope from a payload, or add co-signatures to an envelope.

import Foundation
import PinionCore
import PinionCrypto

struct SignCommand: Command {
    static let path = ["sign"]
    static let summary = "sign a payload (new envelope) or co-sign an envelope"
    static let options: [OptionSpec] = [
        .value("key", repeatable: true), .value("out", short: "o"), .flag("force"),
        .flag("allow-single-pin"),
        .value("passphrase-file"),
    ]
    static let help = """
        usage: pinion sign --key K.key [--key K2.key ...] IN -o OUT [--force]
                           [--allow-single-pin] [--passphrase-file F]

        IN is a payload (a new DSSE envelope is made) or an envelope (signatures are added,
        for co-signing by several people in turn; the payload bytes never change).
        Each key signs PAE(payloadType, payload) with Ed25519 (DSSE v1).
        Refuses a payload the strict parser rejects and, unless --allow-single-pin, an
        enforced domain with fewer than two pins (backup-pin rule, RFC 7469 §4.3).
        One passphrase (--passphrase-file, PINION_PASSPHRASE or the terminal) opens every key.
        Review what you sign first: pinion manifest show IN.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let input = try arguments.positional(["IN"])[0]
        let out = try arguments.required("out")
        let keyPaths = arguments.values("key")
        guard !keyPaths.isEmpty else { throw CLIError.usage("at least one --key is required") }
        if !arguments.flag("force"), out != input, FileManager.default.fileExists(atPath: out) {
            throw CLIError.usage(
                "\(out) already exists; refusing to overwrite it (use --force to replace it)")
        }

        var envelope: Envelope
        switch try Load.document(input) {
        case .envelope(let existing, _):
            envelope = existing
            // The payload inside must pass the same strict checks as a bare one.
            do {
                switch existing.kind {
                case .root: _ = try RootPayload.parse(existing.payload, hasher: crypto.hasher)
                case .pins:
                    try checkBackupPins(try ManifestPayload.parse(existing.payload), arguments: arguments)
                }
            } catch let error as FormatError {
                throw CLIError.failure(Load.located(error, input).description)
            }
        case .rootPayload(_, let bytes):
            envelope = Envelope(kind: .root, payload: bytes)
        case .manifestPayload(let payload, let bytes):
            try checkBackupPins(payload, arguments: arguments)
            envelope = Envelope(kind: .pins, payload: bytes)
        }

        let passphrase = PassphraseOnce(file: arguments.value("passphrase-file"))
        var added: [String] = []
        for keyPath in keyPaths {
            if let warning = KeyFile.insecurePermissionsWarning(path: keyPath) { context.warn(warning) }
            let key = try KeyFile.readSecretKey(path: keyPath, passphrase: { try passphrase.get() })
            let keyID = key.publicKey.keyID
            if envelope.signatures.contains(where: { $0.keyID == keyID }) {
                context.warn("\(keyPath): key \(keyID) has already signed; not signing again")
                continue
            }
            guard envelope.signatures.count < Limits.standard.maxSignatures else {
                throw CLIError.failure(
                    "the envelope already has \(Limits.standard.maxSignatures) signatures (the limit)")
            }
            envelope.signatures.append(
                .init(keyID: keyID, signature: try key.sign(envelope.signingInput)))
            added.append(keyID)
        }
        try Files.writeAtomically(
            envelope.serialized(), to: out, replace: arguments.flag("force") || out == input)
        let kind = envelope.kind == .root ? "root" : "manifest"
        context.print(
            "wrote \(out): \(kind) payload \(envelope.payloadHashText), \(envelope.signatures.count) signature(s)"
        )
        for id in added { context.print("  signed by \(id)") }
    }

    static func checkBackupPins(_ payload: ManifestPayload, arguments: ParsedArguments) throws {
        guard !arguments.flag("allow-single-pin") else { return }
        let single = payload.domains.filter { $0.enforce && $0.pins.count < 2 }
        guard single.isEmpty else {
            throw CLIError.failure(
                "enforced domain(s) with fewer than two pins: \(single.map(\.name).joined(separator: ", ")); add a backup pin (RFC 7469 §4.3) or pass --allow-single-pin"
            )
        }
    }
}
