// At the terminal, `pinion sign` asks each key file's passphrase in turn, naming the key,
// and a token's PIN naming the token; nothing typed is echoed.

import Foundation
import PinionTestSupport
import Testing

@Suite(.enabled(if: softHSMTestsEnabled, "softhsm2 is not installed"))
struct TerminalPromptTests {
    /// Runs `pinion ARGS` on a pseudo-terminal, answering `pairs` of (prompt, answer) in order.
    func onTerminal(_ hsm: SoftHSM, _ pairs: [(String, String)], _ arguments: [String]) throws -> CommandResult {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/terminal.py").path
        let json = try JSONSerialization.data(withJSONObject: pairs.map { [$0.0, $0.1] })
        return try hsm.tool(
            "/usr/bin/python3", [script, String(decoding: json, as: UTF8.self), pinionExecutable] + arguments)
    }

    @Test func eachKeyAsksItsOwnPassphraseThenTheTokenItsPIN() throws {
        let hsm = try SoftHSM(prefix: "hsm-terminal")
        let serial = try hsm.makeToken()
        try hsm.hardwareKey("carol-root")
        try hsm.fileKey("alice-root", passphrase: "alice's own passphrase")
        try hsm.fileKey("bob-root", passphrase: "bob has another one")
        try hsm.rootPayload(["@alice-root.pub", "@bob-root.pub", "@carol-root.pub"], threshold: 3)
        let alice = hsm.workspace.path("alice-root.key")
        let bob = hsm.workspace.path("bob-root.key")
        let result = try onTerminal(
            hsm,
            [
                ("Passphrase for \(alice): ", "alice's own passphrase"),
                ("Passphrase for \(bob): ", "bob has another one"),
                ("PIN for token \"pinion\" (serial \(serial)): ", hsm.pin),
            ],
            [
                "sign", "--key", "@alice-root.key", "--key", "@bob-root.key", "--key",
                "pkcs11:token=pinion;object=carol-root",
                "--pkcs11-module", softHSMModule, "@root-payload.json", "-o", "@root.json",
            ])
        #expect(result.status == 0, "\(result.out)")
        #expect(result.out.contains("3 signature(s)"), "\(result.out)")
        // Echo was off: no answer appears on the terminal.
        #expect(!result.out.contains("alice's own passphrase"))
        #expect(!result.out.contains("bob has another one"))
        #expect(!result.out.contains(": \(hsm.pin)"))
        #expect(try hsm.verifyRoot("root.json").status == 0)
    }

    @Test func wrongPINAtTheTerminalIsAskedOnce() throws {
        let hsm = try SoftHSM(prefix: "hsm-terminal-wrong")
        let serial = try hsm.makeToken()
        try hsm.hardwareKey("carol-root")
        try hsm.rootPayload(["@carol-root.pub"], threshold: 1)
        let result = try onTerminal(
            hsm, [("PIN for token \"pinion\" (serial \(serial)): ", "0000")],
            [
                "sign", "--key", "pkcs11:token=pinion;object=carol-root", "--pkcs11-module", softHSMModule,
                "@root-payload.json", "-o", "@root.json",
            ])
        #expect(result.status == 1)
        #expect(result.out.contains("wrong PIN for token \"pinion\""))
        #expect(result.out.components(separatedBy: "(serial \(serial)): ").count == 2, "asked once: \(result.out)")
        #expect(!hsm.workspace.exists("root.json"))
    }
}
