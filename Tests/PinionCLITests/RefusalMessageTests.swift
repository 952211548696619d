// Refusal messages name the cause: manifests refused for their scope, root version or keys;
// files of the wrong kind; strict DSSE members. Refusals whose whole message and exit code
// (DESIGN.md §11) are the point live in the transcripts of testdata/ instead.

import Foundation
import PinionCLI
import PinionCore
import PinionTestSupport
import Testing

@Suite struct ManifestDiagnosisTests {
    /// Root 1 (root key, pins key) and root 2 in chain/2.json, whose pins role is pins2 only.
    func rotated() throws -> Workspace {
        let w = try Workspace()
        w.standardRoot()
        w.quickKey("pins2")
        _ = try w.makeDirectory("chain")
        w.ok([
            "root", "rotate", "--previous", "@root.json", "--add-pins-key", "@pins2.pub", "--remove-pins-key",
            "@pins.pub", "-o", "@r2.json",
        ])
        w.ok(["sign", "--key", "@root.key", "@r2.json", "-o", "@chain/2.json"])
        return w
    }

    @Test func aManifestOfAnotherScopeIsRefusedForItsScope() throws {
        let w = try Workspace()
        w.standardRoot()
        w.quickKey("other")
        w.ok(["manifest", "init", "--scope", "com.other.app", "--expires-in", "30d", "-o", "@p.json"])
        w.ok(["manifest", "set-domain", "@p.json", "api.example.com", "--pin", pinA, "--pin", pinB])
        w.ok(["sign", "--key", "@other.key", "@p.json", "-o", "@m.json"])
        let refused = w.run(["verify", "--root", "@root.json", "@m.json"])
        #expect(refused.status == 1)
        #expect(refused.err.contains(#"scope is "com.other.app", the root's scope is "com.example.app""#))
        #expect(!refused.err.contains("0 valid signature"))
    }

    @Test func aManifestUnderANewerRootNamesTheMissingRoots() throws {
        let w = try rotated()
        w.ok(["manifest", "init", "--root", "@chain/2.json", "--expires-in", "30d", "-o", "@p2.json"])
        w.ok(["manifest", "set-domain", "@p2.json", "api.example.com", "--pin", pinA, "--pin", pinB])
        w.ok(["sign", "--key", "@pins2.key", "@p2.json", "-o", "@m2.json"])
        for command in [
            ["verify", "--root", "@root.json", "@m2.json"],
            ["export", "android-nsc", "--root", "@root.json", "@m2.json", "-o", "@nsc.xml"],
        ] {
            let refused = w.run(command)
            #expect(refused.status == 1, "\(command)")
            #expect(
                refused.err.contains("manifest rootVersion 2, newest trusted root is 1: publish or pass root 2 first"),
                "\(refused.err)")
        }
        #expect(!w.exists("nsc.xml"))
        // publish: the tree holds root 1 only.
        w.ok(["publish", "--repo", "@tree", "@root.json"])
        let publish = w.run(["publish", "--repo", "@tree", "@m2.json"])
        #expect(publish.status == 1)
        #expect(publish.err.contains("manifest rootVersion 2, newest trusted root is 1"))
        #expect(!w.exists("tree/v1/com.example.app/manifest.json"))
        // With the chain it verifies.
        w.ok(["verify", "--root", "@root.json", "--root-chain", "@chain", "@m2.json"])
    }

    @Test func aManifestSignedByRemovedKeysSaysReSign() throws {
        let w = try rotated()
        w.standardManifest()  // rootVersion 1, signed by the pins key root 2 removed
        let refused = w.run(["verify", "--root", "@root.json", "--root-chain", "@chain", "@manifest.json"])
        #expect(refused.status == 1)
        #expect(refused.err.contains("signed by pins keys that root 2 no longer lists"))
        #expect(refused.err.contains("re-sign under root 2"))
    }

    @Test func unknownKeyIDsAreNamedWithTheRolesKeyIDs() throws {
        let w = try Workspace()
        w.standardRoot()
        let stranger = w.quickKey("stranger")
        let pinsID = w.ok(["key", "id", "@pins.pub"]).out.trimmingCharacters(in: .whitespacesAndNewlines)
        w.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@p.json"])
        w.ok(["manifest", "set-domain", "@p.json", "api.example.com", "--pin", pinA, "--pin", pinB])
        w.ok(["sign", "--key", "@stranger.key", "@p.json", "-o", "@m.json"])
        let refused = w.run(["verify", "--root", "@root.json", "@m.json"])
        #expect(refused.status == 1)
        #expect(
            refused.err.contains(
                "no valid signature by a key of the pins role of root version 1; signatures name key ids \(stranger); the role lists \(pinsID)"
            ))
    }

    @Test func rootVersionMismatchMessages() {
        #expect(
            TrustError.rootVersionMismatch(expected: 4, found: 2).description
                == "manifest rootVersion 2, newest trusted root is 4: re-sign under root 4")
        #expect(
            TrustError.rootVersionMismatch(expected: 1, found: 3).description
                == "manifest rootVersion 3, newest trusted root is 1: publish or pass the roots up to 3 first")
    }
}

