// Appends entries to a tiled log in O(log n): reads only the right-edge partial tiles, returns the tiles to write.

import PinionCore
import PinionLog

/// One tile or entry bundle to store under the log prefix (`v1/{scope}/log/` + `tile.path`).
public struct TileWrite: Sendable, Equatable {
    /// Which tile or bundle.
    public let tile: TileID
    /// Its full contents.
    public let bytes: [UInt8]
}

/// Appends entries to a C2SP tlog-tiles log.
///
/// Starting from a tree of `size` leaves, it reads only the partial tiles on the right edge
/// (at most one per level and the partial entry bundle), and keeps the tree's frontier, so
/// each append costs O(log n) hashes amortised and touches O(log n) files; nothing left of
/// the right edge is read or recomputed. The writes it returns are new files (tiles are
/// immutable; a partial tile of a new width has a new path), so a crash before the
/// checkpoint is replaced leaves the old tree intact and re-running completes it.
public struct TileLogAppender {
    /// The tree size after the appends so far, in leaves.
    public var size: UInt64 { frontier.size }
    private var frontier: MerkleFrontier
    private let hasher: MerkleHasher
    /// The hashes of the partial tile at each level (0...), each 0-255 of them.
    private var partials: [[[UInt8]]]
    private var partialEntries: [[UInt8]]
    private var dirtyLevels: Set<Int> = []
    private var entriesDirty = false
    private var fullWrites: [TileWrite] = []

    /// Loads the right edge of an existing log.
    ///
    /// - Parameters:
    ///   - size: the current tree size (from the current checkpoint), in leaves; 0 for a new log.
    ///   - reader: the log's existing tiles.
    ///   - hasher: the Merkle hasher.
    /// - Throws: `TileError` for a missing, truncated or malformed partial tile or bundle.
    public init(size: UInt64, reader: any TileReader, hasher: MerkleHasher) throws {
        self.hasher = hasher
        var partials = [[[UInt8]]]()
        var level = 0
        while 8 * level < 64, size >> UInt64(8 * level) > 0 {
            let count = size >> UInt64(8 * level)
            let width = Int(count % 256)
            if width > 0 {
                let tile = try TileID(level: level, index: count / 256, width: width)
                partials.append(try TileCodec.decodeHashTile(try reader.readTile(tile), tile: tile))
            } else {
                partials.append([])
            }
            level += 1
        }
        self.partials = partials
        if size % 256 > 0 {
            let bundle = try TileID(entriesIndex: size / 256, width: Int(size % 256))
            partialEntries = try TileCodec.decodeEntryBundle(try reader.readTile(bundle), tile: bundle)
        } else {
            partialEntries = []
        }
        // The frontier: each level's partial hashes split into perfect subtrees, top level first.
        var hashes = [[UInt8]]()
        for levelHashes in partials.reversed() {
            var position = 0
            for bit in stride(from: 7, through: 0, by: -1) where levelHashes.count & (1 << bit) != 0 {
                hashes.append(hasher.perfectRoot(levelHashes[position..<position + (1 << bit)]))
                position += 1 << bit
            }
        }
        frontier = try MerkleFrontier(size: size, hashes: hashes)
    }

    /// Appends one entry.
    ///
    /// - Parameter entry: the entry bytes, at most 65,535.
    /// - Returns: the entry's zero-based index.
    /// - Throws: `TileError.entryTooLong`.
    @discardableResult
    public mutating func append(_ entry: [UInt8]) throws(TileError) -> UInt64 {
        guard entry.count <= TileCodec.maxEntryBytes else { throw .entryTooLong(entry.count) }
        let index = frontier.size
        let leaf = hasher.leafHash(entry)
        frontier.append(leafHash: leaf, hasher: hasher)
        partialEntries.append(entry)
        entriesDirty = true
        if partialEntries.count == TileID.fullWidth {
            if let bundle = try? TileID(entriesIndex: index / 256) {
                fullWrites.append(TileWrite(tile: bundle, bytes: try TileCodec.encodeEntryBundle(partialEntries)))
            }
            partialEntries = []
            entriesDirty = false
        }
        push(leaf, level: 0, position: index)
        return index
    }

    /// The root hash of the tree now, MTH(D[0:size]).
    public var rootHash: [UInt8] { frontier.rootHash(hasher: hasher) }

    /// The files the appends so far created: every tile and bundle completed, and the new
    /// partial tile of each level that changed. Write them all before the checkpoint.
    public var writes: [TileWrite] {
        var writes = fullWrites
        for level in dirtyLevels.sorted() where !partials[level].isEmpty {
            let count = size >> UInt64(8 * level)
            if let tile = try? TileID(level: level, index: count / 256, width: partials[level].count) {
                writes.append(TileWrite(tile: tile, bytes: TileCodec.encodeHashTile(partials[level])))
            }
        }
        if entriesDirty, !partialEntries.isEmpty,
            let bundle = try? TileID(entriesIndex: size / 256, width: partialEntries.count),
            let bytes = try? TileCodec.encodeEntryBundle(partialEntries)
        {
            writes.append(TileWrite(tile: bundle, bytes: bytes))
        }
        return writes
    }

    /// Adds a hash at `level`; a tile that fills up is written whole and its root carried up.
    private mutating func push(_ hash: [UInt8], level: Int, position: UInt64) {
        while partials.count <= level { partials.append([]) }
        partials[level].append(hash)
        dirtyLevels.insert(level)
        guard partials[level].count == TileID.fullWidth else { return }
        if let tile = try? TileID(level: level, index: position / 256) {
            fullWrites.append(TileWrite(tile: tile, bytes: TileCodec.encodeHashTile(partials[level])))
        }
        let root = hasher.perfectRoot(partials[level])
        partials[level] = []
        push(root, level: level + 1, position: position / 256)
    }
}

/// Serves pending writes first and the underlying reader for everything else, so proofs can
/// be computed for a tree whose new tiles are not stored yet.
public struct OverlayTileReader: TileReader {
    private let pending: [TileID: [UInt8]]
    private let base: any TileReader

    /// - Parameters:
    ///   - writes: tiles not yet stored (`TileLogAppender.writes`).
    ///   - base: the stored tiles.
    public init(writes: [TileWrite], base: any TileReader) {
        var pending = [TileID: [UInt8]]()
        for write in writes { pending[write.tile] = write.bytes }
        self.pending = pending
        self.base = base
    }

    public func readTile(_ tile: TileID) throws -> [UInt8] {
        if let bytes = pending[tile] { return bytes }
        return try base.readTile(tile)
    }
}
