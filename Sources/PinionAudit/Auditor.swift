// The audit of a whole published tree (docs/DESIGN.md §10): every root rotation, every
// manifest's signatures under the root it names, the history rules between consecutive
// versions, index.json and manifest.json against the files, collecting every violation.

import PinionCore
import PinionTrust

/// What an audit reads with and how it reports progress.
public struct AuditOptions: Sendable {
    /// The time expiry is judged at (the latest manifest's and the newest root's).
    public var at: Timestamp
    /// Size and count limits; envelopes are read up to `maxEnvelopeBytes`, index.json up
    /// to `indexLimit`.
    public var limits: Limits
    /// Most roots read before the audit stops walking the chain.
    public var maxRoots: Int
    /// Most history files probed one by one beyond the index when the source cannot list.
    public var maxProbes: Int
    /// Called after each history file with (files done, files in total).
    public var progress: (@Sendable (_ done: Int, _ total: Int) -> Void)?

    /// - Parameters:
    ///   - at: the audit time.
    ///   - limits: document limits (default docs/DESIGN.md §5).
    ///   - maxRoots: root walk bound (default 10,000).
    ///   - maxProbes: probe bound for sources that cannot list (default 10,000).
    ///   - progress: progress callback, or nil.
    public init(
        at: Timestamp, limits: Limits = .standard, maxRoots: Int = 10_000, maxProbes: Int = 10_000,
        progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) {
        self.at = at
        self.limits = limits
        self.maxRoots = maxRoots
        self.maxProbes = maxProbes
        self.progress = progress
    }

    /// Largest index.json read, in bytes: the history grows over years, so a generous
    /// multiple of the envelope limit (as `PublishedIndex.parse` allows).
    public var indexLimit: Int { max(limits.maxEnvelopeBytes * 16, 64 * 1024 * 1024) }
}

/// Why an audit could not run to its end.
public enum AuditError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The tree could not be read (missing directory, permissions, network, TLS, HTTP status).
    case io(TreeSourceError)

    public var description: String {
        switch self {
        case .io(let error): return error.description
        }
    }
}

/// Audits a published tree from public files alone.
public enum Auditor {
    /// Verifies the whole tree of the anchor's scope and collects every violation.
    ///
    /// Each file is read once (index.json and manifest.json a second time at the end, to
    /// detect a tree that changed during the audit), each signature is verified once, and
    /// the work is linear in the number and size of the files: the history is streamed,
    /// only the previous manifest is kept.
    ///
    /// - Parameters:
    ///   - anchor: the trusted root, as `RootChain(anchor:)` accepted it (its newest root
    ///     is the root given with `--root`).
    ///   - source: the tree.
    ///   - crypto: Ed25519 and SHA-256.
    ///   - options: audit time, limits, progress.
    /// - Returns: the report; `passed` is false when any rule is broken.
    /// - Throws: `AuditError.io` when the tree cannot be read; broken rules never throw.
    public static func audit(
        anchor: RootChain, source: any TreeSource, crypto: CryptoProvider, options: AuditOptions
    ) throws(AuditError) -> AuditReport {
        var run = AuditRun(anchor: anchor, source: source, crypto: crypto, options: options)
        try run.perform()
        return run.report
    }
}

/// The state of one audit.
struct AuditRun {
    let anchor: RootChain
    let source: any TreeSource
    let crypto: CryptoProvider
    let options: AuditOptions
    var report: AuditReport

    /// The outcome of reading one file.
    enum Outcome {
        case bytes([UInt8])
        case absent
        /// Refused (a link, not a regular file, too large): already reported.
        case refused
    }

    /// What a file held when first read: its SHA-256, absent or refused.
    enum Fingerprint: Equatable {
        case hash([UInt8])
        case absent
        case refused
    }

