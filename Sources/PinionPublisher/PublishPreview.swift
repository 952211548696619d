// What a publish step is about to change, shown to the caller after every check passed and
// before the first write, so that it can look (probe live servers) and stop the step.

import PinionCore

/// The manifest a publish replaces and the one it serves, known only once the step has fully
/// verified (signatures, root chain, successor rules): nothing unverified reaches a caller.
public struct PublishPreview: Sendable, Equatable {
    /// What the caller decides after looking.
    public enum Decision: Sendable, Equatable {
        /// Write the step.
        case proceed
        /// Write nothing; `reason` becomes the `PublishError.refused` reason.
        case refuse(reason: String)
    }

    /// The scope published to.
    public var scope: String
    /// The payload of the manifest clients fetch now (`manifest.json`), nil when none is
    /// published yet or the file cannot be parsed.
    public var replaced: ManifestPayload?
    /// The path of `replaced`'s history file (`history/{version}.json`), nil without one.
    public var replacedPath: String?
    /// The verified payload `manifest.json` holds after the step; nil when the step serves
    /// no new manifest (roots only, or the same manifest again).
    public var published: ManifestPayload?
    /// The position of `published` in the envelopes given, nil without one.
    public var publishedInput: Int?
}

extension PublishStep {
    /// The preview of this checked step (call after `check()`).
    func preview() throws(PublishError) -> PublishPreview {
        var replaced: ManifestPayload?
        var replacedPath: String?
        let current = try tree.read(tree.manifestPath)
        if let current, let envelope = try? Envelope.parse(current, limits: tree.limits),
            let payload = try? ManifestPayload.parse(envelope.payload, limits: tree.limits)
        {
            replaced = payload
            replacedPath = tree.historyPath(payload.version)
        }
        var published: ManifestPayload?
        var input: Int?
        if let last = batch.manifests.last, current != last.bytes {
            published = last.payload
            input = last.input
        }
        return PublishPreview(
            scope: tree.scope, replaced: replaced, replacedPath: replacedPath, published: published,
            publishedInput: input)
    }
}
