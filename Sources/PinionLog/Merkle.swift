// RFC 9162 §2.1 Merkle tree hashing, and inclusion and consistency proofs over any source of subtree hashes.

import PinionCore

/// Why a Merkle computation or proof was refused.
public enum MerkleError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A leaf index or tree size outside the tree (index >= size, old size > new size).
    case indexOutOfRange(index: UInt64, size: UInt64)
    /// A proof hash was not 32 bytes.
    case malformedHash(count: Int)
    /// The proof has the wrong number of hashes for the sizes given.
    case wrongProofLength
    /// The proof does not lead to the expected root hash.
    case rootMismatch
    /// A hash source could not give a subtree hash (missing or truncated tile, short array).
    case missingHash(level: Int, index: UInt64)

    public var description: String {
        switch self {
        case .indexOutOfRange(let index, let size): return "index \(index) is outside a tree of size \(size)"
        case .malformedHash(let count): return "a Merkle hash is 32 bytes, got \(count)"
        case .wrongProofLength: return "the proof has the wrong number of hashes"
        case .rootMismatch: return "the proof does not lead to the expected root hash"
        case .missingHash(let level, let index): return "no hash for the subtree at level \(level), index \(index)"
        }
    }
}

/// RFC 9162 §2.1.1 hashing with domain separation: a leaf is SHA-256(0x00 || entry), an
/// interior node SHA-256(0x01 || left || right), and the empty tree SHA-256 of nothing.
/// The same hashing as RFC 6962 and C2SP tlog-tiles; all hashes are 32 bytes.
public struct MerkleHasher: Sendable {
    /// The SHA-256 it hashes with.
    public let hasher: any SHA256Hasher

    /// - Parameter hasher: SHA-256 from the platform (PinionCore's `CryptoProvider.hasher`).
    public init(_ hasher: any SHA256Hasher) {
        self.hasher = hasher
    }

    /// - Returns: the leaf hash of `entry`, SHA-256(0x00 || entry).
    public func leafHash(_ entry: [UInt8]) -> [UInt8] {
        hasher.sha256([0x00] + entry)
    }

    /// - Returns: SHA-256(0x01 || left || right).
    public func nodeHash(_ left: [UInt8], _ right: [UInt8]) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(65)
        bytes.append(0x01)
        bytes.append(contentsOf: left)
        bytes.append(contentsOf: right)
        return hasher.sha256(bytes)
    }

    /// The root hash of the empty tree, SHA-256 of no bytes.
    public var emptyRoot: [UInt8] { hasher.sha256([]) }

    /// The SHA-256 of arbitrary bytes, for callers that hold only this hasher.
    public func sha256(_ bytes: [UInt8]) -> [UInt8] { hasher.sha256(bytes) }

    /// The root of a perfect subtree whose leaves (or lower subtree roots) are `hashes`.
    ///
    /// - Parameter hashes: a power-of-two count of 32-byte hashes, left to right.
    /// - Returns: the subtree's root hash (the single hash when there is one).
    public func perfectRoot<C: Collection>(_ hashes: C) -> [UInt8] where C.Element == [UInt8] {
        var level = Array(hashes)
        while level.count > 1 {
            var next = [[UInt8]]()
            next.reserveCapacity(level.count / 2)
            var index = 0
            while index + 1 < level.count {
                next.append(nodeHash(level[index], level[index + 1]))
                index += 2
            }
            if index < level.count { next.append(level[index]) }
            level = next
        }
        return level.first ?? emptyRoot
    }
}

/// Where the hashes of perfect subtrees come from: leaf hashes in memory, tiles read over
/// HTTPS or from a directory, or stored hashes.
public protocol SubtreeHashSource {
    /// - Parameters:
    ///   - level: the subtree's height; it spans 2^level leaves (0: a leaf hash).
    ///   - index: which subtree of that height, counted from the left; it spans leaves
    ///     index * 2^level ..< (index + 1) * 2^level.
    /// - Returns: the subtree's 32-byte Merkle tree hash.
    /// - Throws: an error of the source when it cannot produce the hash.
    func subtreeHash(level: Int, index: UInt64) throws -> [UInt8]
}

/// Leaf hashes held in memory: a reference source for tests and small trees. A subtree
/// hash costs 2^level - 1 node hashes.
public struct LeafHashes: SubtreeHashSource {
    /// The leaf hashes, left to right.
    public var hashes: [[UInt8]]
    private let hasher: MerkleHasher

    /// - Parameters:
    ///   - hashes: 32-byte leaf hashes.
    ///   - hasher: the Merkle hasher.
    public init(_ hashes: [[UInt8]], hasher: MerkleHasher) {
        self.hashes = hashes
        self.hasher = hasher
    }

