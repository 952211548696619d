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

    /// Checks every history file in version order.
    ///
    /// - Returns: the bytes of the history file of the index's latest version (or of the
    ///   newest history file when there is no index), for the manifest.json comparison.
    mutating func auditHistory() throws(AuditError) -> (version: Int64, bytes: [UInt8]?)? {
        let limits = options.limits
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
                let outcome = try read(.history(next), limit: limits.maxEnvelopeBytes, version: next)
                if case .absent = outcome { break }
                probed[next] = outcome
                versions.insert(next)
                next += 1
                probes += 1
            }
        }
        let ordered = versions.sorted()
        let latestIndexed = index?.manifests.last?.version
        let latestVersion = latestIndexed ?? ordered.last
        var latestBytes: [UInt8]?
        var last: Parsed?
        var coveredUntil: (time: Timestamp, version: Int64)?
        var previousVersion: Int64?
        var sawBeyondIndex = false
        if index == nil, !ordered.isEmpty {
            violation(
                .indexMissing, nil, .index,
                "missing, but history/ holds \(ordered.count) manifest(s); every published manifest must be listed")
        }
        for (position, version) in ordered.enumerated() {
            defer { options.progress?(position + 1, ordered.count) }
            let file = TreeFile.history(version)
            if let previousVersion, version > previousVersion + 1 {
                let range =
                    version == previousVersion + 2
                    ? "version \(previousVersion + 1) is" : "versions \(previousVersion + 1)...\(version - 1) are"
                violation(
                    .versionGap, previousVersion + 1, .history(previousVersion + 1),
                    "\(range) missing (no history file, no index entry) between versions \(previousVersion) and \(version)"
                )
            }
            previousVersion = version
            let entry = indexByVersion[version]
            if index != nil, entry == nil {
                if let latestIndexed, version < latestIndexed {
                    violation(
                        .historyNotInIndex, version, file,
                        "index.json does not list it, though it lists later versions")
                } else if !sawBeyondIndex {
                    sawBeyondIndex = true
                    warning(
                        .historyBeyondIndex, version, file.path,
                        "beyond the latest version of index.json (a publish that died mid-way? running the same publish again completes it)"
                    )
                } else {
                    violation(
                        .historyNotInIndex, version, file,
                        "a second history file beyond index.json; a publish that died mid-way leaves only one")
                }
            }
            let outcome: Outcome
            if let cached = probed.removeValue(forKey: version) {
                outcome = cached
            } else {
                outcome = try read(file, limit: limits.maxEnvelopeBytes, version: version)
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
            guard let (envelope, payload) = parseManifest(bytes, file: file, version: version) else { continue }
            let hash = crypto.hasher.sha256(envelope.payload)
            noteForSteps(version: version, envelope: envelope, payload: payload, hash: hash)
            if payload.version != version {
                violation(.historyFileName, version, file, "holds manifest version \(payload.version), not \(version)")
            }
            notePayload(version: payload.version, hash: hash, file: file)
            let signers = checkSignatures(
                bytes, envelope: envelope, payload: payload, payloadSHA256: hash, file: file, version: version)
            if let entry { compare(entry, payload: payload, hash: hash, file: file) }
            if let last {
                let adjacent = last.fileVersion == version - 1
                for rule in HistoryRules.successorViolations(payload, of: last.payload, latestPayloadSHA256: last.hash)
                {
                    historyViolation(rule, adjacent: adjacent, last: last, version: version, file: file)
                }
            }
            timelineStep(from: last?.payload, to: payload, version: version)
            if let covered = coveredUntil, payload.issuedAt > covered.time {
                report.gaps.append(
                    CoverageGap(
                        from: covered.time, until: payload.issuedAt, afterVersion: covered.version,
                        beforeVersion: version))
            }
            if coveredUntil.map({ payload.expiresAt > $0.time }) ?? true {
                coveredUntil = (payload.expiresAt, version)
            }
            report.manifests.append(
                ManifestSummary(
                    version: version, rootVersion: payload.rootVersion, issuedAt: payload.issuedAt,
                    expiresAt: payload.expiresAt, payloadSHA256: hash, signers: signers, inIndex: entry != nil))
            last = Parsed(fileVersion: version, payload: payload, hash: hash)
        }
        if let covered = coveredUntil, covered.time <= options.at {
            report.gaps.append(
                CoverageGap(from: covered.time, until: options.at, afterVersion: covered.version, beforeVersion: nil))
        }
        if let latest = last, latest.payload.expiresAt <= options.at {
            violation(
                .latestExpired, latest.fileVersion, TreeFile.history(latest.fileVersion),
                "the latest manifest expired at \(latest.payload.expiresAt) (audit time \(options.at)): clients have no current manifest"
            )
        }
        return latestVersion.map { ($0, latestBytes) }
    }

    /// Parses a manifest envelope and its payload strictly, reporting a format violation.
    mutating func parseManifest(_ bytes: [UInt8], file: TreeFile, version: Int64?) -> (Envelope, ManifestPayload)? {
        let envelope: Envelope
        do { envelope = try Envelope.parse(bytes, limits: options.limits) } catch {
            violation(.manifestFormat, version, file, error.description)
            return nil
        }
        guard envelope.kind == .pins else {
            violation(
                .manifestFormat, version, file,
                "payloadType is \(envelope.kind.rawValue); a manifest file must hold a manifest")
            return nil
        }
        do { return (envelope, try ManifestPayload.parse(envelope.payload, limits: options.limits)) } catch {
            var located = error
            located.path = located.path.isEmpty ? "payload" : "payload." + located.path
            violation(.manifestFormat, version, file, located.description)
            return nil
        }
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

    /// Verifies a manifest under the root it names (each signature once).
    ///
    /// - Returns: the pins-role key ids whose signatures verified.
    mutating func checkSignatures(
        _ bytes: [UInt8], envelope: Envelope, payload: ManifestPayload, payloadSHA256: [UInt8], file: TreeFile,
        version: Int64
    ) -> [String] {
        guard let root = roots[payload.rootVersion] else {
            let held = roots.keys.sorted().map(String.init).joined(separator: ", ")
            violation(
                .manifestRootMissing, version, file,
                "names rootVersion \(payload.rootVersion), but the tree holds no usable root of that version (usable: \(held.isEmpty ? "none" : held))"
            )
            if payload.scope != report.scope {
                violation(
                    .scope, version, file,
                    TrustError.scopeMismatch(expected: report.scope, found: payload.scope).description)
            }
            return []
        }
        do {
            // The envelope and payload parsed by parseManifest, not the bytes again.
            let verified = try ManifestVerifier.verify(
                envelope, parsedPayload: payload, payloadSHA256: payloadSHA256, under: root, crypto: crypto,
                limits: options.limits)
            signatureWarnings(verified.report, version: version, file: file.path, role: "pins role")
            return verified.report.valid
        } catch {
            switch error {
            case .thresholdNotMet(_, let rootVersion, let valid, let threshold):
                let role = Set(root.payload.pinsRole.keyIDs)
                let outsiders = envelope.signatures.map(\.keyID).filter { !role.contains($0) }
                let signedBy =
                    outsiders.isEmpty ? "" : "; signed by key(s) not in that role: \(outsiders.joined(separator: ", "))"
                violation(
                    .manifestSignature, version, file,
                    "\(valid) valid signature(s) from the pins role of root \(rootVersion), the root it names; threshold is \(threshold)\(signedBy)"
                )
                // The signatures failed first: the payload rules are still checked.
                if payload.scope != report.scope {
                    violation(
                        .scope, version, file,
                        TrustError.scopeMismatch(expected: report.scope, found: payload.scope).description)
                }
                if payload.lifetime > root.payload.maxManifestLifetime {
                    violation(
                        .lifetimeCap, version, file,
                        TrustError.lifetimeExceedsCap(lifetime: payload.lifetime, cap: root.payload.maxManifestLifetime)
                            .description)
                }
            case .lifetimeExceedsCap: violation(.lifetimeCap, version, file, error.description)
            case .scopeMismatch: violation(.scope, version, file, error.description)
            case .format(let format): violation(.manifestFormat, version, file, format.description)
            default: violation(.manifestFormat, version, file, error.description)
            }
            return []
        }
    }

    /// Compares an index entry with its history file.
    mutating func compare(_ entry: PublishedIndex.Entry, payload: ManifestPayload, hash: [UInt8], file: TreeFile) {
        let version = entry.version
        if entry.payloadSHA256 != hash {
            violation(
                .indexEntryMismatch, version, .index,
                "lists payloadSHA256 \(Hex.encode(entry.payloadSHA256)) for version \(version), but \(file.path) holds payload sha256:\(Hex.encode(hash))"
            )
            return
        }
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