    private var fingerprints: [TreeFile: Fingerprint] = [:]
    /// Roots usable for checking manifests, by version.
    var roots: [Int64: VerifiedRoot] = [:]
    /// Parsed manifests the publish-step checks need, by file version (RotationSteps.swift).
    var stepManifests: [Int64: StepManifest] = [:]
    /// Which of them to keep (`stepVersionsNeeded()`, after index.json is read).
    var stepVersionsToKeep: Set<Int64>?
    /// Payload SHA-256 and file of the first payload seen for each version.
    private var seenPayloads: [Int64: (hash: [UInt8], file: String)] = [:]
    var index: PublishedIndex?
    private var indexByVersion: [Int64: PublishedIndex.Entry] = [:]
    private var domainSlots: [String: Int] = [:]

    init(anchor: RootChain, source: any TreeSource, crypto: CryptoProvider, options: AuditOptions) {
        self.anchor = anchor
        self.source = source
        self.crypto = crypto
        self.options = options
        report = AuditReport(
            scope: anchor.newest.payload.scope, location: source.location, at: options.at,
            anchorVersion: anchor.newest.version)
    }

    mutating func perform() throws(AuditError) {
        try auditRoots()
        try readIndex()
        stepVersionsToKeep = stepVersionsNeeded()
        let latestBytes = try auditHistory()
        auditPublishSteps()
        try auditManifestJSON(latestHistoryBytes: latestBytes)
        // A publish (or a server serving different bytes) during the audit shows here.
        _ = try read(.index, limit: options.indexLimit, version: nil)
        _ = try read(.manifest, limit: options.limits.maxEnvelopeBytes, version: nil)
    }

    // MARK: - Reading

    mutating func read(_ file: TreeFile, limit: Int, version: Int64?) throws(AuditError) -> Outcome {
        let outcome: Outcome
        let fingerprint: Fingerprint
        do {
            if let bytes = try source.read(file, limit: limit) {
                outcome = .bytes(bytes)
                fingerprint = .hash(crypto.hasher.sha256(bytes))
            } else {
                outcome = .absent
                fingerprint = .absent
            }
        } catch {
            guard error.isTreeProperty else { throw .io(error) }
            outcome = .refused
            fingerprint = .refused
            if fingerprints[file] == nil { violation(.fileRefused, version, file, Self.refusal(error)) }
        }
        if let first = fingerprints[file] {
            if first != fingerprint {
                violation(
                    .treeChanged, version, file,
                    "changed between two reads during the audit (first \(Self.describe(first)), then \(Self.describe(fingerprint))); a publish ran meanwhile or the server serves different bytes: audit again"
                )
            }
        } else {
            fingerprints[file] = fingerprint
        }
        return outcome
    }

    func list(_ folder: TreeFolder) throws(AuditError) -> TreeListing? {
        do { return try source.list(folder) } catch {
            if error.isTreeProperty { return TreeListing(versions: []) }
            throw .io(error)
        }
    }

    /// True when listing `folder` fails because of what is in the tree (not I/O).
    static func folderRefused(_ folder: TreeFolder, in source: any TreeSource) -> Bool {
        do {
            _ = try source.list(folder)
            return false
        } catch {
            return error.isTreeProperty
        }
    }

    static func refusal(_ error: TreeSourceError) -> String {
        switch error {
        case .refused(_, let kind): return "is \(kind); the auditor reads only regular files"
        case .tooLarge(_, let limit): return "larger than the limit of \(limit) bytes"
        case .io(_, let detail): return detail
        }
    }

    static func describe(_ fingerprint: Fingerprint) -> String {
        switch fingerprint {
        case .hash(let hash): return "sha256:\(Hex.encode(hash))"
        case .absent: return "absent"
        case .refused: return "refused"
        }
    }

    mutating func violation(_ rule: AuditRule, _ version: Int64?, _ file: TreeFile, _ message: String) {
        report.violations.append(AuditFinding(rule: rule, version: version, file: file.path, message: message))
    }

    mutating func warning(_ rule: AuditRule, _ version: Int64?, _ file: String, _ message: String) {
        report.warnings.append(AuditFinding(rule: rule, version: version, file: file, message: message))
    }

    // MARK: - Roots