    /// - Throws: `MerkleError.missingHash` when the subtree reaches past the last leaf.
    public func subtreeHash(level: Int, index: UInt64) throws -> [UInt8] {
        guard level >= 0, level < 63 else { throw MerkleError.missingHash(level: level, index: index) }
        let width = UInt64(1) << UInt64(level)
        let (start, overflow) = index.multipliedReportingOverflow(by: width)
        guard !overflow, start < UInt64(hashes.count), UInt64(hashes.count) - start >= width else {
            throw MerkleError.missingHash(level: level, index: index)
        }
        return hasher.perfectRoot(hashes[Int(start)..<Int(start + width)])
    }
}

/// Inclusion and consistency proofs (RFC 9162 §2.1.3 and §2.1.4; the same proofs as RFC 6962
/// §2.1.1 and §2.1.2), generated from any `SubtreeHashSource` and verified without one.
public enum MerkleProofs {
    /// The Merkle tree hash of the first `size` leaves, MTH(D[0:size]).
    ///
    /// - Parameters:
    ///   - size: the tree size, in leaves.
    ///   - source: the subtree hashes (O(log size) of them are read).
    ///   - hasher: the Merkle hasher.
    /// - Returns: the 32-byte root hash; the empty tree's hash when `size` is 0.
    /// - Throws: whatever `source` throws.
    public static func treeHash(size: UInt64, source: some SubtreeHashSource, hasher: MerkleHasher) throws
        -> [UInt8]
    {
        guard size > 0 else { return hasher.emptyRoot }
        return try rangeHash(start: 0, end: size, source: source, hasher: hasher)
    }

    /// The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 9162 §2.1.3.1),
    /// from the leaf's sibling up to the root's child.
    ///
    /// - Returns: 32-byte hashes, at most 63 of them.
    /// - Throws: `MerkleError.indexOutOfRange` when `index >= size`; whatever `source` throws.
    public static func inclusionProof(
        index: UInt64, size: UInt64, source: some SubtreeHashSource, hasher: MerkleHasher
    ) throws -> [[UInt8]] {
        guard index < size else { throw MerkleError.indexOutOfRange(index: index, size: size) }
        var proof = [[UInt8]]()
        try path(index, start: 0, end: size, source: source, hasher: hasher, into: &proof)
        return proof
    }

    /// The consistency proof from the tree of `oldSize` leaves to the tree of `newSize`
    /// (RFC 9162 §2.1.4.1). Empty when `oldSize` is 0 or equals `newSize`.
    ///
    /// - Throws: `MerkleError.indexOutOfRange` when `oldSize > newSize`; whatever `source` throws.
    public static func consistencyProof(
        oldSize: UInt64, newSize: UInt64, source: some SubtreeHashSource, hasher: MerkleHasher
    ) throws -> [[UInt8]] {
        guard oldSize <= newSize else { throw MerkleError.indexOutOfRange(index: oldSize, size: newSize) }
        guard oldSize > 0, oldSize < newSize else { return [] }
        var proof = [[UInt8]]()
        try subproof(oldSize, start: 0, end: newSize, complete: true, source: source, hasher: hasher, into: &proof)
        return proof
    }

    /// Verifies an inclusion proof (RFC 9162 §2.1.3.2).
    ///
    /// - Parameters:
    ///   - leafHash: the 32-byte leaf hash of the entry.
    ///   - index: the entry's zero-based index.
    ///   - size: the tree size the proof is for.
    ///   - proof: 32-byte hashes, leaf sibling first.
    ///   - root: the tree's 32-byte root hash (from a verified checkpoint).
    ///   - hasher: the Merkle hasher.
    /// - Throws: `MerkleError.indexOutOfRange`, `.malformedHash`, `.wrongProofLength` or `.rootMismatch`.
    public static func verifyInclusion(
        leafHash: [UInt8], index: UInt64, size: UInt64, proof: [[UInt8]], root: [UInt8], hasher: MerkleHasher
    ) throws(MerkleError) {
        guard index < size else { throw .indexOutOfRange(index: index, size: size) }
        try checkHashes(proof + [leafHash, root])
        var fn = index
        var sn = size - 1
        var r = leafHash
        for p in proof {
            guard sn != 0 else { throw .wrongProofLength }
            if fn & 1 == 1 || fn == sn {
                r = hasher.nodeHash(p, r)
                if fn & 1 == 0 {
                    while fn & 1 == 0 && fn != 0 {
                        fn >>= 1
                        sn >>= 1
                    }
                }
            } else {
                r = hasher.nodeHash(r, p)
            }
            fn >>= 1
            sn >>= 1
        }
        guard sn == 0 else { throw .wrongProofLength }
        guard r == root else { throw .rootMismatch }
    }

