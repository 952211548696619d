// The auditor's index.json and history checks (docs/DESIGN.md §5, §9, §10): entries, signatures, rules between versions.

import PinionCore
import PinionTrust

extension AuditRun {
    mutating func readIndex() throws(AuditError) {
        guard case .bytes(let bytes) = try read(.index, limit: options.indexLimit, version: nil) else { return }
        let parsed: PublishedIndex
        do { parsed = try PublishedIndex.parse(bytes, limits: options.limits) } catch {
            violation(.indexFormat, nil, .index, error.description)
            index = PublishedIndex(scope: report.scope)
            return
        }
        if parsed.scope != report.scope {
            violation(.scope, nil, .index, "scope is \"\(parsed.scope)\", the root's scope is \"\(report.scope)\"")
        }
        var previous: Int64?
        for entry in parsed.manifests {
            if indexByVersion[entry.version] != nil {
                violation(.indexOrder, entry.version, .index, "lists version \(entry.version) twice")
            } else {
                indexByVersion[entry.version] = entry
            }
            if let previous, entry.version != previous + 1 {
                violation(
                    .indexOrder, entry.version, .index,
                    "version \(entry.version) follows version \(previous); entries must be consecutive, oldest first")
            }
            previous = entry.version
        }
        index = parsed
    }

    // MARK: - History

    /// The last manifest parsed, for the rules between consecutive versions.
    struct Parsed {
        let fileVersion: Int64
        let payload: ManifestPayload
        let hash: [UInt8]
    }

    /// What the history walk carries from one version to the next.
    struct HistoryWalk {
        /// The last payload its signers vouch for (the rules between versions).
        var last: Parsed?
        /// The last payload that verified (the pin timeline): unverified content is never a
        /// baseline.
        var lastVerified: ManifestPayload?
        /// The previous history file when no role key vouches for its payload: the next
        /// version's `previous` (signed) tells whether it changed after that was signed.
        var lastUnsigned: (fileVersion: Int64, hash: [UInt8])?
        /// The latest expiry of the verified manifests so far, and its version.
        var coveredUntil: (time: Timestamp, version: Int64)?
        var previousVersion: Int64?
        /// Whether a history file beyond the index's latest version was met.
        var sawBeyondIndex = false
    }

    /// Checks every history file in version order.
    ///
    /// - Returns: the bytes of the history file of the index's latest version (or of the
    ///   newest history file when there is no index), for the manifest.json comparison.
    mutating func auditHistory() throws(AuditError) -> (version: Int64, bytes: [UInt8]?)? {
        let versions = try historyVersions()
        let ordered = versions.ordered
        var probed = versions.probed
        let latestVersion = index?.manifests.last?.version ?? ordered.last
        var latestBytes: [UInt8]?
        var walk = HistoryWalk()
        if index == nil, !ordered.isEmpty {
            violation(
                .indexMissing, nil, .index,
                "missing, but history/ holds \(ordered.count) manifest(s); every published manifest must be listed")
        }
        for (position, version) in ordered.enumerated() {
            defer {
                unverifiedContent = false
                options.progress?(position + 1, ordered.count)
            }
            let file = TreeFile.history(version)
            reportVersionGap(before: version, after: walk.previousVersion)
            walk.previousVersion = version
            let entry = indexByVersion[version]
            let beyondIndex = placeInIndex(version, file: file, listed: entry != nil, walk: &walk)
            let outcome: Outcome
            if let cached = probed.removeValue(forKey: version) {
                outcome = cached
            } else {
                outcome = try read(file, limit: options.limits.maxEnvelopeBytes, version: version)
            }
            let bytes: [UInt8]
            switch outcome {
            case .bytes(let read): bytes = read
            case .absent:
                violation(.historyMissing, version, file, "missing, but index.json lists version \(version)")
                continue
            case .refused: continue
            }
            if version == latestVersion { latestBytes = bytes }
            auditHistoryFile(bytes, version: version, file: file, entry: entry, beyondIndex: beyondIndex, walk: &walk)
        }
        if let covered = walk.coveredUntil, covered.time <= options.at {
            report.gaps.append(
                CoverageGap(from: covered.time, until: options.at, afterVersion: covered.version, beforeVersion: nil))
        }
        if let latest = walk.last, latest.payload.expiresAt <= options.at {
            violation(
                .latestExpired, latest.fileVersion, TreeFile.history(latest.fileVersion),
                "the latest manifest expired at \(latest.payload.expiresAt) (audit time \(options.at)): clients have no current manifest"
            )
        }
        return latestVersion.map { ($0, latestBytes) }
    }

