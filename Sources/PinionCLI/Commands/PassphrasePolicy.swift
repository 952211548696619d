// The length rule for the passphrase of a new key (`pinion keygen`).

import PinionCrypto

extension KeygenCommand {
    /// Fewest characters (Unicode scalars) a new key's passphrase may have without
    /// `--allow-weak-passphrase`.
    static let minimumPassphraseCharacters = 12

    /// Refuses a passphrase shorter than `minimumPassphraseCharacters` unless `allowWeak`.
    ///
    /// - Throws: `CLIError.usage` saying why and how to override.
    static func checkStrength(_ passphrase: SecureBytes?, allowWeak: Bool) throws(CLIError) {
        guard let passphrase, !allowWeak else { return }
        let count = passphrase.unicodeScalarCount
        guard count >= minimumPassphraseCharacters else {
            throw .usage(
                "the passphrase has \(count) character(s); at least \(minimumPassphraseCharacters) are needed, "
                    + "because a stolen key file can be guessed at offline without limit "
                    + "(--allow-weak-passphrase accepts it anyway)")
        }
    }
}
