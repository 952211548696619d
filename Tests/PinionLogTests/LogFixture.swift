// A small published log for the client and witness tests: heads appended to tiles, a signed and cosigned checkpoint, a proof.

import PinionCore
import PinionLog
import PinionLogWriter
import PinionTrust

/// A log of head records for scope "example", its keys (from fixed seeds) and three witnesses.
struct LogFixture {
    static let origin = "pinion.example/example/log"
    let store = MemoryTileStore()
    let logSigner: SodiumNoteSigner
    let witnessSigners: [SodiumNoteSigner]
    let policy: LogPolicy
    private(set) var heads: [HeadRecord] = []
    private(set) var size: UInt64 = 0
    private(set) var rootHash: [UInt8] = merkle.emptyRoot

    init(quorum: Int = 2, maxCheckpointAge: Int64 = 86_400, grace: Int64 = LogPolicy.defaultGrace) throws {
        logSigner = try seededSigner(0x10)
        witnessSigners = try [0x21, 0x22, 0x23].map { try seededSigner($0) }
        let witnesses = try witnessSigners.enumerated().map { index, signer in
            LogPolicy.Witness(
                key: try vkey("w\(index + 1).example", .cosignatureV1, signer), url: "https://w\(index + 1).example")
        }
        policy = try LogPolicy(
            origin: LogFixture.origin, logKey: try vkey(LogFixture.origin, .ed25519, logSigner), witnesses: witnesses,
            quorum: quorum, maxCheckpointAge: maxCheckpointAge, checkpointGrace: grace)
    }

    static func digest(_ label: String) -> [UInt8] { crypto.hasher.sha256(Array(label.utf8)) }

    /// Appends the head of a step that published manifest `version` under root `rootVersion`.
    @discardableResult
    mutating func appendHead(rootVersion: Int64, manifestVersion: Int64, manifestRootVersion: Int64? = nil) throws
        -> HeadRecord
    {
        let head = try HeadRecord(
            scope: "example", sequence: Int64(size), rootVersion: rootVersion,
            rootPayloadSHA256: LogFixture.digest("root \(rootVersion)"),
            manifestRootVersion: manifestRootVersion ?? rootVersion, manifestVersion: manifestVersion,
            manifestPayloadSHA256: LogFixture.digest("manifest \(manifestVersion)"))
        var appender = try TileLogAppender(size: size, reader: store, hasher: merkle)
        try appender.append(head.bytes)
        store.store(appender.writes)
        size = appender.size
        rootHash = appender.rootHash
        heads.append(head)
        return head
    }

    /// Appends the heads of steps publishing `versions` under root 1 in one batch (one
    /// appender: only the final partial tiles are written, as when backfilling).
    mutating func appendHeads(_ versions: ClosedRange<Int64>) throws {
        var appender = try TileLogAppender(size: size, reader: store, hasher: merkle)
        for version in versions {
            let head = try HeadRecord(
                scope: "example", sequence: Int64(appender.size), rootVersion: 1,
                rootPayloadSHA256: LogFixture.digest("root 1"), manifestRootVersion: 1, manifestVersion: version,
                manifestPayloadSHA256: LogFixture.digest("manifest \(version)"))
            try appender.append(head.bytes)
            heads.append(head)
        }
        store.store(appender.writes)
        size = appender.size
        rootHash = appender.rootHash
    }

    var checkpoint: Checkpoint {
        get throws { try Checkpoint(origin: LogFixture.origin, size: size, rootHash: rootHash) }
    }

    /// The checkpoint note signed by the log and cosigned by the given witnesses (index, time).
    func note(cosignedBy cosigners: [(Int, UInt64)], logSigned: Bool = true) throws -> SignedNote {
        let text = try checkpoint.text
        var signatures = [NoteSignature]()
        if logSigned {
            signatures.append(
                try SignedNote.sign(text: text, keyName: LogFixture.origin, signer: logSigner, hasher: crypto.hasher))
        }
        for (index, time) in cosigners {
            signatures.append(
                try Cosignature.sign(
                    text: text, keyName: "w\(index + 1).example", timestamp: time, signer: witnessSigners[index],
                    hasher: crypto.hasher))
        }
        return SignedNote(text: text, signatures: signatures)
    }

    /// manifest.proof for entry `index` (default the last) with `note` as its checkpoint.
    func proof(note: SignedNote, index: UInt64? = nil, extra: [UInt8]? = nil) throws -> TlogProof {
        let entry = index ?? size - 1
        let source = TileHashSource(treeSize: size, reader: store, hasher: merkle)
        return TlogProof(
            extra: extra ?? heads[Int(entry)].bytes, index: entry,
            inclusionProof: try MerkleProofs.inclusionProof(index: entry, size: size, source: source, hasher: merkle),
            checkpointNote: note)
    }

    func manifest(version: Int64, rootVersion: Int64) -> ManifestIdentity {
        ManifestIdentity(
            scope: "example", rootVersion: rootVersion, version: version,
            payloadSHA256: LogFixture.digest("manifest \(version)"))
    }

    func root(_ version: Int64) -> RootIdentity {
        RootIdentity(version: version, payloadSHA256: LogFixture.digest("root \(version)"))
    }

    func consistencyProof(from oldSize: UInt64) throws -> [[UInt8]] {
        try MerkleProofs.consistencyProof(
            oldSize: oldSize, newSize: size, source: TileHashSource(treeSize: size, reader: store, hasher: merkle),
            hasher: merkle)
    }
}
