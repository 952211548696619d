// `pinion keygen`, `pinion key id` and `pinion key list`: Ed25519 key pairs in files or tokens.

import Foundation
import PinionCore
import PinionCrypto

struct KeygenCommand: Command {
    static let path = ["keygen"]
    static let summary = "make an Ed25519 key pair (PATH.key encrypted, PATH.pub)"
    static let options: [OptionSpec] = [
        .value("out"), .value("passphrase-file"), .flag("insecure-no-passphrase"),
        .value("kdf-iterations"), .value("pkcs11"), .value("label"), HardwareModule.option,
        .flag("allow-weak-passphrase"),
    ]
    static let help = """
        usage: pinion keygen --out PATH [--passphrase-file F] [--insecure-no-passphrase]
                             [--kdf-iterations N] [--allow-weak-passphrase]
               pinion keygen --pkcs11 URI --label L --out PATH [--pkcs11-module M.so]

        Makes an Ed25519 key pair and writes PATH.key (encrypted PKCS#8 PEM, RFC 5958,
        mode 0600; PBES2 with PBKDF2-HMAC-SHA256 and AES-256-CBC, so `openssl pkey`
        opens it with the passphrase) and PATH.pub (PEM SubjectPublicKeyInfo, RFC 8410).
        Prints the key id (lowercase hex SHA-256 of the raw public key).
        Refuses to overwrite an existing PATH.key or PATH.pub.

        Passphrase, first found: --passphrase-file F (first line), the environment
        variable PINION_PASSPHRASE, the terminal (asked twice, not echoed). It must be at
        least \(minimumPassphraseCharacters) characters: a stolen key file can be attacked offline at
        leisure, and PBKDF2 only slows each guess down.

        options:
          --out PATH                  base path of the two files (required)
          --passphrase-file F         read the passphrase from F
          --insecure-no-passphrase    write the secret key UNENCRYPTED (tests only)
          --kdf-iterations N          PBKDF2 iterations (default \(KeyFile.defaultKDFIterations), minimum 1000)
          --allow-weak-passphrase     accept a passphrase shorter than \(minimumPassphraseCharacters) characters

        With --pkcs11 URI (RFC 7512, naming a token: pkcs11:token=T), the key pair is made in
        the token (CKM_EC_EDWARDS_KEY_PAIR_GEN) with the label L: the private key is
        sensitive, not extractable and may only sign. Only PATH.pub is written. The module
        is --pkcs11-module or PINION_PKCS11_MODULE; the PIN comes from the URI's
        pin-source=file:/PATH, PINION_PKCS11_PIN or the terminal.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        _ = try arguments.positional([])
        let base = try arguments.required("out")
        let name = base.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard !name.isEmpty, name != ".", name != ".." else {
            throw CLIError.usage("--out \"\(base)\" must end with a file name (PATH gives PATH.key and PATH.pub)")
        }
        if let uriText = arguments.value("pkcs11") {
            try generateInToken(uriText, base: base, arguments: arguments, context: context)
            return
        }
        if arguments.value("label") != nil { throw CLIError.usage("--label goes with --pkcs11") }
        let iterations =
            try arguments.integer("kdf-iterations", in: 1000...100_000_000)
            ?? Int64(KeyFile.defaultKDFIterations)
        let passphrase: SecureBytes?
        if arguments.flag("insecure-no-passphrase") {
            if arguments.value("passphrase-file") != nil {
                throw CLIError.usage("--insecure-no-passphrase and --passphrase-file contradict each other")
            }
            passphrase = nil
        } else {
            passphrase = try Passphrase.obtain(
                file: arguments.value("passphrase-file"), confirm: true,
                prompt: "Passphrase for \(base).key: ")
            try checkStrength(passphrase, allowWeak: arguments.flag("allow-weak-passphrase"))
        }
        let key = try Ed25519SecretKey.generate()
        try KeyFile.writeKeyPair(
            key, basePath: base, passphrase: passphrase, kdfIterations: Int(iterations))
        if passphrase == nil { context.warn("\(base).key is NOT encrypted (--insecure-no-passphrase)") }
        context.print(key.publicKey.keyID)
    }

    /// `keygen --pkcs11`: the key pair in the token, PATH.pub on disk.
    private static func generateInToken(
        _ uriText: String, base: String, arguments: ParsedArguments, context: CLIContext
    ) throws {
        for flag in ["insecure-no-passphrase"] where arguments.flag(flag) {
            throw CLIError.usage("--\(flag) does not apply to a key made in a token")
        }
        for option in ["passphrase-file", "kdf-iterations"] where arguments.value(option) != nil {
            throw CLIError.usage("--\(option) does not apply to a key made in a token (it has a PIN)")
        }
        guard case .pkcs11(let uri) = try KeyReference.parse(uriText) else {
            throw CLIError.usage("--pkcs11 needs a PKCS#11 URI (pkcs11:token=...), got \"\(uriText)\"")
        }
        let label = try arguments.required("label")
        guard !label.isEmpty, label.utf8.count <= 128, !label.unicodeScalars.contains(where: { $0.value < 0x20 })
        else { throw CLIError.usage("--label must be 1-128 bytes of printable text") }
        let publicPath = base + ".pub"
        // Checked before the token is touched, so a refusal makes no key in the token.
        if FileManager.default.fileExists(atPath: publicPath) {
            throw CLIError.usage("\(publicPath) already exists; refusing to overwrite it")
        }
        let module = HardwareModule(arguments)
        let (keyURI, publicKey) = try Hardware.mapped {
            try PKCS11Keys.generate(
                uri: uri, label: label, module: try module.get(for: uri), pin: Hardware.pin(for: uri))
        }
        try Files.writeAtomically(Hardware.publicKeyPEM(publicKey), to: publicPath, replace: false)
        context.err(
            "pinion: made \(TerminalText.escape(keyURI.description)) (private key sensitive, not extractable, sign only); wrote \(TerminalText.escape(publicPath))\n"
        )
        context.print(publicKey.keyID)
    }
}

struct KeyIDCommand: Command {
    static let path = ["key", "id"]
    static let summary = "print the key id of a .pub or .key file"
    static let options: [OptionSpec] = [.value("passphrase-file"), HardwareModule.option]
    static let help = """
        usage: pinion key id FILE|URI [--passphrase-file F] [--pkcs11-module M.so]