    /// The history versions to check: the index's, and history/'s listing or, where the source
    /// cannot list, those found by probing.
    ///
    /// - Returns: the versions in order, and what probing read (by version).
    private mutating func historyVersions() throws(AuditError) -> (ordered: [Int64], probed: [Int64: Outcome]) {
        var versions = Set(indexByVersion.keys)
        var probed: [Int64: Outcome] = [:]
        if let listing = try list(.history) {
            versions.formUnion(listing.versions)
            for name in listing.strayNames {
                warning(.strayFile, nil, "history/" + name, "not a history file name ({version}.json); ignored")
            }
        } else {
            // HTTPS cannot list: probe the numbers after the index (a publish that died
            // mid-way leaves one there), or from 1 without an index.
            var next = (index?.manifests.map(\.version).max() ?? 0) + 1
            var probes = 0
            while probes < options.maxProbes, next <= Limits.maxInteger {
                let outcome = try read(.history(next), limit: options.limits.maxEnvelopeBytes, version: next)
                if case .absent = outcome { break }
                probed[next] = outcome
                versions.insert(next)
                next += 1
                probes += 1
            }
        }
        return (versions.sorted(), probed)
    }

    /// Reports the versions missing between `previous` and `version`.
    private mutating func reportVersionGap(before version: Int64, after previous: Int64?) {
        guard let previous, version > previous + 1 else { return }
        let range =
            version == previous + 2 ? "version \(previous + 1) is" : "versions \(previous + 1)...\(version - 1) are"
        violation(
            .versionGap, previous + 1, .history(previous + 1),
            "\(range) missing (no history file, no index entry) between versions \(previous) and \(version)")
    }

    /// Reports a history file the index does not list, except the first one beyond the index's
    /// latest version: that one is reported once its signatures are known.
    ///
    /// - Returns: whether `version` is that first file beyond the index.
    private mutating func placeInIndex(_ version: Int64, file: TreeFile, listed: Bool, walk: inout HistoryWalk)
        -> Bool
    {
        guard index != nil, !listed else { return false }
        if let latestIndexed = index?.manifests.last?.version, version < latestIndexed {
            violation(
                .historyNotInIndex, version, file, "index.json does not list it, though it lists later versions")
            return false
        }
        if !walk.sawBeyondIndex {
            walk.sawBeyondIndex = true
            return true
        }
        violation(
            .historyNotInIndex, version, file,
            "a second history file beyond index.json; a publish that died mid-way leaves only one")
        return false
    }

