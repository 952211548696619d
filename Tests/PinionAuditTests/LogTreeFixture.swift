// Published trees with a transparency log built with the pure log API and written in the published layout, and a fake witness source.

import Foundation
import PinionAudit
import PinionCore
import PinionCrypto
import PinionLog
import PinionLogWriter
import PinionSystem
import PinionTestSupport
import PinionTrust

let merkle = MerkleHasher(sodium.hasher)

/// Tiles in memory while a log is built.
final class MemoryTiles: TileReader, @unchecked Sendable {
    var tiles: [TileID: [UInt8]] = [:]

    func readTile(_ tile: TileID) throws -> [UInt8] {
        guard let bytes = tiles[tile] else { throw TileError.missingTile(tile.path) }
        return bytes
    }

    func store(_ writes: [TileWrite]) { for write in writes { tiles[write.tile] = write.bytes } }
}

/// The log key, three witness keys and the root's `log` member (quorum 2 by default).
struct LogKeys {
    static let origin = "audit.example/com.example.app"
    let log: Ed25519NoteSigner
    let witnesses: [Ed25519NoteSigner]
    let policy: LogPolicy

    /// - Parameter urls: the witnesses' URLs (default: unused loopback addresses; the fake
    ///   witness source never connects).
    init(quorum: Int = 2, maxCheckpointAge: Int64 = 86_400, urls: [String]? = nil) throws {
        log = Ed25519NoteSigner(key: try makeKey())
        witnesses = try (0..<3).map { _ in Ed25519NoteSigner(key: try makeKey()) }
        let addresses = urls ?? (1...3).map { "https://127.0.0.1:1/w\($0)" }
        let listed = try witnesses.enumerated().map { index, signer in
            LogPolicy.Witness(
                key: try NoteVerifierKey(
                    name: "w\(index + 1).example", type: .cosignatureV1, publicKey: signer.publicKey,
                    hasher: sodium.hasher), url: addresses[index])
        }
        policy = try LogPolicy(
            origin: LogKeys.origin,
            logKey: try NoteVerifierKey(
                name: LogKeys.origin, type: .ed25519, publicKey: log.publicKey, hasher: sodium.hasher),
            witnesses: listed, quorum: quorum, maxCheckpointAge: maxCheckpointAge)
    }
}

/// A history whose root has a log, and the log of its publish steps.
final class LoggedTree {
    let keys: LogKeys
    let fixture: HistoryFixture
    let tiles = MemoryTiles()
    /// The log's entries, in order.
    private(set) var entries: [[UInt8]] = []
    /// Entries in the log.
    var size: UInt64 { UInt64(entries.count) }
    private(set) var rootHash: [UInt8] = merkle.emptyRoot

    init(keys: LogKeys? = nil) throws {
        let keys = try keys ?? LogKeys()
        self.keys = keys
        fixture = try HistoryFixture(log: keys.policy)
    }

    /// The head of the step that published manifest `position` (0-based): the root it names
    /// is the newest root at that step in HistoryFixture (rotations precede their manifests).
    func head(ofManifest position: Int) throws -> HeadRecord {
        let manifest = fixture.manifests[position]
        let root = manifest.payload.rootVersion
        return try HeadRecord(
            scope: fixture.scope, sequence: Int64(position), rootVersion: root,
            rootPayloadSHA256: sodium.hasher.sha256(fixture.rootEnvelopes[Int(root) - 1].payload),
            manifestRootVersion: root, manifestVersion: manifest.payload.version,
            manifestPayloadSHA256: sodium.hasher.sha256(manifest.envelope.payload))
    }

    /// Appends entries (head records or anything else) with one appender.
    func append(_ entries: [[UInt8]]) throws {
        var appender = try TileLogAppender(size: size, reader: tiles, hasher: merkle)
        for entry in entries { _ = try appender.append(entry) }
        tiles.store(appender.writes)
        rootHash = appender.rootHash
        self.entries += entries
    }

    /// Logs the heads of every manifest not logged yet.
    func logAll() throws {
        try append((Int(size)..<fixture.manifests.count).map { try head(ofManifest: $0).bytes })
    }

