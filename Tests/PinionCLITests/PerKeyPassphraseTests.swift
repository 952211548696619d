// With several encrypted key files, `sign` opens each with its own passphrase:
// --passphrase-file once per key file, in the order of the key files.

import Foundation
import PinionTestSupport
import Testing

@Suite struct PerKeyPassphraseTests {
    /// alice.key and bob.key with different passphrases; a 2-of-2 root payload.
    func twoKeys() throws -> Workspace {
        let w = try Workspace(
            prefix: "pinion-per-key",
            files: ["alice.passphrase": "alice's passphrase\n", "bob.passphrase": "bob's other passphrase\n"])
        for name in ["alice", "bob"] {
            w.ok([
                "keygen", "--out", "@" + name, "--passphrase-file", "@\(name).passphrase", "--kdf-iterations", "1000",
            ])
        }
        w.quickKey("pins")
        w.ok([
            "root", "init", "--scope", "com.example.app", "--root-key", "@alice.pub", "--root-key", "@bob.pub",
            "--root-threshold", "2", "--pins-key", "@pins.pub", "--pins-threshold", "1", "-o", "@root-payload.json",
        ])
        return w
    }

    @Test func eachKeyFileOpensWithItsOwnPassphraseFileInOrder() throws {
        let w = try twoKeys()
        let signed = w.ok([
            "sign", "--key", "@alice.key", "--key", "@bob.key", "--passphrase-file", "@alice.passphrase",
            "--passphrase-file", "@bob.passphrase", "@root-payload.json", "-o", "@root.json",
        ])
        #expect(signed.out.contains("2 signature(s)"))
        let verified = w.run(["verify", "--root", "@root.json", "@root.json"])
        #expect(verified.status == 0, "\(verified.err)")
    }

    @Test func passphraseFilesInTheWrongOrderAreRefusedNamingTheKey() throws {
        let w = try twoKeys()
        let result = w.run([
            "sign", "--key", "@alice.key", "--key", "@bob.key", "--passphrase-file", "@bob.passphrase",
            "--passphrase-file", "@alice.passphrase", "@root-payload.json", "-o", "@root.json",
        ])
        #expect(result.status == 1)
        #expect(result.err.contains("cannot decrypt \(w.path("alice.key")): wrong passphrase"))
        #expect(!w.exists("root.json"))
    }

    @Test(arguments: [["@alice.passphrase"], ["@alice.passphrase", "@bob.passphrase", "@bob.passphrase"]])
    func passphraseFileCountMustMatchTheKeyFiles(files: [String]) throws {
        let w = try twoKeys()
        let result = w.run(
            ["sign", "--key", "@alice.key", "--key", "@bob.key"] + files.flatMap { ["--passphrase-file", $0] }
                + ["@root-payload.json", "-o", "@root.json"])
        #expect(result.status == 2)
        #expect(result.err.contains("\(files.count) --passphrase-file for 2 key file(s): give one per key file"))
        #expect(!w.exists("root.json"))
    }
}
