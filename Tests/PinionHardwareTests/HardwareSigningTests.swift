// Signing with Ed25519 keys in a PKCS#11 token (SoftHSM2): keygen in the token, keys made
// by pkcs11-tool, mixed ceremonies with file keys, and independent checks with openssl.

import Foundation
import PinionCore
import PinionTestSupport
import Testing

/// Fixed times (tests never read the wall clock; child processes get them as flags).
let issuedAt = "2026-11-30T09:00:00Z"
let expiresAt = "2036-11-30T09:00:00Z"
let verifyAt = "2026-12-01T00:00:00Z"
let pinA = "sha256/" + Data(repeating: 0xA1, count: 32).base64EncodedString()
let pinB = "sha256/" + Data(repeating: 0xB2, count: 32).base64EncodedString()

extension SoftHSM {
    /// root init with the given root keys (files or URIs) and a 1-of-1 file pins key.
    func rootPayload(_ rootKeys: [String], threshold: Int, out: String = "@root-payload.json") throws {
        if !workspace.exists("pins.key") {
            try ok(["keygen", "--out", "@pins", "--insecure-no-passphrase"])
        }
        try ok(
            ["root", "init", "--scope", "com.example.app", "--pkcs11-module", softHSMModule]
                + rootKeys.flatMap { ["--root-key", $0] }
                + [
                    "--root-threshold", "\(threshold)", "--pins-key", "@pins.pub", "--pins-threshold", "1",
                    "--issued-at", issuedAt, "--expires-at", expiresAt, "-o", out,
                ])
    }

    /// `pinion verify` of a root envelope against itself, at `verifyAt`.
    func verifyRoot(_ name: String) throws -> CommandResult {
        try pinion(["verify", "--root", "@" + name, "@" + name, "--at", verifyAt])
    }
}

@Suite(.enabled(if: softHSMTestsEnabled, "softhsm2 is not installed"))
struct HardwareSigningTests {
    @Test func keygenInTokenSignsAndVerifiesWithPinionAndOpenSSL() throws {
        let hsm = try SoftHSM(prefix: "hsm-keygen")
        try hsm.makeToken()
        let keyID = try hsm.hardwareKey("root-hsm")
        #expect(keyID.count == 64)
        // The .pub keygen wrote, the token's public object and the printed id agree.
        #expect(
            try hsm.ok(["key", "id", "@root-hsm.pub"]).out.trimmingCharacters(in: .whitespacesAndNewlines) == keyID)
        let fromToken = try hsm.ok([
            "key", "id", "pkcs11:token=pinion;object=root-hsm", "--pkcs11-module", softHSMModule,
        ])
        #expect(fromToken.out.trimmingCharacters(in: .whitespacesAndNewlines) == keyID)
        #expect(!hsm.workspace.exists("root-hsm.key"))

        try hsm.rootPayload(["@root-hsm.pub"], threshold: 1)
        let signed = try hsm.ok([
            "sign", "--key", hsm.uri("root-hsm"), "--pkcs11-module", softHSMModule, "@root-payload.json", "-o",
            "@root.json",
        ])
        #expect(signed.out.contains("signed by \(keyID)"))
        let verified = try hsm.verifyRoot("root.json")
        #expect(verified.status == 0, "\(verified.err)")
        #expect(verified.out.contains("OK: root version 1"))

