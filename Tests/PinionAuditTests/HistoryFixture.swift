// A published history built and signed at test time with explicit times (t0 + days), written
// as a tree the way `pinion publish` lays it out, so tests can then break one rule at a time.

import Foundation
import PinionAudit
import PinionCore
import PinionCrypto
import PinionSystem
import PinionTestSupport
import PinionTrust

/// Roots and manifests of one scope, signed in memory; `write(to:)` lays out the tree.
final class HistoryFixture {
    let scope: String
    /// Root envelopes, index = version - 1.
    private(set) var rootEnvelopes: [Envelope] = []
    private(set) var rootPayloads: [RootPayload] = []
    /// Root-role keys of each root version (index = version - 1).
    private(set) var rootKeys: [[Ed25519SecretKey]] = []
    /// Pins-role keys of each root version (threshold 1).
    private(set) var pinsKeys: [[Ed25519SecretKey]] = []
    /// Published manifests in version order.
    private(set) var manifests: [(envelope: Envelope, payload: ManifestPayload)] = []

    /// Root version 1: one root key, one pins key, issued at t0, valid a year, with the
    /// transparency log member `log` when given (kept by every rotation).
    init(scope: String = "com.example.app", log: LogPolicy? = nil) throws {
        self.scope = scope
        let root = try makeKey()
        let pins = try makeKey()
        var payload = rootPayload(version: 1, scope: scope, rootKeys: [root], pinsKeys: [pins])
        payload.log = log
        rootEnvelopes = [try sign(.root, payload.serialized(), with: [root])]
        rootPayloads = [payload]
        rootKeys = [[root]]
        pinsKeys = [[pins]]
    }

    var newestRootVersion: Int64 { Int64(rootPayloads.count) }
    var rootBytes: [UInt8] { rootEnvelopes[0].serialized() }

    /// Adds root version N+1 with the given role keys (default: unchanged), signed by
    /// `signers` (default: every old and new root-role key).
    func rotate(
        rootKeys newRootKeys: [Ed25519SecretKey]? = nil, pinsKeys newPinsKeys: [Ed25519SecretKey]? = nil,
        signers: [Ed25519SecretKey]? = nil
    ) throws {
        let version = newestRootVersion + 1
        let oldRoot = rootKeys[rootKeys.count - 1]
        let roots = newRootKeys ?? oldRoot
        let pins = newPinsKeys ?? pinsKeys[pinsKeys.count - 1]
        var payload = rootPayload(version: version, scope: scope, rootKeys: roots, pinsKeys: pins)
        payload.log = rootPayloads.last?.log
        var signing = signers ?? oldRoot
        if signers == nil {
            for key in roots where !signing.contains(where: { $0.publicKey.keyID == key.publicKey.keyID }) {
                signing.append(key)
            }
        }
        rootEnvelopes.append(try sign(.root, payload.serialized(), with: signing))
        rootPayloads.append(payload)
        rootKeys.append(roots)
        pinsKeys.append(pins)
    }

    /// The next version: one more than the latest, under the newest root, issued a day
    /// after the latest (version N is issued at t0 + N days), valid 30 days, chained to the
    /// latest payload, with the latest's domains and revocations.
    func next() -> ManifestPayload {
        guard let last = manifests.last else {
            var first = manifestPayload(
                version: 1, rootVersion: newestRootVersion, scope: scope, issuedAt: t0.adding(seconds: day))
            first.revokedPins = []
            return first
        }
        var payload = last.payload
        payload.version += 1
        payload.rootVersion = newestRootVersion
        payload.issuedAt = t0.adding(seconds: payload.version * day)
        payload.expiresAt = payload.issuedAt.adding(seconds: 30 * day)
        payload.previous = sodium.hasher.sha256(last.envelope.payload)
        return payload
    }

    /// Signs `payload` (with the pins keys of the root it names unless `signers` is given)
    /// and appends it to the history.
    @discardableResult
    func append(_ payload: ManifestPayload, signers: [Ed25519SecretKey]? = nil) throws -> Envelope {
        let keys = signers ?? pinsKeys[Int(payload.rootVersion) - 1]
        let envelope = try sign(.pins, payload.serialized(), with: keys)
        manifests.append((envelope, payload))
        return envelope
    }

    /// Appends an envelope signed elsewhere (its payload must be `payload`'s bytes).
    func append(envelope: Envelope, payload: ManifestPayload) {
        manifests.append((envelope, payload))
    }