@Suite struct WrongKindOfFileTests {
    @Test func showOfAPEMFileSaysWhatWasExpected() throws {
        let w = try Workspace()
        let made = try w.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "@k.pem",
            "-out", "@cert.pem", "-days", "2", "-subj", "/CN=x",
        ])
        try #require(made.status == 0)
        let refused = w.run(["manifest", "show", "@cert.pem"])
        #expect(refused.status == 1)
        #expect(
            refused.err.contains(
                "cert.pem: not a Pinion payload or envelope (JSON) (it looks like PEM (BEGIN CERTIFICATE))"))
        let verify = w.run(["verify", "--root", "@cert.pem", "@cert.pem"])
        #expect(verify.status == 1)
        #expect(
            verify.err.contains("cert.pem: not a signed root envelope (JSON) (it looks like PEM (BEGIN CERTIFICATE))"))
        w.standardRoot()
        let target = w.run(["verify", "--root", "@root.json", "@cert.pem"])
        #expect(target.status == 1)
        #expect(target.err.contains("cert.pem: not a signed envelope (JSON) (it looks like PEM (BEGIN CERTIFICATE))"))
        let publish = w.run(["publish", "--repo", "@tree", "@cert.pem"])
        #expect(publish.status == 1)
        #expect(publish.err.contains("not a signed envelope (JSON) (it looks like PEM"))
        #expect(!w.exists("tree"))
        // Broken JSON is still reported as JSON, with the position.
        try w.write("broken.json", "{\"type\": ")
        let broken = w.run(["manifest", "show", "@broken.json"])
        #expect(broken.status == 1)
        #expect(!broken.err.contains("it looks like"))
        #expect(broken.err.contains("broken.json: "))
    }

    @Test func signWithAPublicKeyIsRefusedWithoutAPermissionsWarning() throws {
        let w = try Workspace()
        w.quickKey("k")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: w.path("k.pub"))
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "1d", "-o", "@p.json"])
        let refused = w.run(["sign", "--key", "@k.pub", "@p.json", "-o", "@out.json"])
        #expect(refused.status == 2)
        #expect(refused.err.contains("public key"))
        #expect(!refused.err.contains("warning"))
        #expect(!w.exists("out.json"))
    }
}

@Suite struct DSSEStrictnessTests {
    /// manifest.json with its first signature rewritten by `edit`.
    func edited(_ edit: (String) -> String) throws -> (Workspace, CommandResult) {
        let w = try Workspace()
        w.standardRoot()
        w.standardManifest()
        try w.write("edited.json", edit(try w.read("manifest.json")))
        return (w, w.run(["verify", "--root", "@root.json", "@edited.json"]))
    }

    @Test func aSignatureWithoutKeyIDIsRefusedNamingTheMember() throws {
        let (_, result) = try edited { text in
            text.replacingOccurrences(of: #""keyid": "[0-9a-f]{64}",\s*"#, with: "", options: .regularExpression)
        }
        #expect(result.status == 1)
        #expect(result.err.contains(#"signatures[0]: required member "keyid" is missing"#), "\(result.err)")
    }

    @Test func urlSafeOrUnpaddedBase64IsRefused() throws {
        for edit in [
            { (text: String) in text.replacingOccurrences(of: "==\"\n", with: "\"\n") },
            { (text: String) in
                // The signature in the URL-safe alphabet, as DSSE allows.
                var lines = text.components(separatedBy: "\n")
                for (index, line) in lines.enumerated() where line.contains("\"sig\"") {
                    lines[index] = line.replacingOccurrences(of: "+", with: "-").replacingOccurrences(
                        of: "/", with: "_"
                    )
                    .replacingOccurrences(of: "\"sig\": \"", with: "\"sig\": \"-_")
                }
                return lines.joined(separator: "\n")
            },
        ] {
            let (_, result) = try edited(edit)
            #expect(result.status == 1)
            #expect(result.err.contains("signatures[0].sig: not canonical padded base64"), "\(result.err)")
        }
    }
}
