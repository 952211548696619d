// The rules the auditor checks (docs/DESIGN.md §10) and the findings it reports.

/// A rule of a published tree, with a stable code for scripts (`--json`, messages).
public enum AuditRule: String, Sendable, CaseIterable, CustomStringConvertible {
    // Roots (docs/DESIGN.md §4)
    /// `root/{n}.json` is missing below the newest root or the given root.
    case rootMissing = "root-missing"
    /// A root file beyond a missing one (the chain has a gap).
    case rootGap = "root-gap"
    /// A root envelope or payload breaks the strict format, or holds a manifest.
    case rootFormat = "root-format"
    /// A root is not signed by a threshold of its own root role (root 1: self-signed).
    case rootSignature = "root-signature"
    /// A rotation is not signed by a threshold of the previous root's root role.
    case rootRotation = "root-rotation"
    /// A root file's payload version is not its file name's number.
    case rootFileName = "root-file-name"
    /// The tree's root of the given root's version has other payload bytes.
    case rootEquivocation = "root-equivocation"
    /// A document's scope is not the given root's.
    case scope = "scope"

    // index.json (docs/DESIGN.md §9)
    /// index.json is missing although the tree has manifests.
    case indexMissing = "index-missing"
    /// index.json breaks its format.
    case indexFormat = "index-format"
    /// index.json entries are not consecutive versions, oldest first.
    case indexOrder = "index-order"
    /// An index entry differs from its history file (payload SHA-256 or a field).
    case indexEntryMismatch = "index-entry-mismatch"
    /// A history file below the index's latest version that the index does not list.
    case historyNotInIndex = "history-not-in-index"
    /// index.json lists a version whose history file is missing.
    case historyMissing = "history-missing"

    // Manifests and the history (docs/DESIGN.md §5, §10)
    /// A manifest envelope or payload breaks the strict format, or holds a root.
    case manifestFormat = "manifest-format"
    /// A manifest is not signed by a threshold of the pins role of the root it names.
    case manifestSignature = "manifest-signature"
    /// A manifest names a root the tree does not hold.
    case manifestRootMissing = "manifest-root-missing"
    /// `expiresAt - issuedAt` exceeds the named root's `maxManifestLifetime`.
    case lifetimeCap = "lifetime-cap"
    /// A history file's payload version is not its file name's number.
    case historyFileName = "history-file-name"
    /// Versions are missing between two published ones.
    case versionGap = "version-gap"
    /// Two different payloads claim the same version somewhere in the tree.
    case versionPublishedTwice = "version-published-twice"
    /// `previous` is not the SHA-256 of the prior version's payload.
    case previousLink = "previous-link"
    /// issuedAt goes backwards.
    case issuedAtBackwards = "issued-at-backwards"
    /// rootVersion goes backwards.
    case rootVersionBackwards = "root-version-backwards"

    // manifest.json
    /// manifest.json is missing although the index lists manifests.
    case manifestMissing = "manifest-missing"
    /// manifest.json holds an older version than the index's latest.
    case manifestNotLatest = "manifest-not-latest"
    /// manifest.json is the latest version but not byte-identical to its history file.
    case manifestNotIdentical = "manifest-not-identical"
    /// manifest.json holds a version beyond the index's latest (written out of order).
    case manifestAheadOfIndex = "manifest-ahead-of-index"

    // Reading
    /// A file read twice during the audit had other bytes the second time.
    case treeChanged = "tree-changed"
    /// A file is refused: a symbolic link, not a regular file, or over the size limit.
    case fileRefused = "file-refused"
    /// The latest manifest has expired at the audit time: clients have no current manifest.
    case latestExpired = "latest-expired"
    /// The newest root has expired at the audit time: clients accept no manifest.
    case rootExpired = "root-expired"
    /// At a publish step (index.json's sequence numbers), or in the tree as it is, the latest
    /// manifest did not verify under the newest root: clients had no current manifest and
    /// refused keys only it granted (docs/DESIGN.md §9, §10).
    case latestNotUnderNewestRoot = "latest-not-under-newest-root"

