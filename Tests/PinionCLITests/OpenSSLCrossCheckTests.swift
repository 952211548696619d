// Independent cross-checks with the openssl command line: our signatures, our key files
// and openssl's key files interoperate.

import Foundation
import PinionCore
import PinionTestSupport
import Testing

@Suite struct OpenSSLCrossCheckTests {
    @Test func signatureVerifiesWithOpenSSLOverPAE() throws {
        let w = try Workspace()
        w.ok([
            "keygen", "--out", "@signer", "--passphrase-file", "@passphrase", "--kdf-iterations", "1000",
        ])
        w.ok(["manifest", "init", "--scope", "com.example.app", "--expires-in", "30d", "-o", "@p.json"])
        w.ok(["manifest", "set-domain", "@p.json", "api.example.com", "--pin", pinA, "--pin", pinB])
        w.ok([
            "sign", "--key", "@signer.key", "--passphrase-file", "@passphrase", "@p.json", "-o",
            "@m.json",
        ])
        let envelope = try Envelope.parse(try w.readBytes("m.json"))
        try w.writeBytes("pae.bin", envelope.signingInput)
        try w.writeBytes("sig.bin", envelope.signatures[0].signature)
        let verified = try w.openssl([
            "pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", "@signer.pub", "-sigfile", "@sig.bin",
            "-in", "@pae.bin",
        ])
        #expect(verified.status == 0, "\(verified.err)")
        #expect(verified.out.contains("Signature Verified Successfully"))

        // And a flipped PAE byte is refused by openssl too (the check can fail).
        var pae = envelope.signingInput
        pae[pae.count - 3] ^= 0x01
        try w.writeBytes("pae2.bin", pae)
        let refused = try w.openssl([
            "pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", "@signer.pub", "-sigfile", "@sig.bin",
            "-in", "@pae2.bin",
        ])
        #expect(refused.status != 0)
    }

    @Test func keygenKeyOpensWithOpenSSLAndPassphrase() throws {
        let w = try Workspace()
        let id = w.ok([
            "keygen", "--out", "@k", "--passphrase-file", "@passphrase", "--kdf-iterations", "1000",
        ]).out
        let opened = try w.openssl([
            "pkey", "-in", "@k.key", "-passin", "file:" + w.path("passphrase"), "-pubout",
        ])
        #expect(opened.status == 0, "\(opened.err)")
        #expect(opened.out == (try w.read("k.pub")))
        let wrong = try w.openssl([
            "pkey", "-in", "@k.key", "-passin", "file:" + w.path("wrong-passphrase"), "-noout",
        ])
        #expect(wrong.status != 0)
        // The key id is the SHA-256 of the raw 32-byte key: the last 32 bytes of the SPKI DER.
        let der = try w.openssl([
            "pkey", "-pubin", "-in", "@k.pub", "-outform", "DER", "-out", "@k.der",
        ])
        #expect(der.status == 0)
        let raw = Array(try w.readBytes("k.der").suffix(32))
        try w.writeBytes("raw.bin", raw)
        let digest = try w.openssl(["dgst", "-sha256", "-r", "@raw.bin"])
        #expect(digest.out.hasPrefix(id.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    @Test func openSSLMadeKeySignsWithPinion() throws {
        let w = try Workspace()
        let made = try w.openssl([
            "genpkey", "-algorithm", "ed25519", "-aes256", "-pass", "file:" + w.path("passphrase"),
            "-out", "@ossl.key",
        ])
        #expect(made.status == 0, "\(made.err)")
        let pub = try w.openssl([
            "pkey", "-in", "@ossl.key", "-passin", "file:" + w.path("passphrase"), "-pubout", "-out",
            "@ossl.pub",
        ])
        #expect(pub.status == 0)
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o600], ofItemAtPath: w.path("ossl.key"))
        w.ok([
            "root", "init", "--scope", "com.example.app", "--root-key", "@ossl.pub", "--root-threshold",
            "1", "--pins-key",
            "@ossl.pub", "--pins-threshold", "1", "-o", "@rp.json",
        ])
        w.ok([
            "sign", "--key", "@ossl.key", "--passphrase-file", "@passphrase", "@rp.json", "-o",
            "@root.json",
        ])
        w.ok(["verify", "--root", "@root.json", "@root.json"])
    }

    @Test func passphraseFromEnvironmentInTheRealExecutable() throws {
        let w = try Workspace()
        let made = try w.pinion(
            ["keygen", "--out", "@k", "--kdf-iterations", "1000"],
            environment: ["PINION_PASSPHRASE": "env secret phrase"])
        #expect(made.status == 0, "\(made.err)")
        try w.write("env-pass", "env secret phrase\n")
        let opened = try w.openssl([
            "pkey", "-in", "@k.key", "-passin", "file:" + w.path("env-pass"), "-noout",
        ])
        #expect(opened.status == 0)
        let id = try w.pinion(
            ["key", "id", "@k.key"], environment: ["PINION_PASSPHRASE": "env secret phrase"])
        #expect(id.status == 0)
        let wrong = try w.pinion(["key", "id", "@k.key"], environment: ["PINION_PASSPHRASE": "other"])
        #expect(wrong.status == 1)
        #expect(wrong.err.contains("wrong passphrase"))
    }

    @Test func noPassphraseSourceIsAUsageError() throws {
        let w = try Workspace()
        // setsid: no controlling terminal, so /dev/tty cannot be opened.
        let result = try w.exec("/usr/bin/setsid", ["-w", pinionExecutable, "keygen", "--out", "@k"])
        #expect(result.status == 2, "\(result.err)")
        #expect(result.err.contains("passphrase"))
        #expect(!w.exists("k.key") && !w.exists("k.pub"))
    }
}
