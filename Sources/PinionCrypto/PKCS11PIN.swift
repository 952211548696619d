// Obtaining a token's user PIN (docs/DESIGN.md §13): the URI's pin-source file, then
// PINION_PKCS11_PIN, then the terminal without echo; the PIN lives only in SecureBytes.

import PinionCore

#if canImport(Glibc)
    import Glibc
#endif

/// The PIN sources of a token, first found wins:
/// 1. the URI's `pin-source=file:/PATH` (the file's bytes less one trailing newline);
/// 2. the environment variable `PINION_PKCS11_PIN`, copied byte for byte from getenv;
/// 3. the terminal (/dev/tty), echo off, with a prompt naming the token.
///
/// `pin-value` and command sources never get here: `PKCS11URI` refuses them. The PIN is
/// read into guarded memory (`SecureBytes`), wiped when released, and never retried.
public enum PKCS11PIN {
    /// The environment variable consulted after the URI.
    public static let environmentVariable = "PINION_PKCS11_PIN"

    /// Obtains the PIN for `token`.
    ///
    /// - Parameters:
    ///   - uri: the key's URI (for `pin-source`).
    ///   - token: the token that asks (named in the prompt and in errors).
    /// - Returns: 1 ... 1024 bytes in guarded memory.
    /// - Throws: `PKCS11Error.pinUnavailable` naming the source and the reason.
    public static func obtain(uri: PKCS11URI, token: PKCS11TokenInfo) throws -> SecureBytes {
        try obtain(uri: uri, token: token, terminalPath: "/dev/tty", environment: { getenv($0) })
    }

    /// `obtain` with the terminal and environment replaceable (tests).
    static func obtain(
        uri: PKCS11URI, token: PKCS11TokenInfo, terminalPath: String,
        environment: (String) -> UnsafeMutablePointer<CChar>?
    ) throws -> SecureBytes {
        do {
            return try Passphrase.obtain(
                file: uri.pinSourceFile, environmentVariable: environmentVariable, confirm: false,
                prompt: "PIN for token \(token.displayName): ", terminalPath: terminalPath, environment: environment)
        } catch let error as PassphraseError {
            let reason: String
            switch error {
            case .empty(let source): reason = "the PIN from the \(source) is empty"
            case .tooLong(let source, let limit): reason = "the PIN from the \(source) is longer than \(limit) bytes"
            case .containsNUL(let source): reason = "the PIN from the \(source) contains a NUL byte"
            case .mismatch: reason = "the PINs do not match"
            case .noSource:
                reason = "use pin-source=file:/PATH in the URI, \(environmentVariable) or run on a terminal"
            case .io: reason = error.description
            }
            throw PKCS11Error.pinUnavailable(token: token.displayName, reason: reason)
        }
    }
}
