// C2SP tlog-tiles: paths, the tiles a size needs, codecs, the O(log n) appender, and proofs read from tiles.

import PinionCore
import PinionLog
import PinionLogWriter
import PinionTrust
import Testing

@Suite struct TileTests {
    @Test func pathsFollowTheSpecExamples() throws {
        #expect(TileID.encodeIndex(1_234_067) == "x001/x234/067")
        #expect(TileID.encodeIndex(0) == "000")
        #expect(TileID.encodeIndex(1000) == "x001/000")
        #expect(try TileID(level: 0, index: 1_234_067, width: 8).path == "tile/0/x001/x234/067.p/8")
        #expect(try TileID(level: 2, index: 5).path == "tile/2/005")
        #expect(try TileID(entriesIndex: 0, width: 1).path == "tile/entries/000.p/1")
        #expect(try TileID(entriesIndex: 1_000_000).path == "tile/entries/x001/x000/000")
    }

    @Test func parsedPathsRoundTrip() throws {
        for path in [
            "tile/0/000", "tile/0/000.p/1", "tile/63/x999/999.p/255", "tile/entries/x001/x234/067",
            "tile/entries/017.p/112", "tile/1/x018/446.p/17",
        ] {
            #expect(try TileID(path: path).path == path)
        }
    }

    @Test func refusesMalformedPaths() {
        for path in [
            "", "tile", "tile/0", "tile/0/1234", "tile/0/12", "tile/00/000", "tile/64/000", "tile/-1/000",
            "tile/0/001/002", "tile/0/x001", "tile/0/x000/000", "tile/0/000.p/0", "tile/0/000.p/256",
            "tile/0/000.p/01", "tile/0/000.p/", "tile/0/000.p", "tiles/0/000", "tile/data/000", "/tile/0/000",
            "tile/0/000/", "tile/0/x1000/000", "tile/0/x00a/000", "tile/entries/000.p/300", "tile/0/000.p/1/2",
        ] {
            #expect(throws: TileError.self, "\(path)") { try TileID(path: path) }
        }
    }

