// A publisher's transparency log for the client tests, built with the pure API (TileLogAppender, SignedNote, Cosignature, MerkleProofs): heads, cosigned checkpoints, manifest.proof bytes.

import Foundation
import PinionCore
import PinionLog
import PinionLogWriter
import PinionTrust
import PinionTrustTestSupport

extension SodiumSigner: NoteSigner {}

/// Tiles kept in memory by path, as a directory or CDN would hold them.
final class MemoryTiles: TileReader, @unchecked Sendable {
    private let files = Guarded<[String: [UInt8]]>([:])

    func readTile(_ tile: TileID) throws -> [UInt8] {
        guard let bytes = files.withLock({ $0[tile.path] }) else { throw TileError.missingTile(tile.path) }
        return bytes
    }

    func store(_ writes: [TileWrite]) {
        files.withLock { files in for write in writes { files[write.tile.path] = write.bytes } }
    }
}

/// One log of the scope: its key, three witnesses, the `log` member naming them, and the heads
/// appended so far. Each append is one publish step (docs/TRANSPARENCY.md).
struct LogPublisher {
    let origin: String
    let logSigner: SodiumSigner
    let witnessSigners: [SodiumSigner]
    let policy: LogPolicy
    let tiles = MemoryTiles()
    private(set) var heads: [HeadRecord] = []
    private(set) var size: UInt64 = 0
    private(set) var rootHash: [UInt8]

    static let hasher = PortableCrypto.provider.hasher
    static let merkle = MerkleHasher(PortableCrypto.provider.hasher)

    /// - Parameters:
    ///   - origin: the log's origin (also the log key's name).
    ///   - seed: the first byte of the keys' seeds (log key seed, witnesses seed + 1 ... + 3).
    ///   - quorum: cosignatures required.
    ///   - maxCheckpointAge: seconds; 0 turns freshness off.
    ///   - grace: checkpointGrace, seconds.
    init(
        origin: String = "pinion.example/com.example.app", seed: UInt8 = 0x40, quorum: Int = 2,
        maxCheckpointAge: Int64 = day, grace: Int64 = 7 * day
    ) throws {
        self.origin = origin
        logSigner = try SodiumSigner(seed: [UInt8](repeating: seed, count: 32))
        witnessSigners = try (1...3).map { try SodiumSigner(seed: [UInt8](repeating: seed &+ UInt8($0), count: 32)) }
        let witnesses = try witnessSigners.enumerated().map { index, signer in
            LogPolicy.Witness(
                key: try NoteVerifierKey(
                    name: "w\(index + 1).example", type: .cosignatureV1, publicKey: signer.publicKey,
                    hasher: LogPublisher.hasher),
                url: "https://w\(index + 1).example")
        }
        policy = try LogPolicy(
            origin: origin,
            logKey: try NoteVerifierKey(
                name: origin, type: .ed25519, publicKey: logSigner.publicKey, hasher: LogPublisher.hasher),
            witnesses: witnesses, quorum: quorum, maxCheckpointAge: maxCheckpointAge, checkpointGrace: grace)
        rootHash = LogPublisher.merkle.emptyRoot
    }

    static func payloadSHA256(_ envelope: [UInt8]) throws -> [UInt8] {
        hasher.sha256(try Envelope.parse(envelope).payload)
    }

    /// Appends the head of a publish step: the newest root and the latest manifest (envelopes).
    mutating func append(root: [UInt8], rootVersion: Int64, manifest: [UInt8]) throws {
        let payload = try ManifestPayload.parse(try Envelope.parse(manifest).payload)
        try append(
            HeadRecord(
                scope: scope, sequence: Int64(size), rootVersion: rootVersion,
                rootPayloadSHA256: try LogPublisher.payloadSHA256(root), manifestRootVersion: payload.rootVersion,
                manifestVersion: payload.version, manifestPayloadSHA256: try LogPublisher.payloadSHA256(manifest)))
    }

    /// Appends any head record (for heads naming other scopes or sequences).
    mutating func append(_ head: HeadRecord) throws {
        var appender = try TileLogAppender(size: size, reader: tiles, hasher: LogPublisher.merkle)
        _ = try appender.append(head.bytes)
        tiles.store(appender.writes)
        size = appender.size
        rootHash = appender.rootHash
        heads.append(head)
    }

