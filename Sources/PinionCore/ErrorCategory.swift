// The error-category protocol the libraries' error types adopt, so that only the CLI knows exit codes (docs/DESIGN.md §11).

/// What kind of failure an error is, independent of how a program reports it. The CLI
/// maps each category to one exit code (docs/DESIGN.md §11: refusal 1, usage 2, io 3);
/// an app may map them to its own retry or alert policy. Libraries never know exit codes.
public enum PinionErrorCategory: String, Sendable, Equatable, CaseIterable {
    /// The thing checked is bad: a signature, threshold, rollback, freeze, pin or format
    /// rule refused it. Retrying the same input gives the same answer.
    case refusal
    /// The caller asked wrongly: a bad argument, the wrong kind of file, an unusable
    /// passphrase or configuration. Fixed by changing the request, not the data.
    case usage
    /// The operating system, a device or the network failed (read, write, connect,
    /// timeout, a module that does not load). Trying again later may help.
    case io
}

/// An error that says which `PinionErrorCategory` it belongs to. The library error types
/// adopt it (PinionCore's below, each other module's in its `ErrorCategories.swift`), so a
/// front end maps categories in one place instead of matching every error type.
public protocol CategorizedError: Error, CustomStringConvertible {
    /// The kind of failure; stable for a given case.
    var category: PinionErrorCategory { get }
}

extension FormatError: CategorizedError {
    /// Always `.refusal`: the document breaks a format rule.
    public var category: PinionErrorCategory { .refusal }
}

extension TrustError: CategorizedError {
    /// `.usage` for a document of the wrong kind (a root where a manifest was asked for);
    /// `.refusal` for every verification failure.
    public var category: PinionErrorCategory {
        if case .wrongPayloadKind = self { return .usage }
        return .refusal
    }
}

extension PKCS11URIError: CategorizedError {
    /// Always `.usage`: the key's URI (RFC 7512) is what the user wrote.
    public var category: PinionErrorCategory { .usage }
}

extension CoSigningError: CategorizedError {
    /// Always `.refusal`: the envelope holds as many signatures as an envelope may.
    public var category: PinionErrorCategory { .refusal }
}
