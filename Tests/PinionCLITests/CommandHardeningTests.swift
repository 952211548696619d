// What the commands refuse or guard against: planted signatures, output write failures, terminal escapes,
// secret-key files read only into guarded memory, messages that name the file.

import Foundation
import PinionCLI
import PinionCore
import PinionTestSupport
import Testing

@Suite struct CommandHardeningTests {
    @Test func coSigningReplacesAPlantedInvalidSignature() throws {
        let w = try Workspace()
        w.quickKey("alice")
        let bobID = w.quickKey("bob")
        w.quickKey("pins")
        w.ok([
            "root", "init", "--scope", "a.b", "--root-key", "@alice.pub", "--root-key", "@bob.pub", "--root-threshold",
            "2",
            "--pins-key", "@pins.pub", "--pins-threshold", "1", "-o", "@rp.json",
        ])
        w.ok(["sign", "--key", "@alice.key", "@rp.json", "-o", "@root.json"])
        // Someone between ceremony steps plants a bogus signature under bob's key id.
        var envelope = try Envelope.parse(try w.readBytes("root.json"))
        envelope.signatures.append(.init(keyID: bobID, signature: [UInt8](repeating: 0, count: 64)))
        try w.writeBytes("root.json", envelope.serialized())
        let signed = w.ok(["sign", "--key", "@bob.key", "@root.json", "-o", "@root.json"])
        #expect(signed.err.contains("replacing an invalid signature"))
        w.ok(["verify", "--root", "@root.json", "@root.json"])
        #expect(try Envelope.parse(try w.readBytes("root.json")).signatures.count == 2)
    }

    @Test func aFIFOAsThePassphraseFileIsRefusedWithoutHanging() throws {
        // A FIFO with no writer must not block the command (the same for a PKCS#11
        // pin-source file, which is read the same way).
        let w = try Workspace()
        try w.write("pass.txt", "a passphrase of enough length\n")
        w.ok(["keygen", "--out", "@enc", "--passphrase-file", "@pass.txt"])
        w.ok(["manifest", "init", "--scope", "a.b", "--expires-in", "30d", "-o", "@p.json"])
        #expect(mkfifo(w.path("fifo"), 0o600) == 0)
        let result = w.run(["sign", "--key", "@enc.key", "--passphrase-file", "@fifo", "@p.json", "-o", "@s.json"])
        #expect(result.status != 0)
        #expect(result.err.contains("empty"), "\(result.err)")
        #expect(!w.exists("s.json"))
    }

    @Test func keyIDOfDERSecretKey() throws {
        let w = try Workspace()
        let made = try w.openssl(["genpkey", "-algorithm", "ed25519", "-outform", "DER", "-out", "@k.der"])
        #expect(made.status == 0)
        let pub = try w.openssl(["pkey", "-inform", "DER", "-in", "@k.der", "-pubout", "-out", "@k.pub"])
        #expect(pub.status == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: w.path("k.der"))
        let fromSecret = w.ok(["key", "id", "@k.der"]).out
        #expect(fromSecret == w.ok(["key", "id", "@k.pub"]).out)
        #expect(fromSecret.count == 65)
    }

    @Test func failedWriteToStandardOutputExitsThree() throws {
        let w = try Workspace()
        w.quickKey("k")
        // /dev/full: every write fails with ENOSPC; the command must not crash or claim success.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: pinionExecutable)
        process.arguments = ["key", "id", w.path("k.pub")]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/full")
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 3)
    }

    @Test func escapeSequencesFromDocumentsAreNotPrinted() throws {
        let w = try Workspace()
        w.standardRoot()
        try w.write(
            "evil.json",
            #"{"payloadType":"application/vnd.pinion.pins+json","payload":"","signatures":[],"\u001b[2KOK: verified":1}"#
        )
        let result = w.run(["verify", "--root", "@root.json", "@evil.json"])
        #expect(result.status == 1)
        #expect(!result.err.unicodeScalars.contains { $0.value == 0x1B })
        #expect(result.err.contains("\\u{1B}[2KOK: verified"))
    }

    @Test func rootTargetWithBadPayloadNamesTheFile() throws {
        let w = try Workspace()
        w.standardRoot()
        var envelope = try Envelope.parse(try w.readBytes("root.json"))
        envelope.payload = Array(
            String(decoding: envelope.payload, as: UTF8.self).replacingOccurrences(
                of: "\"version\": 1,", with: "\"version\": 1, \"bogus\": 1,"
            ).utf8)
        try w.writeBytes("bad-root.json", envelope.serialized())
        let result = w.run(["verify", "--root", "@root.json", "@bad-root.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("bad-root.json: payload: unknown member \"bogus\""))
    }

    @Test func invalidAnchorSignatureIsWarnedEvenWhenThresholdFails() throws {
        let w = try Workspace()
        w.standardRoot()
        var envelope = try Envelope.parse(try w.readBytes("root.json"))
        envelope.signatures[0].signature[3] ^= 0x10
        try w.writeBytes("root.json", envelope.serialized())
        let result = w.run(["verify", "--root", "@root.json", "@root.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("does not verify"))
        #expect(result.err.contains("threshold is 1"))
    }

    @Test func passphraseInputErrorsAreUsageErrors() throws {
        let w = try Workspace()
        try w.write("empty-pass", "\n")
        let result = w.run(["keygen", "--out", "@k", "--passphrase-file", "@empty-pass"])
        #expect(result.status == 2)
        #expect(!w.exists("k.key"))
    }

    @Test func manifestGivenAsTrustedRootIsAUsageError() throws {
        let w = try Workspace()
        w.standardRoot()
        w.standardManifest()
        #expect(w.run(["verify", "--root", "@manifest.json", "@manifest.json"]).status == 2)
    }
}
