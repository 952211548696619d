// The signed-note corpus (conformance/notes/): key names, line breaks and BOMs that both SDKs must read byte for byte, with the same verdict.

import Foundation
import PinionCore
import PinionCrypto
import PinionLog
import PinionTrust
import XCTest

final class SignedNoteCorpusTests: XCTestCase {
    /// Every note of conformance/notes/expectations.json: parsed with `SignedNote.parse` and
    /// verified with the listed keys; the verdict and the names of the verified keys (as
    /// UTF-8 bytes) are the ones the corpus gives, which the JVM SDK's `SignedNote` gives too.
    func testEveryNoteGetsItsVerdict() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("conformance/notes")
        let data = try Data(contentsOf: folder.appendingPathComponent("expectations.json"))
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let keyTexts = try XCTUnwrap(document["keys"] as? [String: String])
        let crypto = CryptoProvider.sodium
        var keys: [String: NoteVerifierKey] = [:]
        for (label, text) in keyTexts { keys[label] = try NoteVerifierKey(parsing: text, hasher: crypto.hasher) }
        let entries = try XCTUnwrap(document["entries"] as? [[String: Any]])
        XCTAssertGreaterThanOrEqual(entries.count, 12)
        for entry in entries {
            let file = try XCTUnwrap(entry["file"] as? String)
            let bytes = Array(try Data(contentsOf: folder.appendingPathComponent(file)))
            let labels = try XCTUnwrap(entry["keys"] as? [String])
            let given = try labels.map { try XCTUnwrap(keys[$0], "\(file): unknown key \($0)") }
            var verdict = "accept"
            var verified: [[UInt8]] = []
            do {
                let note = try SignedNote.parse(bytes)
                verified = try note.verify(keys: given, verifier: crypto.verifier).map { Array($0.key.name.utf8) }
            } catch {
                verdict = "reject"
            }
            XCTAssertEqual(verdict, entry["verdict"] as? String, "\(file): \(entry["why"] ?? "")")
            if verdict == "accept" {
                let expected = try XCTUnwrap(entry["verified"] as? [String]).map { Array($0.utf8) }
                XCTAssertEqual(verified, expected, "\(file): \(entry["why"] ?? "")")
            }
        }
    }
}
