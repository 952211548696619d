// Which error category (PinionCore's PinionErrorCategory) each of PinionPublisher's error types belongs to.

import PinionCore
import PinionSystem

extension PublishError: CategorizedError {
    /// `.usage` for a bad request (no envelopes, an unusable destination); `.refusal` for
    /// an envelope the rules refuse; the file error's own category for the tree's files.
    public var category: PinionErrorCategory {
        switch self {
        case .usage: return .usage
        case .refused, .manifest: return .refusal
        case .file(let file): return file.category
        }
    }
}