    @Test func aTreeOf70000HasTheTilesTheSpecLists() {
        let tiles = TileLayout.hashTiles(treeSize: 70_000)
        let level0 = tiles.filter { $0.level == 0 }
        #expect(level0.filter { !$0.isPartial }.count == 273)
        #expect(level0.filter(\.isPartial).map(\.width) == [112])
        #expect(tiles.filter { $0.level == 1 }.map(\.width) == [256, 17])
        #expect(tiles.filter { $0.level == 2 }.map(\.width) == [1])
        #expect(tiles.count == 273 + 1 + 2 + 1)
        #expect(TileLayout.hashTiles(treeSize: 256).map(\.path) == ["tile/0/000", "tile/1/000.p/1"])
        #expect(TileLayout.hashTiles(treeSize: 0).isEmpty)
        #expect(
            TileLayout.entryBundles(treeSize: 513).map(\.path) == [
                "tile/entries/000", "tile/entries/001", "tile/entries/002.p/1",
            ])
    }

    @Test func entryBundlesRoundTripAndRefuseMalformedBytes() throws {
        let entries = [[UInt8](), [1], Array(repeating: 7, count: 300)]
        let tile = try TileID(entriesIndex: 0, width: 3)
        let bytes = try TileCodec.encodeEntryBundle(entries)
        #expect(Array(bytes.prefix(5)) == [0, 0, 0, 1, 1])
        #expect(try TileCodec.decodeEntryBundle(bytes, tile: tile) == entries)
        #expect(throws: TileError.self) { try TileCodec.decodeEntryBundle(Array(bytes.dropLast()), tile: tile) }
        #expect(throws: TileError.self) { try TileCodec.decodeEntryBundle(bytes + [0], tile: tile) }
        #expect(throws: TileError.self) { try TileCodec.decodeEntryBundle(bytes + [0, 0], tile: tile) }
        #expect(throws: TileError.self) {
            try TileCodec.decodeEntryBundle(bytes, tile: try TileID(entriesIndex: 0, width: 4))
        }
        #expect(throws: TileError.entryTooLong(65_536)) {
            try TileCodec.encodeEntryBundle([Array(repeating: 0, count: 65_536)])
        }
    }

    @Test func hashTilesRefuseAnyLengthButWidthTimes32() throws {
        let tile = try TileID(level: 0, index: 0, width: 2)
        #expect(try TileCodec.decodeHashTile(Array(repeating: 1, count: 64), tile: tile).count == 2)
        for length in [0, 63, 65, 96] {
            #expect(throws: TileError.wrongTileLength(path: "tile/0/000.p/2", expected: 64, actual: length)) {
                try TileCodec.decodeHashTile(Array(repeating: 1, count: length), tile: tile)
            }
        }
    }

    /// Appends with the appender reloaded from the stored tiles before every batch, as
    /// successive publish steps do, and checks the tree against the in-memory reference.
    @Test func appenderReloadedEveryStepBuildsTheSameTreeAsTheReference() throws {
        let store = MemoryTileStore()
        var size: UInt64 = 0
        var leaves = [[UInt8]]()
        let batches = [1, 1, 3, 250, 1, 256, 255, 1, 1, 512, 7]
        for batch in batches {
            var appender = try TileLogAppender(size: size, reader: store, hasher: merkle)
            for _ in 0..<batch {
                let entry = sampleEntry(leaves.count)
                #expect(try appender.append(entry) == UInt64(leaves.count))
                leaves.append(merkle.leafHash(entry))
            }
            store.store(appender.writes)
            size = appender.size
            let reference = LeafHashes(leaves, hasher: merkle)
            #expect(appender.rootHash == (try MerkleProofs.treeHash(size: size, source: reference, hasher: merkle)))
            let tiles = TileHashSource(treeSize: size, reader: store, hasher: merkle)
            #expect(try MerkleProofs.treeHash(size: size, source: tiles, hasher: merkle) == appender.rootHash)
            for index in [0, size / 2, size - 1] {
                #expect(
                    try MerkleProofs.inclusionProof(index: index, size: size, source: tiles, hasher: merkle)
                        == MerkleProofs.inclusionProof(index: index, size: size, source: reference, hasher: merkle))
            }
            for old in [1, size / 3, size - 1] where old > 0 {
                #expect(
                    try MerkleProofs.consistencyProof(oldSize: old, newSize: size, source: tiles, hasher: merkle)
                        == MerkleProofs.consistencyProof(
                            oldSize: old, newSize: size, source: reference, hasher: merkle))
            }
        }
        #expect(size == 1288)
        for tile in TileLayout.hashTiles(treeSize: size) + TileLayout.entryBundles(treeSize: size) {
            #expect(store.files[tile.path] != nil, "\(tile.path) is stored")
        }
    }

    @Test func anAppendReadsAndWritesOnlyTheRightEdge() throws {
        let store = MemoryTileStore()
        var appender = try TileLogAppender(size: 0, reader: store, hasher: merkle)
        for index in 0..<65_791 { try appender.append(sampleEntry(index)) }
        store.store(appender.writes)

        let reads = RecordingReader(store)
        var next = try TileLogAppender(size: 65_791, reader: reads, hasher: merkle)
        try next.append(sampleEntry(65_791))
        #expect(reads.paths.sorted() == ["tile/0/256.p/255", "tile/2/000.p/1", "tile/entries/256.p/255"])
        // The level-0 tile fills up and carries into level 1; nothing to the left is rewritten.
        #expect(next.writes.map(\.tile.path).sorted() == ["tile/0/256", "tile/1/001.p/1", "tile/entries/256"])

        store.store(next.writes)
        var third = try TileLogAppender(size: 65_792, reader: store, hasher: merkle)
        try third.append(sampleEntry(65_792))
        #expect(third.writes.map(\.tile.path).sorted() == ["tile/0/257.p/1", "tile/entries/257.p/1"])
    }

    @Test func truncatedOrRewrittenTilesAreRefused() throws {
        let store = MemoryTileStore()
        var appender = try TileLogAppender(size: 0, reader: store, hasher: merkle)
        for index in 0..<600 { try appender.append(sampleEntry(index)) }
        store.store(appender.writes)
        let root = appender.rootHash
        let truncated = MemoryTileStore()
        truncated.files = store.files
        truncated.files["tile/1/000.p/2"]?.removeLast()
        #expect(throws: TileError.wrongTileLength(path: "tile/1/000.p/2", expected: 64, actual: 63)) {
            try MerkleProofs.treeHash(
                size: 600, source: TileHashSource(treeSize: 600, reader: truncated, hasher: merkle), hasher: merkle)
        }
        let rewritten = MemoryTileStore()
        rewritten.files = store.files
        rewritten.files["tile/0/002.p/88"]?[100] ^= 1
        let recomputed = try MerkleProofs.treeHash(
            size: 600, source: TileHashSource(treeSize: 600, reader: rewritten, hasher: merkle), hasher: merkle)
        #expect(recomputed != root)
        let missing = MemoryTileStore()
        missing.files = store.files
        missing.files["tile/entries/002.p/88"] = nil
        #expect(throws: TileError.missingTile("tile/entries/002.p/88")) {
            try TileLogAppender(size: 600, reader: missing, hasher: merkle)
        }
        #expect(throws: TileError.self) { try TileLogAppender(size: 600, reader: truncated, hasher: merkle) }
        #expect(throws: TileError.entryTooLong(65_536)) { try appender.append(Array(repeating: 0, count: 65_536)) }
    }
}

