// Which error category (PinionCore's PinionErrorCategory) each of PinionCrypto's error types belongs to.

import PinionCore

extension KeyFileError: CategorizedError {
    /// `.io` when the operating system failed, `.usage` when the user named the wrong file
    /// or gave an unusable passphrase or iteration count (`isUsageError`), else `.refusal`
    /// (wrong passphrase, corrupt or unsupported key).
    public var category: PinionErrorCategory {
        if isIOError { return .io }
        return isUsageError ? .usage : .refusal
    }
}

extension PassphraseError: CategorizedError {
    /// `.io` when the operating system failed; `.usage` for an empty, over-long or
    /// mismatched passphrase, one with a NUL byte, or none available: the user's input.
    public var category: PinionErrorCategory {
        if case .io = self { return .io }
        return .usage
    }
}

extension SPKIError: CategorizedError {
    /// `.io` when the input could not be read; `.refusal` when it was read and is bad.
    public var category: PinionErrorCategory { isIOError ? .io : .refusal }
}

extension PKCS11Error: CategorizedError {
    /// `.io` for the module or the device, `.usage` for what the user named wrongly
    /// (`isUsageError`), `.refusal` for the rest (wrong PIN, wrong key type, bad signature,
    /// message too large).
    public var category: PinionErrorCategory {
        if isIOError { return .io }
        return isUsageError ? .usage : .refusal
    }
}
