// C2SP signed-note, tlog-cosignature and tlog-checkpoint: the spec's vectors, round trips, and every refusal.

import PinionCore
import PinionLog
import PinionTrust
import Testing

private let specKey = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
private let specNote =
    "This is an example message.\n\n\u{2014} example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n"

@Suite struct SignedNoteTests {
    @Test func theSpecExampleVerifiesWithItsVerifierKey() throws {
        let key = try NoteVerifierKey(parsing: specKey, hasher: crypto.hasher)
        #expect(key.name == "example.com/foo")
        #expect(key.type == .ed25519)
        #expect(key.keyID == 0x530d_903a)
        #expect(key.text == specKey)
        let note = try SignedNote.parse(Array(specNote.utf8))
        #expect(note.text == "This is an example message.\n")
        #expect(note.bytes == Array(specNote.utf8))
        let verified = try note.verify(keys: [key], verifier: crypto.verifier)
        #expect(verified == [VerifiedNoteSignature(key: key, timestamp: nil)])
    }

    @Test func aChangedTextOrSignatureFromAKnownKeyRefusesTheWholeNote() throws {
        let key = try NoteVerifierKey(parsing: specKey, hasher: crypto.hasher)
        let changed = try SignedNote.parse(
            Array(specNote.replacingOccurrences(of: "example message", with: "example massage").utf8))
        #expect(throws: NoteError.badSignature(keyName: "example.com/foo")) {
            try changed.verify(keys: [key], verifier: crypto.verifier)
        }
        let note = try SignedNote.parse(Array(specNote.utf8))
        var signature = note.signatures[0].signature
        signature[10] ^= 1
        let forged = SignedNote(
            text: note.text,
            signatures: [NoteSignature(keyName: "example.com/foo", keyID: 0x530d_903a, signature: signature)])
        #expect(throws: NoteError.badSignature(keyName: "example.com/foo")) {
            try forged.verify(keys: [key], verifier: crypto.verifier)
        }
    }

    @Test func signaturesFromUnknownKeysAreIgnoredEvenWithTheSameNameOrID() throws {
        let signer = try seededSigner(7)
        let known = try vkey("log.example/a", .ed25519, signer)
        let text = "hello\n"
        let good = try SignedNote.sign(text: text, keyName: "log.example/a", signer: signer, hasher: crypto.hasher)
        let junk = [UInt8](repeating: 9, count: 64)
        let sameName = NoteSignature(keyName: "log.example/a", keyID: known.keyID ^ 1, signature: junk)
        let sameID = NoteSignature(keyName: "log.example/b", keyID: known.keyID, signature: junk)
        let note = SignedNote(text: text, signatures: [sameName, sameID, good, good])
        let parsed = try SignedNote.parse(note.bytes)
        #expect(
            try parsed.verify(keys: [known], verifier: crypto.verifier) == [
                VerifiedNoteSignature(key: known, timestamp: nil)
            ])
        let unsigned = SignedNote(text: text, signatures: [sameName, sameID])
        #expect(try unsigned.verify(keys: [known], verifier: crypto.verifier).isEmpty)
    }

    @Test func cosignaturesSignTheV1MessageWithTheirTimestamp() throws {
        let witness = try seededSigner(3)
        let key = try vkey("witness.example/w1", .cosignatureV1, witness)
        let text = "example.com/log\n5\n" + Base64.encode(merkle.emptyRoot) + "\n"
        let cosignature = try Cosignature.sign(
            text: text, keyName: "witness.example/w1", timestamp: 1_679_315_147, signer: witness, hasher: crypto.hasher)
        #expect(cosignature.signature.count == 72)
        #expect(Array(cosignature.signature.prefix(8)) == [0, 0, 0, 0, 0x64, 0x18, 0x50, 0xcb])
        #expect(
            Cosignature.message(text: text, timestamp: 1_679_315_147)
                == Array("cosignature/v1\ntime 1679315147\n\(text)".utf8))
        #expect(
            crypto.verifier.isValidSignature(
                Array(cosignature.signature.dropFirst(8)),
                of: Cosignature.message(text: text, timestamp: 1_679_315_147),
                publicKey: witness.publicKey))
        let note = try SignedNote.parse(SignedNote(text: text, signatures: [cosignature]).bytes)
        #expect(
            try note.verify(keys: [key], verifier: crypto.verifier) == [
                VerifiedNoteSignature(key: key, timestamp: 1_679_315_147)
            ])
        // The same key as a type 0x01 key has another key ID: the cosignature is not its signature.
        #expect(
            try note.verify(keys: [try vkey("witness.example/w1", .ed25519, witness)], verifier: crypto.verifier)
                .isEmpty)
        var restamped = cosignature.signature
        restamped[7] ^= 1
        let moved = SignedNote(
            text: text,
            signatures: [NoteSignature(keyName: cosignature.keyName, keyID: cosignature.keyID, signature: restamped)])
        #expect(throws: NoteError.badSignature(keyName: "witness.example/w1")) {
            try moved.verify(keys: [key], verifier: crypto.verifier)
        }
        #expect(throws: NoteError.self) {
            try Cosignature.sign(
                text: text, keyName: "w", timestamp: UInt64(Int64.max) + 1, signer: witness, hasher: crypto.hasher)
        }
    }

    @Test func cosignatureTimestampsAbove2To63AreRefused() throws {
        let witness = try seededSigner(3)
        let key = try vkey("w.example", .cosignatureV1, witness)
        let text = "x\n"
        let timestamp = UInt64(Int64.max) + 1
        let stamp = (0..<8).map { UInt8(timestamp >> UInt64(56 - 8 * $0) & 0xFF) }
        let signature = try witness.sign(Cosignature.message(text: text, timestamp: timestamp))
        let note = SignedNote(
            text: text,
            signatures: [NoteSignature(keyName: "w.example", keyID: key.keyID, signature: stamp + signature)])
        #expect(throws: NoteError.badSignature(keyName: "w.example")) {
            try note.verify(keys: [key], verifier: crypto.verifier)
        }
    }

    @Test func verifierKeyStringsRoundTripAndRefuseEveryMalformation() throws {
        let signer = try seededSigner(1)
        for type in [NoteKeyType.ed25519, .cosignatureV1] {
            let key = try vkey("pinion.example/log", type, signer)
            #expect(try NoteVerifierKey(parsing: key.text, hasher: crypto.hasher) == key)
        }
        // Base64 may hold '+': such a key still parses (only the first two '+' separate).
        var plus: NoteVerifierKey? = nil
        for seed in UInt8(1)...64 where plus == nil {
            let key = try vkey("p.example", .ed25519, try seededSigner(seed))
            if key.text.split(separator: "+").count > 3 { plus = key }
        }
        let keyWithPlus = try #require(plus)
        #expect(try NoteVerifierKey(parsing: keyWithPlus.text, hasher: crypto.hasher) == keyWithPlus)
        let good = try vkey("a.example", .ed25519, signer).text
        let parts = good.split(separator: "+").map(String.init)
        let key31 = Base64.encode([0x01] + Array(signer.publicKey.prefix(31)))
        let type2 = Base64.encode([0x02] + signer.publicKey)
        for text in [
            "", "a.example", parts[0] + "+" + parts[1], good + "+x", "+" + parts[1] + "+" + parts[2],
            parts[0] + "+" + parts[1].uppercased() + "+" + parts[2], parts[0] + "+0000000+" + parts[2],
            parts[0] + "+00000000+" + parts[2], parts[0] + "+" + parts[1] + "+" + parts[2].dropLast(),
            "b.example+" + parts[1] + "+" + parts[2], parts[0] + "+" + parts[1] + "+" + key31,
            "a b+" + parts[1] + "+" + parts[2],
        ] {
            #expect(throws: NoteError.self, "\(text)") { try NoteVerifierKey(parsing: text, hasher: crypto.hasher) }
        }
        #expect(throws: NoteError.unsupportedKeyType(2)) {
            try NoteVerifierKey(parsing: parts[0] + "+" + parts[1] + "+" + type2, hasher: crypto.hasher)
        }
        for name in ["", "a b", "a+b", "a\u{00A0}b", "a\tb", "a\u{1B}[31mb", "a\u{7F}b", "a\u{85}b"] {
            #expect(throws: NoteError.invalidKeyName(name)) {
                try NoteVerifierKey(name: name, type: .ed25519, publicKey: signer.publicKey, hasher: crypto.hasher)
            }
        }
    }

    @Test func parsingRefusesMalformedNotes() throws {
        let sig =
            "\u{2014} example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n"
        let cases: [(String, NoteError)] = [
            ("text\n" + sig, .malformedNote("no blank line before the signatures")),
            ("text\n\n" + sig.dropLast(), .malformedNote("does not end in a newline")),
            ("\n" + sig, .malformedNote("no blank line before the signatures")),
            ("\n\n" + sig, .malformedNote("empty text")),
            ("text\n\n", .malformedNote("no signature lines")),
            ("text\n\n" + sig + "\n", .malformedNote("no signature lines")),
            ("text\n\n- example.com/foo AAAAAAA=\n", .malformedSignatureLine(1)),
            ("text\n\n\u{2014} example.com/foo  Uw2QOkn8\n", .malformedSignatureLine(1)),
            ("text\n\n\u{2014} example.com/foo AAAA\n", .malformedSignatureLine(1)),
            ("text\n\n\u{2014} example.com/foo AAAAAAA\n", .malformedSignatureLine(1)),
            ("text\n\n" + sig + "\u{2014} a+b AAAAAAA=\n", .malformedSignatureLine(2)),
            ("text\n\n\u{2014} example.com/foo\n", .malformedSignatureLine(1)),
            ("te\rxt\n\n" + sig, .controlCharacter),
            ("te\txt\n\n" + sig, .controlCharacter),
            ("text\n\n" + String(repeating: sig, count: 33), .tooManySignatures(limit: 32)),
        ]
        for (text, error) in cases {
            #expect(throws: error, "\(text.debugDescription)") { try SignedNote.parse(Array(text.utf8)) }
        }
        #expect(throws: NoteError.notUTF8) { try SignedNote.parse([0x61, 0xff, 0x0A, 0x0A] + Array(sig.utf8)) }
        #expect(throws: NoteError.tooLarge(limit: 100)) {
            try SignedNote.parse(Array(("text\n\n" + sig).utf8), limits: NoteLimits(maxBytes: 100))
        }
        // The text may hold blank lines: the last one separates it from the signatures.
        #expect(try SignedNote.parse(Array(("a\n\nb\n\n" + sig).utf8)).text == "a\n\nb\n")
        #expect(
            try SignedNote.parse(Array(("text\n\n" + String(repeating: sig, count: 32)).utf8)).signatures.count == 32)
    }
}

