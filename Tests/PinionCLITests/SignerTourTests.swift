// The signer tour end to end: keys, root, manifest, sign, co-sign, verify.

import Foundation
import PinionCLI
import PinionCore
import PinionCrypto
import PinionTestSupport
import Testing

@Suite struct SignerTourTests {
    @Test func tourFromKeysToVerifiedManifest() throws {
        let w = try Workspace()
        w.standardRoot()
        w.standardManifest()
        let result = w.ok(["verify", "--root", "@root.json", "@manifest.json"])
        #expect(
            result.out.contains(
                "OK: manifest version 1 (rootVersion 1) of scope com.example.app, 1 domain(s)"))
        #expect(result.err.isEmpty)
    }

    @Test func nextVersionChainsToPrevious() throws {
        let w = try Workspace()
        w.standardRoot()
        w.standardManifest()
        w.ok([
            "manifest", "init", "--previous", "@manifest.json", "--expires-in", "30d", "-o", "@next.json",
        ])
        let previous = try Envelope.parse(try w.readBytes("manifest.json"))
        let next = try ManifestPayload.parse(try w.readBytes("next.json"))
        #expect(next.version == 2)
        #expect(next.rootVersion == 1)
        #expect(next.previous == CryptoProvider.sodium.hasher.sha256(previous.payload))
        #expect(next.domains == (try ManifestPayload.parse(previous.payload)).domains)
    }

    @Test func revocationsCarryForward() throws {
        let w = try Workspace()
        w.standardRoot()
        w.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@payload.json"])
        w.ok([
            "manifest", "set-domain", "@payload.json", "api.example.com", "--pin", pinA, "--pin", pinB,
        ])
        w.ok(["manifest", "revoke-pin", "@payload.json", pinC])
        w.ok(["sign", "--key", "@pins.key", "@payload.json", "-o", "@m1.json"])
        w.ok(["manifest", "init", "--previous", "@m1.json", "--expires-in", "30d", "-o", "@p2.json"])
        let next = try ManifestPayload.parse(try w.readBytes("p2.json"))
        #expect(next.revokedPins.map(\.description) == [pinC])
    }

    @Test func coSigningInTurnKeepsPayloadAndMeetsThreshold() throws {
        let w = try Workspace()
        w.quickKey("alice")
        w.quickKey("bob")
        w.quickKey("pins")
        w.ok([
            "root", "init", "--scope", "com.example.app", "--root-key", "@alice.pub", "--root-key",
            "@bob.pub",
            "--root-threshold", "2", "--pins-key", "@pins.pub", "--pins-threshold", "1", "-o",
            "@root-payload.json",
        ])
        w.ok(["sign", "--key", "@alice.key", "@root-payload.json", "-o", "@root-a.json"])
        let refused = w.run(["verify", "--root", "@root-a.json", "@root-a.json"])
        #expect(refused.status == 1)
        #expect(
            refused.err.contains(
                "1 valid signature(s) from the root role of root version 1; threshold is 2"))

        w.ok(["sign", "--key", "@bob.key", "@root-a.json", "-o", "@root.json"])
        let first = try Envelope.parse(try w.readBytes("root-a.json"))
        let both = try Envelope.parse(try w.readBytes("root.json"))
        #expect(both.payload == first.payload)
        #expect(both.payload == (try w.readBytes("root-payload.json")))
        #expect(both.signatures.count == 2)
        w.ok(["verify", "--root", "@root.json", "@root.json"])

        let again = w.ok(["sign", "--key", "@alice.key", "@root.json", "-o", "@root-again.json"])
        #expect(again.err.contains("has already signed"))
        #expect(try Envelope.parse(try w.readBytes("root-again.json")).signatures.count == 2)
    }

    @Test func rotationWalkThroughRootChainDirectory() throws {
        let w = try Workspace()
        w.standardRoot()
        w.quickKey("root2")
        w.quickKey("pins2")
        try FileManager.default.createDirectory(
            atPath: w.path("chain"), withIntermediateDirectories: true)
        w.ok([
            "root", "rotate", "--previous", "@root.json", "--add-root-key", "@root2.pub",
            "--remove-root-key", "@root.pub",
            "--add-pins-key", "@pins2.pub", "--remove-pins-key", "@pins.pub", "-o", "@root2-payload.json",
        ])
        // The new root role alone is not enough: the old root role must sign too.
        w.ok(["sign", "--key", "@root2.key", "@root2-payload.json", "-o", "@chain/2.json"])
        let half = w.run(["verify", "--root", "@root.json", "--root-chain", "@chain", "@chain/2.json"])
        #expect(half.status == 1)
        #expect(half.err.contains("root version 1"))
        w.ok(["sign", "--key", "@root.key", "@chain/2.json", "-o", "@chain/2.json"])
        w.ok(["verify", "--root", "@root.json", "--root-chain", "@chain", "@chain/2.json"])

        // A manifest signed by the old pins key is refused under root 2, naming the cause:
        // root 2 no longer lists its key.
        w.standardManifest()
        let old = w.run(["verify", "--root", "@root.json", "--root-chain", "@chain", "@manifest.json"])
        #expect(old.status == 1)
        #expect(old.err.contains("signed by pins keys that root 2 no longer lists"))
        #expect(old.err.contains("re-sign under root 2"))

        w.ok(["manifest", "init", "--root", "@chain/2.json", "--expires-in", "30d", "-o", "@p2.json"])
        w.ok(["manifest", "set-domain", "@p2.json", "api.example.com", "--pin", pinA, "--pin", pinB])
        let wrongKey = w.ok(["sign", "--key", "@pins.key", "@p2.json", "-o", "@m2-old.json"])
        #expect(wrongKey.status == 0)
        let refused = w.run([
            "verify", "--root", "@root.json", "--root-chain", "@chain", "@m2-old.json",
        ])
        #expect(refused.status == 1)
        #expect(refused.err.contains("no valid signature by a key of the pins role of root version 2"))
        #expect(refused.err.contains("signatures name key ids"))
        #expect(refused.err.contains("the role lists"))
        w.ok(["sign", "--key", "@pins2.key", "@p2.json", "-o", "@m2.json"])
        let verified = w.ok(["verify", "--root", "@root.json", "--root-chain", "@chain", "@m2.json"])
        #expect(verified.out.contains("root chain  1 -> 2"))
    }

    @Test func showPrintsTableAndJSON() throws {
        let w = try Workspace()
        w.standardRoot()
        w.standardManifest()
        let table = w.ok(["manifest", "show", "@manifest.json"])
        #expect(table.out.contains("api.example.com"))
        #expect(table.out.contains(pinA))
        #expect(table.out.contains("not verified here"))
        let json = w.ok(["manifest", "show", "@manifest.json", "--json"])
        guard
            case .object(let object) = try StrictJSONParser.parse(
                Array(json.out.utf8), limits: Limits.standard.json)
        else {
            Issue.record("not a JSON object")
            return
        }
        #expect(object["version"] == .number("1"))
        #expect(object["kind"] == .string("pins"))
        let root = w.ok(["manifest", "show", "@root.json"])
        #expect(root.out.contains("role pins   threshold 1 of 1"))
    }

    @Test func editingCommandsKeepThePayloadStrict() throws {
        let w = try Workspace()
        w.ok(["manifest", "init", "--scope", "com.example.app", "--expires-in", "7d", "-o", "@p.json"])
        w.ok([
            "manifest", "set-domain", "@p.json", "api.example.com", "--pin", pinA, "--pin", pinB,
            "--include-subdomains",
        ])
        w.ok(["manifest", "set-domain", "@p.json", "cdn.example.com", "--pin", pinC, "--report-only"])
        w.ok(["manifest", "set-domain", "@p.json", "api.example.com", "--pin", pinB, "--pin", pinC])
        var payload = try ManifestPayload.parse(try w.readBytes("p.json"))
        #expect(payload.domains.map(\.name) == ["api.example.com", "cdn.example.com"])
        #expect(payload.domains[0].pins.map(\.description) == [pinB, pinC])
        #expect(payload.domains[0].includeSubdomains == false)
        #expect(payload.domains[1].enforce == false)
        w.ok(["manifest", "remove-domain", "@p.json", "cdn.example.com"])
        payload = try ManifestPayload.parse(try w.readBytes("p.json"))
        #expect(payload.domains.map(\.name) == ["api.example.com"])
        #expect(payload.issuedAt == w.now)
        #expect(payload.expiresAt == w.now.adding(seconds: 7 * 86_400))
    }
}
