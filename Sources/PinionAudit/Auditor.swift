// The audit of a whole published tree (docs/DESIGN.md §10): options, entry point, run state and file reading (checks in Audit*.swift, RotationSteps, LogAudit).

import PinionCore
import PinionLog
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
    /// Where each witness's latest checkpoint is fetched; nil skips the witness checks.
    public var witnesses: (any WitnessCheckpointSource)?
    /// A checkpoint note seen before (`--since`): the log must be consistent with it.
    public var since: [UInt8]?
    /// Seconds a witness may be ahead of the published log, by its cosignature time, before
    /// the audit stops calling it a publish in progress (witnesses cosign before the
    /// publisher writes what it serves). Default 3,600 (`pinion audit --publish-grace 1h`).
    public var publishGrace: Int64 = 3600
    /// The publisher's pending checkpoint note (`{repo}/pending/{scope}/checkpoint`), when the
    /// audit runs on the publisher host: a witness holding it is a stalled publish.
    public var pendingCheckpoint: [UInt8]?

    /// - Parameters:
    ///   - at: the audit time.
    ///   - limits: document limits (default docs/DESIGN.md §5).
    ///   - maxRoots: root walk bound (default 10,000).
    ///   - maxProbes: probe bound for sources that cannot list (default 10,000).
    ///   - progress: progress callback, or nil.
    ///   - witnesses: the witness checkpoint source, or nil to skip the witnesses.
    ///   - since: an earlier checkpoint note (`--since`), or nil.
    public init(
        at: Timestamp, limits: Limits = .standard, maxRoots: Int = 10_000, maxProbes: Int = 10_000,
        progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil,
        witnesses: (any WitnessCheckpointSource)? = nil, since: [UInt8]? = nil
    ) {
        self.witnesses = witnesses
        self.since = since
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
        var report = run.report
        if let treeRoot = run.treeRootOfGivenVersion {
            try groupUnderGivenRoot(&report, treeRoot: treeRoot, source: source, crypto: crypto, options: options)
        }
        return report
    }

    /// Rules whose findings depend on the witnesses' answers, which the comparison audit does
    /// not fetch again: they are never grouped under the given root.
    static let witnessRules: Set<AuditRule> = [
        .logWitnessUnavailable, .logWitnessAhead, .logSplitView, .logUnpublishedEntries, .logRollback,
        .logCosignatureFuture,
    ]

    /// When the given root differs from the tree's root of its version, audits the tree again
    /// trusting the tree's own root (when it carries a threshold of its own root role) and
    /// marks every finding that does not occur then as following from the given root: those
    /// disappear if the given root was the wrong one. A finding that occurs then keeps the
    /// cause it has there, and a cause found only then (hidden by the given root) is added,
    /// its message saying so. Witnesses are not contacted again.
    static func groupUnderGivenRoot(
        _ report: inout AuditReport, treeRoot: [UInt8], source: any TreeSource, crypto: CryptoProvider,
        options: AuditOptions
    ) throws(AuditError) {
        guard let version = report.givenRootDiffers,
            let chain = try? RootChain(anchor: treeRoot, crypto: crypto, limits: options.limits),
            chain.newest.version == version, chain.newest.payload.scope == report.scope
        else { return }
        var plain = options
        plain.witnesses = nil
        plain.progress = nil
        var other = AuditRun(anchor: chain, source: source, crypto: crypto, options: plain)
        try other.perform()
        struct Key: Hashable {
            let rule: AuditRule
            let version: Int64?
            let file: String
        }
        // A finding that also occurs under the tree's root keeps the cause it has there.
        var independent: [Key: FindingCause?] = [:]
        for finding in other.report.violations + other.report.warnings {
            independent[Key(rule: finding.rule, version: finding.version, file: finding.file)] = finding.followsFrom
        }
        func mark(_ findings: inout [AuditFinding]) {
            for position in findings.indices {
                let finding = findings[position]
                guard finding.rule != .rootEquivocation, !witnessRules.contains(finding.rule) else { continue }
                if let cause = independent[Key(rule: finding.rule, version: finding.version, file: finding.file)] {
                    findings[position].followsFrom = cause
                } else {
                    findings[position].followsFrom = .givenRoot
                }
            }
        }
        mark(&report.violations)
        mark(&report.warnings)
        // A fault the wrong root hides (a signature that does not verify looks like an unknown
        // key under it) is listed as the tree's root shows it, as a cause of its own.
        let seen = Set(report.violations.map { Key(rule: $0.rule, version: $0.version, file: $0.file) })
        for finding in other.report.violations where finding.followsFrom == nil {
            guard !witnessRules.contains(finding.rule),
                !seen.contains(Key(rule: finding.rule, version: finding.version, file: finding.file))
            else { continue }
            var hidden = finding
            hidden.message = "with the tree's own root \(version): " + finding.message
            report.violations.append(hidden)
        }
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

    var fingerprints: [TreeFile: Fingerprint] = [:]
    /// Roots usable for checking manifests, by version.
    var roots: [Int64: VerifiedRoot] = [:]
    /// Parsed manifests the publish-step checks need, by file version (RotationSteps.swift).
    var stepManifests: [Int64: StepManifest] = [:]
    /// Which of them to keep (`stepVersionsNeeded()`, after index.json is read).
    var stepVersionsToKeep: Set<Int64>?
    /// Payload SHA-256 and file of the first payload seen for each version.
    var seenPayloads: [Int64: (hash: [UInt8], file: String)] = [:]
    var index: PublishedIndex?
    var indexByVersion: [Int64: PublishedIndex.Entry] = [:]
    var domainSlots: [String: Int] = [:]
    /// Set while the findings about one manifest's content follow from its signatures not
    /// verifying (`FindingCause.unverifiedContent`).
    var unverifiedContent = false
    /// The tree's root file of the given root's version, when its payload differs from the
    /// given root's (`AuditReport.givenRootDiffers`).
    var treeRootOfGivenVersion: [UInt8]?
    /// Every key the usable roots list, by key id, with its role (`knownKey`).
    var knownKeys: [String: (key: [UInt8], role: String)]?

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
        try auditLog()
        // A publish (or a server serving different bytes) during the audit shows here.
        _ = try read(.index, limit: options.indexLimit, version: nil)
        _ = try read(.manifest, limit: options.limits.maxEnvelopeBytes, version: nil)
        if report.log != nil {
            _ = try read(.logCheckpoint, limit: NoteLimits.standard.maxBytes, version: nil)
            _ = try read(.manifestProof, limit: TlogProofLimits.standard.maxBytes, version: nil)
        }
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
        report.violations.append(
            AuditFinding(
                rule: rule, version: version, file: file.path, message: message,
                followsFrom: unverifiedContent ? .unverifiedContent : nil))
    }

    mutating func warning(_ rule: AuditRule, _ version: Int64?, _ file: String, _ message: String) {
        report.warnings.append(
            AuditFinding(
                rule: rule, version: version, file: file, message: message,
                followsFrom: unverifiedContent ? .unverifiedContent : nil))
    }
}
