// Which error category (PinionCore's PinionErrorCategory) each of PinionSystem's error types belongs to.

import PinionCore

extension TLSProbeError: CategorizedError {
    /// `.usage` for a bad host, server name or timeout argument; `.io` for the network,
    /// the peer or the CA file (`isIOError`); `.refusal` for the rest.
    public var category: PinionErrorCategory {
        switch self {
        case .invalidHost, .invalidServerName, .invalidTimeout: return .usage
        default: return isIOError ? .io : .refusal
        }
    }
}

extension PublishFileError: CategorizedError {
    /// `.io` when the operating system failed; `.refusal` when the tree's content is bad.
    public var category: PinionErrorCategory { isIOError ? .io : .refusal }
}
