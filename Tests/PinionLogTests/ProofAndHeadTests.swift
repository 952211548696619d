// C2SP tlog-proof@v1 files and the head record: the docs' vector, round trips, limits and refusals.

import PinionCore
import PinionLog
import PinionLogWriter
import PinionTrust
import Testing

/// The vector in docs/TRANSPARENCY.md; its leaf hash was computed with Python's hashlib.
let headVectorText =
    "pinion.head/v1\nscope example\nsequence 2\nroot 1 1111111111111111111111111111111111111111111111111111111111111111\nmanifest 1 3 2222222222222222222222222222222222222222222222222222222222222222\n"
let headVectorLeafHash = "1757710807aafd406886015c6cd07b6b471dea97f94e50537d3966a6cdb704b8"

@Suite struct HeadRecordTests {
    @Test func theDocumentedVectorHasTheseExactBytesAndLeafHash() throws {
        let head = try HeadRecord(
            scope: "example", sequence: 2, rootVersion: 1, rootPayloadSHA256: Array(repeating: 0x11, count: 32),
            manifestRootVersion: 1, manifestVersion: 3, manifestPayloadSHA256: Array(repeating: 0x22, count: 32))
        #expect(head.bytes == Array(headVectorText.utf8))
        #expect(head.bytes.count == 190)
        #expect(Hex.encode(merkle.leafHash(head.bytes)) == headVectorLeafHash)
        #expect(try HeadRecord.parse(head.bytes) == head)
    }

    @Test func parsingRefusesAnythingButTheCanonicalBytes() {
        let good = headVectorText
        let lines = good.split(separator: "\n").map(String.init)
        let reordered = [lines[0], lines[2], lines[1], lines[3], lines[4]].joined(separator: "\n") + "\n"
        let bad: [String] = [
            good.replacingOccurrences(of: "pinion.head/v1", with: "pinion.head/v2"),
            good.replacingOccurrences(of: "sequence 2", with: "sequence 02"),
            good.replacingOccurrences(of: "sequence 2", with: "sequence -2"),
            good.replacingOccurrences(of: "sequence 2", with: "sequence  2"),
            good.replacingOccurrences(of: "sequence 2", with: "sequence 9007199254740992"),
            good.replacingOccurrences(of: "root 1 ", with: "root 0 "),
            good.replacingOccurrences(of: "manifest 1 3", with: "manifest 2 3"),
            good.replacingOccurrences(of: "manifest 1 3", with: "manifest 1 0"),
            good.replacingOccurrences(of: "1111", with: "111A"),
            good.replacingOccurrences(of: "1111", with: "111"),
            good.replacingOccurrences(of: "scope example", with: "scope Example"),
            good.replacingOccurrences(of: "scope example", with: "scope .."),
            good.replacingOccurrences(of: "scope example", with: "scope"),
            good.replacingOccurrences(of: "\n", with: "\r\n"),
            String(good.dropLast()),
            good + "\n",
            good + "extra 1\n",
            reordered,
            good.replacingOccurrences(of: "scope example", with: "scope ex\u{00E9}mple"),
        ]
        for text in bad {
            #expect(throws: HeadRecordError.self, "\(text.debugDescription)") { try HeadRecord.parse(Array(text.utf8)) }
        }
        #expect(throws: HeadRecordError.tooLarge) { try HeadRecord.parse(Array(repeating: 0x61, count: 513)) }
    }
}

@Suite struct TlogProofTests {
    private func sampleProof(extra: [UInt8]? = Array(headVectorText.utf8)) throws -> (TlogProof, Checkpoint) {
        let store = MemoryTileStore()
        var appender = try TileLogAppender(size: 0, reader: store, hasher: merkle)
        for index in 0..<6 { try appender.append(sampleEntry(index)) }
        try appender.append(extra ?? [])
        store.store(appender.writes)
        let checkpoint = try Checkpoint(origin: "pinion.example/log", size: appender.size, rootHash: appender.rootHash)
        let log = try seededSigner(5)
        let signature = try SignedNote.sign(
            text: checkpoint.text, keyName: checkpoint.origin, signer: log, hasher: crypto.hasher)
        let source = TileHashSource(treeSize: appender.size, reader: store, hasher: merkle)
        let proof = TlogProof(
            extra: extra, index: 6,
            inclusionProof: try MerkleProofs.inclusionProof(index: 6, size: 7, source: source, hasher: merkle),
            checkpointNote: SignedNote(text: checkpoint.text, signatures: [signature]))
        return (proof, checkpoint)
    }

    @Test func roundTripsAndVerifiesTheInclusionOfItsEntry() throws {
        let (proof, checkpoint) = try sampleProof()
        let text = String(decoding: proof.bytes, as: UTF8.self)
        #expect(text.hasPrefix("c2sp.org/tlog-proof@v1\nextra "))
        #expect(text.contains("\nindex 6\n"))
        let parsed = try TlogProof.parse(proof.bytes)
        #expect(parsed == proof)
        #expect(parsed.inclusionProof.count == 2)
        try parsed.verifyInclusion(
            leafHash: merkle.leafHash(Array(headVectorText.utf8)), checkpoint: checkpoint, hasher: merkle)
        #expect(throws: MerkleError.rootMismatch) {
            try parsed.verifyInclusion(
                leafHash: merkle.leafHash(sampleEntry(6)), checkpoint: checkpoint, hasher: merkle)
        }
        let (bare, _) = try sampleProof(extra: nil)
        #expect(try TlogProof.parse(bare.bytes).extra == nil)
        #expect(!String(decoding: bare.bytes, as: UTF8.self).contains("extra"))
    }

    @Test func refusesMalformedProofsAndEnforcesTheLimits() throws {
        let (proof, _) = try sampleProof()
        let good = String(decoding: proof.bytes, as: UTF8.self)
        let hashLine = Base64.encode(proof.inclusionProof[0])
        let bad: [String] = [
            good.replacingOccurrences(of: "c2sp.org/tlog-proof@v1", with: "c2sp.org/tlog-proof@v2"),
            good.replacingOccurrences(of: "index 6", with: "index 06"),
            good.replacingOccurrences(of: "index 6", with: "index"),
            good.replacingOccurrences(of: "index 6", with: "index -6"),
            good.replacingOccurrences(of: "index 6", with: "idx 6"),
            good.replacingOccurrences(of: "\nextra ", with: "\nextra  "),
            good.replacingOccurrences(of: hashLine, with: String(hashLine.dropLast(2))),
            good.replacingOccurrences(of: hashLine, with: Base64.encode(Array(proof.inclusionProof[0].prefix(31)))),
            good.replacingOccurrences(of: "\n\npinion.example/log", with: "\npinion.example/log"),
            String(good.prefix(while: { $0 != "\u{2014}" })),
        ]
        for text in bad {
            #expect(throws: TlogProofError.self, "\(text.debugDescription)") { try TlogProof.parse(Array(text.utf8)) }
        }
        let long = good.replacingOccurrences(of: hashLine + "\n", with: String(repeating: hashLine + "\n", count: 64))
        #expect(throws: TlogProofError.tooManyProofLines(limit: 63)) { try TlogProof.parse(Array(long.utf8)) }
        #expect(throws: TlogProofError.tooLarge(limit: 100)) {
            try TlogProof.parse(proof.bytes, limits: TlogProofLimits(maxBytes: 100))
        }
        let signature = good.split(separator: "\n").last.map(String.init) ?? ""
        let many = good + String(repeating: signature + "\n", count: 32)
        #expect(throws: TlogProofError.note(.tooManySignatures(limit: 32))) { try TlogProof.parse(Array(many.utf8)) }
    }
}
