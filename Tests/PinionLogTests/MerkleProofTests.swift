// RFC 9162 §2.1 hashing and proofs: the RFC 6962 reference tree's known values, exhaustive small trees, refusals.

import PinionCore
import PinionLog
import PinionTrust
import Testing

/// The eight leaves of the test tree used by RFC 6962 implementations (certificate-transparency's
/// merkle_tree_test, also Go's sumdb/tlog ct_test), with their roots and proofs.
private let referenceLeaves: [[UInt8]] = [
    [], [0x00], [0x10], [0x20, 0x21], [0x30, 0x31], [0x40, 0x41, 0x42, 0x43],
    [0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57],
    [0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f],
]

private let referenceRoots = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]

private func referenceSource(_ count: Int = 8) -> LeafHashes {
    LeafHashes(referenceLeaves.prefix(count).map(merkle.leafHash), hasher: merkle)
}

@Suite struct MerkleProofTests {
    @Test func emptyTreeHashIsSHA256OfNothing() throws {
        let root = try MerkleProofs.treeHash(size: 0, source: referenceSource(), hasher: merkle)
        #expect(Hex.encode(root) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func rootsOfTheRFC6962ReferenceTree() throws {
        for size in 1...8 {
            let root = try MerkleProofs.treeHash(size: UInt64(size), source: referenceSource(), hasher: merkle)
            #expect(Hex.encode(root) == referenceRoots[size - 1], "size \(size)")
        }
    }

