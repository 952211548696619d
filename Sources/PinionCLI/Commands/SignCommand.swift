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
        .value("passphrase-file"), .value("root"),
    ]
    static let help = """
        usage: pinion sign --key K.key [--key K2.key ...] IN -o OUT [--force]
                           [--allow-single-pin] [--passphrase-file F] [--root ROOT_ENVELOPE]

        IN is a payload (a new DSSE envelope is made) or an envelope (signatures are added,
        for co-signing by several people in turn; the payload bytes never change).
        OUT may be IN itself (co-signing in place); any other existing OUT needs --force.
        Each key signs PAE(payloadType, payload) with Ed25519 (DSSE v1).
        Refuses a payload the strict parser rejects and, unless --allow-single-pin, an
        enforced domain with fewer than two pins (backup-pin rule, RFC 7469 §4.3).
        One passphrase (--passphrase-file, PINION_PASSPHRASE or the terminal) opens every key.
        Review what you sign first: pinion manifest show IN.
        With --root (the root the document will be checked against), a manifest whose
        scope or lifetime breaks that root's rules is refused, and a key outside the role
        that must sign (pins role for a manifest; the given or the new root role for a
        root) is warned about: its signature would not count.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let input = try arguments.positional(["IN"])[0]
        let out = try arguments.required("out")
        let keyPaths = arguments.values("key")
        guard !keyPaths.isEmpty else { throw CLIError.usage("at least one --key is required") }
        // OUT may be IN itself: co-signing in place replaces the envelope with itself plus
        // the new signatures, so it needs no --force.
        let inPlace =
            URL(fileURLWithPath: out).standardizedFileURL.path == URL(fileURLWithPath: input).standardizedFileURL.path
        if !arguments.flag("force"), !inPlace, FileManager.default.fileExists(atPath: out) {
            throw CLIError.usage(
                "\(out) already exists; refusing to overwrite it (use --force to replace it)")
        }

        var envelope: Envelope
        let summary: String
        var manifest: ManifestPayload?
        var root: RootPayload?
        do {
            switch try Load.document(input) {
            case .envelope(let existing, _):
                envelope = existing
                // The payload inside must pass the same strict checks as a bare one.
                switch existing.kind {
                case .root: root = try RootPayload.parse(existing.payload, crypto: crypto)
                case .pins: manifest = try ManifestPayload.parse(existing.payload)
                }
            case .rootPayload(let payload, let bytes):
                envelope = Envelope(kind: .root, payload: bytes)
                root = payload
            case .manifestPayload(let payload, let bytes):
                envelope = Envelope(kind: .pins, payload: bytes)
                manifest = payload
            }
        } catch let error as FormatError {
            throw CLIError.failure(Load.located(error, input).description)
        }
        if let manifest {
            try checkBackupPins(manifest, arguments: arguments)
            if manifest.version > 1, manifest.previous == nil {
                context.warn(
                    "\(input): version \(manifest.version) has no previous hash; publishing it after an earlier version will be refused (use manifest init --previous)"
                )
            }
            summary =
                "manifest version \(manifest.version) (rootVersion \(manifest.rootVersion)) of scope \(manifest.scope), \(manifest.domains.count) domain(s), \(manifest.revokedPins.count) revoked pin(s), expires \(manifest.expiresAt)"
        } else if let root {
            summary =
                "root version \(root.version) of scope \(root.scope), root role \(root.rootRole.threshold)-of-\(root.rootRole.keyIDs.count), pins role \(root.pinsRole.threshold)-of-\(root.pinsRole.keyIDs.count), expires \(root.expiresAt)"
        } else {
            summary = ""
        }
        var signingRole: Set<String>?
        if let rootPath = arguments.value("root") {
            let (_, trusted) = try Load.rootEnvelope(rootPath, context: context)
            if let manifest {
                guard manifest.scope == trusted.scope else {
                    throw CLIError.failure("\(input): scope \(manifest.scope) is not the root's scope \(trusted.scope)")
                }
                guard manifest.lifetime <= trusted.maxManifestLifetime else {
                    throw CLIError.failure(
                        "\(input): lifetime \(HumanDuration.text(manifest.lifetime)) exceeds the root's cap of \(HumanDuration.text(trusted.maxManifestLifetime)) (maxManifestLifetime)"
                    )
                }
                if manifest.rootVersion != trusted.version {
                    context.warn(
                        "\(input): rootVersion \(manifest.rootVersion) is not the given root's version \(trusted.version)"
                    )
                }
                signingRole = Set(trusted.pinsRole.keyIDs)
            } else if let root {
                signingRole = Set(trusted.rootRole.keyIDs).union(root.rootRole.keyIDs)
            }
        }

        let passphrase = PassphraseOnce(file: arguments.value("passphrase-file"))
        var added: [String] = []
        for keyPath in keyPaths {
            // Refused first (a .pub file, not a key), warned about only once it is a key.
            let (key, encrypted) = try KeyFile.readSecretKeyFile(path: keyPath, passphrase: { try passphrase.get() })
            if let warning = KeyFile.insecurePermissionsWarning(path: keyPath) { context.warn(warning) }
            if !encrypted { context.warn("\(keyPath) is NOT encrypted; anyone who copies it can sign") }
            let keyID = key.publicKey.keyID
            if let signingRole, !signingRole.contains(keyID) {
                context.warn(
                    "\(keyPath): key \(keyID) is not in the role that signs this document; its signature will not count"
                )
            }
            let existing = envelope.signatures.indices.filter { envelope.signatures[$0].keyID == keyID }
            if !existing.isEmpty {
                let valid = existing.contains { index in
                    crypto.verifier.isValidSignature(
                        envelope.signatures[index].signature, of: envelope.signingInput, publicKey: key.publicKey.raw)
                }
                if valid {
                    context.warn("\(keyPath): key \(keyID) has already signed; not signing again")
                    continue
                }
                // A signature under this key id that does not verify (corrupted, or planted
                // to block this signer) is replaced by a real one.
                context.warn("\(keyPath): replacing an invalid signature listed under key \(keyID)")
                for index in existing.reversed() { envelope.signatures.remove(at: index) }
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
            envelope.serialized(), to: out, replace: arguments.flag("force") || inPlace)
        context.print("wrote \(out): \(summary)")
        context.print("payload \(envelope.payloadHashText), \(envelope.signatures.count) signature(s)")
        for id in added { context.print("  signed by \(id)") }
    }

    static func checkBackupPins(_ payload: ManifestPayload, arguments: ParsedArguments) throws {
        guard !arguments.flag("allow-single-pin") else { return }
        // Revoked pins never match, so they do not count as a backup.
        let revoked = Set(payload.revokedPins)
        let single = payload.domains.filter { domain in
            domain.enforce && domain.pins.filter { !revoked.contains($0) }.count < 2
        }
        guard single.isEmpty else {
            throw CLIError.failure(
                "enforced domain(s) with fewer than two usable (unrevoked) pins: \(single.map(\.name).joined(separator: ", ")); add a backup pin (RFC 7469 §4.3) or pass --allow-single-pin"
            )
        }
    }
}
