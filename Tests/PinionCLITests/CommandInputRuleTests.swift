// Input rules of the commands, as transcripts (scopes, weak
// passphrases, refused publishes, spki origins, durations and counts written for people).

import Foundation
import PinionCLI
import PinionCore
import PinionTestSupport
import Testing

@Suite struct CommandInputRuleTests {
    @Test(arguments: [".app", "...", ".hidden.example"])
    func scopeStartingWithADotIsRefusedBySignerAndFormat(scope: String) throws {
        let w = try Workspace()
        w.quickKey("root")
        let refused = w.run([
            "root", "init", "--scope", scope, "--root-key", "@root.pub", "--root-threshold", "1", "--pins-key",
            "@root.pub", "--pins-threshold", "1", "-o", "@root-payload.json",
        ])
        #expect(refused.status == 2)
        #expect(refused.err.contains("must not start with a dot"))
        #expect(!w.exists("root-payload.json"))
        // The format itself refuses it, so publisher, client and auditor agree.
        let text =
            #"{"type":"pinion.pins","specVersion":1,"scope":"\#(scope)","rootVersion":1,"version":1,"#
            + #""issuedAt":"2026-12-01T09:00:00Z","expiresAt":"2026-12-02T09:00:00Z","domains":[],"revokedPins":[]}"#
        #expect(throws: FormatError.self) { try ManifestPayload.parse(Array(text.utf8)) }
        do {
            _ = try ManifestPayload.parse(Array(text.utf8))
        } catch {
            #expect(error.path == "scope")
        }
        #expect(throws: FormatRule.self) { try Scope.validate(scope) }
    }

    @Test func scopesWithInnerDotsStayValid() throws {
        #expect(throws: Never.self) { try Scope.validate("com.example.app") }
        #expect(throws: Never.self) { try Scope.validate("a.b") }
    }

    @Test func keygenRefusesAShortPassphraseUnlessAllowed() throws {
        let w = try Workspace()
        try w.write("short", "x\n")
        try w.write("eleven", "elevenchars\n")
        try w.write("twelve", "twelve-chars\n")
        let refused = w.run(["keygen", "--out", "@k", "--passphrase-file", "@short", "--kdf-iterations", "1000"])
        #expect(refused.status == 2)
        #expect(refused.err.contains("1 character(s); at least 12"))
        #expect(refused.err.contains("offline"))
        #expect(!w.exists("k.key") && !w.exists("k.pub"))
        let eleven = w.run(["keygen", "--out", "@k", "--passphrase-file", "@eleven", "--kdf-iterations", "1000"])
        #expect(eleven.status == 2)
        #expect(!w.exists("k.key"))
        w.ok(["keygen", "--out", "@k12", "--passphrase-file", "@twelve", "--kdf-iterations", "1000"])
        #expect(w.exists("k12.key"))
        let weak = w.ok([
            "keygen", "--out", "@weak", "--passphrase-file", "@short", "--kdf-iterations", "1000",
            "--allow-weak-passphrase",
        ])
        #expect(weak.out.count == 65)
        // The key opens with that passphrase.
        w.ok(["key", "id", "@weak.key", "--passphrase-file", "@short"])
    }

    @Test func multiByteCharactersCountAsCharacters() throws {
        let w = try Workspace()
        // Eleven characters, 22 bytes of UTF-8: still too short.
        try w.write("accents", String(repeating: "é", count: 11) + "\n")
        let refused = w.run(["keygen", "--out", "@k", "--passphrase-file", "@accents", "--kdf-iterations", "1000"])
        #expect(refused.status == 2)
        #expect(refused.err.contains("11 character(s)"))
    }

    @Test func refusedPublishCreatesNoRepository() throws {
        let w = try Workspace()
        w.standardRoot()
        w.standardManifest()
        // A manifest before any root: refused, and the tree directory never appears.
        let refused = w.run(["publish", "--repo", "@new/tree", "@manifest.json"])
        #expect(refused.status == 1)
        #expect(refused.err.contains("publish root version 1 first"))
        #expect(!w.exists("new"))
        // An expired root: refused the same way.
        let late = w.run(["publish", "--repo", "@tree", "@root.json"], at: t0.adding(seconds: 400 * day))
        #expect(late.status == 1)
        #expect(!w.exists("tree"))
        // An existing directory is kept, with nothing added.
        _ = try w.makeDirectory("kept")
        #expect(w.run(["publish", "--repo", "@kept", "@manifest.json"]).status == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: w.path("kept")).isEmpty)
        // An accepted publish still creates the tree.
        w.ok(["publish", "--repo", "@new/tree", "@root.json"])
        #expect(w.exists("new/tree/v1/com.example.app/root/1.json"))
    }

