// The publish protocol (docs/DESIGN.md §9): roots and manifests checked as one step under
// the tree's lock, then written so that no reader ever sees a narrowing state.

import PinionCore
import PinionSystem

/// Adds signed roots and manifests to the static tree `{repo}/v1/{scope}/` that publishers
/// serve and mirrors copy. Never needs a secret key.
public enum Publisher {
    /// Seconds an issuedAt may lie after the publish time (signers' clock skew).
    public static let issuedAtTolerance: Int64 = 3600

    /// Publishes `envelopes` (roots and manifests of one scope, in any order) as one step.
    ///
    /// Under an exclusive lock on `repo`, before writing anything, it refuses: a first root
    /// that is not version 1 signed by its own root role; a root that is not exactly the next
    /// version signed by both the previous and its own root role, or whose `pinsRoleSince`
    /// breaks the rotation rule; a manifest that does not verify under the newest root (its
    /// pins role, cap and `pinsRoleSince <= rootVersion <= version`), is expired, is not the
    /// latest version + 1, has a `previous` other than the latest payload's SHA-256, an
    /// issuedAt before the latest's or more than `issuedAtTolerance` after `now`, or drops a
    /// revoked pin of the latest (unless `allowLift`); and roots after which the latest
    /// manifest would not verify under the newest root (publish them with a manifest signed
    /// under it).
    ///
    /// Writes, each atomically with fsync: history files, index.json (roots and manifests
    /// with this step's sequence number), manifest.json, and the new `root/{n}.json` LAST.
    /// A client that fetches the new manifest before its root refuses it and keeps the
    /// current one; a root never appears before a manifest that verifies under it.
    /// Publishing the same envelopes again is a no-op that completes a publish that died.
    ///
    /// - Parameters:
    ///   - envelopes: the envelope files' bytes.
    ///   - repo: the tree's directory (created if missing; a refused publish removes the
    ///     directories it created).
    ///   - now: the time for the expiry and issuedAt checks.
    ///   - allowLift: accept a manifest that lifts a revocation of the latest.
    ///   - crypto: Ed25519 and SHA-256.
    ///   - limits: size limits (envelopes, index.json).
    ///   - log: the log key and witness client; required when the newest root lists a
    ///     `log` (docs/TRANSPARENCY.md "Publishing steps"): the current checkpoint is
    ///     re-cosigned first, one head per new index.json manifest entry is appended
    ///     (earlier ones backfilled), and below the quorum the step stops with `.refused`
    ///     leaving checkpoint, manifest.proof and manifest.json as they were and the
    ///     log-signed checkpoint pending under `{repo}/pending/{scope}/`.
    ///   - beforeWriting: called once every check has passed, under the lock and before the
    ///     first write (and before the log's witnesses are asked), with what the step
    ///     replaces and serves; `.refuse` stops the step with nothing written.
    /// - Returns: what was published.
    /// - Throws: `PublishError` naming the envelope (its position in `envelopes`) and rule.
    public static func publish(
        _ envelopes: [[UInt8]], into repo: String, at now: Timestamp, allowLift: Bool = false,
        crypto: CryptoProvider, limits: Limits = .standard, log: LogPublishContext? = nil,
        beforeWriting: (PublishPreview) -> PublishPreview.Decision = { _ in .proceed }
    ) throws(PublishError) -> PublishOutcome {
        let batch = try Batch(envelopes, crypto: crypto, limits: limits)
        let tree = PublishTree(repo: repo, scope: batch.scope, crypto: crypto, limits: limits)
        let created = PublishFiles.missingDirectories(
            from: repo, inside: [tree.rootDirectory, tree.historyDirectory])
        do throws(PublishError) {
            let lock = try PublishTree.file { () throws(PublishFileError) in try PublishFiles.lock(repo) }
            defer { withExtendedLifetime(lock) {} }
            try tree.checkKinds()
            PublishFiles.removeAbandonedTemporaryFiles(
                in: [tree.scopeDirectory, tree.rootDirectory, tree.historyDirectory])
            var step = try PublishStep(
                tree: tree, batch: batch, now: now, allowLift: allowLift, logContext: log)
            try step.check()
            let preview = try step.preview()
            if case .refuse(let reason) = beforeWriting(preview) {
                throw PublishError.refused(input: preview.publishedInput, reason: reason)
            }
            return try step.write()
        } catch {
            PublishFiles.removeEmptyDirectories(created)
            throw error
        }
    }
}

/// The envelopes of one publish, parsed, of one scope, sorted by version.
struct Batch {
    struct Root {
        let input: Int
        let bytes: [UInt8]
        let payload: RootPayload
        /// SHA-256 of the envelope's payload bytes (as index.json lists it).
        let payloadSHA256: [UInt8]
    }
    struct Manifest {
        let input: Int
        let bytes: [UInt8]
        let payload: ManifestPayload
    }

    let scope: String
    let roots: [Root]
    let manifests: [Manifest]

    init(_ envelopes: [[UInt8]], crypto: CryptoProvider, limits: Limits) throws(PublishError) {
        guard !envelopes.isEmpty else { throw .usage("no envelope to publish") }
        var roots: [Root] = []
        var manifests: [Manifest] = []
        var scope: String?
        for (input, bytes) in envelopes.enumerated() {
            let documentScope: String
            do {
                let envelope = try Envelope.parse(bytes, limits: limits)
                switch envelope.kind {
                case .root:
                    let payload = try RootPayload.parse(envelope.payload, limits: limits, crypto: crypto)
                    roots.append(
                        Root(
                            input: input, bytes: bytes, payload: payload,
                            payloadSHA256: crypto.hasher.sha256(envelope.payload)))
                    documentScope = payload.scope
                case .pins:
                    let payload = try ManifestPayload.parse(envelope.payload, limits: limits)
                    manifests.append(Manifest(input: input, bytes: bytes, payload: payload))
                    documentScope = payload.scope
                }
            } catch {
                throw .refused(input: input, reason: error.description)
            }
            if let scope, scope != documentScope {
                throw .usage("one publish holds one scope: \(scope) and \(documentScope) were given")
            }
            scope = documentScope
        }
        roots.sort { $0.payload.version < $1.payload.version }
        manifests.sort { $0.payload.version < $1.payload.version }
        for (first, second) in zip(roots, roots.dropFirst()) where first.payload.version == second.payload.version {
            throw .usage("root version \(first.payload.version) is given twice")
        }
        for (first, second) in zip(manifests, manifests.dropFirst())
        where first.payload.version == second.payload.version {
            throw .usage("manifest version \(first.payload.version) is given twice")
        }
        self.scope = scope ?? ""
        self.roots = roots
        self.manifests = manifests
    }
}