    // Transparency log (docs/DESIGN.md §12), when the newest root has a `log` member
    /// `log/checkpoint` is missing, refused, malformed or for another origin.
    case logCheckpoint = "log-checkpoint"
    /// The checkpoint carries no valid signature by the root's log key.
    case logSignature = "log-signature"
    /// A listed witness's cosignature on the checkpoint does not verify.
    case logCosignature = "log-cosignature"
    /// Fewer valid cosignatures by distinct listed witnesses than the quorum.
    case logQuorum = "log-quorum"
    /// The tiles do not reproduce the checkpoint (a missing, truncated or rewritten tile).
    case logTile = "log-tile"
    /// A published manifest (an index.json entry) has no head in the log.
    case logDocumentNotLogged = "log-document-not-logged"
    /// A log entry is not the head recomputed from the published documents at its sequence,
    /// or there is no published step for it.
    case logHeadWithoutDocuments = "log-head-without-documents"
    /// manifest.proof is missing or fails the client's verification (`log-...` reason codes).
    case logProof = "log-proof"
    /// A witness holds a checkpoint of this log that is not consistent with the publisher's
    /// (same size with another hash, or a tree the tiles do not contain): a split view.
    case logSplitView = "log-split-view"
    /// A listed witness holds a log-signed checkpoint larger than the published log whose
    /// entries the published tiles do not contain, older than the publish grace and not the
    /// publisher's pending checkpoint: the log key signed entries the publisher never
    /// published. Critical: treat the pins key and the log key as stolen.
    case logUnpublishedEntries = "log-unpublished-entries"
    /// The publisher's checkpoint is smaller than a checkpoint of the same log seen before
    /// (`--since`, or a witness's latest) that a listed witness cosigned together with the
    /// publisher's: the tree went back to an older state of the log (a stale tree).
    case logRollback = "log-rollback"
    /// The checkpoint is not consistent with the one given with `--since` (smaller with no
    /// witness cosigning both, or the same size with another hash, or no consistency proof).
    case logSince = "log-since"
    /// t_q is past maxCheckpointAge + checkpointGrace: clients treat the manifest as expired.
    case logCheckpointExpired = "log-checkpoint-expired"

    // Warnings (docs/DESIGN.md §10: they do not fail the audit)
    /// A revocation of the prior version is missing (lifted with `--allow-lift`).
    case revocationLifted = "revocation-lifted"
    /// A signature of a role key does not verify (it did not count).
    case invalidSignature = "invalid-signature"
    /// A key signed an envelope more than once (counted once).
    case duplicateSignature = "duplicate-signature"
    /// A history file beyond the index's latest version (a publish that died mid-way).
    case historyBeyondIndex = "history-beyond-index"
    /// A file in root/ or history/ that is not named `{number}.json`.
    case strayFile = "stray-file"
    /// A witness could not be reached, or answered something other than a checkpoint it cosigned.
    case logWitnessUnavailable = "log-witness-unavailable"
    /// A witness cosigned a larger checkpoint that the tiles contain (a publish below quorum,
    /// pending `pinion log refresh`).
    case logWitnessAhead = "log-witness-ahead"
    /// t_q is past maxCheckpointAge: clients raise `staleCheckpoint` (`pinion log refresh` is due).
    case logCheckpointStale = "log-checkpoint-stale"
    /// A listed witness's cosignature on the checkpoint is dated more than
    /// `LogFreshness.allowedFutureSkew` (5 minutes) after the audit time: clients accept it
    /// and report `futureCosignatures` (docs/DESIGN.md §12 "future t_q").
    case logCosignatureFuture = "log-cosignature-future"

    public var description: String { rawValue }
}

/// One violation or warning: the rule, where (file, version) and what was found.
public struct AuditFinding: Sendable, Equatable, CustomStringConvertible {
    /// The rule broken.
    public var rule: AuditRule
    /// The manifest or root version concerned, when there is one.
    public var version: Int64?
    /// The file, relative to the scope directory (`history/7.json`, `index.json`).
    public var file: String
    /// What was found, in words (untrusted text is escaped when printed).
    public var message: String

    /// - Parameters:
    ///   - rule: the rule broken.
    ///   - version: the version concerned, if any.
    ///   - file: the file, relative to the scope directory.
    ///   - message: what was found.
    public init(rule: AuditRule, version: Int64?, file: String, message: String) {
        self.rule = rule
        self.version = version
        self.file = file
        self.message = message
    }

    /// `file: [rule] message`, with the version when known.
    public var description: String {
        let place = version.map { "\(file) (version \($0))" } ?? file
        return "\(place): [\(rule.rawValue)] \(message)"
    }
}