        Prints the key id (lowercase hex SHA-256 of the 32-byte raw Ed25519 public key) of
        a public key file (.pub), a secret key file (.key; an encrypted one needs the
        passphrase: --passphrase-file, PINION_PASSPHRASE or the terminal), or a key in a
        token named by a PKCS#11 URI (its public object; no PIN).

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let file = try arguments.positional(["FILE"])[0]
        if PKCS11URI.isURI(file) {
            context.print(try Hardware.publicKey(file, module: HardwareModule(arguments)).keyID)
            return
        }
        do {
            context.print(try KeyFile.readPublicKey(path: file).keyID)
        } catch KeyFileError.secretKeyFileGiven {
            // Read only by KeyFile, into guarded memory: the file may hold an unencrypted seed.
            let passphrase = PassphraseOnce(
                file: arguments.value("passphrase-file"), prompt: "Passphrase for \(file): ")
            if let warning = KeyFile.insecurePermissionsWarning(path: file) { context.warn(warning) }
            let key = try KeyFile.readSecretKey(path: file, passphrase: { try passphrase.get() })
            context.print(key.publicKey.keyID)
        }
    }
}

struct KeyListCommand: Command {
    static let path = ["key", "list"]
    static let summary = "list the tokens of a PKCS#11 module and their Ed25519 keys"
    static let options: [OptionSpec] = [HardwareModule.option]
    static let help = """
        usage: pinion key list [--pkcs11-module M.so]

        Lists every token the module (--pkcs11-module or PINION_PKCS11_MODULE) sees and
        the Ed25519 public keys on it (public objects; no PIN), each with its PKCS#11 URI
        (RFC 7512) and key id. Other key types are not listed.

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        _ = try arguments.positional([])
        let module = HardwareModule(arguments)
        let tokens = try Hardware.mapped { try PKCS11Keys.list(module: try module.get()) }
        if tokens.isEmpty { context.print("no token present") }
        for (token, keys) in tokens {
            context.print(
                "token \(TerminalText.escape(token.displayName)) manufacturer \"\(TerminalText.escape(token.manufacturer))\" model \"\(TerminalText.escape(token.model))\": \(keys.count) Ed25519 key(s)"
            )
            for key in keys {
                switch key.publicKey {
                case .success(let publicKey):
                    context.print("  \(publicKey.keyID)  \(TerminalText.escape(key.uri.description))")
                case .failure(let error):
                    context.print(
                        "  (unusable: \(TerminalText.escape(error.description)))  \(TerminalText.escape(key.uri.description))"
                    )
                }
            }
        }
    }
}
