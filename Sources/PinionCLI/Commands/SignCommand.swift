// `pinion sign`: make an envelope from a payload, or add co-signatures to an envelope.

import Foundation
import PinionCore
import PinionCrypto

struct SignCommand: Command {
    static let path = ["sign"]
    static let summary = "sign a payload (new envelope) or co-sign an envelope"
    static let options: [OptionSpec] = [
        .value("key", repeatable: true), .value("out", short: "o"), .flag("force"),
        .flag("allow-single-pin"), .flag("allow-foreign-key"),
        .value("passphrase-file", repeatable: true), .value("root"), HardwareModule.option,
        .value("pkcs11-max-message"), .value("previous"),
    ]
    static let help = """
        usage: pinion sign --key K.key|URI [--key K2.key|URI ...] IN -o OUT [--force]
                           [--allow-single-pin] [--passphrase-file F ...]
                           [--root ROOT_ENVELOPE [--allow-foreign-key]]
                           [--pkcs11-module M.so] [--pkcs11-max-message BYTES]
                           [--previous OLD]

        IN is a payload (a new DSSE envelope is made) or an envelope (signatures are added,
        for co-signing by several people in turn; the payload bytes never change).
        OUT may be IN itself (co-signing in place); any other existing OUT needs --force.
        Each key signs PAE(payloadType, payload) with Ed25519 (DSSE v1).
        Refuses a payload the strict parser rejects and, unless --allow-single-pin, an
        enforced domain with fewer than two pins (backup-pin rule, RFC 7469 §4.3).
        Each encrypted key file asks its own passphrase, naming the file: --passphrase-file
        may be given once per key FILE, in the order of the key files (URIs take none);
        without it, PINION_PASSPHRASE, else the terminal.
        A key may be a PKCS#11 URI (RFC 7512, pkcs11:token=T;object=LABEL): it signs in the
        token through --pkcs11-module or PINION_PKCS11_MODULE, with the PIN from the URI's
        pin-source=file:/PATH, PINION_PKCS11_PIN or the terminal (one try, never retried),
        and its signature is verified before anything is written. The whole PAE is sent to
        the token, which caps its size: at most --pkcs11-max-message bytes (default 2000).
        Before any passphrase or PIN is asked, every member of the document is printed
        (as pinion manifest show prints it); with --previous OLD (the version this one
        replaces, payload or envelope) the marked comparison of pinion diff OLD IN is
        printed too, changes that lower protection or widen trust first.
        With --root (the root the document will be checked against), a manifest whose
        scope or lifetime breaks that root's rules is refused, and so is a key outside the
        roles that must sign (the pins role for a manifest; for a root, its own root role
        and, for a rotation, the given root's root role), exit 1 with nothing written,
        unless --allow-foreign-key (its signature would not count). After each signature
        it says how many more each role needs. Without --root the role cannot be checked.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let input = try arguments.positional(["IN"])[0]
        let out = try arguments.required("out")
        let keyPaths = arguments.values("key")
        guard !keyPaths.isEmpty else { throw CLIError.usage("at least one --key is required") }
        if arguments.flag("allow-foreign-key"), arguments.value("root") == nil {
            throw CLIError.usage("--allow-foreign-key needs --root: without a root no key is foreign")
        }
        let replace = try checkOutput(out, input: input, arguments)
        // The payload inside an envelope passes the same strict checks as a bare one.
        let document = try ReviewedDocument.load(input)
        var envelope = document.envelope ?? Envelope(kind: document.kind, payload: document.payload)
        let review = try reviewLines(document, input: input, arguments)
        let summary = try checkedSummary(document, input: input, arguments, context)
        var roles: (roles: SigningRoles, root: String)?
        if let rootPath = arguments.value("root"),
            let signing = try signingRoles(document, input: input, root: rootPath, context)
        {
            roles = (signing, rootPath)
        }

        for line in review { context.print(TerminalText.escape(line)) }
        let keys = try signingKeys(keyPaths, message: envelope.signingInput, arguments)
        let added = try sign(&envelope, with: keys, roles: roles, arguments, context)
        try Files.writeAtomically(envelope.serialized(), to: out, replace: replace)
        context.print("wrote \(out): \(summary)")
        context.print("payload \(envelope.payloadHashText), \(envelope.signatures.count) signature(s)")
        for (id, progress) in added {
            context.print("  signed by \(id)" + (progress.map { ": " + $0 } ?? ""))
        }
        if roles == nil {
            // Said once the envelope is written, so a refusal before it carries no extra warning.
            context.warn("no --root given: the role that signs \(input) could not be checked")
        }
    }

    /// Refuses an existing OUT without --force, unless it is IN itself.
    ///
    /// - Returns: whether writing may replace an existing file.
    private static func checkOutput(_ out: String, input: String, _ arguments: ParsedArguments) throws -> Bool {
        // OUT may be IN itself: co-signing in place replaces the envelope with itself plus
        // the new signatures, so it needs no --force.
        let inPlace =
            URL(fileURLWithPath: out).standardizedFileURL.path == URL(fileURLWithPath: input).standardizedFileURL.path
        if !arguments.flag("force"), !inPlace, FileManager.default.fileExists(atPath: out) {
            throw CLIError.usage(
                "\(out) already exists; refusing to overwrite it (use --force to replace it)")
        }
        return arguments.flag("force") || inPlace
    }

    /// What the signer reviews: every member of the document (as `pinion manifest show` prints
    /// it) and, with --previous, the marked comparison with the version it replaces.
    private static func reviewLines(_ document: ReviewedDocument, input: String, _ arguments: ParsedArguments)
        throws -> [String]
    {
        var review = ["review      every member of \(input):"] + ManifestShowCommand.lines(document).map { "  " + $0 }
        if let previousPath = arguments.value("previous") {
            let (lines, _) = try DiffCommand.compare(try ReviewedDocument.load(previousPath), document)
            review += ["review      changes from \(previousPath):"] + lines.map { "  " + $0 }
        }
        return review
    }

    /// Refuses a manifest that breaks the backup-pin rule, warns about a later version without a
    /// previous hash, and returns the one-line summary of the document.
    private static func checkedSummary(
        _ document: ReviewedDocument, input: String, _ arguments: ParsedArguments, _ context: CLIContext
    ) throws -> String {
        if let manifest = document.manifest {
            try checkBackupPins(manifest, arguments: arguments)
            if manifest.version > 1, manifest.previous == nil {
                context.warn(
                    "\(input): version \(manifest.version) has no previous hash; publishing it after an earlier version will be refused (use manifest init --previous)"
                )
            }
            return
                "manifest version \(manifest.version) (rootVersion \(manifest.rootVersion)) of scope \(manifest.scope), \(manifest.domains.count) domain(s), \(manifest.revokedPins.count) revoked pin(s), expires \(manifest.expiresAt)"
        }
        if let root = document.root {
            return
                "root version \(root.version) of scope \(root.scope), root role \(root.rootRole.threshold)-of-\(root.rootRole.keyIDs.count), pins role \(root.pinsRole.threshold)-of-\(root.pinsRole.keyIDs.count), expires \(root.expiresAt)"
        }
        return ""
    }

    /// Loads the root at `rootPath`, refuses a manifest whose scope or lifetime breaks its rules
    /// (and warns about another rootVersion), and returns the roles that must sign the document
    /// (nil for a document that is neither a manifest nor a root).
    private static func signingRoles(
        _ document: ReviewedDocument, input: String, root rootPath: String, _ context: CLIContext
    ) throws -> SigningRoles? {
        let (_, trusted) = try Load.rootEnvelope(rootPath, context: context)
        if let manifest = document.manifest {
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
        }
        return SigningRoles(manifest: document.manifest, root: document.root, trusted: trusted)
    }

    /// The keys of one `pinion sign`, checked before any passphrase or PIN is asked.
    private struct SigningKeys {
        /// Each --key as given and as parsed.
        let keys: [(path: String, reference: KeyReference)]
        /// One per key file, in the order of the key files; empty: PINION_PASSPHRASE or the terminal.
        let passphraseFiles: [String]
        /// The largest PAE a PKCS#11 token is sent, in bytes.
        let maximumMessage: Int
    }

    /// Parses the --key references and checks the --passphrase-file count and, for PKCS#11 keys,
    /// the size of `message` against --pkcs11-max-message.
    private static func signingKeys(_ keyPaths: [String], message: [UInt8], _ arguments: ParsedArguments)
        throws -> SigningKeys
    {
        let references = try keyPaths.map { (text) throws(CLIError) in try KeyReference.parse(text) }
        let passphraseFiles = arguments.values("passphrase-file")
        let fileKeyCount = references.filter { if case .file = $0 { return true } else { return false } }.count
        guard passphraseFiles.isEmpty || passphraseFiles.count == fileKeyCount else {
            throw CLIError.usage(
                "\(passphraseFiles.count) --passphrase-file for \(fileKeyCount) key file(s): give one per key file, in the order of the key files (each key has its own passphrase; URIs take none)"
            )
        }
        let maximumMessage = Int(try arguments.integer("pkcs11-max-message", in: 1...(1 << 30)) ?? 2000)
        if references.contains(where: { if case .pkcs11 = $0 { return true } else { return false } }),
            message.count > maximumMessage
        {
            // Refused before any passphrase or PIN is asked and before any token is touched.
            let uri = references.compactMap { if case .pkcs11(let uri) = $0 { return uri } else { return nil } }[0]
            throw CLIError.failure(
                PKCS11Error.messageTooLarge(uri: uri.description, size: message.count, limit: maximumMessage)
                    .description)
        }
        return SigningKeys(
            keys: zip(keyPaths, references).map { ($0, $1) }, passphraseFiles: passphraseFiles,
            maximumMessage: maximumMessage)
    }

    /// Adds each key's signature in turn by the co-signing rule (`Envelope.coSign`).
    ///
    /// - Returns: the key ids that signed, each with the roles' progress after its signature.
    private static func sign(
        _ envelope: inout Envelope, with keys: SigningKeys, roles: (roles: SigningRoles, root: String)?,
        _ arguments: ParsedArguments, _ context: CLIContext
    ) throws -> [(keyID: String, progress: String?)] {
        let message = envelope.signingInput
        let hardware = HardwareModule(arguments)
        var passphraseFiles = keys.passphraseFiles[...]
        var added: [(keyID: String, progress: String?)] = []
        for (keyPath, reference) in keys.keys {
            var passphraseFile: String?
            if case .file = reference { passphraseFile = passphraseFiles.popFirst() }
            let signer = try signer(
                keyPath, reference, passphraseFile: passphraseFile, message: message, hardware: hardware,
                maximumMessage: keys.maximumMessage, context)
            let keyID = signer.publicKey.keyID
            if let roles, !roles.roles.holds(keyID) {
                try refuseForeignKey(keyPath, keyID: keyID, roles: roles.roles, root: roles.root, arguments, context)
            }
            let outcome = try envelope.coSign(
                keyID: keyID, publicKey: signer.publicKey.raw, verifier: crypto.verifier, sign: signer.sign)
            switch outcome {
            case .alreadySigned:
                context.warn("\(keyPath): key \(keyID) has already signed; not signing again")
                continue
            case .replacedInvalid:
                context.warn("\(keyPath): replacing an invalid signature listed under key \(keyID)")
            case .appended:
                break
            }
            added.append((keyID, roles?.roles.progress(envelope, crypto: crypto)))
        }
        return added
    }

    /// One key ready to sign `message`: a key file is read (asking its passphrase) and signs when
    /// called; a PKCS#11 key signs in its token now, its signature verified against the token's
    /// public key.
    private static func signer(
        _ keyPath: String, _ reference: KeyReference, passphraseFile: String?, message: [UInt8],
        hardware: HardwareModule, maximumMessage: Int, _ context: CLIContext
    ) throws -> (publicKey: Ed25519PublicKey, sign: () throws -> [UInt8]) {
        switch reference {
        case .file:
            let passphrase = PassphraseOnce(file: passphraseFile, prompt: "Passphrase for \(keyPath): ")
            // Refused first (a .pub file, not a key), warned about only once it is a key.
            let (key, encrypted) = try KeyFile.readSecretKeyFile(
                path: keyPath, passphrase: { try passphrase.get() })
            if let warning = KeyFile.insecurePermissionsWarning(path: keyPath) { context.warn(warning) }
            if !encrypted { context.warn("\(keyPath) is NOT encrypted; anyone who copies it can sign") }
            return (key.publicKey, { try key.sign(message) })
        case .pkcs11(let uri):
            // Signed now; added by the co-signing rule unless this key has already signed.
            let (tokenKey, tokenSignature) = try Hardware.mapped {
                try PKCS11Keys.sign(
                    message, uri: uri, module: try hardware.get(for: uri), maximumMessage: maximumMessage,
                    pin: Hardware.pin(for: uri))
            }
            return (tokenKey, { tokenSignature })
        }
    }

    /// Refuses (exit 1, before anything is written) a key that no signing role holds, or
    /// with --allow-foreign-key warns that its signature will not count.
    static func refuseForeignKey(
        _ keyPath: String, keyID: String, roles: SigningRoles, root: String, _ arguments: ParsedArguments,
        _ context: CLIContext
    ) throws(CLIError) {
        let what = "\(keyPath): key \(keyID) is not in the \(roles.names) of \(root) that signs this document"
        guard arguments.flag("allow-foreign-key") else {
            throw .failure("\(what); its signature would not count (nothing written; --allow-foreign-key signs anyway)")
        }
        context.warn("\(what); its signature will not count (--allow-foreign-key)")
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
