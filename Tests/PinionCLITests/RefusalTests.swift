// What the signer CLI refuses: bad key files, bad flags, unsafe payloads, bad envelopes
// (docs/DESIGN.md §11 exit codes; nothing overwritten on failure).

import Foundation
import PinionCLI
import PinionCore
import PinionTestSupport
import Testing

@Suite struct KeyFileRefusalTests {
    @Test func wrongPassphraseIsRefusedAndOutputUntouched() throws {
        let w = try Workspace()
        w.ok([
            "keygen", "--out", "@signer", "--passphrase-file", "@passphrase", "--kdf-iterations", "1000",
        ])
        w.quickKey("root")
        try w.write("out.json", "precious\n")
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "1d", "-o", "@p.json"])
        let result = w.run([
            "sign", "--key", "@signer.key", "--passphrase-file", "@wrong-passphrase", "@p.json", "-o",
            "@out.json", "--force",
        ])
        #expect(result.status == 1)
        #expect(result.err.contains("wrong passphrase"))
        #expect(try w.read("out.json") == "precious\n")
        w.ok([
            "sign", "--key", "@signer.key", "--passphrase-file", "@passphrase", "@p.json", "-o",
            "@signed.json",
        ])
    }

    @Test func truncatedPEMIsRefused() throws {
        let w = try Workspace()
        w.quickKey("k")
        let text = try w.read("k.key")
        try w.write("k.key", String(text.prefix(text.count / 2)))
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "1d", "-o", "@p.json"])
        let result = w.run(["sign", "--key", "@k.key", "@p.json", "-o", "@out.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("k.key"))
        #expect(!w.exists("out.json"))
    }

    @Test func corruptPEMBodyIsRefused() throws {
        let w = try Workspace()
        w.quickKey("k")
        var lines = try w.read("k.key").split(separator: "\n", omittingEmptySubsequences: false).map(
            String.init)
        lines[1] = String(repeating: "!", count: lines[1].count)
        try w.write("k.key", lines.joined(separator: "\n"))
        let result = w.run(["key", "id", "@k.key"])
        #expect(result.status == 1)
        #expect(result.err.contains("k.key"))
    }

    @Test func publicKeyGivenWhereSecretKeyIsNeeded() throws {
        let w = try Workspace()
        w.quickKey("k")
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "1d", "-o", "@p.json"])
        let result = w.run(["sign", "--key", "@k.pub", "@p.json", "-o", "@out.json"])
        #expect(result.status == 2)
        #expect(result.err.contains("public key"))
        #expect(!w.exists("out.json"))
    }

    @Test func groupReadableSecretKeyIsWarned() throws {
        let w = try Workspace()
        w.quickKey("k")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: w.path("k.key"))
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "1d", "-o", "@p.json"])
        let result = w.ok(["sign", "--key", "@k.key", "@p.json", "-o", "@out.json"])
        #expect(result.err.contains("warning"))
        #expect(result.err.contains("k.key"))
    }

    @Test func keygenRefusesToOverwrite() throws {
        let w = try Workspace()
        w.quickKey("k")
        let before = try w.readBytes("k.key")
        let result = w.run(["keygen", "--out", "@k", "--insecure-no-passphrase"])
        #expect(result.status == 2)
        #expect(try w.readBytes("k.key") == before)
    }

    @Test func keygenWritesModeSixHundred() throws {
        let w = try Workspace()
        w.ok(["keygen", "--out", "@k", "--passphrase-file", "@passphrase", "--kdf-iterations", "1000"])
        let attributes = try FileManager.default.attributesOfItem(atPath: w.path("k.key"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try w.read("k.key").hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
    }

    @Test func missingKeyFileIsAnIOError() throws {
        let w = try Workspace()
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "1d", "-o", "@p.json"])
        #expect(w.run(["sign", "--key", "@absent.key", "@p.json", "-o", "@out.json"]).status == 3)
        #expect(w.run(["key", "id", "@absent.pub"]).status == 3)
    }

    @Test func keyIDOfPublicAndSecretFilesAgree() throws {
        let w = try Workspace()
        let id = w.quickKey("k")
        #expect(w.ok(["key", "id", "@k.pub"]).out == id + "\n")
        #expect(w.ok(["key", "id", "@k.key"]).out == id + "\n")
        #expect(id.count == 64)
    }
}

