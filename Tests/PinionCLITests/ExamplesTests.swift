// The committed public examples (keys/, manifests/) verify at a time inside their
// window, fail after it, and are the ones docs/FORMATS.md quotes.

import Foundation
import PinionCore
import PinionTestSupport
import Testing

let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

@Suite struct ExamplesTests {
    func file(_ path: String) -> String { repositoryRoot.appendingPathComponent(path).path }

    @Test func committedManifestVerifiesInsideItsWindow() throws {
        let w = try Workspace()
        let root = file("manifests/root-1.json")
        let manifest = file("manifests/manifest-1.json")
        w.ok(["verify", "--root", root, manifest, "--at", "2026-12-01T00:00:00Z"])
        let late = w.run(["verify", "--root", root, manifest, "--at", "2027-01-01T00:00:00Z"])
        #expect(late.status == 1)
        #expect(late.err.contains("expired"))
    }

    @Test func committedRootIsSignedByBothDemoRootKeys() throws {
        let w = try Workspace()
        let result = w.ok([
            "verify", "--root", file("manifests/root-1.json"), file("manifests/root-1.json"), "--at",
            "2026-12-01T00:00:00Z",
        ])
        #expect(result.out.contains("root role: 2 valid signatures, 2 needed, from 2 keys"))
        let id1 = w.ok(["key", "id", file("keys/demo-root-1.pub")]).out.trimmingCharacters(in: .whitespacesAndNewlines)
        let envelope = try Envelope.parse(
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: file("manifests/root-1.json")))))
        #expect(envelope.signatures.contains(where: { $0.keyID == id1 }))
    }

    @Test func formatsDocQuotesTheCommittedFiles() throws {
        let doc = try String(contentsOfFile: file("docs/FORMATS.md"), encoding: .utf8)
        let envelope = try Envelope.parse(
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: file("manifests/manifest-1.json")))))
        #expect(doc.contains(Base64.encode(envelope.payload)))
        let pub = try String(contentsOfFile: file("keys/demo-pins.pub"), encoding: .utf8)
        #expect(doc.contains(pub.split(separator: "\n")[1]))
    }
}