        // openssl, with the .pub keygen wrote, over the PAE (DSSE v1).
        let envelope = try Envelope.parse(try hsm.workspace.readBytes("root.json"))
        try hsm.workspace.writeBytes("pae.bin", envelope.signingInput)
        try hsm.workspace.writeBytes("sig.bin", envelope.signatures[0].signature)
        let openssl = try hsm.workspace.openssl([
            "pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", "@root-hsm.pub", "-sigfile", "@sig.bin", "-in",
            "@pae.bin",
        ])
        #expect(openssl.status == 0, "\(openssl.err)")
        #expect(openssl.out.contains("Signature Verified Successfully"))
    }

    @Test func keygenMakesASensitiveNonExtractableSignOnlyKey() throws {
        let hsm = try SoftHSM(prefix: "hsm-attributes")
        try hsm.makeToken()
        try hsm.hardwareKey("locked-down")
        let listed = try hsm.pkcs11Tool(["--list-objects", "--type", "privkey"])
        try #require(listed.status == 0, "\(listed.err)")
        #expect(listed.out.contains("label:      locked-down"))
        #expect(listed.out.contains("sensitive"))
        #expect(listed.out.contains("never extractable"))
        #expect(listed.out.contains("Usage:      sign"))
        #expect(!listed.out.contains("decrypt"))
        #expect(!listed.out.contains("derive"))
    }

    @Test func keyMadeByPkcs11ToolIsFoundByURIAndSigns() throws {
        let hsm = try SoftHSM(prefix: "hsm-foreign")
        try hsm.makeToken()
        let made = try hsm.pkcs11Tool([
            "--keypairgen", "--key-type", "EC:edwards25519", "--id", "a1b2", "--label", "opensc-key",
        ])
        try #require(made.status == 0, "\(made.out)\(made.err)")
        // Its public key as pkcs11-tool exports it (PEM SPKI), which openssl reads: same key id.
        let exported = try hsm.pkcs11Tool([
            "--read-object", "--type", "pubkey", "--id", "a1b2", "-o", hsm.workspace.path("opensc.pub"),
        ])
        try #require(exported.status == 0, "\(exported.err)")
        let pem = try hsm.workspace.openssl(["pkey", "-pubin", "-in", "@opensc.pub", "-noout", "-text"])
        try #require(pem.status == 0, "\(pem.err)")
        #expect(pem.out.contains("ED25519 Public-Key"))
        let fileID = try hsm.ok(["key", "id", "@opensc.pub"]).out.trimmingCharacters(in: .whitespacesAndNewlines)
        let byID = try hsm.ok(["key", "id", "pkcs11:token=pinion;id=%a1%b2", "--pkcs11-module", softHSMModule])
        #expect(byID.out.trimmingCharacters(in: .whitespacesAndNewlines) == fileID)

        try hsm.rootPayload(["pkcs11:token=pinion;object=opensc-key"], threshold: 1)
        try hsm.ok(
            [
                "sign", "--key", "pkcs11:token=pinion;id=%A1%B2", "--pkcs11-module", softHSMModule,
                "@root-payload.json",
                "-o", "@root.json",
            ], environment: ["PINION_PKCS11_PIN": hsm.pin])
        let verified = try hsm.verifyRoot("root.json")
        #expect(verified.status == 0, "\(verified.err)")
    }

    @Test func moduleAndPINFromTheEnvironment() throws {
        let hsm = try SoftHSM(prefix: "hsm-environment")
        try hsm.makeToken()
        try hsm.hardwareKey("env-key")
        try hsm.rootPayload(["@env-key.pub"], threshold: 1)
        let signed = try hsm.pinion(
            ["sign", "--key", "pkcs11:token=pinion;object=env-key", "@root-payload.json", "-o", "@root.json"],
            environment: ["PINION_PKCS11_MODULE": softHSMModule, "PINION_PKCS11_PIN": hsm.pin])
        #expect(signed.status == 0, "\(signed.err)")
        #expect(try hsm.verifyRoot("root.json").status == 0)
    }

    @Test func twoOfThreeCeremonyMixesAnHSMKeyWithTwoFileKeysEachWithItsPassphrase() throws {
        let hsm = try SoftHSM(prefix: "hsm-ceremony")
        try hsm.makeToken()
        let hsmID = try hsm.hardwareKey("carol-root")
        let aliceID = try hsm.fileKey("alice-root", passphrase: "alice's own passphrase")
        let bobID = try hsm.fileKey("bob-root", passphrase: "bob has another one")
        try hsm.rootPayload(["@alice-root.pub", hsm.uri("carol-root"), "@bob-root.pub"], threshold: 2)

        // All three in one command: the passphrase files bind to the key files in order.
        let all = try hsm.ok([
            "sign", "--key", "@alice-root.key", "--key", hsm.uri("carol-root"), "--key", "@bob-root.key",
            "--passphrase-file", "@alice-root.passphrase", "--passphrase-file", "@bob-root.passphrase",
            "--pkcs11-module", softHSMModule, "@root-payload.json", "-o", "@root-all.json",
        ])
        for id in [aliceID, hsmID, bobID] { #expect(all.out.contains("signed by \(id)")) }
        #expect(try hsm.verifyRoot("root-all.json").status == 0)

        // The passphrase files in the wrong order: refused, nothing written.
        let swapped = try hsm.pinion([
            "sign", "--key", "@alice-root.key", "--key", hsm.uri("carol-root"), "--key", "@bob-root.key",
            "--passphrase-file", "@bob-root.passphrase", "--passphrase-file", "@alice-root.passphrase",
            "--pkcs11-module", softHSMModule, "@root-payload.json", "-o", "@root-swapped.json",
        ])
        #expect(swapped.status == 1)
        #expect(swapped.err.contains("alice-root.key: wrong passphrase"))
        #expect(!hsm.workspace.exists("root-swapped.json"))

        // Co-signing in turn: alice alone, then the second signer with the HSM, in place.
        try hsm.ok([
            "sign", "--key", "@alice-root.key", "--passphrase-file", "@alice-root.passphrase", "@root-payload.json",
            "-o", "@root.json",
        ])
        #expect(try hsm.verifyRoot("root.json").status != 0)
        let cosigned = try hsm.ok([
            "sign", "--key", hsm.uri("carol-root"), "--pkcs11-module", softHSMModule, "@root.json", "-o", "@root.json",
        ])
        #expect(cosigned.out.contains("2 signature(s)"))
        let verified = try hsm.verifyRoot("root.json")
        #expect(verified.status == 0, "\(verified.err)")
    }

    @Test func passphraseFilesMustMatchTheKeyFiles() throws {
        let hsm = try SoftHSM(prefix: "hsm-passphrase-count")
        try hsm.makeToken()
        try hsm.hardwareKey("hsm-key")
        try hsm.fileKey("alice", passphrase: "alice passphrase 1")
        try hsm.fileKey("bob", passphrase: "bob passphrase 22")
        try hsm.rootPayload(["@alice.pub", "@bob.pub", "@hsm-key.pub"], threshold: 2)
        // One file for two key files, and a file for a URI only: both refused as usage.
        for extra in [
            ["--key", "@alice.key", "--key", "@bob.key", "--passphrase-file", "@alice.passphrase"],
            ["--key", hsm.uri("hsm-key"), "--passphrase-file", "@alice.passphrase"],
        ] {
            let result = try hsm.pinion(
                ["sign"] + extra + ["--pkcs11-module", softHSMModule, "@root-payload.json", "-o", "@out.json"])
            #expect(result.status == 2)
            #expect(result.err.contains("give one per key file, in the order of the key files"))
            #expect(!hsm.workspace.exists("out.json"))
        }
    }

    @Test func keyListShowsTokensURIsAndKeyIDsOfEd25519KeysOnly() throws {
        let hsm = try SoftHSM(prefix: "hsm-list")
        let serial = try hsm.makeToken()
        let first = try hsm.hardwareKey("first")
        let second = try hsm.hardwareKey("second")
        let p256 = try hsm.pkcs11Tool(["--keypairgen", "--key-type", "EC:prime256v1", "--label", "ecdsa-key"])
        try #require(p256.status == 0, "\(p256.err)")
        let listed = try hsm.ok(["key", "list", "--pkcs11-module", softHSMModule])
        #expect(listed.out.contains("token \"pinion\" (serial \(serial))"))
        #expect(listed.out.contains("2 Ed25519 key(s)"))
        #expect(
            listed.out.contains(
                "\(first)  pkcs11:model=SoftHSM%20v2;manufacturer=SoftHSM%20project;serial=\(serial);token=pinion;object=first;id=%"
            ))
        #expect(listed.out.contains("\(second)  pkcs11:"))
        #expect(!listed.out.contains("ecdsa-key"))
        // Each listed URI is usable as it is.
        let line = try #require(listed.out.split(separator: "\n").first { $0.contains(first) })
        let uri = String(try #require(line.split(separator: " ").last))
        let id = try hsm.ok(["key", "id", uri, "--pkcs11-module", softHSMModule])
        #expect(id.out.trimmingCharacters(in: .whitespacesAndNewlines) == first)
    }
}