@Suite struct SignRefusalTests {
    @Test func refusesEnforcedDomainWithOnePinUnlessForced() throws {
        let w = try Workspace()
        w.standardRoot()
        w.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@p.json"])
        w.ok(["manifest", "set-domain", "@p.json", "api.example.com", "--pin", pinA])
        let refused = w.run(["sign", "--key", "@pins.key", "@p.json", "-o", "@m.json"])
        #expect(refused.status == 1)
        #expect(refused.err.contains("api.example.com"))
        #expect(!w.exists("m.json"))
        w.ok(["sign", "--key", "@pins.key", "@p.json", "-o", "@m.json", "--allow-single-pin"])
        // report-only single-pin domains are fine without the flag
        w.ok(["manifest", "set-domain", "@p.json", "api.example.com", "--pin", pinA, "--report-only"])
        w.ok(["sign", "--key", "@pins.key", "@p.json", "-o", "@m2.json"])
    }

    @Test func refusesPayloadTheStrictParserRejects() throws {
        let w = try Workspace()
        w.quickKey("k")
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "1d", "-o", "@p.json"])
        let text = try w.read("p.json").replacingOccurrences(
            of: "\"domains\": []", with: "\"domains\": [], \"extra\": 1")
        try w.write("p.json", text)
        let result = w.run(["sign", "--key", "@k.key", "@p.json", "-o", "@m.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("unknown member \"extra\""))
        #expect(!w.exists("m.json"))
    }

    @Test func refusesEnvelopeWithTamperedPayloadForCoSigning() throws {
        let w = try Workspace()
        w.standardRoot()
        w.standardManifest()
        var envelope = try Envelope.parse(try w.readBytes("manifest.json"))
        envelope.payload = Array(
            String(decoding: envelope.payload, as: UTF8.self).replacingOccurrences(
                of: "\"version\": 1", with: "\"version\": 01"
            ).utf8)
        try w.writeBytes("bad.json", envelope.serialized())
        let result = w.run(["sign", "--key", "@pins.key", "@bad.json", "-o", "@out.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("payload.version"))
    }

    @Test func rootOptionChecksLifetimeScopeAndSigningRole() throws {
        let w = try Workspace()
        w.quickKey("root")
        w.quickKey("pins")
        w.ok([
            "root", "init", "--scope", "a.b", "--root-key", "@root.pub", "--root-threshold", "1", "--pins-key",
            "@pins.pub",
            "--pins-threshold", "1", "--max-manifest-lifetime", "7d", "-o", "@rp.json",
        ])
        w.ok(["sign", "--key", "@root.key", "@rp.json", "-o", "@root.json"])
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "8d", "-o", "@long.json"])
        let long = w.run(["sign", "--key", "@pins.key", "--root", "@root.json", "@long.json", "-o", "@m.json"])
        #expect(long.status == 1)
        #expect(long.err.contains("exceeds the root's cap of 7d"))
        #expect(!w.exists("m.json"))
        w.ok(["manifest", "init", "--scope", "c.d", "--expires-in", "1d", "-o", "@other.json"])
        #expect(
            w.run(["sign", "--key", "@pins.key", "--root", "@root.json", "@other.json", "-o", "@m.json"]).status == 1)
        w.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "1d", "-o", "@p.json"])
        let wrongRole = w.run(["sign", "--key", "@root.key", "--root", "@root.json", "@p.json", "-o", "@m.json"])
        #expect(wrongRole.status == 1)
        #expect(wrongRole.err.contains("is not in the pins role of "))
        #expect(!w.exists("m.json"))
        let right = w.ok(["sign", "--key", "@pins.key", "--root", "@root.json", "@p.json", "-o", "@m2.json"])
        #expect(!right.err.contains("not in the"))
        #expect(right.err.contains("NOT encrypted"))  // quickKey makes test keys without a passphrase
        #expect(right.out.contains("manifest version 1 (rootVersion 1) of scope a.b, 0 domain(s)"))
    }

    @Test func refusesToOverwriteOutputWithoutForce() throws {
        let w = try Workspace()
        w.quickKey("k")
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "1d", "-o", "@p.json"])
        try w.write("m.json", "keep\n")
        #expect(w.run(["sign", "--key", "@k.key", "@p.json", "-o", "@m.json"]).status == 2)
        #expect(try w.read("m.json") == "keep\n")
        #expect(
            w.run(["manifest", "init", "--scope", "a.b", "--expires-in", "1d", "-o", "@m.json"]).status
                == 2)
        #expect(try w.read("m.json") == "keep\n")
    }
}