/// Records which tiles were read.
final class RecordingReader: TileReader {
    private let store: MemoryTileStore
    var paths: [String] = []

    init(_ store: MemoryTileStore) { self.store = store }

    func readTile(_ tile: TileID) throws -> [UInt8] {
        paths.append(tile.path)
        return try store.readTile(tile)
    }
}

@Suite struct TileAuditTests {
    private func log(_ count: Int) throws -> (MemoryTileStore, [UInt8]) {
        let store = MemoryTileStore()
        var appender = try TileLogAppender(size: 0, reader: store, hasher: merkle)
        for index in 0..<count { try appender.append(sampleEntry(index)) }
        store.store(appender.writes)
        return (store, appender.rootHash)
    }

    @Test func aGoodLogPassesAndEveryEntryIsVisitedInOrder() throws {
        let (store, root) = try log(600)
        var seen = [UInt64]()
        try TileAudit.verify(size: 600, rootHash: root, reader: store, hasher: merkle) { index, entry in
            #expect(entry == sampleEntry(Int(index)))
            seen.append(index)
        }
        #expect(seen == Array(0..<600))
    }

    @Test func oneChangedByteInAnyTileOrBundleIsRefused() throws {
        let (store, root) = try log(600)
        for (path, bytes) in store.files {
            for position in [0, bytes.count / 2, bytes.count - 1] {
                let bad = MemoryTileStore()
                bad.files = store.files
                bad.files[path]?[position] ^= 0x04
                #expect(throws: TileError.self, "\(path) byte \(position)") {
                    try TileAudit.verify(size: 600, rootHash: root, reader: bad, hasher: merkle)
                }
            }
        }
        #expect(throws: TileError.hashMismatch("root hash")) {
            try TileAudit.verify(size: 600, rootHash: merkle.emptyRoot, reader: store, hasher: merkle)
        }
    }
    /// A log grown in steps: every step's checkpoint size leaves its partial tiles behind.
    private func grown(_ sizes: [Int]) throws -> MemoryTileStore {
        let store = MemoryTileStore()
        var size = 0
        for target in sizes {
            var appender = try TileLogAppender(size: UInt64(size), reader: store, hasher: merkle)
            for index in size..<target { try appender.append(sampleEntry(index)) }
            store.store(appender.writes)
            size = target
        }
        return store
    }

    /// C2SP tlog-tiles: the partial tiles of an older checkpoint stay served until the full
    /// tile exists; a flipped one is refused naming it, a deleted one is fine once full.
    @Test func olderPartialTilesMustHoldTheStartOfTheCurrentTiles() throws {
        let store = try grown([3, 5])
        try TileAudit.verifyOlderPartialTiles(size: 3, currentSize: 5, reader: store)
        for path in ["tile/0/000.p/3", "tile/entries/000.p/3"] {
            let flipped = MemoryTileStore()
            flipped.files = store.files
            let last = try #require(flipped.files[path]).count - 1
            flipped.files[path]?[last] ^= 0x01
            #expect(throws: TileError.hashMismatch(path)) {
                try TileAudit.verifyOlderPartialTiles(size: 3, currentSize: 5, reader: flipped)
            }
            let deleted = MemoryTileStore()
            deleted.files = store.files
            deleted.files[path] = nil
            #expect(throws: TileError.missingTile(path), "the tile is still partial: it must be served") {
                try TileAudit.verifyOlderPartialTiles(size: 3, currentSize: 5, reader: deleted)
            }
        }
        // Once the full tiles exist, a deleted older partial tile is fine; a flipped one is not.
        let full = try grown([3, 300])
        let pruned = MemoryTileStore()
        pruned.files = full.files
        pruned.files["tile/0/000.p/3"] = nil
        pruned.files["tile/entries/000.p/3"] = nil
        try TileAudit.verifyOlderPartialTiles(size: 3, currentSize: 300, reader: pruned)
        full.files["tile/0/000.p/3"]?[0] ^= 0x01
        #expect(throws: TileError.hashMismatch("tile/0/000.p/3")) {
            try TileAudit.verifyOlderPartialTiles(size: 3, currentSize: 300, reader: full)
        }
    }
}