    /// Checks one history file: the manifest itself, its index entry, and the rules between it
    /// and the versions before it; adds its summary to the report.
    private mutating func auditHistoryFile(
        _ bytes: [UInt8], version: Int64, file: TreeFile, entry: PublishedIndex.Entry?, beyondIndex: Bool,
        walk: inout HistoryWalk
    ) {
        let checked = checkManifest(bytes, file: file, version: version)
        if beyondIndex { reportBeyondIndex(checked, version: version, file: file) }
        if let entry, let hash = checked.hash {
            compare(entry, payload: checked.payload, hash: hash, file: file)
        }
        let unsignedBefore = walk.lastUnsigned
        walk.lastUnsigned = checked.unsigned ? checked.hash.map { (version, $0) } : nil
        guard let envelope = checked.envelope, let hash = checked.hash, let payload = checked.payload else {
            report.manifests.append(
                ManifestSummary(
                    version: version, rootVersion: nil, issuedAt: nil, expiresAt: nil,
                    payloadSHA256: checked.hash, signers: [], inIndex: entry != nil,
                    failure: checked.failure ?? .manifestFormat))
            return
        }
        let verified = checked.failure == nil
        if verified { noteForSteps(version: version, envelope: envelope, payload: payload, hash: hash) }
        if payload.version != version {
            violation(.historyFileName, version, file, "holds manifest version \(payload.version), not \(version)")
        }
        notePayload(version: payload.version, hash: hash, file: file)
        if !checked.unsigned, let unsignedBefore {
            checkPreviousOfUnsigned(unsignedBefore, payload: payload, version: version)
        }
        if let last = walk.last {
            let adjacent = last.fileVersion == version - 1
            for rule in HistoryRules.successorViolations(payload, of: last.payload, latestPayloadSHA256: last.hash) {
                historyViolation(rule, adjacent: adjacent, last: last, version: version, file: file)
            }
        }
        timelineStep(from: walk.lastVerified, to: payload, version: version, trusted: verified)
        if verified {
            noteCoverage(payload, version: version, walk: &walk)
            walk.lastVerified = payload
        }
        report.manifests.append(
            ManifestSummary(
                version: version, rootVersion: payload.rootVersion, issuedAt: payload.issuedAt,
                expiresAt: payload.expiresAt, payloadSHA256: hash, signers: checked.signers,
                inIndex: entry != nil, failure: checked.failure))
        if !checked.unsigned { walk.last = Parsed(fileVersion: version, payload: payload, hash: hash) }
    }

    /// The first history file beyond the index: a publish that died mid-way when it verifies,
    /// else a file no publish leaves.
    private mutating func reportBeyondIndex(_ checked: CheckedManifest, version: Int64, file: TreeFile) {
        if checked.failure == nil {
            warning(
                .historyBeyondIndex, version, file.path,
                "beyond the latest version of index.json (a publish that died mid-way? running the same publish again completes it)"
            )
        } else {
            // pinion publish writes only verified manifests: this is no interrupted publish.
            violation(
                .historyNotInIndex, version, file,
                "beyond the latest version of index.json, and it fails verification ([\(checked.failure?.rawValue ?? "")]): no publish leaves such a file"
            )
        }
    }

    /// When the version right before no role key vouches for, the signed `previous` of this one
    /// tells whether that file changed after this version was signed.
    private mutating func checkPreviousOfUnsigned(
        _ unsigned: (fileVersion: Int64, hash: [UInt8]), payload: ManifestPayload, version: Int64
    ) {
        guard unsigned.fileVersion == version - 1, let previous = payload.previous, previous != unsigned.hash
        else { return }
        // Reported on the changed file, as following from its signature finding.
        unverifiedContent = true
        violation(
            .previousLink, unsigned.fileVersion, .history(unsigned.fileVersion),
            "version \(version)'s previous (sha256:\(Hex.encode(previous))) is not this file's payload (sha256:\(Hex.encode(unsigned.hash))): it changed after version \(version) was signed"
        )
        unverifiedContent = false
    }

    /// Records a time no verified manifest covered before `payload` was issued, and extends the
    /// coverage to its expiry.
    private mutating func noteCoverage(_ payload: ManifestPayload, version: Int64, walk: inout HistoryWalk) {
        if let covered = walk.coveredUntil, payload.issuedAt > covered.time {
            report.gaps.append(
                CoverageGap(
                    from: covered.time, until: payload.issuedAt, afterVersion: covered.version, beforeVersion: version))
        }
        if walk.coveredUntil.map({ payload.expiresAt > $0.time }) ?? true {
            walk.coveredUntil = (payload.expiresAt, version)
        }
    }