@Suite struct CheckpointTests {
    private let root = Base64.encode([UInt8](repeating: 0xAB, count: 32))

    @Test func parsesAndFormatsTheThreeLinesAndExtensions() throws {
        let text = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
        let checkpoint = try Checkpoint.parse(text, hasher: merkle)
        #expect(checkpoint.origin == "example.com/behind-the-sofa")
        #expect(checkpoint.size == 20_852_163)
        #expect(Base64.encode(checkpoint.rootHash) == "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=")
        #expect(checkpoint.text == text)
        let extended = try Checkpoint.parse("o\n1\n\(root)\next one\nx2\n", hasher: merkle)
        #expect(extended.extensions == ["ext one", "x2"])
        #expect(extended.text == "o\n1\n\(root)\next one\nx2\n")
        let empty = "o\n0\n" + Base64.encode(merkle.emptyRoot) + "\n"
        #expect(try Checkpoint.parse(empty, hasher: merkle).size == 0)
    }

    @Test func refusesMalformedCheckpoints() {
        let cases: [(String, CheckpointError)] = [
            ("o\n1\n\(root)", .malformed("does not end in a newline")),
            ("o\n1\n", .malformed("fewer than three lines")),
            ("\n1\n\(root)\n", .malformed("an empty line")),
            ("o\n1\n\(root)\n\nx\n", .malformed("an empty line")),
            ("o\n01\n\(root)\n", .invalidSize("01")),
            ("o\n+1\n\(root)\n", .invalidSize("+1")),
            ("o\n-1\n\(root)\n", .invalidSize("-1")),
            ("o\n 1\n\(root)\n", .invalidSize(" 1")),
            ("o\n9223372036854775808\n\(root)\n", .invalidSize("9223372036854775808")),
            ("o\n1\n\(root.dropLast())\n", .invalidRootHash(String(root.dropLast()))),
            ("o\n1\nAAAA\n", .invalidRootHash("AAAA")),
            ("o\n0\n\(root)\n", .emptyTreeHash),
        ]
        for (text, error) in cases {
            #expect(throws: error, "\(text.debugDescription)") { try Checkpoint.parse(text, hasher: merkle) }
        }
    }
}
