// The right edge of a Merkle tree: O(log n) appends and root hashes without the rest of the tree.

/// The roots of the perfect subtrees that make up a tree of `size` leaves (one per set bit
/// of `size`, largest and leftmost first): everything needed to append a leaf and to compute
/// the root hash, in O(log n) node hashes, without reading or recomputing the rest of the tree.
public struct MerkleFrontier: Sendable, Equatable {
    /// The tree size, in leaves.
    public private(set) var size: UInt64
    /// The perfect subtree roots, leftmost (largest) first; 32 bytes each.
    public private(set) var hashes: [[UInt8]]

    /// The empty tree.
    public init() {
        self.size = 0
        self.hashes = []
    }

    /// Reads the frontier of a tree of `size` leaves from a hash source: one subtree hash per
    /// set bit of `size`.
    ///
    /// - Throws: whatever `source` throws.
    public init(size: UInt64, source: some SubtreeHashSource) throws {
        self.size = size
        var hashes = [[UInt8]]()
        var start: UInt64 = 0
        var bit = 63
        while bit >= 0 {
            let width = UInt64(1) << UInt64(bit)
            if size & width != 0 {
                hashes.append(try source.subtreeHash(level: bit, index: start >> UInt64(bit)))
                start += width
            }
            bit -= 1
        }
        self.hashes = hashes
    }

    /// A frontier from stored right-edge hashes.
    ///
    /// - Parameters:
    ///   - size: the tree size, in leaves.
    ///   - hashes: one 32-byte subtree root per set bit of `size`, leftmost first.
    /// - Throws: `MerkleError.wrongProofLength` for the wrong count, `.malformedHash` for a bad hash.
    public init(size: UInt64, hashes: [[UInt8]]) throws(MerkleError) {
        guard hashes.count == size.nonzeroBitCount else { throw .wrongProofLength }
        for hash in hashes where hash.count != 32 { throw .malformedHash(count: hash.count) }
        self.size = size
        self.hashes = hashes
    }

    /// Appends one leaf: merges the equal-sized subtrees on the right edge (amortised one
    /// node hash, at most 64).
    ///
    /// - Parameters:
    ///   - leafHash: the new leaf's 32-byte hash (`MerkleHasher.leafHash`).
    ///   - hasher: the Merkle hasher.
    public mutating func append(leafHash: [UInt8], hasher: MerkleHasher) {
        var hash = leafHash
        var level: UInt64 = 0
        while (size >> level) & 1 == 1, let left = hashes.popLast() {
            hash = hasher.nodeHash(left, hash)
            level += 1
        }
        hashes.append(hash)
        size += 1
    }

    /// The root hash, MTH(D[0:size]): folds the right edge from the right, at most 63 node hashes.
    public func rootHash(hasher: MerkleHasher) -> [UInt8] {
        guard var root = hashes.last else { return hasher.emptyRoot }
        for left in hashes.dropLast().reversed() {
            root = hasher.nodeHash(left, root)
        }
        return root
    }
}
