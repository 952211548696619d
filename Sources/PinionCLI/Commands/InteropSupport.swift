// Glue shared by export, lint and check-host: a manifest verified as `pinion verify` does,
// and pin roles and facts from certificate files.

import PinionCore
import PinionCrypto
import PinionInterop
import PinionSystem

/// A manifest envelope checked against a trusted root exactly as `pinion verify` checks it.
enum VerifiedManifestFile {
    /// `--root`, `--root-chain`, `--at`.
    static let options: [OptionSpec] = [.value("root"), .value("root-chain"), .value("at")]

    /// The time of the checks: `--at`, or now.
    static func time(_ arguments: ParsedArguments, context: CLIContext) throws(CLIError) -> Timestamp {
        try arguments.value("at").map { (text) throws(CLIError) in try DurationText.time(text, option: "at") }
            ?? context.now()
    }

    /// Verifies `path` under `--root` (and the rotations in `--root-chain`): signatures and
    /// threshold of the newest root's pins role, strict payload, scope, rootVersion, lifetime
    /// cap, and neither the newest root nor the manifest expired at `--at` (default now).
    ///
    /// - Throws: `CLIError`: usage for a missing --root or a non-manifest file, failure for
    ///   every verification error (naming the file), I/O for unreadable files.
    static func load(_ path: String, arguments: ParsedArguments, context: CLIContext) throws -> VerifiedManifest {
        let rootPath = try arguments.required("root")
        let at = try time(arguments, context: context)
        let anchorBytes = try Files.read(rootPath, limit: maxInputBytes)
        var chain: RootChain
        do { chain = try RootChain(anchor: anchorBytes, crypto: crypto) } catch {
            throw CLIError.document(
                error, file: rootPath, bytes: anchorBytes, expected: "a signed root envelope (JSON)")
        }
        if let directory = arguments.value("root-chain") {
            try VerifyCommand.walk(directory, chain: &chain, context: context)
        }
        let envelope = try Load.envelope(path)
        guard envelope.kind == .pins else {
            throw CLIError.usage(
                "\(path): holds a document of type \(envelope.kind.rawValue), a manifest envelope is needed")
        }
        do {
            let manifest = try ManifestVerifier.verify(envelope.serialized(), under: chain.newest, crypto: crypto)
            try chain.checkNewestCurrent(at: at)
            try manifest.checkCurrent(at: at)
            return manifest
        } catch {
            throw CLIError.manifest(error, file: path, envelopeBytes: envelope.serialized(), chain: chain)
        }
    }
}

/// Pins of certificate, CSR and key files, with what each file says about them.
struct PinSource {
    /// The object a pin came from (certificate, CSR or key) and, for certificates, the facts.
    var objects: [Pin: SPKIObject] = [:]
    var certificates: [Pin: CertificateFacts] = [:]

    /// Reads every `--certs` file.
    static func read(_ paths: [String], passphraseFile: String?) throws -> PinSource {
        var source = PinSource()
        let passphrase = PassphraseOnce(file: passphraseFile)
        for path in paths {
            let bytes = try Files.read(path, limit: SPKIReader.maximumInputSize)
            // The bytes read once (non-blocking, size-limited) serve both readers: a FIFO
            // cannot stall the command, and the pins and their facts come from one content.
            for object in try SPKIReader.objects(in: bytes, source: path, passphrase: { try passphrase.get() }) {
                guard let pin = try? Pin(digest: object.spkiSHA256) else { continue }
                source.objects[pin] = source.objects[pin] ?? object
            }
            for facts in CertificateFacts.certificates(in: bytes) {
                guard let pin = try? Pin(digest: facts.object.spkiSHA256) else { continue }
                source.certificates[pin] = source.certificates[pin] ?? facts
            }
        }
        return source
    }

    /// Apple roles: a CA certificate's key is a CA identity; a leaf certificate's, a CSR's or
    /// a key's is a leaf identity. A key found both as a CA and as a leaf is refused.
    func roles() throws(CLIError) -> [Pin: PinRole] {
        var roles: [Pin: PinRole] = [:]
        for (pin, object) in objects {
            let facts = certificates[pin]
            roles[pin] = object.kind == .certificate && facts?.isCA == true ? .ca : .leaf
        }
        for (pin, facts) in certificates where facts.isCA && roles[pin] == .leaf && objects[pin]?.kind != .certificate {
            throw .usage("\(pin) is the key of a CA certificate and of a CSR or key; its role is ambiguous")
        }
        return roles
    }
}
