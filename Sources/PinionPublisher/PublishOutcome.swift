// What `Publisher.publish` did, and the typed reasons it refuses (docs/DESIGN.md §9).

import PinionCore
import PinionSystem

/// The steps one publish added, in the order their files were listed in index.json.
public struct PublishOutcome: Sendable, Equatable {
    /// One envelope of the publish.
    public enum Step: Sendable, Equatable {
        /// A root; `path` is its `root/{n}.json`. `alreadyPublished`: the same bytes were there.
        case root(version: Int64, path: String, alreadyPublished: Bool)
        /// A manifest; `alreadyPublished`: history, index.json and manifest.json held it already.
        case manifest(version: Int64, rootVersion: Int64, expiresAt: Timestamp, alreadyPublished: Bool)
    }

    /// The scope published to.
    public var scope: String
    /// Roots first (by version), then manifests (by version).
    public var steps: [Step]
    /// Revoked pins of the previous latest manifest that a new manifest no longer revokes
    /// (only with `allowLift`; the auditor flags them).
    public var liftedRevocations: [Pin]
    /// The index.json sequence number of this publish step (nil when nothing new was listed).
    public var sequence: Int64?
    /// What the step did to the scope's transparency log (nil: the newest root lists none,
    /// or nothing was logged yet).
    public var log: LogStepOutcome? = nil
}

/// Why a publish was refused. Nothing was written when any of these is thrown before the
/// first write; a failure during the writes leaves the tree in a state a re-run completes.
public enum PublishError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The arguments: no envelope, envelopes of two scopes, two envelopes of one version.
    case usage(String)
    /// The envelope at position `input` (of the list given) cannot be published, or, with
    /// `input` nil, the tree's state refuses any publish until repaired.
    case refused(input: Int?, reason: String)
    /// The manifest at position `input` does not verify under the newest root of `chain`,
    /// or has expired (`chain` is the published chain plus the roots of this publish).
    case manifest(input: Int, error: TrustError, chain: RootChain)
    /// The file system: a link or special file in the tree, or an I/O error.
    case file(PublishFileError)

    public var description: String {
        switch self {
        case .usage(let message): return message
        case .refused(_, let reason): return reason
        case .manifest(_, let error, _): return error.description
        case .file(let error): return error.description
        }
    }
}
