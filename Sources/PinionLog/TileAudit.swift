// Rechecks a whole tiled log from its entry bundles: every hash tile, every bundle and the root hash.

/// The auditor's full check of a C2SP tlog-tiles log (O(n) in the log's size): each entry
/// bundle is parsed, its leaf hashes must equal the level-0 tiles, each higher tile must hold
/// the hashes of the full tiles below it, and the tree hash must equal the checkpoint's.
public enum TileAudit {
    /// - Parameters:
    ///   - size: the tree size from a verified checkpoint, in leaves.
    ///   - rootHash: that checkpoint's 32-byte root hash.
    ///   - reader: the log's tiles.
    ///   - hasher: the Merkle hasher.
    ///   - visit: called with each entry and its index, in order (to recompute the heads).
    /// - Throws: `TileError.hashMismatch` naming the first tile that disagrees,
    ///   `TileError.wrongTileLength`, `.malformedEntryBundle`, `.missingTile`, or what
    ///   `visit` or the reader throws.
    public static func verify(
        size: UInt64, rootHash: [UInt8], reader: any TileReader, hasher: MerkleHasher,
        visit: (UInt64, [UInt8]) throws -> Void = { _, _ in }
    ) throws {
        var frontier = MerkleFrontier()
        // Hashes at each level not yet checked against a stored tile, with the tile they start.
        var pending: [[[UInt8]]] = [[]]
        for bundle in TileLayout.entryBundles(treeSize: size) {
            let entries = try TileCodec.decodeEntryBundle(try reader.readTile(bundle), tile: bundle)
            for entry in entries {
                try visit(frontier.size, entry)
                let leaf = hasher.leafHash(entry)
                frontier.append(leafHash: leaf, hasher: hasher)
                pending[0].append(leaf)
            }
        }
        var level = 0
        while level < pending.count {
            let hashes = pending[level]
            var offset = 0
            while offset < hashes.count {
                let width = min(TileID.fullWidth, hashes.count - offset)
                let tile = try TileID(level: level, index: UInt64(offset / TileID.fullWidth), width: width)
                let expected = Array(hashes[offset..<offset + width])
                guard try TileCodec.decodeHashTile(try reader.readTile(tile), tile: tile) == expected else {
                    throw TileError.hashMismatch(tile.path)
                }
                if width == TileID.fullWidth {
                    if pending.count == level + 1 { pending.append([]) }
                    pending[level + 1].append(hasher.perfectRoot(expected))
                }
                offset += width
            }
            level += 1
        }
        guard frontier.rootHash(hasher: hasher) == rootHash else { throw TileError.hashMismatch("root hash") }
    }

    /// Checks the partial tiles an older checkpoint of the same log still needs (C2SP
    /// tlog-tiles: a log serves the partial tiles of every tree size it produced a
    /// checkpoint for until the full tile exists). Each partial tile of tree size `size`
    /// must hold the first hashes (or entries) of the tile at the same place in the tree of
    /// `currentSize`, whose tiles `verify` already checked. A partial tile that is gone is
    /// fine once the full tile exists; while the tile is still partial it must be served.
    ///
    /// - Parameters:
    ///   - size: the older checkpoint's tree size (at most `currentSize`).
    ///   - currentSize: the verified checkpoint's tree size.
    ///   - reader: the log's tiles.
    /// - Throws: `TileError.hashMismatch` naming the partial tile that disagrees,
    ///   `TileError.missingTile` for a missing one the log still needs, decoding errors.
    public static func verifyOlderPartialTiles(size: UInt64, currentSize: UInt64, reader: any TileReader) throws {
        guard size < currentSize else { return }
        let current = TileLayout.hashTiles(treeSize: currentSize) + TileLayout.entryBundles(treeSize: currentSize)
        let older = TileLayout.hashTiles(treeSize: size) + TileLayout.entryBundles(treeSize: size)
        for tile in older where tile.isPartial {
            guard let now = current.first(where: { $0.level == tile.level && $0.index == tile.index }) else { continue }
            guard now.width != tile.width else { continue }  // the same partial tile: verify read it
            let bytes: [UInt8]
            do { bytes = try reader.readTile(tile) } catch TileError.missingTile(let path) {
                if now.isPartial { throw TileError.missingTile(path) }
                continue
            }
            let full = try reader.readTile(now)
            if tile.level == nil {
                let entries = try TileCodec.decodeEntryBundle(bytes, tile: tile)
                guard entries == Array(try TileCodec.decodeEntryBundle(full, tile: now).prefix(tile.width)) else {
                    throw TileError.hashMismatch(tile.path)
                }
            } else {
                let hashes = try TileCodec.decodeHashTile(bytes, tile: tile)
                guard hashes == Array(try TileCodec.decodeHashTile(full, tile: now).prefix(tile.width)) else {
                    throw TileError.hashMismatch(tile.path)
                }
            }
        }
    }
}