    /// A manifest file checked in the order that names the cause of a failure.
    struct CheckedManifest {
        /// Nil when the envelope could not be parsed.
        var envelope: Envelope?
        /// SHA-256 of the payload bytes; nil without an envelope.
        var hash: [UInt8]?
        /// Nil when the payload breaks the strict format (or there is no envelope).
        var payload: ManifestPayload?
        /// Pins-role key ids whose signatures counted (empty unless the threshold was met).
        var signers: [String] = []
        /// The rule of the first finding that makes clients refuse it; nil when it verified.
        var failure: AuditRule?
        /// True when no key of the role vouches for the payload bytes: a signature does not
        /// verify over them, or only keys outside the role signed. Findings about the content
        /// are then marked `FindingCause.unverifiedContent`.
        var unsigned = false
    }

    /// Checks a manifest file: the envelope, its payloadType, the signatures over the raw
    /// payload bytes against the pins role of the root the payload names (read loosely, as
    /// the strict parse may refuse the bytes), then the strict payload parse, scope and
    /// lifetime cap. A signature failure is reported before what the unverified content says,
    /// and sets `unverifiedContent` (the caller resets it) so that later findings about this
    /// version are marked as following from it.
    mutating func checkManifest(_ bytes: [UInt8], file: TreeFile, version: Int64?) -> CheckedManifest {
        var checked = CheckedManifest()
        let envelope: Envelope
        do { envelope = try Envelope.parse(bytes, limits: options.limits) } catch {
            violation(
                .manifestFormat, version, file,
                "\(error.description) (the envelope cannot be read, so its signatures cannot be checked)")
            checked.failure = .manifestFormat
            return checked
        }
        checked.envelope = envelope
        checked.hash = crypto.hasher.sha256(envelope.payload)
        guard envelope.kind == .pins else {
            violation(
                .manifestFormat, version, file,
                "payloadType is \(envelope.kind.rawValue); a manifest file must hold a manifest")
            checked.failure = .manifestFormat
            return checked
        }
        let named = Self.looseInteger("rootVersion", of: envelope.payload, limits: options.limits)
        let root = named.flatMap { roots[$0] }
        let signatures = checkManifestSignatures(envelope, root: root, named: named, file: file, version: version)
        checked.signers = signatures.signers
        checked.failure = signatures.failure
        checked.unsigned = signatures.unsigned
        unverifiedContent = signatures.unsigned
        let payload: ManifestPayload
        do { payload = try ManifestPayload.parse(envelope.payload, limits: options.limits) } catch {
            var located = error
            located.path = located.path.isEmpty ? "payload" : "payload." + located.path
            violation(.manifestFormat, version, file, located.description)
            checked.failure = checked.failure ?? .manifestFormat
            return checked
        }
        checked.payload = payload
        if payload.scope != report.scope {
            violation(
                .scope, version, file,
                TrustError.scopeMismatch(expected: report.scope, found: payload.scope).description)
            checked.failure = checked.failure ?? .scope
        }
        if let root, payload.lifetime > root.payload.maxManifestLifetime {
            violation(
                .lifetimeCap, version, file,
                TrustError.lifetimeExceedsCap(lifetime: payload.lifetime, cap: root.payload.maxManifestLifetime)
                    .description)
            checked.failure = checked.failure ?? .lifetimeCap
        }
        return checked
    }

    /// An integer member of a payload read without the strict schema (the strict parse may
    /// refuse bytes that were changed after signing); nil when it cannot be read.
    static func looseInteger(_ member: String, of payload: [UInt8], limits: Limits) -> Int64? {
        guard case .object(let object) = try? StrictJSONParser.parse(payload, limits: limits.json),
            case .number(let text)? = object[member]
        else { return nil }
        return Int64(text)
    }