@Suite struct VerifyRefusalTests {
    @Test func tamperedPayloadFailsVerification() throws {
        let w = try Workspace()
        w.standardRoot()
        w.standardManifest()
        var envelope = try Envelope.parse(try w.readBytes("manifest.json"))
        envelope.payload = Array(
            String(decoding: envelope.payload, as: UTF8.self).replacingOccurrences(of: pinA, with: pinC)
                .utf8)
        try w.writeBytes("forged.json", envelope.serialized())
        let result = w.run(["verify", "--root", "@root.json", "@forged.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("no valid signature by a key of the pins role"))
        #expect(result.err.contains("do not verify (payload or signature changed after signing)"))
    }

    @Test func expiredManifestFailsAtLaterTime() throws {
        let w = try Workspace()
        w.standardRoot()
        w.standardManifest()
        // issued at the workspace's fixed now, 2026-11-30T09:00:00Z, for 30 days
        w.ok(["verify", "--root", "@root.json", "@manifest.json", "--at", "2026-12-30T08:59:59Z"])
        let result = w.run([
            "verify", "--root", "@root.json", "@manifest.json", "--at", "2026-12-30T09:00:00Z",
        ])
        #expect(result.status == 1)
        #expect(result.err.contains("manifest version 1 expired at 2026-12-30T09:00:00Z"))
    }

    @Test func expiredRootRefusesEverything() throws {
        let w = try Workspace()
        w.standardRoot()
        w.standardManifest()
        let result = w.run([
            "verify", "--root", "@root.json", "@root.json", "--at", "2027-12-01T09:00:00Z",
        ])
        #expect(result.status == 1)
        #expect(result.err.contains("root version 1 expired"))
    }

    @Test func manifestUnderAnotherRootFails() throws {
        let w = try Workspace()
        w.standardRoot()
        w.standardManifest()
        let other = try Workspace()
        other.standardRoot()
        try FileManager.default.copyItem(
            atPath: other.path("root.json"), toPath: w.path("other-root.json"))
        let result = w.run(["verify", "--root", "@other-root.json", "@manifest.json"])
        #expect(result.status == 1)
    }

    @Test func lifetimeOverRootCapFails() throws {
        let w = try Workspace()
        w.quickKey("root")
        w.quickKey("pins")
        w.ok([
            "root", "init", "--scope", "a.b", "--root-key", "@root.pub", "--root-threshold", "1",
            "--pins-key", "@pins.pub",
            "--pins-threshold", "1", "--max-manifest-lifetime", "7d", "-o", "@rp.json",
        ])
        w.ok(["sign", "--key", "@root.key", "@rp.json", "-o", "@root.json"])
        let early = w.run([
            "manifest", "init", "--root", "@root.json", "--expires-in", "8d", "-o", "@p.json",
        ])
        #expect(early.status == 1)
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "8d", "-o", "@p.json"])
        w.ok(["sign", "--key", "@pins.key", "@p.json", "-o", "@m.json"])
        let result = w.run(["verify", "--root", "@root.json", "@m.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("exceeds the root's cap of 7d"))
    }

    @Test func invalidExtraSignatureIsOnlyAWarning() throws {
        let w = try Workspace()
        w.quickKey("root")
        w.quickKey("pins")
        w.quickKey("pins2")
        w.ok([
            "root", "init", "--scope", "a.b", "--root-key", "@root.pub", "--root-threshold", "1",
            "--pins-key", "@pins.pub",
            "--pins-key", "@pins2.pub", "--pins-threshold", "1", "-o", "@rp.json",
        ])
        w.ok(["sign", "--key", "@root.key", "@rp.json", "-o", "@root.json"])
        w.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "8d", "-o", "@p.json"])
        w.ok(["sign", "--key", "@pins.key", "--key", "@pins2.key", "@p.json", "-o", "@m.json"])
        var envelope = try Envelope.parse(try w.readBytes("m.json"))
        envelope.signatures[1].signature[10] ^= 0x04
        try w.writeBytes("m.json", envelope.serialized())
        let result = w.ok(["verify", "--root", "@root.json", "@m.json"])
        #expect(result.err.contains("warning"))
        #expect(result.err.contains("does not verify"))
    }

