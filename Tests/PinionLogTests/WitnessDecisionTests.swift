// The witness's add-checkpoint decisions (C2SP tlog-witness): 200, 400, 403, 404, 409 and 422, and no cosigned fork.

import PinionCore
import PinionLog
import PinionPublisher
import PinionTrust
import Testing

@Suite struct WitnessDecisionTests {
    private func logOf(_ versions: [Int64]) throws -> LogFixture {
        var log = try LogFixture()
        for version in versions { try log.appendHead(rootVersion: 1, manifestVersion: version) }
        return log
    }

    private func body(_ log: LogFixture, old: UInt64, proof: [[UInt8]]? = nil, note: SignedNote? = nil) throws
        -> [UInt8]
    {
        AddCheckpointRequest(
            oldSize: old, consistencyProof: try proof ?? (old == 0 ? [] : log.consistencyProof(from: old)),
            note: try note ?? log.note(cosignedBy: [])
        ).bytes
    }

    private func decide(_ log: LogFixture, _ body: [UInt8], latest: Checkpoint?) throws(WitnessRefusal) -> Checkpoint {
        try WitnessDecision.decide(
            body: body, logKeys: [LogFixture.origin: [log.policy.logKey]], latest: { _ in latest }, crypto: crypto
        ).checkpoint
    }

    @Test func cosignsAFirstCheckpointAndAConsistentExtension() throws {
        var log = try logOf([1, 2, 3])
        let first = try decide(log, try body(log, old: 0), latest: nil)
        #expect(first == (try log.checkpoint))
        try log.appendHead(rootVersion: 1, manifestVersion: 4)
        try log.appendHead(rootVersion: 1, manifestVersion: 5)
        #expect(try decide(log, try body(log, old: 3), latest: first) == (try log.checkpoint))
    }

