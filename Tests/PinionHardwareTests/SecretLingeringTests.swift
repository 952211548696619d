// The PIN and the passphrase never linger in memory after signing: PinionMemoryProbe signs
// in its own process, then scans its writable anonymous mappings for both.

import Foundation
import PinionTestSupport
import Testing

/// The probe executable, built next to `pinion`.
let memoryProbeExecutable = URL(fileURLWithPath: pinionExecutable).deletingLastPathComponent()
    .appendingPathComponent("PinionMemoryProbe").path

/// `count` random bytes from 0x21...0x7E (printable, so the PIN can be given to
/// softhsm2-util and read from a file without a newline question).
func randomPrintable(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0x21...0x7E, using: &generator) }
}

func maskedHex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0 ^ 0x5A) }.joined() }

@Suite(.enabled(if: softHSMTestsEnabled, "softhsm2 is not installed"))
struct SecretLingeringTests {
    @Test func pinAndPassphraseAreWipedAfterSigning() throws {
        let hsm = try SoftHSM(prefix: "hsm-memory")
        let pin = randomPrintable(20)
        let passphrase = randomPrintable(24)
        try hsm.makeToken(pin: String(decoding: pin, as: UTF8.self))
        try hsm.workspace.writeBytes("random.pin", pin)
        try hsm.workspace.writeBytes("alice.passphrase", passphrase)
        try hsm.ok(["keygen", "--out", "@alice", "--passphrase-file", "@alice.passphrase", "--kdf-iterations", "1000"])
        let uri = "pkcs11:token=pinion;object=hsm?pin-source=file:\(hsm.workspace.path("random.pin"))"
        try hsm.ok([
            "keygen", "--pkcs11", uri.replacingOccurrences(of: ";object=hsm", with: ""), "--label", "hsm", "--out",
            "@hsm", "--pkcs11-module", softHSMModule,
        ])
        try hsm.rootPayload(["@alice.pub", "@hsm.pub"], threshold: 2)
        try #require(
            FileManager.default.isExecutableFile(atPath: memoryProbeExecutable),
            "PinionMemoryProbe is not built at \(memoryProbeExecutable)")
        let result = try hsm.tool(
            memoryProbeExecutable,
            [
                maskedHex(pin), maskedHex(passphrase), maskedHex(randomPrintable(20)), "--", "sign", "--key",
                "@alice.key", "--passphrase-file", "@alice.passphrase", "--key", uri, "--pkcs11-module", softHSMModule,
                "@root-payload.json", "-o", "@root.json",
            ])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("sign-status 0"), "\(result.out)\(result.err)")
        // The scan works: the live canary is found.
        #expect(!result.out.contains("canary-found 0"), "\(result.out)")
        #expect(result.out.contains("pin-found 0"), "\(result.out)")
        #expect(result.out.contains("passphrase-found 0"), "\(result.out)")
        #expect(try hsm.verifyRoot("root.json").status == 0)
    }

    /// The limit of the environment source, and proof that the scan reaches the stack: a PIN
    /// given in PINION_PKCS11_PIN stays in the process's environment block (the top of
    /// [stack]), which Pinion does not own and cannot wipe; the copies Pinion makes are gone.
    @Test func pinFromTheEnvironmentIsOnlyInTheEnvironmentBlock() throws {
        let hsm = try SoftHSM(prefix: "hsm-memory-env")
        let pin = randomPrintable(20)
        try hsm.makeToken(pin: String(decoding: pin, as: UTF8.self))
        try hsm.workspace.writeBytes("random.pin", pin)
        try hsm.ok([
            "keygen", "--pkcs11", "pkcs11:token=pinion?pin-source=file:\(hsm.workspace.path("random.pin"))", "--label",
            "hsm", "--out", "@hsm", "--pkcs11-module", softHSMModule,
        ])
        try hsm.rootPayload(["@hsm.pub"], threshold: 1)
        let result = try hsm.tool(
            memoryProbeExecutable,
            [
                maskedHex(pin), maskedHex(randomPrintable(24)), maskedHex(randomPrintable(20)), "--", "sign", "--key",
                "pkcs11:token=pinion;object=hsm", "@root-payload.json", "-o", "@root.json",
            ],
            // The module from the environment too: looking it up must not copy the PIN.
            environment: [
                "PINION_PKCS11_PIN": String(decoding: pin, as: UTF8.self), "PINION_PKCS11_MODULE": softHSMModule,
            ])
        #expect(result.out.contains("sign-status 0"), "\(result.out)\(result.err)")
        #expect(result.out.contains("pin-found 1"), "\(result.out)")
    }
}