    @Test func rootWithForeignRotationFileFails() throws {
        let w = try Workspace()
        w.standardRoot()
        try FileManager.default.createDirectory(
            atPath: w.path("chain"), withIntermediateDirectories: true)
        w.quickKey("evil")
        w.ok([
            "root", "rotate", "--previous", "@root.json", "--add-root-key", "@evil.pub",
            "--remove-root-key", "@root.pub",
            "-o", "@evil-payload.json",
        ])
        w.ok(["sign", "--key", "@evil.key", "@evil-payload.json", "-o", "@chain/2.json"])
        w.standardManifest()
        let result = w.run([
            "verify", "--root", "@root.json", "--root-chain", "@chain", "@manifest.json",
        ])
        #expect(result.status == 1)
        #expect(result.err.contains("2.json"))
    }

    @Test func garbageEnvelopeIsAFormatError() throws {
        let w = try Workspace()
        w.standardRoot()
        try w.write("junk.json", "{\"payloadType\": 5}")
        let result = w.run(["verify", "--root", "@root.json", "@junk.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("junk.json: payloadType: expected a string"))
    }
}

@Suite struct UsageTests {
    @Test(arguments: [
        ["sign"], ["sign", "--bogus"], ["keygen"], ["root", "init", "--scope", "a.b"],
        ["verify", "x.json"],
        ["manifest", "init", "--scope", "a.b", "-o", "x.json"],
        ["manifest", "init", "--scope", "a.b", "--expires-in", "30x", "-o", "x"],
        ["manifest", "init", "--scope", "a.b", "--expires-in", "-1d", "-o", "x"], ["manifest"],
        ["frobnicate"],
        ["manifest", "init", "--scope", "A/B", "--expires-in", "1d", "-o", "x"],
        ["manifest", "init", "--scope", "a.b", "--expires-at", "tomorrow", "-o", "x"],
        ["spki", "--format", "md5", "x"], ["spki", "--connect", "nohostport"],
        ["verify", "--at", "yesterday", "--root", "r", "x"],
    ])
    func badFlagsAreUsageErrors(_ arguments: [String]) throws {
        let w = try Workspace()
        let result = w.run(arguments)
        #expect(result.status == 2, "\(arguments): \(result.err)")
        #expect(result.err.contains("pinion: error:"))
    }

    @Test func everyCommandHasHelp() throws {
        let w = try Workspace()
        for words in [
            ["keygen"], ["key", "id"], ["spki"], ["root", "init"], ["root", "rotate"],
            ["manifest", "init"],
            ["manifest", "set-domain"], ["manifest", "remove-domain"], ["manifest", "revoke-pin"],
            ["manifest", "show"],
            ["sign"], ["verify"],
        ] {
            let result = w.run(words + ["--help"])
            #expect(result.status == 0)
            #expect(result.out.hasPrefix("usage: pinion \(words.joined(separator: " "))"), "\(words)")
        }
        #expect(w.run(["--help"]).out.contains("commands:"))
    }

    @Test func thresholdsOutsideOneToNAreRefused() throws {
        let w = try Workspace()
        w.quickKey("a")
        for threshold in ["0", "2", "-1", "x"] {
            let result = w.run([
                "root", "init", "--scope", "a.b", "--root-key", "@a.pub", "--root-threshold", threshold,
                "--pins-key", "@a.pub",
                "--pins-threshold", "1", "-o", "@r.json",
            ])
            #expect(result.status == 2, "threshold \(threshold)")
        }
        #expect(!w.exists("r.json"))
    }

    @Test func invalidPinAndHostAreRefusedWithoutEditing() throws {
        let w = try Workspace()
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "1d", "-o", "@p.json"])
        let before = try w.readBytes("p.json")
        #expect(
            w.run(["manifest", "set-domain", "@p.json", "API.example.com", "--pin", pinA]).status == 2)
        #expect(
            w.run(["manifest", "set-domain", "@p.json", "api.example.com", "--pin", "sha256/abc"]).status
                == 2)
        #expect(
            w.run([
                "manifest", "revoke-pin", "@p.json", "sha256/" + String(repeating: "A", count: 42) + "==",
            ]).status == 2)
        #expect(try w.readBytes("p.json") == before)
    }
}