    /// The checkpoint note, signed by the log (unless `logSigned` is false) and cosigned by
    /// the witnesses given as (index, POSIX time).
    func note(cosignedBy cosigners: [(Int, Int64)], logSigned: Bool = true) throws -> SignedNote {
        let text = try Checkpoint(origin: origin, size: size, rootHash: rootHash).text
        var signatures: [NoteSignature] = []
        if logSigned {
            signatures.append(
                try SignedNote.sign(text: text, keyName: origin, signer: logSigner, hasher: LogPublisher.hasher))
        }
        for (index, time) in cosigners {
            signatures.append(
                try Cosignature.sign(
                    text: text, keyName: "w\(index + 1).example", timestamp: UInt64(time),
                    signer: witnessSigners[index], hasher: LogPublisher.hasher))
        }
        return SignedNote(text: text, signatures: signatures)
    }

    /// manifest.proof for entry `index` (default: the last) with `note` as its checkpoint.
    func proof(note: SignedNote, index: UInt64? = nil) throws -> [UInt8] {
        let entry = index ?? size - 1
        let source = TileHashSource(treeSize: size, reader: tiles, hasher: LogPublisher.merkle)
        return TlogProof(
            extra: heads[Int(entry)].bytes, index: entry,
            inclusionProof: try MerkleProofs.inclusionProof(
                index: entry, size: size, source: source, hasher: LogPublisher.merkle),
            checkpointNote: note
        ).bytes
    }

    /// manifest.proof of the last entry cosigned by witnesses 1 and 2 at `time`.
    func proof(cosignedAt time: Timestamp) throws -> [UInt8] {
        try proof(note: note(cosignedBy: [(0, time.secondsSince1970), (1, time.secondsSince1970)]))
    }
}

extension Publisher {
    /// A root payload of `version` carrying `log`, with the keys of root 1.
    func loggedRootPayload(version: Int64 = 1, log: LogPolicy?) -> RootPayload {
        var payload = rootPayload(version: version, rootKey: rootKey, pinsKey: pinsKey)
        payload.log = log
        return payload
    }

    /// Root `version` (signed by root 1's key) carrying `log`.
    func loggedRoot(version: Int64 = 1, log: LogPolicy?) throws -> [UInt8] {
        try sign(.root, loggedRootPayload(version: version, log: log).serialized(), with: [rootKey]).serialized()
    }

    /// A manifest of `version` under root 1 pinning api.example.test to `pins`.
    func pinsManifest(version: Int64, pins: [Pin], issuedAt: Timestamp = t0, lifetime: Int64 = 30 * day) throws
        -> [UInt8]
    {
        try manifest(
            version: version, issuedAt: issuedAt, lifetime: lifetime,
            domains: [ManifestPayload.Domain(name: "api.example.test", pins: pins)])
    }
}

/// The published files of one scope as bytes, fetched through TrustCore's closures, counting
/// the requests.
final class LoggedTree: @unchecked Sendable {
    var roots: [Int64: [UInt8]] = [:]
    var manifests: [[UInt8]] = []
    var manifestETag: String? = "\"m1\""
    var proof: Served = .notFound
    /// Answers after the first, one per later fetch (the publisher moved on meanwhile).
    var laterManifests: [[UInt8]] = []
    var laterProofs: [Served] = []
    private(set) var manifestFetches = 0
    private(set) var proofFetches = 0

    func fetchRoot(_ version: Int64) -> Served { roots[version].map { .found($0) } ?? .notFound }

    func fetchManifest(_ etag: String?) -> Served {
        manifestFetches += 1
        let bytes = manifestFetches > 1 && !laterManifests.isEmpty ? laterManifests.removeFirst() : manifests.last
        guard let bytes else { return .failed("HTTP 404") }
        let tag = manifestETag.map { $0 + "-" + Hex.encode(Array(LogPublisher.hasher.sha256(bytes).prefix(8))) }
        if let etag, etag == tag { return .notModified }
        return .found(bytes, etag: tag)
    }

    func fetchProof() -> Served {
        proofFetches += 1
        if proofFetches > 1, !laterProofs.isEmpty { return laterProofs.removeFirst() }
        return proof
    }

    func refresh(_ core: TrustCore, _ state: TrustedState, at time: Timestamp = t0) -> RefreshedState {
        core.refresh(
            state, startTime: time, fetchRoot: fetchRoot, fetchManifest: fetchManifest, fetchProof: fetchProof)
    }
}