    /// Verifies a consistency proof (RFC 9162 §2.1.4.2). An old size of 0 needs an empty
    /// proof (the empty tree is consistent with every tree); equal sizes need an empty proof
    /// and equal roots.
    ///
    /// - Throws: `MerkleError.indexOutOfRange` when `oldSize > newSize`, `.malformedHash`,
    ///   `.wrongProofLength` or `.rootMismatch`.
    public static func verifyConsistency(
        oldSize: UInt64, newSize: UInt64, oldRoot: [UInt8], newRoot: [UInt8], proof: [[UInt8]],
        hasher: MerkleHasher
    ) throws(MerkleError) {
        guard oldSize <= newSize else { throw .indexOutOfRange(index: oldSize, size: newSize) }
        try checkHashes(proof + [oldRoot, newRoot])
        if oldSize == 0 {
            guard proof.isEmpty else { throw .wrongProofLength }
            return
        }
        if oldSize == newSize {
            guard proof.isEmpty else { throw .wrongProofLength }
            guard oldRoot == newRoot else { throw .rootMismatch }
            return
        }
        guard !proof.isEmpty else { throw .wrongProofLength }
        var path = proof
        if oldSize & (oldSize - 1) == 0 { path.insert(oldRoot, at: 0) }
        var fn = oldSize - 1
        var sn = newSize - 1
        while fn & 1 == 1 {
            fn >>= 1
            sn >>= 1
        }
        var fr = path[0]
        var sr = path[0]
        for c in path.dropFirst() {
            guard sn != 0 else { throw .wrongProofLength }
            if fn & 1 == 1 || fn == sn {
                fr = hasher.nodeHash(c, fr)
                sr = hasher.nodeHash(c, sr)
                if fn & 1 == 0 {
                    while fn & 1 == 0 && fn != 0 {
                        fn >>= 1
                        sn >>= 1
                    }
                }
            } else {
                sr = hasher.nodeHash(sr, c)
            }
            fn >>= 1
            sn >>= 1
        }
        guard sn == 0 else { throw .wrongProofLength }
        guard fr == oldRoot, sr == newRoot else { throw .rootMismatch }
    }

    // MARK: - Generation

    /// The largest power of two strictly below `n` (n >= 2).
    static func splitPoint(_ n: UInt64) -> UInt64 {
        var k: UInt64 = 1
        while k << 1 < n { k <<= 1 }
        return k
    }

    /// MTH(D[start:end]) where `start` is a multiple of the largest power of two below the
    /// range's width, as every range of the RFC's recursions is.
    static func rangeHash(start: UInt64, end: UInt64, source: some SubtreeHashSource, hasher: MerkleHasher)
        throws -> [UInt8]
    {
        let width = end - start
        if width & (width - 1) == 0 {
            let level = width.trailingZeroBitCount
            guard start % width == 0 else { throw MerkleError.missingHash(level: level, index: start) }
            return try source.subtreeHash(level: level, index: start >> UInt64(level))
        }
        let k = splitPoint(width)
        let left = try rangeHash(start: start, end: start + k, source: source, hasher: hasher)
        let right = try rangeHash(start: start + k, end: end, source: source, hasher: hasher)
        return hasher.nodeHash(left, right)
    }

    private static func path(
        _ m: UInt64, start: UInt64, end: UInt64, source: some SubtreeHashSource, hasher: MerkleHasher,
        into proof: inout [[UInt8]]
    ) throws {
        let n = end - start
        guard n > 1 else { return }
        let k = splitPoint(n)
        if m < k {
            try path(m, start: start, end: start + k, source: source, hasher: hasher, into: &proof)
            proof.append(try rangeHash(start: start + k, end: end, source: source, hasher: hasher))
        } else {
            try path(m - k, start: start + k, end: end, source: source, hasher: hasher, into: &proof)
            proof.append(try rangeHash(start: start, end: start + k, source: source, hasher: hasher))
        }
    }

    private static func subproof(
        _ m: UInt64, start: UInt64, end: UInt64, complete: Bool, source: some SubtreeHashSource,
        hasher: MerkleHasher, into proof: inout [[UInt8]]
    ) throws {
        let n = end - start
        if m == n {
            if !complete { proof.append(try rangeHash(start: start, end: end, source: source, hasher: hasher)) }
            return
        }
        let k = splitPoint(n)
        if m <= k {
            try subproof(
                m, start: start, end: start + k, complete: complete, source: source, hasher: hasher,
                into: &proof)
            proof.append(try rangeHash(start: start + k, end: end, source: source, hasher: hasher))
        } else {
            try subproof(
                m - k, start: start + k, end: end, complete: false, source: source, hasher: hasher,
                into: &proof)
            proof.append(try rangeHash(start: start, end: start + k, source: source, hasher: hasher))
        }
    }

    private static func checkHashes(_ hashes: [[UInt8]]) throws(MerkleError) {
        for hash in hashes where hash.count != 32 { throw .malformedHash(count: hash.count) }
    }
}
