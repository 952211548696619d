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
    /// A manifest is not signed by a threshold of the pins role of the root it names: a
    /// signature does not verify over its payload bytes (changed after signing), or too few
    /// role keys signed. Checked before the strict parse.
    case manifestSignature = "manifest-signature"
    /// A manifest is signed only by keys outside the pins role of the root it names (the
    /// key ids are named): forged, or signed with the wrong key.
    case manifestForeignKey = "manifest-foreign-key"
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

    /// One plain-language sentence for a finding of this rule: what it means for clients and
    /// what to do next.
    public var advice: String {
        switch self {
        case .rootMissing, .rootGap:
            return "A root version is missing from the tree: ask the publisher to restore root/ from the signed copies."
        case .rootFormat:
            return "A root file is damaged or is not a root: compare it with the signed original and restore it."
        case .rootSignature, .rootRotation:
            return "A root is not signed by enough root keys: treat it as forged until its signers confirm it."
        case .rootFileName:
            return "A root file holds another version than its name says: restore the right file."
        case .rootEquivocation:
            return
                "The tree's root differs from the root you gave: check that you gave the root your app embeds, then ask the publisher which one is real."
        case .scope:
            return "A document belongs to another app's scope: it must not be published here; remove it."
        case .indexMissing, .indexFormat, .indexOrder, .indexEntryMismatch, .historyNotInIndex, .historyMissing:
            return
                "index.json and history/ disagree: republish with pinion publish so every version is listed once, with its hash."
        case .manifestFormat:
            return
                "A manifest file breaks the format: restore the signed file; if its signature also fails, it was changed after signing."
        case .manifestSignature:
            return
                "The signature does not verify (the file was changed after signing, or signed by another key): do not trust this version; find who changed it."
        case .manifestForeignKey:
            return
                "This version is signed by keys that may not sign manifests: it is forged or was signed with the wrong key; do not trust it and find out who signed it."
        case .manifestRootMissing:
            return
                "A manifest names a root the tree does not hold: publish that root, or re-sign the manifest under a published root."
        case .lifetimeCap:
            return "A manifest lives longer than its root allows: clients refuse it; re-sign it with a shorter expiry."
        case .historyFileName:
            return "A history file holds another version than its name says: restore the right file."
        case .versionGap:
            return "Versions are missing from the history: restore them, or find out why they were removed."
        case .versionPublishedTwice:
            return
                "Two different manifests claim the same version: someone published two views; find out which one clients got."
        case .previousLink, .issuedAtBackwards, .rootVersionBackwards:
            return
                "A version does not follow the one before it: the history was rewritten or a version is not the real successor; compare it with the signers' records."
        case .manifestMissing, .manifestNotLatest, .manifestNotIdentical, .manifestAheadOfIndex:
            return
                "manifest.json is not the latest published version: run the publish again so clients get the current pins."
        case .treeChanged:
            return "Files changed while they were read: audit again when no publish is running."
        case .fileRefused:
            return "A file is not a plain file or is too large: replace it with the published file."
        case .latestExpired:
            return "The latest manifest has expired: clients have no current pins; sign and publish a new version now."
        case .rootExpired:
            return "The newest root has expired: clients accept no manifest; rotate the root now."
        case .latestNotUnderNewestRoot:
            return
                "The latest manifest does not verify under the newest root: re-sign it with the newest root's pins keys and publish."
        case .logCheckpoint, .logSignature, .logTile:
            return
                "The transparency log is missing or damaged: run pinion log refresh, and restore the log files if that fails."
        case .logCosignature, .logQuorum:
            return
                "Not enough witnesses cosigned the log: run pinion log refresh and check that the witnesses are reachable."
        case .logDocumentNotLogged, .logHeadWithoutDocuments, .logProof:
            return
                "The log and the published manifests disagree: republish with pinion publish, and find out what was logged without being published."
        case .logSplitView:
            return
                "A witness saw another version of the log: the publisher may have shown two views; stop and investigate before signing anything."
        case .logRollback, .logSince:
            return
                "The log went back to an older state: the tree may be stale or rolled back; compare with the latest copy you trust."
        case .logUnpublishedEntries:
            return
                "The log key signed entries that were never published: treat the pins key and the log key as stolen and follow the incident runbook (docs/TRANSPARENCY.md)."
        case .logCheckpointExpired:
            return "The log checkpoint is too old: clients treat the manifest as expired; run pinion log refresh now."
        case .revocationLifted:
            return "A revoked pin is accepted again: confirm that lifting the revocation was intended."
        case .invalidSignature:
            return "A signature did not verify and was not counted: re-sign with that key if it should count."
        case .duplicateSignature:
            return "A key signed twice; it counts once: nothing to do unless the threshold relies on it."
        case .historyBeyondIndex:
            return "A history file is beyond index.json: if a publish was interrupted, run the same publish again."
        case .strayFile:
            return "An unexpected file is in the tree: remove it if nobody knows what it is."
        case .logWitnessUnavailable:
            return "A witness could not be reached: check its URL and try again later."
        case .logWitnessAhead:
            return "A witness cosigned a newer checkpoint than the tree serves: run pinion log refresh."
        case .logCheckpointStale:
            return "The log checkpoint is getting old: run pinion log refresh soon."
        case .logCosignatureFuture:
            return "A witness dated its cosignature in the future: check the witness's clock."
        }
    }
}

/// The finding another one follows from: printed under it, ranked after the causes.
public enum FindingCause: String, Sendable, Equatable {
    /// The finding is about the content of a file whose signatures do not verify (or that
    /// only keys outside the role signed): nobody vouches for that content, so the cause
    /// is the signature finding of the same version, not what the content says.
    case unverifiedContent = "unverified-content"
    /// The finding does not occur when the tree is audited with the tree's own root of the
    /// given root's version: it follows from the root given with `--root` differing from
    /// the tree's (`AuditReport.givenRootDiffers`).
    case givenRoot = "given-root"
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
    /// One sentence a non-expert can act on: what it means and what to do (the rule's
    /// `advice` unless a finding says more).
    public var advice: String
    /// The finding this one follows from, or nil for a cause (a finding of its own).
    public var followsFrom: FindingCause?

    /// - Parameters:
    ///   - rule: the rule broken.
    ///   - version: the version concerned, if any.
    ///   - file: the file, relative to the scope directory.
    ///   - message: what was found.
    ///   - followsFrom: the finding it follows from, nil for a cause.
    public init(rule: AuditRule, version: Int64?, file: String, message: String, followsFrom: FindingCause? = nil) {
        self.rule = rule
        self.version = version
        self.file = file
        self.message = message
        self.advice = rule.advice
        self.followsFrom = followsFrom
    }

    /// `file: [rule] message`, with the version when known.
    public var description: String {
        let place = version.map { "\(file) (version \($0))" } ?? file
        return "\(place): [\(rule.rawValue)] \(message)"
    }
}
