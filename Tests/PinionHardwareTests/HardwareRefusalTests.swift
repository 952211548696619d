// What PKCS#11 signing refuses: wrong PINs and the token's retry flags, a token that
// vanishes or lies, ambiguous or wrong keys, oversized messages. Each case checks the exit
// code, the message, and that nothing was written or overwritten.

import Foundation
import PinionCore
import PinionTestSupport
import Testing

/// A token with an HSM root key and a file root key (2-of-2 root), a root payload, the
/// fault module, and an existing output file that a refused `sign --force` must leave as it was.
struct FaultCeremony {
    let hsm: SoftHSM
    let faults: FaultModule
    static let previousOutput = "an earlier envelope that must survive\n"

    init(_ prefix: String) throws {
        hsm = try SoftHSM(prefix: prefix)
        try hsm.makeToken()
        try hsm.hardwareKey("carol-root")
        try hsm.fileKey("alice-root", passphrase: "alice's own passphrase")
        try hsm.rootPayload(["@alice-root.pub", "@carol-root.pub"], threshold: 2)
        faults = try FaultModule(in: hsm.workspace)
        try hsm.workspace.write("out.json", Self.previousOutput)
    }

    /// `sign --force` with the file key first and the HSM key second (a ceremony that fails
    /// after one signature is made), through the fault module.
    func sign(_ faultLines: [String], uri: String? = nil, extra: [String] = []) throws -> CommandResult {
        try faults.inject(faultLines)
        return try hsm.pinion(
            [
                "sign", "--key", "@alice-root.key", "--passphrase-file", "@alice-root.passphrase", "--key",
                uri ?? hsm.uri("carol-root"), "--pkcs11-module", faults.path, "--force", "@root-payload.json", "-o",
                "@out.json",
            ] + extra)
    }

    /// The output file is still the earlier one.
    func outputUntouched(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect((try? hsm.workspace.read("out.json")) == Self.previousOutput, sourceLocation: sourceLocation)
    }
}

@Suite(.enabled(if: softHSMTestsEnabled, "softhsm2 is not installed"))
struct HardwareRefusalTests {
    @Test func theFaultModuleForwardsFaithfullyWhenNoFaultIsSet() throws {
        let ceremony = try FaultCeremony("hsm-fault-none")
        let result = try ceremony.sign([])
        #expect(result.status == 0, "\(result.err)")
        #expect(ceremony.faults.calls("C_Login") == 1)
        #expect(try ceremony.hsm.verifyRoot("out.json").status == 0)
    }

    @Test func wrongPINIsReportedOnceAndNeverRetried() throws {
        let ceremony = try FaultCeremony("hsm-pin-wrong")
        let result = try ceremony.sign(["pin-incorrect"])
        #expect(result.status == 1)
        #expect(result.err.contains("wrong PIN for token \"pinion\""))
        #expect(result.err.contains("not trying again"))
        #expect(ceremony.faults.calls("C_Login") == 1)
        ceremony.outputUntouched()
    }

    @Test(arguments: [
        (PINFlag.countLow, "CKF_USER_PIN_COUNT_LOW"),
        (PINFlag.finalTry, "the next wrong PIN LOCKS the token (CKF_USER_PIN_FINAL_TRY)"),
        (PINFlag.locked, "LOCKED (CKF_USER_PIN_LOCKED)"),
    ])
    func wrongPINNamesTheRetryFlagTheTokenRaises(flag: Int, message: String) throws {
        let ceremony = try FaultCeremony("hsm-pin-flags")
        let result = try ceremony.sign(["pin-incorrect", "flags-after-login=\(flag)"])
        #expect(result.status == 1)
        #expect(result.err.contains(message), "\(result.err)")
        #expect(ceremony.faults.calls("C_Login") == 1)
        ceremony.outputUntouched()
    }