    mutating func auditRoots() throws(AuditError) {
        let given = anchor.newest
        let limits = options.limits
        var chain: RootChain?
        var version: Int64 = 1
        var previousPinsRole: RootPayload.Role?
        walk: while true {
            guard version <= Int64(options.maxRoots) else {
                violation(
                    .rootFormat, version, .root(version), "more than \(options.maxRoots) roots; the audit stops here")
                break
            }
            let file = TreeFile.root(version)
            switch try read(file, limit: limits.maxEnvelopeBytes, version: version) {
            case .refused:
                // When root/ itself is refused (a link or a file where the folder belongs),
                // every root would be refused the same way: one finding is enough.
                if Self.folderRefused(.root, in: source) { break walk }
                chain = nil
                version += 1
                continue
            case .absent:
                if version < given.version {
                    violation(
                        .rootMissing, version, file,
                        "missing; every root from 1 up to the given root (version \(given.version)) must be published")
                    chain = nil
                    version = given.version
                    continue
                }
                if version == given.version {
                    violation(
                        .rootMissing, version, file,
                        "missing; the given root (version \(given.version)) is not published")
                    chain = anchor
                    record(given, file: "(given root)", previousPinsRole: &previousPinsRole)
                    version += 1
                    continue
                }
            case .bytes(let bytes):
                var placed: VerifiedRoot?
                var rotationError: TrustError?
                if var current = chain {
                    do {
                        placed = try current.append(bytes, crypto: crypto, limits: limits)
                        chain = current
                    } catch {
                        rotationError = error
                        rootViolation(error, version: version)
                    }
                }
                if placed == nil {
                    // Start over on the root's own signatures, so that later rotations and the
                    // manifests signed under it are still checked (and their faults listed).
                    do {
                        let restarted = try RootChain(anchor: bytes, crypto: crypto, limits: limits)
                        let root = restarted.newest
                        if root.version != version {
                            if rotationError == nil {
                                violation(
                                    .rootFileName, version, file, "holds root version \(root.version), not \(version)")
                            }
                            chain = nil
                        } else if root.payload.scope != report.scope {
                            if rotationError == nil {
                                violation(
                                    .scope, version, file,
                                    TrustError.scopeMismatch(expected: report.scope, found: root.payload.scope)
                                        .description)
                            }
                            chain = nil
                        } else {
                            placed = root
                            chain = restarted
                        }
                    } catch {
                        if error != rotationError { rootViolation(error, version: version) }
                        chain = nil
                    }
                }
                if version == given.version {
                    let hash = (try? Envelope.parse(bytes, limits: limits)).map { crypto.hasher.sha256($0.payload) }
                    if hash != given.payloadSHA256 {
                        violation(
                            .rootEquivocation, version, file,
                            "differs from the given root of the same version (payload sha256:\(hash.map(Hex.encode) ?? "unreadable"), given sha256:\(Hex.encode(given.payloadSHA256)))"
                        )
                        placed = nil
                    }
                    if placed == nil {
                        // Clients trust the given root: check the rest against it.
                        chain = anchor
                        placed = given
                    }
                }
                if let placed { record(placed, file: file.path, previousPinsRole: &previousPinsRole) }
                version += 1
                continue
            }
            break
        }
        // `version` is the first number after the chain that is absent.
        if let listing = try list(.root) {
            if let beyond = listing.versions.first(where: { $0 > version }) {
                violation(
                    .rootGap, beyond, .root(beyond),
                    "exists but root/\(version).json is missing; the chain has a gap and is not read further")
            }
            for name in listing.strayNames {
                warning(.strayFile, nil, "root/" + name, "not a root file name ({version}.json); ignored")
            }
        }
        if let newest = roots.keys.max(), let root = roots[newest], root.payload.expiresAt <= options.at {
            violation(
                .rootExpired, newest, TreeFile.root(newest),
                "the newest root expired at \(root.payload.expiresAt) (audit time \(options.at)): clients accept no manifest"
            )
        }
    }