    @Test func spkiOfSeveralFilesNamesEachLinesFile() throws {
        let w = try Workspace()
        for name in ["one", "two"] {
            let made = try w.openssl([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                "@\(name).key", "-out", "@\(name).pem", "-days", "2", "-subj", "/CN=\(name).example.com",
            ])
            try #require(made.status == 0, "\(made.err)")
        }
        let single = w.ok(["spki", "@one.pem"]).out
        #expect(single.hasSuffix("  CN=one.example.com\n"))
        #expect(!single.contains(w.path("one.pem")))
        let lines = w.ok(["spki", "@one.pem", "@two.pem"]).out.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0].hasSuffix("  \(w.path("one.pem")): CN=one.example.com"))
        #expect(lines[1].hasSuffix("  \(w.path("two.pem")): CN=two.example.com"))
        #expect(lines[0].hasPrefix(single.split(separator: " ")[0] + "  "))
    }

    @Test func lifetimeOverTheCapIsWrittenInDays() throws {
        let w = try Workspace()
        w.quickKey("root")
        w.quickKey("pins")
        w.ok([
            "root", "init", "--scope", "com.example.app", "--root-key", "@root.pub", "--root-threshold", "1",
            "--pins-key", "@pins.pub", "--pins-threshold", "1", "--max-manifest-lifetime", "90d", "-o",
            "@root-payload.json",
        ])
        w.ok(["sign", "--key", "@root.key", "@root-payload.json", "-o", "@root.json"])
        let refused = w.run(["manifest", "init", "--root", "@root.json", "--expires-in", "200d", "-o", "@p.json"])
        #expect(refused.status == 1)
        #expect(refused.err.contains("lifetime 200d exceeds the root's cap of 90d"))
        #expect(!refused.err.contains("17280000"))
    }

    @Test(arguments: [("3600", Int64(3600)), ("1h", 3600), ("1d12h", 129_600), ("90", 90)])
    func durationsAcceptUnitsAndPlainSeconds(text: String, seconds: Int64) throws {
        let w = try Workspace()
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", text, "-o", "@p.json"])
        let payload = try ManifestPayload.parse(try w.readBytes("p.json"))
        #expect(payload.lifetime == seconds)
    }

    @Test(arguments: ["0", "-5", "1x", "", "h", "1.5h"])
    func badDurationsAreUsageErrors(text: String) throws {
        let w = try Workspace()
        let refused = w.run(["manifest", "init", "--scope", "a.b", "--expires-in", text, "-o", "@p.json"])
        #expect(refused.status == 2)
        #expect(!w.exists("p.json"))
    }

    @Test func humanDurations() {
        #expect(HumanDuration.text(17_280_000) == "200d")
        #expect(HumanDuration.text(129_600) == "1d12h")
        #expect(HumanDuration.text(90) == "1m30s")
        #expect(HumanDuration.text(0) == "0s")
        #expect(HumanDuration.text(-3600) == "-1h")
    }

    @Test func verifyOfARotationCountsEachRoleAgainstItsOwnThreshold() throws {
        let w = try Workspace()
        for name in ["alice", "bob", "carol", "frank", "pins"] { w.quickKey(name) }
        w.ok([
            "root", "init", "--scope", "com.example.app", "--root-key", "@alice.pub", "--root-key", "@bob.pub",
            "--root-key", "@carol.pub", "--root-threshold", "2", "--pins-key", "@pins.pub", "--pins-threshold",
            "1", "-o", "@r1.json",
        ])
        w.ok([
            "sign", "--key", "@alice.key", "--key", "@bob.key", "--key", "@carol.key", "@r1.json", "-o", "@root.json",
        ])
        let anchor = w.ok(["verify", "--root", "@root.json", "@root.json"]).out
        #expect(anchor.contains("root role: 3 valid signatures, 2 needed, from 3 keys"))
        _ = try w.makeDirectory("chain")
        w.ok([
            "root", "rotate", "--previous", "@root.json", "--add-root-key", "@frank.pub", "--remove-root-key",
            "@carol.pub", "-o", "@r2.json",
        ])
        w.ok([
            "sign", "--key", "@alice.key", "--key", "@bob.key", "--key", "@frank.key", "@r2.json", "-o",
            "@chain/2.json",
        ])
        let rotated = w.ok(["verify", "--root", "@root.json", "@chain/2.json"]).out
        #expect(
            rotated.contains(
                "old root role (version 1): 2 valid signatures, 2 needed, from 3 keys; new root role: 3 valid signatures, 2 needed, from 3 keys"
            ))
    }
}
