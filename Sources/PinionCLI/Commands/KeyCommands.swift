// `pinion keygen` and `pinion key id`: Ed25519 key pairs in PKCS#8 / SPKI PEM files.

import Foundation
import PinionCore
import PinionCrypto

struct KeygenCommand: Command {
    static let path = ["keygen"]
    static let summary = "make an Ed25519 key pair (PATH.key encrypted, PATH.pub)"
    static let options: [OptionSpec] = [
        .value("out"), .value("passphrase-file"), .flag("insecure-no-passphrase"),
        .value("kdf-iterations"), .flag("allow-weak-passphrase"),
    ]
    static let help = """
        usage: pinion keygen --out PATH [--passphrase-file F] [--insecure-no-passphrase]
                             [--kdf-iterations N] [--allow-weak-passphrase]

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

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        _ = try arguments.positional([])
        let base = try arguments.required("out")
        let name = base.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard !name.isEmpty, name != ".", name != ".." else {
            throw CLIError.usage("--out \"\(base)\" must end with a file name (PATH gives PATH.key and PATH.pub)")
        }
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
}

struct KeyIDCommand: Command {
    static let path = ["key", "id"]
    static let summary = "print the key id of a .pub or .key file"
    static let options: [OptionSpec] = [.value("passphrase-file")]
    static let help = """
        usage: pinion key id FILE [--passphrase-file F]

        Prints the key id (lowercase hex SHA-256 of the 32-byte raw Ed25519 public key) of
        a public key file (.pub) or a secret key file (.key; an encrypted one needs the
        passphrase: --passphrase-file, PINION_PASSPHRASE or the terminal).

        """

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws {
        let file = try arguments.positional(["FILE"])[0]
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