    mutating func record(_ root: VerifiedRoot, file: String, previousPinsRole: inout RootPayload.Role?) {
        roots[root.version] = root
        var signers: [String] = []
        for id in (root.previousRoleReport?.valid ?? []) + root.ownRoleReport.valid where !signers.contains(id) {
            signers.append(id)
        }
        let pinsRole = root.payload.pinsRole
        let changed = previousPinsRole.map {
            Set($0.keyIDs) != Set(pinsRole.keyIDs) || $0.threshold != pinsRole.threshold
        }
        previousPinsRole = pinsRole
        report.roots.append(
            RootSummary(
                version: root.version, file: file, payloadSHA256: root.payloadSHA256,
                issuedAt: root.payload.issuedAt, expiresAt: root.payload.expiresAt,
                maxManifestLifetime: root.payload.maxManifestLifetime, rootRole: root.payload.rootRole,
                pinsRole: pinsRole, signers: signers, pinsRoleChanged: changed ?? false))
        if let previous = root.previousRoleReport {
            signatureWarnings(
                previous, version: root.version, file: file, role: "root role of root \(root.version - 1)")
        }
        signatureWarnings(root.ownRoleReport, version: root.version, file: file, role: "root role")
    }

    mutating func signatureWarnings(_ signatures: SignatureReport, version: Int64, file: String, role: String) {
        for id in signatures.invalid {
            warning(
                .invalidSignature, version, file, "the signature by \(role) key \(id) does not verify (not counted)")
        }
        for id in signatures.duplicates {
            warning(.duplicateSignature, version, file, "key \(id) signed more than once (counted once)")
        }
    }

    mutating func rootViolation(_ error: TrustError, version: Int64) {
        let file = TreeFile.root(version)
        switch error {
        case .format(let format): violation(.rootFormat, version, file, format.description)
        case .wrongPayloadKind: violation(.rootFormat, version, file, "\(error); a root file must hold a root")
        case .thresholdNotMet(_, let rootVersion, _, _) where rootVersion == version:
            violation(.rootSignature, version, file, "not signed by a threshold of its own root role: \(error)")
        case .thresholdNotMet(_, let rootVersion, _, _):
            violation(
                .rootRotation, version, file,
                "the rotation from root \(rootVersion) is not signed by a threshold of root \(rootVersion)'s root role: \(error)"
            )
        case .rootNotNext(_, let found):
            violation(.rootFileName, version, file, "holds root version \(found), not \(version)")
        case .scopeMismatch: violation(.scope, version, file, error.description)
        case .pinsRoleSinceInvalid: violation(.rootRotation, version, file, error.description)
        default: violation(.rootFormat, version, file, error.description)
        }
    }

    // MARK: - index.json

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

    // MARK: - manifest.json

    mutating func auditManifestJSON(latestHistoryBytes latest: (version: Int64, bytes: [UInt8]?)?) throws(AuditError) {
        let file = TreeFile.manifest
        guard case .bytes(let bytes) = try read(file, limit: options.limits.maxEnvelopeBytes, version: nil) else {
            if let latest {
                violation(
                    .manifestMissing, latest.version, file,
                    "missing (or refused), but the history's latest version is \(latest.version): clients get no manifest"
                )
            }
            return
        }
        if let latest, let latestBytes = latest.bytes, latestBytes == bytes {
            report.manifestJSONVersion = latest.version
            return
        }
        guard let (envelope, payload) = parseManifest(bytes, file: file, version: nil) else { return }
        let hash = crypto.hasher.sha256(envelope.payload)
        report.manifestJSONVersion = payload.version
        // What clients fetch must verify, whatever else is wrong with it.
        _ = checkSignatures(
            bytes, envelope: envelope, payload: payload, payloadSHA256: hash, file: file, version: payload.version)
        guard let latest else {
            violation(
                .manifestAheadOfIndex, payload.version, file,
                "holds version \(payload.version), but no history file or index entry holds any manifest")
            return
        }
        let latestHash = seenPayloads[latest.version]?.hash ?? indexByVersion[latest.version]?.payloadSHA256
        let latestFile = TreeFile.history(latest.version).path
        if payload.version < latest.version {
            violation(
                .manifestNotLatest, payload.version, file,
                payload.version == latest.version - 1
                    ? "holds version \(payload.version), not the latest version \(latest.version) of the history (if the publish of version \(latest.version) died before replacing manifest.json, running it again completes it)"
                    : "holds version \(payload.version), not the latest version \(latest.version) of the history")
            notePayload(version: payload.version, hash: hash, file: file)
        } else if payload.version > latest.version {
            violation(
                .manifestAheadOfIndex, payload.version, file,
                "holds version \(payload.version), beyond the latest version \(latest.version) of index.json (manifest.json must be written last)"
            )
            notePayload(version: payload.version, hash: hash, file: file)
        } else if let latestHash, latestHash != hash {
            violation(
                .versionPublishedTwice, payload.version, file,
                "holds another payload for version \(payload.version) than \(latestFile) or index.json (sha256:\(Hex.encode(hash)) vs sha256:\(Hex.encode(latestHash)))"
            )
        } else {
            violation(
                .manifestNotIdentical, payload.version, file,
                "holds version \(payload.version) but is not byte-identical to \(latestFile) (other signatures or formatting)"
            )
        }
    }

