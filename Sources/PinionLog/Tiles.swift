// C2SP tlog-tiles contents: hash tiles, entry bundles, the tiles a tree size needs, and subtree hashes read from tiles.

/// Reads tlog-tiles resources by path; a directory, an HTTPS fetcher, or memory plugs in.
public protocol TileReader {
    /// - Parameter tile: the tile or entry bundle to read.
    /// - Returns: its bytes exactly as stored (unchecked; callers check lengths).
    /// - Throws: `TileError.missingTile`, or the reader's own I/O error.
    func readTile(_ tile: TileID) throws -> [UInt8]
}

/// Encoding and decoding of tile contents (C2SP tlog-tiles, "Merkle Tree" and "Log entries").
public enum TileCodec {
    /// Largest log entry an entry bundle can hold: 65,535 bytes (uint16 length prefix).
    public static let maxEntryBytes = 65_535

    /// - Returns: the concatenated 32-byte hashes.
    public static func encodeHashTile(_ hashes: [[UInt8]]) -> [UInt8] {
        hashes.flatMap { $0 }
    }

    /// Splits a hash tile into its hashes, refusing any length other than 32 x width.
    ///
    /// - Throws: `TileError.wrongTileLength`.
    public static func decodeHashTile(_ bytes: [UInt8], tile: TileID) throws(TileError) -> [[UInt8]] {
        guard bytes.count == tile.width * 32 else {
            throw .wrongTileLength(path: tile.path, expected: tile.width * 32, actual: bytes.count)
        }
        return stride(from: 0, to: bytes.count, by: 32).map { Array(bytes[$0..<$0 + 32]) }
    }

    /// Entries as big-endian uint16 length-prefixed records.
    ///
    /// - Throws: `TileError.entryTooLong` for an entry over 65,535 bytes.
    public static func encodeEntryBundle(_ entries: [[UInt8]]) throws(TileError) -> [UInt8] {
        var bytes = [UInt8]()
        for entry in entries {
            guard entry.count <= maxEntryBytes else { throw .entryTooLong(entry.count) }
            bytes.append(UInt8(entry.count >> 8))
            bytes.append(UInt8(entry.count & 0xFF))
            bytes.append(contentsOf: entry)
        }
        return bytes
    }

    /// Splits an entry bundle, which must hold exactly `tile.width` entries and nothing after.
    ///
    /// - Throws: `TileError.malformedEntryBundle`.
    public static func decodeEntryBundle(_ bytes: [UInt8], tile: TileID) throws(TileError) -> [[UInt8]] {
        var entries = [[UInt8]]()
        var offset = 0
        while offset < bytes.count {
            guard entries.count < tile.width else {
                throw .malformedEntryBundle(path: tile.path, reason: "more than \(tile.width) entries")
            }
            guard bytes.count - offset >= 2 else {
                throw .malformedEntryBundle(path: tile.path, reason: "truncated length prefix")
            }
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            offset += 2
            guard bytes.count - offset >= length else {
                throw .malformedEntryBundle(path: tile.path, reason: "truncated entry \(entries.count)")
            }
            entries.append(Array(bytes[offset..<offset + length]))
            offset += length
        }
        guard entries.count == tile.width else {
            throw .malformedEntryBundle(path: tile.path, reason: "\(entries.count) entries, expected \(tile.width)")
        }
        return entries
    }
}

/// Which tiles a tree of a given size is made of (C2SP tlog-tiles, "Partial Tiles").
public enum TileLayout {
    /// The tile at `level` holding position `index` of that level, with the width it has in a
    /// tree of `size` leaves (full, or the partial width); nil when the tree does not reach it.
    public static func tile(level: Int, containing position: UInt64, treeSize size: UInt64) -> TileID? {
        let shift = UInt64(8 * level)
        guard level <= TileID.maxLevel, shift < 64 else { return nil }
        let count = size >> shift
        guard position < count else { return nil }
        let tileIndex = position / 256
        let fullTiles = count / 256
        let width = tileIndex < fullTiles ? TileID.fullWidth : Int(count % 256)
        return try? TileID(level: level, index: tileIndex, width: width)
    }

    /// Every hash tile of a tree of `size` leaves, level by level (full tiles and at most one
    /// partial per level).
    public static func hashTiles(treeSize size: UInt64) -> [TileID] {
        var tiles = [TileID]()
        var level = 0
        while level <= TileID.maxLevel, 8 * level < 64, size >> UInt64(8 * level) > 0 {
            let count = size >> UInt64(8 * level)
            for index in 0..<(count / 256) {
                if let tile = try? TileID(level: level, index: index) { tiles.append(tile) }
            }
            if count % 256 > 0, let tile = try? TileID(level: level, index: count / 256, width: Int(count % 256)) {
                tiles.append(tile)
            }
            level += 1
        }
        return tiles
    }

    /// Every entry bundle of a tree of `size` leaves.
    public static func entryBundles(treeSize size: UInt64) -> [TileID] {
        var bundles = [TileID]()
        for index in 0..<(size / 256) {
            if let tile = try? TileID(entriesIndex: index) { bundles.append(tile) }
        }
        if size % 256 > 0, let tile = try? TileID(entriesIndex: size / 256, width: Int(size % 256)) {
            bundles.append(tile)
        }
        return bundles
    }
}

/// Subtree hashes of a tree of `treeSize` leaves, read from its hash tiles through a
/// `TileReader` (as a client, auditor or publisher needs for proofs and root hashes).
///
/// Each tile read is length-checked and cached for the life of this value. The hashes are
/// only as good as the tiles: compare the resulting root hash with a verified checkpoint.
public final class TileHashSource: SubtreeHashSource {
    /// The tree size the tiles are read for, in leaves.
    public let treeSize: UInt64
    private let reader: any TileReader
    private let hasher: MerkleHasher
    private var cache: [TileID: [[UInt8]]] = [:]

    /// - Parameters:
    ///   - treeSize: the tree size, from a verified checkpoint.
    ///   - reader: where the tiles come from.
    ///   - hasher: the Merkle hasher.
    public init(treeSize: UInt64, reader: any TileReader, hasher: MerkleHasher) {
        self.treeSize = treeSize
        self.reader = reader
        self.hasher = hasher
    }

    /// The hashes of one tile, read once.
    ///
    /// - Throws: `TileError.wrongTileLength`, or what the reader throws.
    public func hashes(of tile: TileID) throws -> [[UInt8]] {
        if let cached = cache[tile] { return cached }
        let hashes = try TileCodec.decodeHashTile(try reader.readTile(tile), tile: tile)
        cache[tile] = hashes
        return hashes
    }

    /// A subtree hash: the tile at level `level / 8` holds the 2^(level % 8) hashes it is
    /// made of, which are hashed together here.
    ///
    /// - Throws: `MerkleError.missingHash` outside the tree; what `hashes(of:)` throws.
    public func subtreeHash(level: Int, index: UInt64) throws -> [UInt8] {
        guard level >= 0, level < 64 else { throw MerkleError.missingHash(level: level, index: index) }
        let tileLevel = level / 8
        let span = UInt64(1) << UInt64(level % 8)
        let (first, overflow) = index.multipliedReportingOverflow(by: span)
        guard !overflow, let tile = TileLayout.tile(level: tileLevel, containing: first, treeSize: treeSize) else {
            throw MerkleError.missingHash(level: level, index: index)
        }
        let offset = Int(first % 256)
        guard offset + Int(span) <= tile.width else { throw MerkleError.missingHash(level: level, index: index) }
        let hashes = try hashes(of: tile)
        return hasher.perfectRoot(hashes[offset..<offset + Int(span)])
    }
}
