// The auditor's rotation rule (docs/DESIGN.md §9, §10): at every publish step, and in the
// tree as it is, the latest manifest verifies under the newest root.

import PinionCore
import PinionTrust

/// A parsed history file, kept for the publish-step checks.
struct StepManifest {
    let envelope: Envelope
    let payload: ManifestPayload
    let hash: [UInt8]
}

extension AuditRun {
    /// The manifest versions `auditPublishSteps` will check under a root other than the
    /// one they name, from index.json (read before the history): the latest manifest of
    /// every step whose newest root is not the manifest's rootVersion, and the index's
    /// latest. Only those are kept while the history streams. Nil without an index.
    func stepVersionsNeeded() -> Set<Int64>? {
        guard let index else { return nil }
        var needed = Set(index.manifests.last.map { [$0.version] } ?? [])
        let rootVersionOf = Dictionary(index.manifests.map { ($0.version, $0.rootVersion) }, uniquingKeysWith: max)
        var newestRoot = index.roots.filter { $0.sequence == nil }.map(\.version).max()
        var latest = index.manifests.filter { $0.sequence == nil }.map(\.version).max()
        for sequence in Set(index.roots.compactMap(\.sequence) + index.manifests.compactMap(\.sequence)).sorted() {
            for root in index.roots where root.sequence == sequence {
                newestRoot = max(newestRoot ?? root.version, root.version)
            }
            for manifest in index.manifests where manifest.sequence == sequence {
                latest = max(latest ?? manifest.version, manifest.version)
            }
            if let newestRoot, let latest, rootVersionOf[latest] != newestRoot { needed.insert(latest) }
        }
        return needed
    }

    /// Keeps a parsed history file for `auditPublishSteps` when it will be needed (without
    /// an index, only the newest is kept): the history stays streamed.
    mutating func noteForSteps(version: Int64, envelope: Envelope, payload: ManifestPayload, hash: [UInt8]) {
        let kept = StepManifest(envelope: envelope, payload: payload, hash: hash)
        if let needed = stepVersionsToKeep {
            if needed.contains(version) { stepManifests[version] = kept }
        } else if stepManifests.keys.allSatisfy({ $0 < version }) {
            stepManifests = [version: kept]
        }
    }

    /// Flags every publish step (index.json's sequence numbers; entries of one step share
    /// one) after which the latest manifest did not verify under the newest root, and the
    /// tree as it is when its latest manifest does not. Roots listed without a sequence
    /// number (published before index.json recorded roots) count from the start. Each pair
    /// of root and manifest is checked once; a manifest under the root it names was checked
    /// with the history.
    mutating func auditPublishSteps() {
        var checked = Set<[Int64]>()
        if let index, index.roots.contains(where: { $0.sequence != nil }) {
            var newestRoot = index.roots.filter { $0.sequence == nil }.map(\.version).max()
            var latest = index.manifests.filter { $0.sequence == nil }.map(\.version).max()
            let sequences = Set(index.roots.compactMap(\.sequence) + index.manifests.compactMap(\.sequence)).sorted()
            for sequence in sequences {
                for root in index.roots where root.sequence == sequence {
                    newestRoot = max(newestRoot ?? root.version, root.version)
                }
                for manifest in index.manifests where manifest.sequence == sequence {
                    latest = max(latest ?? manifest.version, manifest.version)
                }
                guard let newestRoot, let latest, checked.insert([newestRoot, latest]).inserted else { continue }
                checkLatest(latest, underRoot: newestRoot, step: sequence)
            }
        }
        let latest = index?.manifests.last?.version ?? stepManifests.keys.max()
        if let newestRoot = roots.keys.max(), let latest, checked.insert([newestRoot, latest]).inserted {
            checkLatest(latest, underRoot: newestRoot, step: nil)
        }
    }

    private mutating func checkLatest(_ version: Int64, underRoot rootVersion: Int64, step: Int64?) {
        // A missing root or history file is reported where it is read.
        guard let root = roots[rootVersion], let manifest = stepManifests[version],
            manifest.payload.rootVersion != rootVersion
        else { return }
        let when = step.map { "after publish step \($0) (index.json sequence)" } ?? "in the tree as it is"
        guard manifest.payload.rootVersion < rootVersion else {
            violation(
                .latestNotUnderNewestRoot, version, .history(version),
                "\(when) the latest manifest names rootVersion \(manifest.payload.rootVersion), but the newest root published is \(rootVersion): clients refused it and had no current manifest"
            )
            return
        }
        do {
            _ = try ManifestVerifier.verify(
                manifest.envelope, parsedPayload: manifest.payload, payloadSHA256: manifest.hash, under: root,
                crypto: crypto, limits: options.limits)
        } catch {
            violation(
                .latestNotUnderNewestRoot, version, .history(version),
                "\(when) the latest manifest does not verify under the newest root (version \(rootVersion)): \(error); clients had no current manifest and refused keys only it granted"
            )
        }
    }
}