@Suite(.enabled(if: softHSMTestsEnabled, "softhsm2 is not installed"))
struct HardwareRootRotationTests {
    @Test func rootRotateAddsAndRemovesKeysNamedByURI() throws {
        let hsm = try SoftHSM(prefix: "hsm-rotate")
        try hsm.makeToken()
        let oldID = try hsm.hardwareKey("old-root")
        let newID = try hsm.hardwareKey("new-root")
        try hsm.rootPayload([hsm.uri("old-root")], threshold: 1)
        try hsm.ok([
            "sign", "--key", hsm.uri("old-root"), "--pkcs11-module", softHSMModule, "@root-payload.json", "-o",
            "@root.json",
        ])
        try hsm.ok([
            "root", "rotate", "--previous", "@root.json", "--add-root-key", "pkcs11:token=pinion;object=new-root",
            "--remove-root-key", "pkcs11:token=pinion;object=old-root", "--pkcs11-module", softHSMModule,
            "--issued-at", issuedAt, "--expires-at", expiresAt, "-o", "@root-2-payload.json",
        ])
        let payload = try hsm.workspace.read("root-2-payload.json")
        #expect(payload.contains(newID))
        // Old and new root role sign, both in the token, in one command.
        try hsm.ok([
            "sign", "--key", hsm.uri("old-root"), "--key", hsm.uri("new-root"), "--pkcs11-module", softHSMModule,
            "@root-2-payload.json", "-o", "@root-2.json",
        ])
        let chain = try hsm.workspace.makeDirectory("chain")
        try FileManager.default.copyItem(atPath: hsm.workspace.path("root-2.json"), toPath: chain + "/2.json")
        let verified = try hsm.pinion([
            "verify", "--root", "@root.json", "--root-chain", chain, "@root-2.json", "--at", verifyAt,
        ])
        #expect(verified.status == 0, "\(verified.err)")
        #expect(oldID != newID)
    }
}