/// SHA-256 that counts its calls (single-threaded test use only).
final class CountingHasher: SHA256Hasher, @unchecked Sendable {
    var calls = 0
    func sha256(_ bytes: [UInt8]) -> [UInt8] {
        calls += 1
        return crypto.hasher.sha256(bytes)
    }
}

@Suite struct AppendCostTests {
    /// The log append must not grow with the log: the 10,001st entry is compared with the
    /// 101st. Counted, not timed: SHA-256 calls (loading the right edge, appending, the
    /// root hash) and bytes written.
    @Test func the10001stAppendCostsNoMoreThanTwiceThe101st() throws {
        let store = MemoryTileStore()
        var appender = try TileLogAppender(size: 0, reader: store, hasher: merkle)
        var costs = [UInt64: (hashes: Int, bytes: Int, files: Int)]()
        for index in 0..<10_001 {
            let size = UInt64(index)
            if size == 100 || size == 10_000 {
                store.store(appender.writes)
                let counter = CountingHasher()
                let counted = MerkleHasher(counter)
                var next = try TileLogAppender(size: size, reader: store, hasher: counted)
                try next.append(sampleEntry(index))
                let writes = next.writes
                _ = next.rootHash
                costs[size + 1] = (counter.calls, writes.reduce(0) { $0 + $1.bytes.count }, writes.count)
                appender = try TileLogAppender(size: size, reader: store, hasher: merkle)
            }
            try appender.append(sampleEntry(index))
        }
        let early = try #require(costs[101])
        let late = try #require(costs[10_001])
        #expect(late.hashes <= 2 * early.hashes, "hashes: \(late.hashes) vs \(early.hashes)")
        #expect(late.bytes <= 2 * early.bytes, "bytes: \(late.bytes) vs \(early.bytes)")
        #expect(late.files <= 2 * early.files)
    }
}