    // MARK: - Timeline

    mutating func timelineStep(from old: ManifestPayload?, to new: ManifestPayload, version: Int64) {
        let date = new.issuedAt
        guard let old else {
            for domain in new.domains {
                event(
                    domain.name, version, date,
                    .added(enforce: domain.enforce, includeSubdomains: domain.includeSubdomains, pins: domain.pins))
            }
            revocationEvents(revoked: new.revokedPins, lifted: [], old: nil, new: new, version: version)
            return
        }
        let diff = ManifestDiff.unchecked(old, new)
        for domain in diff.domainsRemoved { event(domain.name, version, date, .removed) }
        for domain in diff.domainsAdded {
            event(
                domain.name, version, date,
                .added(enforce: domain.enforce, includeSubdomains: domain.includeSubdomains, pins: domain.pins))
        }
        for change in diff.domainsChanged {
            for pin in change.pinsAdded { event(change.name, version, date, .pinAdded(pin)) }
            for pin in change.pinsRemoved { event(change.name, version, date, .pinRemoved(pin)) }
            if let enforce = change.enforce { event(change.name, version, date, .enforceChanged(enforce.new)) }
            if let include = change.includeSubdomains {
                event(change.name, version, date, .includeSubdomainsChanged(include.new))
            }
        }
        revocationEvents(
            revoked: diff.revocationsAdded, lifted: diff.revocationsLifted, old: old, new: new, version: version)
    }

    mutating func revocationEvents(
        revoked: [Pin], lifted: [Pin], old: ManifestPayload?, new: ManifestPayload, version: Int64
    ) {
        guard !revoked.isEmpty || !lifted.isEmpty else { return }
        let date = new.issuedAt
        let changed = Set(revoked + lifted)
        // Which domains list each changed pin, before or after the step.
        var holders: [Pin: [String]] = [:]
        for domain in (old?.domains ?? []) + new.domains {
            for pin in domain.pins where changed.contains(pin) && !(holders[pin]?.contains(domain.name) ?? false) {
                holders[pin, default: []].append(domain.name)
            }
        }
        for pin in revoked {
            report.revocations.append(RevocationEvent(version: version, date: date, pin: pin, lifted: false))
            for name in holders[pin] ?? [] { event(name, version, date, .pinRevoked(pin)) }
        }
        for pin in lifted {
            report.revocations.append(RevocationEvent(version: version, date: date, pin: pin, lifted: true))
            for name in holders[pin] ?? [] { event(name, version, date, .revocationLifted(pin)) }
        }
    }

    mutating func event(_ name: String, _ version: Int64, _ date: Timestamp, _ event: DomainEvent) {
        let slot: Int
        if let existing = domainSlots[name] {
            slot = existing
        } else {
            slot = report.domains.count
            domainSlots[name] = slot
            report.domains.append(DomainTimeline(name: name, entries: []))
        }
        report.domains[slot].entries.append(DomainTimeline.Entry(version: version, date: date, event: event))
    }
}
