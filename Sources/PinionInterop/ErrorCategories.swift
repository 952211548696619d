// Which error category (PinionCore's PinionErrorCategory) PinionInterop's error type belongs to.

import PinionCore

extension InteropError: CategorizedError {
    /// `.usage` for an export that needs a role the pins do not say (`unknownRole`: the
    /// user picks another format or adds roles); `.refusal` for every input refused.
    public var category: PinionErrorCategory { code == .unknownRole ? .usage : .refusal }
}