    @Test func inclusionProofsOfTheReferenceTree() throws {
        let cases: [(index: UInt64, size: UInt64, proof: [String])] = [
            (0, 1, []),
            (
                0, 8,
                [
                    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
                ]
            ),
            (
                5, 8,
                [
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                ]
            ),
            (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
            (
                1, 5,
                [
                    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                ]
            ),
        ]
        for item in cases {
            let proof = try MerkleProofs.inclusionProof(
                index: item.index, size: item.size, source: referenceSource(), hasher: merkle)
            #expect(proof.map { Hex.encode($0) } == item.proof, "leaf \(item.index) of \(item.size)")
            try MerkleProofs.verifyInclusion(
                leafHash: merkle.leafHash(referenceLeaves[Int(item.index)]), index: item.index, size: item.size,
                proof: proof, root: hex(referenceRoots[Int(item.size) - 1]), hasher: merkle)
        }
    }

    @Test func consistencyProofsOfTheReferenceTree() throws {
        let cases: [(old: UInt64, new: UInt64, proof: [String])] = [
            (1, 1, []),
            (
                1, 8,
                [
                    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
                ]
            ),
            (
                6, 8,
                [
                    "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
                    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                ]
            ),
            (
                2, 5,
                [
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                ]
            ),
        ]
        for item in cases {
            let proof = try MerkleProofs.consistencyProof(
                oldSize: item.old, newSize: item.new, source: referenceSource(), hasher: merkle)
            #expect(proof.map { Hex.encode($0) } == item.proof, "\(item.old) -> \(item.new)")
            try MerkleProofs.verifyConsistency(
                oldSize: item.old, newSize: item.new, oldRoot: hex(referenceRoots[Int(item.old) - 1]),
                newRoot: hex(referenceRoots[Int(item.new) - 1]), proof: proof, hasher: merkle)
        }
    }

    @Test func everyInclusionProofOfSmallTreesVerifiesAndEveryMutationIsRefused() throws {
        let leaves = (0..<40).map { merkle.leafHash(sampleEntry($0)) }
        let source = LeafHashes(leaves, hasher: merkle)
        for size in UInt64(1)...40 {
            let root = try MerkleProofs.treeHash(size: size, source: source, hasher: merkle)
            for index in 0..<size {
                let proof = try MerkleProofs.inclusionProof(index: index, size: size, source: source, hasher: merkle)
                let leaf = leaves[Int(index)]
                try MerkleProofs.verifyInclusion(
                    leafHash: leaf, index: index, size: size, proof: proof, root: root, hasher: merkle)
                #expect(throws: MerkleError.self) {
                    try MerkleProofs.verifyInclusion(
                        leafHash: leaves[Int((index + 1) % 40)], index: index, size: size, proof: proof, root: root,
                        hasher: merkle)
                }
                if size > 1 {
                    #expect(throws: MerkleError.self) {
                        try MerkleProofs.verifyInclusion(
                            leafHash: leaf, index: (index + 1) % size, size: size, proof: proof, root: root,
                            hasher: merkle)
                    }
                }
                #expect(throws: MerkleError.self) {
                    try MerkleProofs.verifyInclusion(
                        leafHash: leaf, index: index, size: size, proof: proof + [leaf], root: root, hasher: merkle)
                }
                for position in proof.indices {
                    var bad = proof
                    bad[position][7] ^= 0x01
                    #expect(throws: MerkleError.rootMismatch) {
                        try MerkleProofs.verifyInclusion(
                            leafHash: leaf, index: index, size: size, proof: bad, root: root, hasher: merkle)
                    }
                    #expect(throws: MerkleError.self) {
                        try MerkleProofs.verifyInclusion(
                            leafHash: leaf, index: index, size: size, proof: Array(proof.dropLast()), root: root,
                            hasher: merkle)
                    }
                }
            }
        }
    }

    @Test func everyConsistencyProofOfSmallTreesVerifiesAndEveryMutationIsRefused() throws {
        let leaves = (0..<33).map { merkle.leafHash(sampleEntry($0)) }
        let source = LeafHashes(leaves, hasher: merkle)
        let roots = try (0...33).map { try MerkleProofs.treeHash(size: UInt64($0), source: source, hasher: merkle) }
        for new in UInt64(0)...33 {
            for old in UInt64(0)...new {
                let proof = try MerkleProofs.consistencyProof(
                    oldSize: old, newSize: new, source: source, hasher: merkle)
                try MerkleProofs.verifyConsistency(
                    oldSize: old, newSize: new, oldRoot: roots[Int(old)], newRoot: roots[Int(new)], proof: proof,
                    hasher: merkle)
                guard old > 0 else { continue }
                if old < new {
                    #expect(throws: MerkleError.self) {
                        try MerkleProofs.verifyConsistency(
                            oldSize: old, newSize: new, oldRoot: roots[Int(old) - 1], newRoot: roots[Int(new)],
                            proof: proof, hasher: merkle)
                    }
                }
                #expect(throws: MerkleError.self) {
                    try MerkleProofs.verifyConsistency(
                        oldSize: old, newSize: new, oldRoot: roots[Int(old)], newRoot: merkle.leafHash([9]),
                        proof: proof, hasher: merkle)
                }
                for position in proof.indices {
                    var bad = proof
                    bad[position][0] ^= 0x80
                    #expect(throws: MerkleError.self) {
                        try MerkleProofs.verifyConsistency(
                            oldSize: old, newSize: new, oldRoot: roots[Int(old)], newRoot: roots[Int(new)],
                            proof: bad, hasher: merkle)
                    }
                }
            }
        }
    }

    @Test func refusesIndexOutsideTheTree() throws {
        let source = referenceSource()
        #expect(throws: MerkleError.indexOutOfRange(index: 8, size: 8)) {
            try MerkleProofs.inclusionProof(index: 8, size: 8, source: source, hasher: merkle)
        }
        #expect(throws: MerkleError.indexOutOfRange(index: 3, size: 3)) {
            try MerkleProofs.verifyInclusion(
                leafHash: merkle.leafHash([]), index: 3, size: 3, proof: [], root: hex(referenceRoots[2]),
                hasher: merkle)
        }
        #expect(throws: MerkleError.indexOutOfRange(index: 5, size: 4)) {
            try MerkleProofs.consistencyProof(oldSize: 5, newSize: 4, source: source, hasher: merkle)
        }
        #expect(throws: MerkleError.missingHash(level: 0, index: 8)) {
            try MerkleProofs.treeHash(size: 9, source: source, hasher: merkle)
        }
    }

    @Test func refusesHashesThatAreNot32Bytes() {
        #expect(throws: MerkleError.malformedHash(count: 31)) {
            try MerkleProofs.verifyInclusion(
                leafHash: merkle.leafHash([]), index: 0, size: 2, proof: [[UInt8](repeating: 0, count: 31)],
                root: hex(referenceRoots[1]), hasher: merkle)
        }
        #expect(throws: MerkleError.malformedHash(count: 0)) {
            try MerkleProofs.verifyConsistency(
                oldSize: 1, newSize: 2, oldRoot: [], newRoot: hex(referenceRoots[1]), proof: [], hasher: merkle)
        }
    }

    @Test func emptyTreeNeedsAnEmptyConsistencyProofAndEqualSizesEqualRoots() {
        #expect(throws: MerkleError.wrongProofLength) {
            try MerkleProofs.verifyConsistency(
                oldSize: 0, newSize: 2, oldRoot: merkle.emptyRoot, newRoot: hex(referenceRoots[1]),
                proof: [hex(referenceRoots[0])], hasher: merkle)
        }
        #expect(throws: MerkleError.rootMismatch) {
            try MerkleProofs.verifyConsistency(
                oldSize: 3, newSize: 3, oldRoot: hex(referenceRoots[2]), newRoot: hex(referenceRoots[3]), proof: [],
                hasher: merkle)
        }
        #expect(throws: MerkleError.wrongProofLength) {
            try MerkleProofs.verifyConsistency(
                oldSize: 3, newSize: 5, oldRoot: hex(referenceRoots[2]), newRoot: hex(referenceRoots[4]), proof: [],
                hasher: merkle)
        }
    }

    @Test func frontierRootEqualsTheTreeHashAfterEveryAppend() throws {
        let leaves = (0..<300).map { merkle.leafHash(sampleEntry($0)) }
        let source = LeafHashes(leaves, hasher: merkle)
        var frontier = MerkleFrontier()
        for (index, leaf) in leaves.enumerated() {
            frontier.append(leafHash: leaf, hasher: merkle)
            let size = UInt64(index + 1)
            #expect(frontier.hashes.count == size.nonzeroBitCount)
            #expect(
                frontier.rootHash(hasher: merkle)
                    == (try MerkleProofs.treeHash(size: size, source: source, hasher: merkle)))
            #expect(try MerkleFrontier(size: size, source: source) == frontier)
        }
    }

    @Test func frontierRefusesTheWrongNumberOfHashes() {
        #expect(throws: MerkleError.wrongProofLength) { try MerkleFrontier(size: 3, hashes: [merkle.emptyRoot]) }
        #expect(throws: MerkleError.malformedHash(count: 2)) { try MerkleFrontier(size: 1, hashes: [[1, 2]]) }
    }
}
