// Which error category (PinionCore's PinionErrorCategory) each of PinionTrust's error types belongs to.

import PinionCore

extension HTTPSError: CategorizedError {
    /// `.usage` for a bad URL, scheme, request header or client configuration; `.io` for
    /// the network and an unusable response (`isNetworkError`) and an unreadable CA file;
    /// `.refusal` for trust failures (X.509 validation, empty verified chain, pinning
    /// refusal, a redirect to a non-https URL) and a TLS set-up failure.
    public var category: PinionErrorCategory {
        switch code {
        case .invalidURL, .unsupportedScheme, .invalidHeader, .invalidConfiguration: return .usage
        case .caFileUnreadable: return .io
        default: return isNetworkError ? .io : .refusal
        }
    }
}

extension StorageError: CategorizedError {
    /// Always `.io`: the state storage could not be read, written or locked.
    public var category: PinionErrorCategory { .io }
}

extension TreeSourceError: CategorizedError {
    /// `.io` when a file or the server could not be read; `.refusal` for a file of the
    /// wrong kind or over its size limit.
    public var category: PinionErrorCategory {
        if case .io = self { return .io }
        return .refusal
    }
}

extension HTTPResponseParseError: CategorizedError {
    /// Always `.io`: the server did not deliver a usable response; trying again may help
    /// (as `HTTPSError.isNetworkError` says of the errors these become).
    public var category: PinionErrorCategory { .io }
}