    var checkpoint: Checkpoint {
        get throws { try Checkpoint(origin: LogKeys.origin, size: size, rootHash: rootHash) }
    }

    /// The checkpoint signed by the log key and cosigned by witnesses (index, time).
    func note(_ checkpoint: Checkpoint? = nil, cosignedBy cosigners: [(Int, Int64)], logSigned: Bool = true) throws
        -> SignedNote
    {
        let text = try (checkpoint ?? self.checkpoint).text
        var signatures: [NoteSignature] = []
        if logSigned {
            signatures.append(
                try SignedNote.sign(text: text, keyName: LogKeys.origin, signer: keys.log, hasher: sodium.hasher))
        }
        for (index, time) in cosigners {
            signatures.append(
                try Cosignature.sign(
                    text: text, keyName: "w\(index + 1).example", timestamp: UInt64(time),
                    signer: keys.witnesses[index], hasher: sodium.hasher))
        }
        return SignedNote(text: text, signatures: signatures)
    }

    /// A time an hour before the audit: fresh under maxCheckpointAge 24h.
    var cosignTime: Int64 { fixture.auditTime.secondsSince1970 - 3600 }

    /// manifest.proof for the last entry with `note`.
    func proof(_ note: SignedNote) throws -> TlogProof {
        let last = size - 1
        return TlogProof(
            extra: entries[Int(last)], index: last,
            inclusionProof: try MerkleProofs.inclusionProof(
                index: last, size: size, source: TileHashSource(treeSize: size, reader: tiles, hasher: merkle),
                hasher: merkle),
            checkpointNote: note)
    }

    /// Writes the documents, every tile, `log/checkpoint` (cosigned by witnesses 1 and 2
    /// unless `note` is given) and manifest.proof.
    @discardableResult
    func write(to repo: String, note given: SignedNote? = nil) throws -> PublishedTreeFiles {
        let tree = try fixture.write(to: repo)
        for (tile, bytes) in tiles.tiles { try tree.writeLog(.logTile(tile), bytes) }
        let note = try given ?? self.note(cosignedBy: [(0, cosignTime), (1, cosignTime)])
        try tree.writeLog(.manifestProof, try proof(note).bytes)
        try tree.writeLog(.logCheckpoint, note.bytes)
        return tree
    }

    /// What witness `index` answers for its latest checkpoint: the log-signed note with
    /// its own cosignature.
    func witnessAnswer(_ index: Int, _ checkpoint: Checkpoint? = nil, time: Int64? = nil) throws -> [UInt8] {
        try note(checkpoint, cosignedBy: [(index, time ?? cosignTime)]).bytes
    }
}

extension PublishedTreeFiles {
    /// Writes a file, creating its folders (the log's nested tile folders).
    func writeLog(_ file: TreeFile, _ bytes: [UInt8]) throws {
        let url = URL(fileURLWithPath: path(file))
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
    }
}

/// Witnesses answering from a table (name to answer); an unlisted witness answers 404.
struct FakeWitnesses: WitnessCheckpointSource {
    var answers: [String: Result<[UInt8], WitnessFetchError>]

    func latestCheckpoint(of witness: LogPolicy.Witness, origin: String, limit: Int) throws(WitnessFetchError)
        -> [UInt8]
    {
        switch answers[witness.name] ?? .failure(.notFound) {
        case .success(let bytes): return bytes
        case .failure(let error): throw error
        }
    }
}

/// Audits a logged tree written under `repo` against its root 1.
func auditLogged(
    _ tree: LoggedTree, repo: String, witnesses: (any WitnessCheckpointSource)? = nil, since: [UInt8]? = nil,
    at: Timestamp? = nil
) throws -> AuditReport {
    let anchor = try RootChain(anchor: tree.fixture.rootBytes, crypto: sodium)
    return try Auditor.audit(
        anchor: anchor, source: DirectoryTreeSource(repo: repo, scope: tree.fixture.scope), crypto: sodium,
        options: AuditOptions(at: at ?? tree.fixture.auditTime, witnesses: witnesses, since: since))
}