    /// Verifies a manifest's signatures over its raw payload bytes under the pins role of
    /// `root` (each role signature once) and, when the threshold is not met, names why:
    /// signatures that do not verify (the bytes changed after signing, or another key made
    /// them), too few role keys, or only keys outside the role (named with the role they hold
    /// in the tree's roots, if any). Keys outside the role are looked up in every usable root.
    ///
    /// - Returns: the pins-role key ids that counted, the rule that fails it (nil when the
    ///   threshold is met) and whether no role key vouches for the payload.
    mutating func checkManifestSignatures(
        _ envelope: Envelope, root: VerifiedRoot?, named: Int64?, file: TreeFile, version: Int64?
    ) -> (signers: [String], failure: AuditRule?, unsigned: Bool) {
        var roleReport = SignatureReport()
        if let root {
            roleReport = Signatures.check(envelope, role: root.payload.pinsRole, keys: root.payload, crypto: crypto)
            if roleReport.meets(root.payload.pinsRole.threshold) {
                signatureWarnings(roleReport, version: version, file: file.path, role: "pins role")
                return (roleReport.valid, nil, false)
            }
        }
        let outside = Self.unique(root == nil ? envelope.signatures.map(\.keyID) : roleReport.ignored)
        var failing = roleReport.invalid
        var foreign: [String] = []
        for id in outside {
            guard let known = knownKey(id) else {
                foreign.append("\(id) (no root the audit trusts lists it)")
                continue
            }
            let verifies = envelope.signatures.contains {
                $0.keyID == id
                    && crypto.verifier.isValidSignature($0.signature, of: envelope.signingInput, publicKey: known.key)
            }
            if verifies { foreign.append("\(id) (\(known.role))") } else { failing.append(id) }
        }
        let roleName = named.map { "the pins role of root \($0)" } ?? "the pins role of the root it names"
        let foreignNote =
            foreign.isEmpty ? "" : "; signed by key(s) outside \(roleName): \(foreign.joined(separator: ", "))"
        if !failing.isEmpty {
            violation(
                .manifestSignature, version, file,
                "the signature does not verify (the file was changed after signing, or signed by another key): the signature(s) of \(failing.joined(separator: ", ")) do not verify over its payload bytes\(foreignNote)"
            )
            return ([], .manifestSignature, roleReport.valid.isEmpty)
        }
        guard let root else {
            guard let named else {
                // Nothing names a root: the strict parse reports the payload; unknown signers
                // vouch for nothing.
                return ([], nil, !outside.isEmpty && foreign.count == outside.count && roleReport.valid.isEmpty)
            }
            let held = roots.keys.sorted().map(String.init).joined(separator: ", ")
            violation(
                .manifestRootMissing, version, file,
                "names rootVersion \(named), but the tree holds no usable root of that version (usable: \(held.isEmpty ? "none" : held))\(foreignNote)"
            )
            return ([], .manifestRootMissing, false)
        }
        let threshold = root.payload.pinsRole.threshold
        if !roleReport.valid.isEmpty {
            violation(
                .manifestSignature, version, file,
                "\(roleReport.valid.count) valid signature(s) from the pins role of root \(root.version), the root it names; threshold is \(threshold)\(foreignNote)"
            )
            return ([], .manifestSignature, false)
        }
        if foreign.isEmpty {
            violation(.manifestSignature, version, file, "the envelope carries no signature")
            return ([], .manifestSignature, true)
        }
        violation(
            .manifestForeignKey, version, file,
            "forged or mis-signed: signed only by key(s) outside the pins role of root \(root.version), the root it names: \(foreign.joined(separator: ", "))"
        )
        return ([], .manifestForeignKey, true)
    }