    @Test func theResponseIsACosignatureLineThatVerifies() throws {
        let log = try logOf([1])
        let note = try log.note(cosignedBy: [])
        let response = try WitnessDecision.cosign(
            note, name: "w1.example", timestamp: 1_800_000_000, signer: log.witnessSigners[0], hasher: crypto.hasher)
        let lines = try SignedNote.parseSignatureLines(response)
        #expect(lines.count == 1)
        let cosigned = SignedNote(text: note.text, signatures: note.signatures + lines)
        let verified = try cosigned.verify(keys: [log.policy.witnesses[0].key], verifier: crypto.verifier)
        #expect(verified.map(\.timestamp) == [1_800_000_000])
        #expect(throws: NoteError.self) {
            try WitnessDecision.cosign(
                note, name: "w1.example", timestamp: 0, signer: log.witnessSigners[0], hasher: crypto.hasher)
        }
    }

    @Test func theSameSizeWithTheSameHashReCosigns() throws {
        let log = try logOf([1, 2])
        let latest = try log.checkpoint
        #expect(try decide(log, try body(log, old: 2, proof: []), latest: latest) == latest)
    }

    @Test func answers404ForAnUnknownOrigin() throws {
        let log = try logOf([1])
        #expect(throws: WitnessRefusal.unknownOrigin(LogFixture.origin)) {
            try WitnessDecision.decide(
                body: try body(log, old: 0), logKeys: ["other.example": [log.policy.logKey]], latest: { _ in nil },
                crypto: crypto)
        }
        #expect(WitnessRefusal.unknownOrigin("x").httpStatus == 404)
    }

    @Test func answers403WithoutAValidLogSignature() throws {
        let log = try logOf([1])
        let unsigned = try log.note(cosignedBy: [(0, 5)], logSigned: false)
        #expect(throws: WitnessRefusal.forbidden("no signature by a trusted log key")) {
            try decide(log, try body(log, old: 0, note: unsigned), latest: nil)
        }
        let signed = try log.note(cosignedBy: [])
        var bytes = signed.signatures[0].signature
        bytes[0] ^= 1
        let bad = SignedNote(
            text: signed.text,
            signatures: [
                NoteSignature(
                    keyName: signed.signatures[0].keyName, keyID: signed.signatures[0].keyID, signature: bytes)
            ])
        let error = #expect(throws: WitnessRefusal.self) {
            try decide(log, try body(log, old: 0, note: bad), latest: nil)
        }
        #expect(error?.httpStatus == 403)
    }

    @Test func answers409WithItsSizeWhenTheOldSizeIsNotItsLatest() throws {
        let log = try logOf([1, 2, 3, 4])
        let latest = try logOf([1, 2]).checkpoint
        #expect(throws: WitnessRefusal.conflict(latestSize: 2)) {
            try decide(log, try body(log, old: 3), latest: latest)
        }
        #expect(throws: WitnessRefusal.conflict(latestSize: 2)) {
            try decide(log, try body(log, old: 0), latest: latest)
        }
        #expect(throws: WitnessRefusal.conflict(latestSize: 0)) { try decide(log, try body(log, old: 1), latest: nil) }
        #expect(WitnessRefusal.conflict(latestSize: 2).httpStatus == 409)
    }

    @Test func answers422ForBadProofs() throws {
        let log = try logOf([1, 2, 3, 4, 5])
        let latest = try logOf([1, 2]).checkpoint
        var proof = try log.consistencyProof(from: 2)
        proof[0][5] ^= 1
        #expect(throws: WitnessRefusal.self) { try decide(log, try body(log, old: 2, proof: proof), latest: latest) }
        #expect(throws: WitnessRefusal.unprocessable("a proof from size 0 must be empty")) {
            try decide(log, try body(log, old: 0, proof: [merkle.emptyRoot]), latest: nil)
        }
        // A proof from another tree of size 2 does not verify against the stored one.
        let other = try logOf([1, 9]).checkpoint
        let error = #expect(throws: WitnessRefusal.self) { try decide(log, try body(log, old: 2), latest: other) }
        #expect(error?.httpStatus == 422)
    }

    @Test func neverCosignsTwoTreesOfOneSize() throws {
        // Split view: the log key signs two checkpoints of size 3.
        let honest = try logOf([1, 2, 3])
        let fork = try logOf([1, 2, 33])
        let prior = try logOf([1, 2]).checkpoint
        let accepted = try decide(honest, try body(honest, old: 2), latest: prior)
        #expect(throws: WitnessRefusal.conflict(latestSize: 3)) {
            try decide(fork, try body(fork, old: 2), latest: accepted)
        }
        #expect(throws: WitnessRefusal.unprocessable("another tree of the same size")) {
            try decide(fork, try body(fork, old: 3, proof: []), latest: accepted)
        }
    }

    @Test func answers400ForMalformedBodiesAndAnOldSizeAboveTheNew() throws {
        let log = try logOf([1, 2, 3])
        let latest = try logOf([1, 2, 3, 4]).checkpoint
        #expect(throws: WitnessRefusal.badRequest("old size above the checkpoint's size")) {
            try decide(log, try body(log, old: 4, proof: []), latest: latest)
        }
        let good = String(decoding: try body(log, old: 1), as: UTF8.self)
        let hashLine = good.split(separator: "\n")[1]
        let bad: [String] = [
            good.replacingOccurrences(of: "old 1\n", with: "old 01\n"),
            good.replacingOccurrences(of: "old 1\n", with: "old\n"),
            good.replacingOccurrences(of: "old 1\n", with: "size 1\n"),
            good.replacingOccurrences(of: "old 1\n", with: "old -1\n"),
            good.replacingOccurrences(of: String(hashLine), with: String(hashLine.dropLast(2))),
            good.replacingOccurrences(of: "\n\n" + LogFixture.origin, with: "\n" + LogFixture.origin),
            good.replacingOccurrences(of: String(hashLine) + "\n", with: String(repeating: hashLine + "\n", count: 64)),
            "old 1\n",
            "",
        ]
        for text in bad {
            let error = #expect(throws: WitnessRefusal.self, "\(text.debugDescription)") {
                try decide(log, Array(text.utf8), latest: nil)
            }
            #expect(error?.httpStatus == 400)
        }
        #expect(throws: WitnessRefusal.badRequest("body larger than 100 bytes")) {
            try WitnessDecision.decide(
                body: Array(good.utf8), logKeys: [LogFixture.origin: [log.policy.logKey]], latest: { _ in nil },
                crypto: crypto, limits: WitnessLimits(maxBodyBytes: 100))
        }
    }

    @Test func aSizeZeroCheckpointMustCarryTheEmptyTreeHash() throws {
        let log = try logOf([1])
        let text = "\(LogFixture.origin)\n0\n\(Base64.encode(try log.checkpoint.rootHash))\n"
        let note = SignedNote(
            text: text,
            signatures: [
                try SignedNote.sign(
                    text: text, keyName: LogFixture.origin, signer: log.logSigner, hasher: crypto.hasher)
            ])
        #expect(throws: WitnessRefusal.unprocessable("a size-0 checkpoint must carry the empty tree's hash")) {
            try decide(log, AddCheckpointRequest(oldSize: 0, consistencyProof: [], note: note).bytes, latest: nil)
        }
    }
}
