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
}