    /// A public key listed in a usable root of the tree (the newest that lists it), with the
    /// role it holds there. The roots are all read before the history: the index of every
    /// listed key is built once, on first use.
    mutating func knownKey(_ id: String) -> (key: [UInt8], role: String)? {
        if let index = knownKeys { return index[id] }
        var index: [String: (key: [UInt8], role: String)] = [:]
        for version in roots.keys.sorted() {
            guard let payload = roots[version]?.payload else { continue }
            for listed in payload.keys {
                let keyID = listed.keyID
                let role =
                    payload.pinsRole.keyIDs.contains(keyID)
                    ? "a pins key of root \(version)"
                    : payload.rootRole.keyIDs.contains(keyID)
                        ? "a root key of root \(version)" : "a key listed in root \(version)"
                index[keyID] = (listed.publicKey, role)
            }
        }
        knownKeys = index
        return index[id]
    }

    static func unique(_ ids: [String]) -> [String] {
        var seen = Set<String>()
        return ids.filter { seen.insert($0).inserted }
    }

    /// Records the payload of a version; a second, different payload for it is equivocation.
    mutating func notePayload(version: Int64, hash: [UInt8], file: TreeFile) {
        if let seen = seenPayloads[version] {
            if seen.hash != hash {
                violation(
                    .versionPublishedTwice, version, file,
                    "holds another payload for version \(version) than \(seen.file) (sha256:\(Hex.encode(hash)) vs sha256:\(Hex.encode(seen.hash)))"
                )
            }
        } else {
            seenPayloads[version] = (hash, file.path)
        }
    }

    /// Compares an index entry with its history file.
    mutating func compare(_ entry: PublishedIndex.Entry, payload: ManifestPayload?, hash: [UInt8], file: TreeFile) {
        let version = entry.version
        if entry.payloadSHA256 != hash {
            violation(
                .indexEntryMismatch, version, .index,
                "lists payloadSHA256 \(Hex.encode(entry.payloadSHA256)) for version \(version), but \(file.path) holds payload sha256:\(Hex.encode(hash))"
            )
            return
        }
        guard let payload else { return }
        var fields: [String] = []
        if entry.rootVersion != payload.rootVersion {
            fields.append("rootVersion \(entry.rootVersion) (file: \(payload.rootVersion))")
        }
        if entry.issuedAt != payload.issuedAt {
            fields.append("issuedAt \(entry.issuedAt) (file: \(payload.issuedAt))")
        }
        if entry.expiresAt != payload.expiresAt {
            fields.append("expiresAt \(entry.expiresAt) (file: \(payload.expiresAt))")
        }
        if !fields.isEmpty {
            violation(
                .indexEntryMismatch, version, .index,
                "the entry of version \(version) differs from \(file.path): \(fields.joined(separator: ", "))")
        }
    }

    /// Maps a rule broken between two published manifests to a finding. Versions that do
    /// not follow are reported by the file-name and gap rules; `previous` is only checked
    /// against the version right before.
    mutating func historyViolation(
        _ rule: HistoryViolation, adjacent: Bool, last: Parsed, version: Int64, file: TreeFile
    ) {
        switch rule {
        case .versionNotNext: return
        case .previousMismatch:
            guard adjacent else { return }
            violation(
                .previousLink, version, file,
                rule.description.replacingOccurrences(
                    of: "the latest published payload", with: "version \(last.fileVersion)'s payload"))
        case .issuedAtBeforeLatest(let latest, let found):
            violation(
                .issuedAtBackwards, version, file,
                "issuedAt \(found) is before issuedAt \(latest) of version \(last.fileVersion)")
        case .rootVersionDecreased(let latest, let found):
            violation(
                .rootVersionBackwards, version, file,
                "rootVersion \(found) is below rootVersion \(latest) of version \(last.fileVersion)")
        case .revocationLifted(let pins):
            warning(
                .revocationLifted, version, file.path,
                "lifts the revocation of \(pins.map(\.description).joined(separator: ", ")) (revoked in version \(last.fileVersion))"
            )
        }
    }
}