    /// Appends `count` versions, applying `edit` to each before it is signed.
    func extend(_ count: Int, edit: (inout ManifestPayload) -> Void = { _ in }) throws {
        for _ in 0..<count {
            var payload = next()
            edit(&payload)
            try append(payload)
        }
    }

    /// The index.json of the history: the older manifest-only form, or with a log (whose
    /// heads need the roots) the current form with sequence numbers, as `pinion publish`
    /// writes it: root 1 in step 1, then one step per manifest, a rotation listed in the
    /// step of the first manifest under it (later rotations in one last step).
    var index: PublishedIndex {
        let entries = manifests.map {
            PublishedIndex.Entry(
                version: $0.payload.version, rootVersion: $0.payload.rootVersion,
                payloadSHA256: sodium.hasher.sha256($0.envelope.payload), issuedAt: $0.payload.issuedAt,
                expiresAt: $0.payload.expiresAt)
        }
        guard rootPayloads[0].log != nil else { return PublishedIndex(scope: scope, manifests: entries) }
        func rootEntry(_ version: Int64, _ sequence: Int64) -> PublishedIndex.RootEntry {
            PublishedIndex.RootEntry(
                sequence: sequence, version: version,
                payloadSHA256: sodium.hasher.sha256(rootEnvelopes[Int(version) - 1].payload),
                expiresAt: rootPayloads[Int(version) - 1].expiresAt)
        }
        var roots = [rootEntry(1, 1)]
        var sequenced: [PublishedIndex.Entry] = []
        var sequence: Int64 = 1
        for var entry in entries {
            sequence += 1
            while let listed = roots.last?.version, listed < entry.rootVersion {
                roots.append(rootEntry(listed + 1, sequence))
            }
            entry.sequence = sequence
            sequenced.append(entry)
        }
        if let listed = roots.last?.version, listed < newestRootVersion {
            sequence += 1
            for version in (listed + 1)...newestRootVersion { roots.append(rootEntry(version, sequence)) }
        }
        return PublishedIndex(scope: scope, manifests: sequenced, roots: roots)
    }

    /// Writes `{repo}/v1/{scope}/` as `pinion publish` would: every root, every history
    /// file (named by its payload version), index.json and manifest.json (the latest).
    func write(to repo: String) throws -> PublishedTreeFiles {
        let tree = PublishedTreeFiles(repo: repo, scope: scope)
        try FileManager.default.createDirectory(atPath: tree.directory + "/root", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: tree.directory + "/history", withIntermediateDirectories: true)
        for (offset, envelope) in rootEnvelopes.enumerated() {
            try tree.write(.root(Int64(offset + 1)), envelope.serialized())
        }
        for manifest in manifests { try tree.write(.history(manifest.payload.version), manifest.envelope.serialized()) }
        try tree.write(.index, index.serialized())
        if let last = manifests.last { try tree.write(.manifest, last.envelope.serialized()) }
        return tree
    }
}

/// The files of one written tree, for tampering.
struct PublishedTreeFiles {
    let repo: String
    let scope: String

    var directory: String { repo + "/v1/" + scope }
    func path(_ file: TreeFile) -> String { directory + "/" + file.path }

    func write(_ file: TreeFile, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path(file)))
    }

    func read(_ file: TreeFile) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(file)))) }

    func remove(_ file: TreeFile) throws { try FileManager.default.removeItem(atPath: path(file)) }

    func index() throws -> PublishedIndex { try PublishedIndex.parse(try read(.index)) }

    func writeIndex(_ index: PublishedIndex) throws { try write(.index, index.serialized()) }
}

/// A fresh temporary directory, removed when the value is released.
final class TemporaryDirectory: @unchecked Sendable {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.path + "/pinion-audit-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

extension HistoryFixture {
    /// A day after the latest version was issued (every version is then unexpired).
    var auditTime: Timestamp { (manifests.last?.payload.issuedAt ?? t0).adding(seconds: day) }
}

/// Audits `source` (default: the directory tree under `repo`) against the fixture's root 1.
func audit(
    _ fixture: HistoryFixture, repo: String, at: Timestamp? = nil, crypto: CryptoProvider = sodium,
    source: (any TreeSource)? = nil
) throws -> AuditReport {
    let anchor = try RootChain(anchor: fixture.rootBytes, crypto: crypto)
    return try Auditor.audit(
        anchor: anchor, source: source ?? DirectoryTreeSource(repo: repo, scope: fixture.scope), crypto: crypto,
        options: AuditOptions(at: at ?? fixture.auditTime))
}