    @Test func lockedTokenIsNotEvenTried() throws {
        let ceremony = try FaultCeremony("hsm-pin-locked")
        let result = try ceremony.sign(["flags=\(PINFlag.locked)"])
        #expect(result.status == 1)
        #expect(result.err.contains("is LOCKED (CKF_USER_PIN_LOCKED)"))
        #expect(ceremony.faults.calls("C_Login") == 0)
        ceremony.outputUntouched()
    }

    @Test func tokenRemovedMidCeremonyWritesNothing() throws {
        let ceremony = try FaultCeremony("hsm-removed")
        let result = try ceremony.sign(["sign-removed"])
        #expect(result.status == 3)
        #expect(
            result.err.contains("the token went away during C_Sign (CKR_DEVICE_REMOVED (0x32)); nothing was written"))
        #expect(ceremony.faults.calls("C_Sign") == 1)
        ceremony.outputUntouched()
    }

    @Test func tokenRefusingTheMessageSizeSaysWhatToDo() throws {
        let ceremony = try FaultCeremony("hsm-size-token")
        let result = try ceremony.sign(["max-message=256"])
        #expect(result.status == 1)
        #expect(result.err.contains("refused a"))
        #expect(result.err.contains("(CKR_DATA_LEN_RANGE): lower --pkcs11-max-message"))
        #expect(result.err.contains("or a file key for this role"))
        ceremony.outputUntouched()
    }

    @Test(arguments: ["sign-flip", "sign-length=63"])
    func wrongSignatureFromTheTokenIsCaughtBeforeWriting(fault: String) throws {
        let ceremony = try FaultCeremony("hsm-bad-signature")
        let result = try ceremony.sign([fault])
        #expect(result.status == 1)
        let expected =
            fault == "sign-flip"
            ? "returned a signature that does not verify under its public key; nothing was written"
            : "returned a 63-byte signature (Ed25519 signatures are 64 bytes)"
        #expect(result.err.contains(expected), "\(result.err)")
        ceremony.outputUntouched()
    }

    @Test(arguments: [
        (
            "ec-point=short", 1,
            "CKA_EC_POINT of 31 bytes is neither a DER OCTET STRING of 32 bytes nor a raw 32-byte point"
        ),
        ("ec-point=garbage-der", 1, "CKA_EC_POINT of 34 bytes is neither"),
        ("ec-point=bad-point", 1, "not a valid Ed25519 public key"),
        ("ec-point-length=1099511627776", 3, "C_GetAttributeValue returned an impossible length"),
    ])
    func malformedPublicKeysAndGarbageLengthsAreRefused(fault: String, status: Int32, message: String) throws {
        let ceremony = try FaultCeremony("hsm-ec-point")
        let result = try ceremony.sign([fault])
        #expect(result.status == status)
        #expect(result.err.contains(message), "\(result.err)")
        ceremony.outputUntouched()
    }

    @Test func rawECPointIsAcceptedAsTheSameKey() throws {
        let ceremony = try FaultCeremony("hsm-ec-point-raw")
        let result = try ceremony.sign(["ec-point=raw"])
        #expect(result.status == 0, "\(result.err)")
        #expect(try ceremony.hsm.verifyRoot("out.json").status == 0)
    }

    @Test func twoMatchingTokensAreRefused() throws {
        let ceremony = try FaultCeremony("hsm-two-tokens")
        try ceremony.hsm.makeToken("pinion")
        let result = try ceremony.sign([])
        #expect(result.status == 2)
        #expect(result.err.contains("2 tokens match"))
        #expect(result.err.contains("add serial= to the URI"))
        ceremony.outputUntouched()
    }

    @Test func missingKeyIsRefused() throws {
        let ceremony = try FaultCeremony("hsm-missing-key")
        let result = try ceremony.sign([], uri: ceremony.hsm.uri("nobody"))
        #expect(result.status == 2)
        #expect(result.err.contains("no private key matching pkcs11:token=pinion;object=nobody"))
        ceremony.outputUntouched()
    }

    @Test func nonEd25519KeyInTheTokenIsRefused() throws {
        let ceremony = try FaultCeremony("hsm-p256")
        let made = try ceremony.hsm.pkcs11Tool(["--keypairgen", "--key-type", "EC:prime256v1", "--label", "ecdsa"])
        try #require(made.status == 0, "\(made.err)")
        let result = try ceremony.sign([], uri: ceremony.hsm.uri("ecdsa"))
        #expect(result.status == 2)
        #expect(result.err.contains("is an ECDSA key (CKK_EC), not an Ed25519 key"))
        ceremony.outputUntouched()
        let id = try ceremony.hsm.pinion([
            "key", "id", "pkcs11:token=pinion;object=ecdsa", "--pkcs11-module", softHSMModule,
        ])
        #expect(id.status == 2)
        #expect(id.err.contains("not an Ed25519 key"))
    }

    @Test func oversizedMessageIsRefusedBeforeTheTokenIsTouched() throws {
        let ceremony = try FaultCeremony("hsm-oversized")
        let hsm = ceremony.hsm
        try hsm.ok([
            "manifest", "init", "--scope", "com.example.app", "--issued-at", issuedAt, "--expires-in", "30d", "-o",
            "@manifest.json",
        ])
        for index in 0..<40 {
            try hsm.ok([
                "manifest", "set-domain", "@manifest.json", "api\(index).example.com", "--pin", pinA, "--pin", pinB,
            ])
        }
        let size = try Envelope(kind: .pins, payload: hsm.workspace.readBytes("manifest.json")).signingInput.count
        #expect(size > 2000)
        try ceremony.faults.inject([])
        let result = try hsm.pinion([
            "sign", "--key", hsm.uri("carol-root"), "--pkcs11-module", ceremony.faults.path, "--force",
            "@manifest.json", "-o", "@out.json",
        ])
        #expect(result.status == 1)
        #expect(result.err.contains("is \(size) bytes (the DSSE PAE of the payload) and --pkcs11-max-message is 2000"))
        #expect(result.err.contains("Use a token with a higher limit (and raise --pkcs11-max-message), or a file key"))
        #expect(ceremony.faults.calls("C_Initialize") == 0)
        ceremony.outputUntouched()
        // The way out the message names: a higher limit for a token that takes it.
        let raised = try hsm.pinion([
            "sign", "--key", hsm.uri("carol-root"), "--pkcs11-module", ceremony.faults.path,
            "--pkcs11-max-message", "65536", "--force", "@manifest.json", "-o", "@out.json",
        ])
        #expect(raised.status == 0, "\(raised.err)")
    }

    @Test(arguments: [
        ("pkcs11:token=pinion;object=carol-root?pin-value=1234", "pin-value is refused"),
        ("pkcs11:token=pinion;object=carol-root?pin-source=%7C/bin/echo%201234", "only pin-source=file:/ABSOLUTE/PATH"),
        ("pkcs11:token=pinion;object=carol-root;object=again", "object is given twice"),
        ("pkcs11:token=pinion;colour=blue", "colour is not defined by RFC 7512"),
        ("pkcs11:token=pinion", "names no key"),
    ])
    func refusedURIs(uri: String, message: String) throws {
        let ceremony = try FaultCeremony("hsm-bad-uri")
        let result = try ceremony.sign([], uri: uri)
        #expect(result.status == 2)
        #expect(result.err.contains(message), "\(result.err)")
        ceremony.outputUntouched()
    }

    @Test func noModuleIsAUsageError() throws {
        let hsm = try SoftHSM(prefix: "hsm-no-module")
        try hsm.makeToken()
        try hsm.hardwareKey("k")
        try hsm.rootPayload(["@k.pub"], threshold: 1)
        let result = try hsm.pinion(["sign", "--key", hsm.uri("k"), "@root-payload.json", "-o", "@out.json"])
        #expect(result.status == 2)
        #expect(result.err.contains("give --pkcs11-module PATH, set PINION_PKCS11_MODULE, or add module-path="))
        #expect(!hsm.workspace.exists("out.json"))
        let notAModule = try hsm.pinion([
            "sign", "--key", hsm.uri("k"), "--pkcs11-module", hsm.workspace.path("user.pin"), "@root-payload.json",
            "-o", "@out.json",
        ])
        #expect(notAModule.status == 3)
        #expect(notAModule.err.contains("cannot load the PKCS#11 module"))
    }

    /// RFC 7512 `module-path=`: used when no --pkcs11-module is given; refused when it names
    /// another module than the flag, or is relative.
    @Test func uriModulePathIsUsedOrRefusedWhenItDisagrees() throws {
        let hsm = try SoftHSM(prefix: "hsm-module-path")
        try hsm.makeToken()
        try hsm.hardwareKey("k")
        try hsm.rootPayload(["@k.pub"], threshold: 1)
        let withPath = hsm.uri("k") + "&module-path=" + softHSMModule
        try hsm.ok(["sign", "--key", withPath, "@root-payload.json", "-o", "@out.json"])
        #expect(hsm.workspace.exists("out.json"))
        let sameAsFlag = try hsm.pinion([
            "sign", "--key", withPath, "--pkcs11-module", softHSMModule, "@root-payload.json", "-o", "@same.json",
        ])
        #expect(sameAsFlag.status == 0, "\(sameAsFlag.err)")
        let other = hsm.uri("k") + "&module-path=/usr/lib/other/libother-pkcs11.so"
        let mismatch = try hsm.pinion([
            "sign", "--key", other, "--pkcs11-module", softHSMModule, "@root-payload.json", "-o", "@mismatch.json",
        ])
        #expect(mismatch.status == 2)
        #expect(mismatch.err.contains("names the module /usr/lib/other/libother-pkcs11.so"), "\(mismatch.err)")
        #expect(!hsm.workspace.exists("mismatch.json"))
        let relative = try hsm.pinion([
            "sign", "--key", hsm.uri("k") + "&module-path=libsofthsm2.so", "@root-payload.json", "-o", "@rel.json",
        ])
        #expect(relative.status == 2)
        #expect(relative.err.contains("is not an absolute path"), "\(relative.err)")
        #expect(!hsm.workspace.exists("rel.json"))
        let envMismatch = try hsm.pinion(
            ["sign", "--key", other, "@root-payload.json", "-o", "@env.json"],
            environment: ["PINION_PKCS11_MODULE": softHSMModule])
        #expect(envMismatch.status == 2)
        #expect(!hsm.workspace.exists("env.json"))
    }

    @Test func keygenRefusesAnExistingLabelAndAnExistingPub() throws {
        let hsm = try SoftHSM(prefix: "hsm-keygen-refusals")
        try hsm.makeToken()
        try hsm.hardwareKey("taken")
        let again = try hsm.pinion([
            "keygen", "--pkcs11", "pkcs11:token=pinion?pin-source=file:\(hsm.workspace.path("user.pin"))", "--label",
            "taken", "--out", "@other", "--pkcs11-module", softHSMModule,
        ])
        #expect(again.status == 2)
        #expect(again.err.contains("already holds a key labelled taken"))
        #expect(!hsm.workspace.exists("other.pub"))
        let overwrite = try hsm.pinion([
            "keygen", "--pkcs11", "pkcs11:token=pinion?pin-source=file:\(hsm.workspace.path("user.pin"))", "--label",
            "fresh", "--out", "@taken", "--pkcs11-module", softHSMModule,
        ])
        #expect(overwrite.status == 2)
        #expect(overwrite.err.contains("taken.pub already exists"))
        let listed = try hsm.ok(["key", "list", "--pkcs11-module", softHSMModule])
        #expect(!listed.out.contains("object=fresh"))
    }
}
