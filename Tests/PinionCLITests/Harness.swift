// The CLI tests' workspace (PinionTestSupport's, with passphrase files), a standard
// manifest and pins.

import Foundation
import PinionCLI
import PinionCore
import PinionTestSupport
import Testing

extension Workspace {
    /// A CLI test workspace (`pinion-cli-…`) holding the files `passphrase` (the right
    /// passphrase) and `wrong-passphrase`.
    convenience init() throws {
        try self.init(
            prefix: "pinion-cli",
            files: ["passphrase": "correct horse battery staple\n", "wrong-passphrase": "not the passphrase\n"])
    }

    /// A signed manifest manifest.json with one enforced domain and two pins.
    func standardManifest(pins: [String] = [pinA, pinB], name: String = "manifest.json") {
        ok([
            "manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@payload.json",
            "--force",
        ])
        ok(
            ["manifest", "set-domain", "@payload.json", "api.example.com"]
                + pins.flatMap { ["--pin", $0] })
        ok(["sign", "--key", "@pins.key", "@payload.json", "-o", "@" + name])
    }
}

let pinA = "sha256/" + Data(repeating: 0xA1, count: 32).base64EncodedString()
let pinB = "sha256/" + Data(repeating: 0xB2, count: 32).base64EncodedString()
let pinC = "sha256/" + Data(repeating: 0xC3, count: 32).base64EncodedString()
