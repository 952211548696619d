// Key files (docs/DESIGN.md §2) against OpenSSL's command line, their failure modes, and the
// passphrase sources. Every test works in its own temporary directory.

import Foundation
import Testing

@testable import PinionCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// Low PBKDF2 cost for speed; production uses `KeyFile.defaultKDFIterations`.
private let testIterations = 1_000

@Suite struct KeyFileTests {
    // MARK: Round trips

    @Test func encryptedKeyPairRoundTrips() throws {
        let directory = try TemporaryDirectory()
        let key = try Ed25519SecretKey.generate()
        let base = directory.path("signer")
        try KeyFile.writeKeyPair(
            key, basePath: base, passphrase: secure("correct horse"), kdfIterations: testIterations)

        #expect(
            try String(contentsOfFile: base + ".key", encoding: .utf8).hasPrefix(
                "-----BEGIN ENCRYPTED PRIVATE KEY-----\n"))
        #expect(
            try String(contentsOfFile: base + ".pub", encoding: .utf8).hasPrefix(
                "-----BEGIN PUBLIC KEY-----\n"))
        var calls = 0
        let read = try KeyFile.readSecretKey(path: base + ".key") {
            calls += 1
            return try secure("correct horse")
        }
        #expect(calls == 1)
        #expect(read.publicKey == key.publicKey)
        let message = Array("payload".utf8)
        #expect(try read.sign(message) == key.sign(message))
        #expect(try KeyFile.readPublicKey(path: base + ".pub") == key.publicKey)
    }

    @Test func unencryptedKeyIsPlainPKCS8AndNeedsNoPassphrase() throws {
        let directory = try TemporaryDirectory()
        let key = try Ed25519SecretKey.generate()
        let base = directory.path("insecure")
        try KeyFile.writeKeyPair(key, basePath: base, passphrase: nil)
        #expect(
            try String(contentsOfFile: base + ".key", encoding: .utf8).hasPrefix(
                "-----BEGIN PRIVATE KEY-----\n"))
        var calls = 0
        let read = try KeyFile.readSecretKey(path: base + ".key") {
            calls += 1
            return nil
        }
        #expect(calls == 0)
        #expect(read.publicKey == key.publicKey)
    }

    // MARK: Interoperability with OpenSSL

    @Test func opensslOpensOurKeyAndDerivesTheSamePublicKeyFile() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("ours")
        try KeyFile.writeKeyPair(
            try Ed25519SecretKey.generate(), basePath: base, passphrase: secure("s3cret pass"),
            kdfIterations: testIterations)
        let passFile = try directory.write("pass", "s3cret pass\n")
        let result = try openssl([
            "pkey", "-in", base + ".key", "-passin", "file:" + passFile, "-pubout",
        ])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output == (try Data(contentsOf: URL(fileURLWithPath: base + ".pub"))))
    }

    @Test func unencryptedKeyIsByteIdenticalToOpenSSLsOwnEncoding() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("plain")
        try KeyFile.writeKeyPair(try Ed25519SecretKey.generate(), basePath: base, passphrase: nil)
        let result = try openssl(["pkey", "-in", base + ".key"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output == (try Data(contentsOf: URL(fileURLWithPath: base + ".key"))))
    }

    @Test func ourKeyIsPBES2WithPBKDF2HMACSHA256AndAES256CBC() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("params")
        try KeyFile.writeKeyPair(
            try Ed25519SecretKey.generate(), basePath: base, passphrase: secure("pw"),
            kdfIterations: 1_234)
        let result = try openssl(["asn1parse", "-in", base + ".key"])
        #expect(result.status == 0)
        let dump = String(decoding: result.output, as: UTF8.self)
        for name in [":PBES2", ":PBKDF2", ":hmacWithSHA256", ":aes-256-cbc"] {
            #expect(dump.contains(name), "missing \(name)")
        }
        #expect(dump.contains("INTEGER           :04D2"), "iteration count 1234")
        // 16-byte salt and 16-byte IV.
        #expect(dump.components(separatedBy: "l=  16 prim: OCTET STRING").count - 1 == 2)
    }

    @Test func defaultIterationCountIs600000() throws {
        #expect(KeyFile.defaultKDFIterations == 600_000)
    }

    @Test func readsOpenSSLGenpkeyKeyAndOpenSSLVerifiesOurSignature() throws {
        let directory = try TemporaryDirectory()
        let passFile = try directory.write("pass", "their passphrase\n")
        let keyPath = directory.path("theirs.key")
        let pubPath = directory.path("theirs.pub")
        try expectSuccess(
            openssl([
                "genpkey", "-algorithm", "ed25519", "-aes256", "-pass", "file:" + passFile, "-out", keyPath,
            ]))
        try expectSuccess(
            openssl(["pkey", "-in", keyPath, "-passin", "file:" + passFile, "-pubout", "-out", pubPath]))

        let key = try KeyFile.readSecretKey(path: keyPath) { try secure("their passphrase") }
        #expect(try KeyFile.readPublicKey(path: pubPath) == key.publicKey)
        let message = Array("DSSEv1 33 application/vnd.pinion.pins+json 2 {}".utf8)
        let messagePath = try directory.write("message", message)
        let signaturePath = try directory.write("signature", try key.sign(message))
        let verify = try openssl([
            "pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", pubPath, "-sigfile", signaturePath, "-in",
            messagePath,
        ])
        #expect(verify.status == 0, "\(verify.error)")
        #expect(
            String(decoding: verify.output, as: UTF8.self).contains("Signature Verified Successfully"))
    }

    @Test func opensslSignatureVerifiesWithOurVerifier() throws {
        let directory = try TemporaryDirectory()
        let passFile = try directory.write("pass", "pw for openssl\n")
        let keyPath = directory.path("k.key")
        let pubPath = directory.path("k.pub")
        try expectSuccess(
            openssl([
                "genpkey", "-algorithm", "ed25519", "-aes256", "-pass", "file:" + passFile, "-out", keyPath,
            ]))
        try expectSuccess(
            openssl(["pkey", "-in", keyPath, "-passin", "file:" + passFile, "-pubout", "-out", pubPath]))
        let message = Array("signed by openssl".utf8)
        let messagePath = try directory.write("message", message)
        let signaturePath = directory.path("signature")
        try expectSuccess(
            openssl([
                "pkeyutl", "-sign", "-rawin", "-inkey", keyPath, "-passin", "file:" + passFile, "-in",
                messagePath,
                "-out", signaturePath,
            ]))
        let signature = [UInt8](try Data(contentsOf: URL(fileURLWithPath: signaturePath)))
        let publicKey = try KeyFile.readPublicKey(path: pubPath)
        #expect(
            SodiumEd25519Verifier().isValidSignature(signature, of: message, publicKey: publicKey.raw))
        #expect(
            !SodiumEd25519Verifier().isValidSignature(
                signature, of: message + [1], publicKey: publicKey.raw))
    }

    @Test func readsPublicKeyFromRawDERSubjectPublicKeyInfo() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("der")
        let key = try Ed25519SecretKey.generate()
        try KeyFile.writeKeyPair(key, basePath: base, passphrase: nil)
        try expectSuccess(
            openssl(["pkey", "-pubin", "-in", base + ".pub", "-outform", "DER", "-out", base + ".der"]))
        #expect(try KeyFile.readPublicKey(path: base + ".der") == key.publicKey)
    }

    // MARK: Wrong passphrase

    @Test func wrongPassphraseIsReportedAsSuch() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("locked")
        try KeyFile.writeKeyPair(
            try Ed25519SecretKey.generate(), basePath: base, passphrase: secure("right"),
            kdfIterations: testIterations)
        let error = #expect(throws: KeyFileError.self) {
            try KeyFile.readSecretKey(path: base + ".key") { try secure("wrong") }
        }
        #expect(error == .wrongPassphrase(path: base + ".key"))
        #expect(
            error?.description
                == "cannot decrypt \(base).key: wrong passphrase (or corrupt encrypted key)")
        #expect(error?.isIOError == false)
        #expect(error?.isUsageError == false)
    }

    /// About one wrong passphrase in 256 decrypts to valid CBC padding and fails later, while
    /// decoding: "wrong-79" does so for this fixed key (found offline), and must still be
    /// reported as a wrong passphrase, not as a corrupt file.
    @Test func wrongPassphraseThatPassesThePaddingCheckIsStillWrongPassphrase() throws {
        let directory = try TemporaryDirectory()
        let keyPath = try directory.write("fixed.key", paddingCollisionKey)
        #expect(throws: KeyFileError.wrongPassphrase(path: keyPath)) {
            try KeyFile.readSecretKey(path: keyPath) { try secure("wrong-79") }
        }
        #expect(throws: KeyFileError.wrongPassphrase(path: keyPath)) {
            try KeyFile.readSecretKey(path: keyPath) { try secure("wrong-78") }
        }
        let key = try KeyFile.readSecretKey(path: keyPath) { try secure("right-passphrase") }
        #expect(key.publicKey.raw.count == 32)
    }

    @Test func encryptedKeyWithoutPassphraseSourceIsPassphraseRequired() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("locked")
        try KeyFile.writeKeyPair(
            try Ed25519SecretKey.generate(), basePath: base, passphrase: secure("pw"),
            kdfIterations: testIterations)
        let error = #expect(throws: KeyFileError.self) {
            try KeyFile.readSecretKey(path: base + ".key") { nil }
        }
        #expect(error == .passphraseRequired(path: base + ".key"))
        #expect(error?.isUsageError == true)
    }

    @Test func errorsOfThePassphraseSourcePropagateUnchanged() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("locked")
        try KeyFile.writeKeyPair(
            try Ed25519SecretKey.generate(), basePath: base, passphrase: secure("pw"),
            kdfIterations: testIterations)
        #expect(throws: PassphraseError.noSource) {
            try KeyFile.readSecretKey(path: base + ".key") { throw PassphraseError.noSource }
        }
    }

    @Test func readsKeysEncryptedWithScryptOrPKCS12TripleDES() throws {
        let directory = try TemporaryDirectory()
        let plainPath = directory.path("plain.key")
        try expectSuccess(openssl(["genpkey", "-algorithm", "ed25519", "-out", plainPath]))
        let expected = try KeyFile.readSecretKey(path: plainPath) { nil }
        for (name, options) in [("scrypt", ["-scrypt"]), ("3des", ["-v1", "PBE-SHA1-3DES"])] {
            let path = directory.path("\(name).key")
            try expectSuccess(
                openssl(["pkcs8", "-topk8", "-in", plainPath, "-passout", "pass:pw", "-out", path] + options))
            let key = try KeyFile.readSecretKey(path: path) { try secure("pw") }
            #expect(key.publicKey == expected.publicKey, "\(name)")
            #expect(throws: KeyFileError.wrongPassphrase(path: path)) {
                try KeyFile.readSecretKey(path: path) { try secure("wrong") }
            }
        }
    }

    @Test func legacyCipherIsUnsupportedEncryptionNotWrongPassphrase() throws {
        let directory = try TemporaryDirectory()
        let plainPath = directory.path("plain.key")
        try expectSuccess(openssl(["genpkey", "-algorithm", "ed25519", "-out", plainPath]))
        let path = directory.path("rc2.key")
        // RC2 lives in OpenSSL 3's legacy provider, which Pinion does not load.
        try expectSuccess(
            openssl([
                "pkcs8", "-topk8", "-in", plainPath, "-v1", "PBE-SHA1-RC2-40", "-provider", "legacy",
                "-provider", "default", "-passout", "pass:pw", "-out", path,
            ]))
        let error = #expect(throws: KeyFileError.self) {
            try KeyFile.readSecretKey(path: path) { try secure("pw") }
        }
        guard case .unsupportedEncryption(let reported, _) = error else {
            Issue.record("expected .unsupportedEncryption, got \(String(describing: error))")
            return
        }
        #expect(reported == path)
    }

    // MARK: Key-derivation cost (refused before decryption)

    /// `openssl pkcs8 -topk8 -v2 aes-256-cbc -iter 20000000` takes seconds to make, and as long
    /// to decrypt; the same key is made at 1000 iterations and its count raised in the DER. The
    /// passphrase source is never asked: the refusal comes before PKCS8_decrypt.
    @Test func pbkdf2IterationsOverTheCapAreRefusedBeforeDecryption() throws {
        let directory = try TemporaryDirectory()
        let der = try opensslEncryptedKey(in: directory, ["-v2", "aes-256-cbc", "-iter", "1000"])
        let costly = try TestDER.settingInteger(
            TestDER.integer(20_000_000), at: TestDER.pbkdf2IterationsPath, in: der)
        let pemPath = try directory.write("costly.key", TestDER.pem("ENCRYPTED PRIVATE KEY", costly))
        let derPath = try directory.write("costly.der", costly)
        for path in [pemPath, derPath] {
            var asked = false
            let error = #expect(throws: KeyFileError.self) {
                try KeyFile.readSecretKey(path: path) {
                    asked = true
                    return try secure("pw")
                }
            }
            guard case .kdfTooCostly(let reported, let detail) = error else {
                Issue.record("expected .kdfTooCostly, got \(String(describing: error))")
                continue
            }
            #expect(reported == path)
            #expect(detail.contains("20000000"))
            #expect(!asked, "the passphrase was asked for")
            #expect(error?.isUsageError == false)
            #expect(error?.isIOError == false)
        }
    }

    @Test func pbkdf2IterationsAtTheCapPassTheCheck() throws {
        let directory = try TemporaryDirectory()
        let der = try opensslEncryptedKey(in: directory, ["-v2", "aes-256-cbc", "-iter", "1000"])
        let atCap = try TestDER.settingInteger(
            TestDER.integer(UInt64(KeyFile.maximumPBKDF2Iterations)), at: TestDER.pbkdf2IterationsPath, in: der)
        let path = try directory.write("at-cap.der", atCap)
        // Past the check the passphrase is asked for; throwing there skips the slow decryption.
        #expect(throws: PassphraseAsked.self) {
            try KeyFile.readSecretKey(path: path) { throw PassphraseAsked() }
        }
        #expect(KeyFile.maximumPBKDF2Iterations == 10_000_000)
    }

    @Test func iterationCountBeyond64BitsIsRefusedAsTooCostly() throws {
        let directory = try TemporaryDirectory()
        let der = try opensslEncryptedKey(in: directory, ["-v2", "aes-256-cbc", "-iter", "1000"])
        let huge = TestDER.primitive(tag: 0x02, content: [0x01] + [UInt8](repeating: 0, count: 9))
        let path = try directory.write(
            "huge.der", try TestDER.settingInteger(huge, at: TestDER.pbkdf2IterationsPath, in: der))
        let error = #expect(throws: KeyFileError.self) { try KeyFile.readSecretKey(path: path) { nil } }
        guard case .kdfTooCostly = error else {
            Issue.record("expected .kdfTooCostly, got \(String(describing: error))")
            return
        }
    }

    @Test func negativeIterationCountIsCorrupt() throws {
        let directory = try TemporaryDirectory()
        let der = try opensslEncryptedKey(in: directory, ["-v2", "aes-256-cbc", "-iter", "1000"])
        let negative = TestDER.primitive(tag: 0x02, content: [0xff])
        let path = try directory.write(
            "negative.der", try TestDER.settingInteger(negative, at: TestDER.pbkdf2IterationsPath, in: der))
        expectCorrupt(path) { try KeyFile.readSecretKey(path: path) { throw PassphraseAsked() } }
    }

    /// `openssl pkcs8 -scrypt -scrypt_N 8388608 -scrypt_r 1` refuses to make this key (its
    /// own 32 MiB limit), so openssl's default scrypt key gets N = 2^23, r = 1 in the DER.
    @Test func scryptBlocksOverTheCapAreRefusedBeforeDecryption() throws {
        let directory = try TemporaryDirectory()
        let der = try opensslEncryptedKey(in: directory, ["-scrypt"])
        let cases: [(n: UInt64, r: UInt64)] = [(1 << 23, 1), (1 << 20, 8), (1 << 63, 2)]
        for (index, parameters) in cases.enumerated() {
            var costly = try TestDER.settingInteger(TestDER.integer(parameters.n), at: TestDER.scryptNPath, in: der)
            costly = try TestDER.settingInteger(TestDER.integer(parameters.r), at: TestDER.scryptRPath, in: costly)
            let path = try directory.write("scrypt-\(index).key", TestDER.pem("ENCRYPTED PRIVATE KEY", costly))
            let error = #expect(throws: KeyFileError.self) {
                try KeyFile.readSecretKey(path: path) { throw PassphraseAsked() }
            }
            guard case .kdfTooCostly(let reported, let detail) = error else {
                Issue.record("N=\(parameters.n), r=\(parameters.r): got \(String(describing: error))")
                continue
            }
            #expect(reported == path)
            #expect(detail.contains("N=\(parameters.n)"))
        }
    }

    @Test func scryptParallelismOverTheCapIsRefused() throws {
        let directory = try TemporaryDirectory()
        let der = try opensslEncryptedKey(in: directory, ["-scrypt"])
        let costly = try TestDER.settingInteger(TestDER.integer(17), at: TestDER.scryptPPath, in: der)
        let path = try directory.write("scrypt-p.der", costly)
        let error = #expect(throws: KeyFileError.self) {
            try KeyFile.readSecretKey(path: path) { throw PassphraseAsked() }
        }
        guard case .kdfTooCostly(_, let detail) = error else {
            Issue.record("expected .kdfTooCostly, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("p=17"))
    }

    @Test func scryptAtTheCapsPassesTheCheck() throws {
        let directory = try TemporaryDirectory()
        let der = try opensslEncryptedKey(in: directory, ["-scrypt"])
        var atCap = try TestDER.settingInteger(TestDER.integer(1 << 19), at: TestDER.scryptNPath, in: der)
        atCap = try TestDER.settingInteger(TestDER.integer(8), at: TestDER.scryptRPath, in: atCap)
        atCap = try TestDER.settingInteger(TestDER.integer(16), at: TestDER.scryptPPath, in: atCap)
        let path = try directory.write("scrypt-cap.der", atCap)
        #expect(throws: PassphraseAsked.self) {
            try KeyFile.readSecretKey(path: path) { throw PassphraseAsked() }
        }
        #expect(KeyFile.maximumScryptBlocks == 1 << 22)
        #expect(KeyFile.maximumScryptParallelism == 16)
    }

    @Test func pkcs12IterationsOverTheCapAreRefused() throws {
        let directory = try TemporaryDirectory()
        let der = try opensslEncryptedKey(in: directory, ["-v1", "PBE-SHA1-3DES", "-iter", "1000"])
        let costly = try TestDER.settingInteger(
            TestDER.integer(20_000_000), at: TestDER.pbeIterationsPath, in: der)
        let path = try directory.write("pkcs12.key", TestDER.pem("ENCRYPTED PRIVATE KEY", costly))
        let error = #expect(throws: KeyFileError.self) {
            try KeyFile.readSecretKey(path: path) { throw PassphraseAsked() }
        }
        guard case .kdfTooCostly(let reported, _) = error else {
            Issue.record("expected .kdfTooCostly, got \(String(describing: error))")
            return
        }
        #expect(reported == path)
    }

    /// The DER rewriting above is faithful: unchanged parameters still decrypt.
    @Test func keysAtOrdinaryCostsStillDecrypt() throws {
        let directory = try TemporaryDirectory()
        let plainPath = directory.path("plain.key")
        try expectSuccess(openssl(["genpkey", "-algorithm", "ed25519", "-out", plainPath]))
        let expected = try KeyFile.readSecretKey(path: plainPath) { nil }
        let options = [["-v2", "aes-256-cbc", "-iter", "1000"], ["-scrypt"], ["-v1", "PBE-SHA1-3DES"]]
        for (index, option) in options.enumerated() {
            let der = try opensslEncryptedKey(in: directory, option, plainPath: plainPath)
            let rewritten = try TestDER.parse(der).encoded
            #expect(rewritten == der)
            let path = try directory.write("ordinary-\(index).key", TestDER.pem("ENCRYPTED PRIVATE KEY", rewritten))
            #expect(try KeyFile.readSecretKey(path: path) { try secure("pw") }.publicKey == expected.publicKey)
        }
        let base = directory.path("default-cost")
        try KeyFile.writeKeyPair(try Ed25519SecretKey.generate(), basePath: base, passphrase: secure("pw"))
        _ = try KeyFile.readSecretKey(path: base + ".key") { try secure("pw") }
    }

    // MARK: One key per file

    @Test func fileWithTwoKeysIsRefused() throws {
        let directory = try TemporaryDirectory()
        let first = directory.path("first")
        let second = directory.path("second")
        try KeyFile.writeKeyPair(try Ed25519SecretKey.generate(), basePath: first, passphrase: nil)
        try KeyFile.writeKeyPair(
            try Ed25519SecretKey.generate(), basePath: second, passphrase: secure("pw"),
            kdfIterations: testIterations)
        let plain = try String(contentsOfFile: first + ".key", encoding: .utf8)
        let encrypted = try String(contentsOfFile: second + ".key", encoding: .utf8)
        for (name, contents) in [
            ("plain-plain", plain + plain), ("plain-encrypted", plain + encrypted),
            ("encrypted-plain", encrypted + plain),
        ] {
            let path = try directory.write("\(name).key", contents)
            var asked = false
            let error = #expect(throws: KeyFileError.self) {
                try KeyFile.readSecretKey(path: path) {
                    asked = true
                    return try secure("pw")
                }
            }
            #expect(error == .corrupt(path: path, reason: "the file holds more than one key"), "\(name)")
            #expect(error?.description.contains("holds more than one key") == true)
            #expect(error?.isUsageError == false)
            #expect(!asked, "\(name): the passphrase was asked for")
        }
        let publicKeys =
            try String(contentsOfFile: first + ".pub", encoding: .utf8)
            + String(contentsOfFile: second + ".pub", encoding: .utf8)
        let publicPath = try directory.write("two.pub", publicKeys)
        #expect(throws: KeyFileError.corrupt(path: publicPath, reason: "the file holds more than one key")) {
            try KeyFile.readPublicKey(path: publicPath)
        }
    }

    @Test func keyFollowedByAnotherPEMBlockIsRefused() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("key")
        try KeyFile.writeKeyPair(try Ed25519SecretKey.generate(), basePath: base, passphrase: nil)
        let certificate = directory.path("cert.pem")
        try expectSuccess(
            openssl([
                "req", "-x509", "-newkey", "ed25519", "-nodes", "-keyout", directory.path("cert.key"), "-subj",
                "/CN=pinion.test", "-days", "1", "-out", certificate,
            ]))
        let path = try directory.write(
            "bundle.key",
            try String(contentsOfFile: base + ".key", encoding: .utf8)
                + String(contentsOfFile: certificate, encoding: .utf8))
        expectCorrupt(path) { try KeyFile.readSecretKey(path: path) { nil } }
    }

    @Test func textAroundASingleKeyIsAccepted() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("key")
        let key = try Ed25519SecretKey.generate()
        try KeyFile.writeKeyPair(key, basePath: base, passphrase: nil)
        let pem = try String(contentsOfFile: base + ".key", encoding: .utf8)
        let path = try directory.write("annotated.key", "Signing key of the pins role\n" + pem + "end of file\n")
        #expect(try KeyFile.readSecretKey(path: path) { nil }.publicKey == key.publicKey)
    }

    // MARK: Encryption status

    @Test func readSecretKeyFileSaysWhetherTheFileWasEncrypted() throws {
        let directory = try TemporaryDirectory()
        let key = try Ed25519SecretKey.generate()
        let encryptedBase = directory.path("encrypted")
        let plainBase = directory.path("plain")
        try KeyFile.writeKeyPair(
            key, basePath: encryptedBase, passphrase: secure("pw"), kdfIterations: testIterations)
        try KeyFile.writeKeyPair(key, basePath: plainBase, passphrase: nil)
        try expectSuccess(
            openssl([
                "pkcs8", "-topk8", "-in", encryptedBase + ".key", "-passin", "pass:pw", "-passout", "pass:pw",
                "-outform", "DER", "-out", encryptedBase + ".der",
            ]))
        try expectSuccess(openssl(["pkey", "-in", plainBase + ".key", "-outform", "DER", "-out", plainBase + ".der"]))
        for (path, expected) in [
            (encryptedBase + ".key", true), (encryptedBase + ".der", true), (plainBase + ".key", false),
            (plainBase + ".der", false),
        ] {
            let read = try KeyFile.readSecretKeyFile(path: path) { try secure("pw") }
            #expect(read.encrypted == expected, "\(path)")
            #expect(read.key.publicKey == key.publicKey, "\(path)")
        }
    }

    // MARK: Out of memory

    @Test func failedBufferAllocationWhileEncodingIsAnOpenSSLFailure() throws {
        let error = #expect(throws: KeyFileError.self) {
            try KeyFile.makePKCS8(try Ed25519SecretKey.generate(), path: "oom.key", allocate: { _ in nil })
        }
        guard case .openSSLFailure(let path, let operation, _) = error else {
            Issue.record("expected .openSSLFailure, got \(String(describing: error))")
            return
        }
        #expect(path == "oom.key")
        #expect(operation == "allocate PKCS#8")
    }

    // MARK: Corrupt files

    @Test func truncatedPEMIsCorrupt() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("cut")
        try KeyFile.writeKeyPair(
            try Ed25519SecretKey.generate(), basePath: base, passphrase: secure("pw"),
            kdfIterations: testIterations)
        let whole = try Data(contentsOf: URL(fileURLWithPath: base + ".key"))
        for length in [whole.count / 2, whole.count - 10, 30] {
            let path = try directory.write("cut-\(length).key", [UInt8](whole.prefix(length)))
            expectCorrupt(path) { try KeyFile.readSecretKey(path: path) { try secure("pw") } }
        }
        let publicCut = try directory.write(
            "cut.pub", [UInt8](try Data(contentsOf: URL(fileURLWithPath: base + ".pub")).prefix(40)))
        expectCorrupt(publicCut) { try KeyFile.readPublicKey(path: publicCut) }
    }

    @Test func corruptedBase64IsCorrupt() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("garbled")
        try KeyFile.writeKeyPair(
            try Ed25519SecretKey.generate(), basePath: base, passphrase: secure("pw"),
            kdfIterations: testIterations)
        var lines = try String(contentsOfFile: base + ".key", encoding: .utf8).components(
            separatedBy: "\n")
        // Line 1 is the first base64 line; '!' and '*' are not base64 characters.
        lines[1] = "!!**" + lines[1].dropFirst(4)
        let keyPath = try directory.write("garbled.key", lines.joined(separator: "\n"))
        expectCorrupt(keyPath) { try KeyFile.readSecretKey(path: keyPath) { try secure("pw") } }

        var publicLines = try String(contentsOfFile: base + ".pub", encoding: .utf8).components(
            separatedBy: "\n")
        publicLines[1] = "*" + publicLines[1].dropFirst()
        let pubPath = try directory.write("garbled.pub", publicLines.joined(separator: "\n"))
        expectCorrupt(pubPath) { try KeyFile.readPublicKey(path: pubPath) }
    }

    @Test func emptyAndNonKeyFilesAreCorrupt() throws {
        let directory = try TemporaryDirectory()
        let empty = try directory.write("empty.key", "")
        expectCorrupt(empty) { try KeyFile.readSecretKey(path: empty) { nil } }
        let text = try directory.write("text.key", "this is not a key\n")
        expectCorrupt(text) { try KeyFile.readSecretKey(path: text) { nil } }
        let derJunk = try directory.write("junk.der", [0x30, 0x03, 0x02, 0x01, 0x00, 0xff])
        expectCorrupt(derJunk) { try KeyFile.readPublicKey(path: derJunk) }
        expectCorrupt(derJunk) { try KeyFile.readSecretKey(path: derJunk) { nil } }
    }

    // MARK: The wrong kind of file

    @Test func publicKeyFileWhereSecretKeyIsNeededSaysSo() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("mixup")
        try KeyFile.writeKeyPair(try Ed25519SecretKey.generate(), basePath: base, passphrase: nil)
        let error = #expect(throws: KeyFileError.self) {
            try KeyFile.readSecretKey(path: base + ".pub") { try secure("pw") }
        }
        #expect(error == .publicKeyFileGiven(path: base + ".pub"))
        #expect(error?.description == "\(base).pub is a public key file; a secret key (.key) is needed")
        #expect(error?.isUsageError == true)
        #expect(error?.isIOError == false)
    }

    @Test func secretKeyFileWherePublicKeyIsExpectedSaysSo() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("mixup")
        try KeyFile.writeKeyPair(
            try Ed25519SecretKey.generate(), basePath: base, passphrase: secure("pw"),
            kdfIterations: testIterations)
        #expect(throws: KeyFileError.secretKeyFileGiven(path: base + ".key")) {
            try KeyFile.readPublicKey(path: base + ".key")
        }
    }

    @Test func certificateIsNotAKey() throws {
        let directory = try TemporaryDirectory()
        let certificate = directory.path("cert.pem")
        try expectSuccess(
            openssl([
                "req", "-x509", "-newkey", "ed25519", "-nodes", "-keyout", directory.path("cert.key"),
                "-subj",
                "/CN=pinion.test", "-days", "1", "-out", certificate,
            ]))
        let error = #expect(throws: KeyFileError.self) { try KeyFile.readPublicKey(path: certificate) }
        #expect(error == .notAKeyFile(path: certificate, found: "an X.509 certificate"))
        #expect(error?.isUsageError == true)
    }

    @Test func rsaKeysAreUnsupportedAndNamed() throws {
        let directory = try TemporaryDirectory()
        let keyPath = directory.path("rsa.key")
        try expectSuccess(
            openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", keyPath])
        )
        let error = #expect(throws: KeyFileError.self) {
            try KeyFile.readSecretKey(path: keyPath) { nil }
        }
        #expect(error == .unsupportedKeyType(path: keyPath, type: "RSA"))
        #expect(error?.description.contains("RSA") == true)

        let pubPath = directory.path("rsa.pub")
        try expectSuccess(openssl(["pkey", "-in", keyPath, "-pubout", "-out", pubPath]))
        #expect(throws: KeyFileError.unsupportedKeyType(path: pubPath, type: "RSA")) {
            try KeyFile.readPublicKey(path: pubPath)
        }

        // Encrypted: the type is known only after decryption.
        let passFile = try directory.write("pass", "pw\n")
        let encryptedPath = directory.path("rsa-encrypted.key")
        try expectSuccess(
            openssl([
                "pkcs8", "-topk8", "-in", keyPath, "-v2", "aes-256-cbc", "-passout", "file:" + passFile,
                "-out",
                encryptedPath,
            ]))
        #expect(throws: KeyFileError.unsupportedKeyType(path: encryptedPath, type: "RSA")) {
            try KeyFile.readSecretKey(path: encryptedPath) { try secure("pw") }
        }

        // The traditional (PKCS#1) form is recognised by its PEM label.
        let traditionalPath = directory.path("rsa-traditional.key")
        try expectSuccess(openssl(["pkey", "-in", keyPath, "-traditional", "-out", traditionalPath]))
        #expect(throws: KeyFileError.unsupportedKeyType(path: traditionalPath, type: "RSA")) {
            try KeyFile.readSecretKey(path: traditionalPath) { nil }
        }
    }

    @Test func ecKeysAreUnsupportedAndNamedWithTheirCurve() throws {
        let directory = try TemporaryDirectory()
        let keyPath = directory.path("ec.key")
        try expectSuccess(
            openssl([
                "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyPath,
            ]))
        #expect(throws: KeyFileError.unsupportedKeyType(path: keyPath, type: "EC (prime256v1)")) {
            try KeyFile.readSecretKey(path: keyPath) { nil }
        }
        let pubPath = directory.path("ec.pub")
        try expectSuccess(openssl(["pkey", "-in", keyPath, "-pubout", "-out", pubPath]))
        #expect(throws: KeyFileError.unsupportedKeyType(path: pubPath, type: "EC (prime256v1)")) {
            try KeyFile.readPublicKey(path: pubPath)
        }
        // `openssl ecparam -genkey` writes an EC PARAMETERS block before the key.
        let paramPath = directory.path("ecparam.key")
        try expectSuccess(openssl(["ecparam", "-name", "prime256v1", "-genkey", "-out", paramPath]))
        #expect(throws: KeyFileError.unsupportedKeyType(path: paramPath, type: "EC")) {
            try KeyFile.readSecretKey(path: paramPath) { nil }
        }
    }

    // MARK: Writing safely

    @Test(arguments: [".key", ".pub"])
    func writeRefusesToOverwriteAndLeavesTheExistingFileByteIdentical(_ existing: String) throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("taken")
        let original: [UInt8] = Array("precious existing content\n".utf8)
        let existingPath = try directory.write("taken" + existing, original)
        let other = base + (existing == ".key" ? ".pub" : ".key")

        let error = #expect(throws: KeyFileError.self) {
            try KeyFile.writeKeyPair(
                try Ed25519SecretKey.generate(), basePath: base, passphrase: secure("pw"),
                kdfIterations: testIterations)
        }
        #expect(error == .alreadyExists(path: existingPath))
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: existingPath))) == original)
        #expect(!FileManager.default.fileExists(atPath: other))
    }

    @Test func writeRefusesADanglingSymbolicLink() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("linked")
        try FileManager.default.createSymbolicLink(
            atPath: base + ".key", withDestinationPath: directory.path("nowhere"))
        #expect(throws: KeyFileError.alreadyExists(path: base + ".key")) {
            try KeyFile.writeKeyPair(try Ed25519SecretKey.generate(), basePath: base, passphrase: nil)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("nowhere")))
    }

    @Test func failedWriteLeavesNoPartialKeyPair() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("missing-dir/key")
        let error = #expect(throws: KeyFileError.self) {
            try KeyFile.writeKeyPair(try Ed25519SecretKey.generate(), basePath: base, passphrase: nil)
        }
        #expect(error?.isIOError == true)
        #expect(error?.description.contains("No such file or directory") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    @Test func unusablePassphrasesAndIterationCountsAreRefusedBeforeWriting() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("refused")
        let key = try Ed25519SecretKey.generate()
        #expect(
            throws: KeyFileError.unusablePassphrase(
                path: base + ".key", reason: "the passphrase is empty")
        ) {
            try KeyFile.writeKeyPair(key, basePath: base, passphrase: SecureBytes(capacity: 0))
        }
        let withNUL = try secure("ab")
        withNUL.withUnsafeMutableBytes { $0[1] = 0 }
        #expect(throws: KeyFileError.self) {
            try KeyFile.writeKeyPair(key, basePath: base, passphrase: withNUL)
        }
        #expect(throws: KeyFileError.self) {
            try KeyFile.writeKeyPair(key, basePath: base, passphrase: SecureBytes(capacity: 1025))
        }
        #expect(throws: KeyFileError.invalidKDFIterations(path: base + ".key", iterations: 999)) {
            try KeyFile.writeKeyPair(key, basePath: base, passphrase: secure("pw"), kdfIterations: 999)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    @Test func createdSecretKeyHasMode0600() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("private")
        try KeyFile.writeKeyPair(
            try Ed25519SecretKey.generate(), basePath: base, passphrase: secure("pw"),
            kdfIterations: testIterations)
        #expect(try permissions(of: base + ".key") == 0o600)
        #expect(KeyFile.insecurePermissionsWarning(path: base + ".key") == nil)
    }

    @Test func groupReadableSecretKeyGivesAWarning() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("shared")
        try KeyFile.writeKeyPair(
            try Ed25519SecretKey.generate(), basePath: base, passphrase: secure("pw"),
            kdfIterations: testIterations)
        #expect(chmod(base + ".key", 0o640) == 0)
        let warning = try #require(KeyFile.insecurePermissionsWarning(path: base + ".key"))
        // The CLI prefixes "pinion: warning: " itself.
        #expect(!warning.lowercased().hasPrefix("warning"))
        #expect(warning.hasPrefix("secret key file \(base).key is readable by other users"))
        #expect(warning.contains(base + ".key"))
        #expect(warning.contains("0640"))
        #expect(warning.contains("chmod 600"))
        #expect(chmod(base + ".key", 0o604) == 0)
        #expect(KeyFile.insecurePermissionsWarning(path: base + ".key") != nil)
    }

    @Test func nonRegularFilesGiveNoPermissionsWarning() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.path("folder.key")
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        #expect(KeyFile.insecurePermissionsWarning(path: folder) == nil)
        let fifo = directory.path("fifo.key")
        #expect(mkfifo(fifo, 0o644) == 0)
        #expect(chmod(fifo, 0o644) == 0)
        #expect(KeyFile.insecurePermissionsWarning(path: fifo) == nil)
        #expect(KeyFile.insecurePermissionsWarning(path: "/dev/null") == nil)
        // A symbolic link to a group-readable regular file still warns.
        let target = try directory.write("target.key", "x")
        #expect(chmod(target, 0o644) == 0)
        let link = directory.path("link.key")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(KeyFile.insecurePermissionsWarning(path: link) != nil)
    }

    @Test func missingFileIsAnIOErrorNamingThePath() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("absent.key")
        let error = #expect(throws: KeyFileError.self) { try KeyFile.readSecretKey(path: path) { nil } }
        #expect(error == .io(path: path, operation: "open", errno: ENOENT))
        #expect(error?.isIOError == true)
        #expect(error?.description == "cannot open \(path): No such file or directory")
    }

    // MARK: Passphrase sources

    @Test func passphraseFileLosesOneTrailingNewline() throws {
        let directory = try TemporaryDirectory()
        let cases: [(contents: String, expected: String)] = [
            ("secret\n", "secret"),
            ("secret\r\n", "secret"),
            ("secret", "secret"),
            ("two lines\n\n", "two lines\n"),
            (" spaced \n", " spaced "),
        ]
        for (index, testCase) in cases.enumerated() {
            let path = try directory.write("pass-\(index)", testCase.contents)
            let passphrase = try Passphrase.obtain(file: path, confirm: false, prompt: "unused: ")
            #expect(string(passphrase) == testCase.expected, "case \(index)")
        }
    }

    @Test func emptyPassphraseFileIsRefused() throws {
        let directory = try TemporaryDirectory()
        for (index, contents) in ["", "\n", "\r\n"].enumerated() {
            let path = try directory.write("empty-\(index)", contents)
            #expect(throws: PassphraseError.empty(source: "passphrase file \(path)")) {
                try Passphrase.obtain(file: path, confirm: false, prompt: "unused: ")
            }
        }
    }

    @Test func passphraseFileOver1KiBIsRefused() throws {
        let directory = try TemporaryDirectory()
        let atLimit = try directory.write("limit", [UInt8](repeating: UInt8(ascii: "a"), count: 1024))
        #expect(try Passphrase.obtain(file: atLimit, confirm: false, prompt: "unused: ").count == 1024)
        let over = try directory.write("over", [UInt8](repeating: UInt8(ascii: "a"), count: 1025))
        #expect(throws: PassphraseError.tooLong(source: "passphrase file \(over)", limit: 1024)) {
            try Passphrase.obtain(file: over, confirm: false, prompt: "unused: ")
        }
        let large = try directory.write("large", [UInt8](repeating: UInt8(ascii: "a"), count: 100_000))
        #expect(throws: PassphraseError.tooLong(source: "passphrase file \(large)", limit: 1024)) {
            try Passphrase.obtain(file: large, confirm: false, prompt: "unused: ")
        }
    }

    @Test func passphraseFileWithNULOrMissingIsRefused() throws {
        let directory = try TemporaryDirectory()
        let withNUL = try directory.write("nul", [UInt8(ascii: "a"), 0, UInt8(ascii: "b")])
        #expect(throws: PassphraseError.containsNUL(source: "passphrase file \(withNUL)")) {
            try Passphrase.obtain(file: withNUL, confirm: false, prompt: "unused: ")
        }
        let missing = directory.path("missing")
        #expect(throws: PassphraseError.io(path: missing, operation: "open", errno: ENOENT)) {
            try Passphrase.obtain(file: missing, confirm: false, prompt: "unused: ")
        }
    }

    @Test func passphraseFileWinsOverTheEnvironment() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("pass", "from file\n")
        let environment = CStringTable(["PINION_PASSPHRASE": "from environment"])
        let passphrase = try Passphrase.obtain(
            file: path, environmentVariable: "PINION_PASSPHRASE", confirm: false, prompt: "unused: ",
            terminalPath: directory.path("no-tty"), environment: environment.lookup)
        #expect(string(passphrase) == "from file")
    }

    @Test func environmentVariableIsUsedWithoutAFile() throws {
        let directory = try TemporaryDirectory()
        let environment = CStringTable(["PINION_PASSPHRASE": "from environment\n", "EMPTY": ""])
        let passphrase = try Passphrase.obtain(
            file: nil, environmentVariable: "PINION_PASSPHRASE", confirm: true, prompt: "unused: ",
            terminalPath: directory.path("no-tty"), environment: environment.lookup)
        // Taken verbatim: only files lose a trailing newline.
        #expect(string(passphrase) == "from environment\n")
        #expect(throws: PassphraseError.empty(source: "environment variable EMPTY")) {
            try Passphrase.obtain(
                file: nil, environmentVariable: "EMPTY", confirm: false, prompt: "unused: ",
                terminalPath: directory.path("no-tty"), environment: environment.lookup)
        }
    }

    @Test func noFileNoVariableNoTerminalIsNoSource() throws {
        let directory = try TemporaryDirectory()
        let environment = CStringTable([:])
        let error = #expect(throws: PassphraseError.self) {
            try Passphrase.obtain(
                file: nil, environmentVariable: "PINION_PASSPHRASE", confirm: false, prompt: "unused: ",
                terminalPath: directory.path("no-tty"), environment: environment.lookup)
        }
        #expect(error == .noSource)
        #expect(
            error?.description
                == "no passphrase: use --passphrase-file, PINION_PASSPHRASE or run on a terminal")
        // A regular file is no terminal either.
        let notATerminal = try directory.write("plain", "x")
        #expect(throws: PassphraseError.noSource) {
            try Passphrase.obtain(
                file: nil, environmentVariable: "PINION_PASSPHRASE", confirm: false, prompt: "unused: ",
                terminalPath: notATerminal, environment: environment.lookup)
        }
    }

    @Test func terminalPromptReadsWithoutEchoAndRestoresTheTerminal() throws {
        let terminal = try PseudoTerminal()
        let session = terminal.startObtaining(confirm: true, prompt: "Passphrase for test.key: ")
        try terminal.waitForOutput(containing: "Passphrase for test.key: ")
        try terminal.type("tty secret\n")
        try terminal.waitForOutput(containing: "again: ")
        try terminal.type("tty secret\n")
        let passphrase = try session.result()
        #expect(string(passphrase) == "tty secret")
        #expect(!terminal.output.contains("tty secret"), "the passphrase was echoed")
        #expect(try terminal.echoIsOn())
    }

    @Test func terminalConfirmationMismatchIsRefused() throws {
        let terminal = try PseudoTerminal()
        let session = terminal.startObtaining(confirm: true, prompt: "New passphrase: ")
        try terminal.waitForOutput(containing: "New passphrase: ")
        try terminal.type("first answer\n")
        try terminal.waitForOutput(containing: "again: ")
        try terminal.type("other answer\n")
        #expect(throws: PassphraseError.mismatch) { try session.result() }
        #expect(try terminal.echoIsOn())
    }
}

// MARK: - Fixtures

/// An Ed25519 key made by `openssl pkcs8 -topk8 -v2 aes-256-cbc -v2prf hmacWithSHA256
/// -iter 1000` with passphrase "right-passphrase"; "wrong-79" decrypts it to valid padding.
private let paddingCollisionKey = """
    -----BEGIN ENCRYPTED PRIVATE KEY-----
    MIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAjrdBtdmrN3bgICA+gw
    DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEJCyj5NS26vtSHvF5xUGUbEEQF7H
    U9BQdTlvvTnpQMk1uv0wWvORJ4pZzZ5IhaxrA3nAbnZpHCFuSmXaEDm3ujnLPylk
    X8FK+HTkAvIRazBM7zg=
    -----END ENCRYPTED PRIVATE KEY-----

    """

// MARK: - Helpers

/// A fresh directory under the system temporary directory, removed on release.
private final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("pinion-keyfile-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    @discardableResult
    func write(_ name: String, _ contents: String) throws -> String {
        try write(name, Array(contents.utf8))
    }

    @discardableResult
    func write(_ name: String, _ contents: [UInt8]) throws -> String {
        let path = path(name)
        try Data(contents).write(to: URL(fileURLWithPath: path))
        return path
    }
}

private struct ProcessResult {
    let status: Int32
    let output: Data
    let error: String
}

/// Runs /usr/bin/openssl with `arguments` (no shell), standard input empty.
private func openssl(_ arguments: [String]) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    process.arguments = arguments
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Outputs here are a few KiB at most, below the pipe buffer: sequential reads cannot block.
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus, output: outputData,
        error: String(decoding: errorData, as: UTF8.self))
}

private func expectSuccess(
    _ result: ProcessResult, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    #expect(result.status == 0, "openssl failed: \(result.error)", sourceLocation: sourceLocation)
    if result.status != 0 { throw OpenSSLCommandFailed() }
}

private struct OpenSSLCommandFailed: Error {}

/// Thrown by a passphrase source to show that the key-derivation check let the key through
/// (the passphrase is asked for only afterwards) without paying for the derivation.
private struct PassphraseAsked: Error {}

/// A fresh Ed25519 key, encrypted by `openssl pkcs8 -topk8 <options>` with passphrase "pw",
/// as DER.
private func opensslEncryptedKey(
    in directory: TemporaryDirectory, _ options: [String], plainPath: String? = nil
) throws -> [UInt8] {
    let plain = plainPath ?? directory.path("source-\(UUID().uuidString).key")
    if plainPath == nil {
        try expectSuccess(openssl(["genpkey", "-algorithm", "ed25519", "-out", plain]))
    }
    let output = directory.path("encrypted-\(UUID().uuidString).der")
    try expectSuccess(
        openssl(["pkcs8", "-topk8", "-in", plain, "-passout", "pass:pw", "-outform", "DER", "-out", output] + options))
    return [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
}

/// A DER tree (X.690 §8.1, one-byte tags) for tests that alter the parameters of encrypted
/// keys made by openssl (shared with SPKITests.swift).
enum TestDER: Equatable {
    case primitive(tag: UInt8, content: [UInt8])
    case constructed(tag: UInt8, children: [TestDER])

    struct Malformed: Error {}

    /// PBES2 `EncryptedPrivateKeyInfo` (RFC 5958 §3, RFC 8018 A.4): child indexes from the
    /// root to the PBKDF2 iteration count (RFC 8018 A.2) and scrypt N, r, p (RFC 7914 §7.1).
    static let pbkdf2IterationsPath = [0, 1, 0, 1, 1]
    static let scryptNPath = [0, 1, 0, 1, 1]
    static let scryptRPath = [0, 1, 0, 1, 2]
    static let scryptPPath = [0, 1, 0, 1, 3]
    /// PBES1 / PKCS#12 `PBEParameter` iteration count (RFC 8018 A.3, RFC 7292 App. C).
    static let pbeIterationsPath = [0, 1, 1]

    static func parse(_ bytes: [UInt8]) throws -> TestDER {
        var index = 0
        let node = try parse(bytes, &index)
        guard index == bytes.count else { throw Malformed() }
        return node
    }

    private static func parse(_ bytes: [UInt8], _ index: inout Int) throws -> TestDER {
        guard index + 2 <= bytes.count else { throw Malformed() }
        let tag = bytes[index]
        var length = Int(bytes[index + 1])
        index += 2
        if length & 0x80 != 0 {
            let octets = length & 0x7f
            guard octets >= 1, octets <= 3, index + octets <= bytes.count else { throw Malformed() }
            length = 0
            for _ in 0..<octets {
                length = length << 8 | Int(bytes[index])
                index += 1
            }
        }
        let end = index + length
        guard end <= bytes.count else { throw Malformed() }
        if tag & 0x20 == 0 {
            defer { index = end }
            return .primitive(tag: tag, content: Array(bytes[index..<end]))
        }
        var children: [TestDER] = []
        while index < end { children.append(try parse(bytes, &index)) }
        guard index == end else { throw Malformed() }
        return .constructed(tag: tag, children: children)
    }

    var encoded: [UInt8] {
        let tag: UInt8
        let content: [UInt8]
        switch self {
        case .primitive(let primitiveTag, let bytes):
            tag = primitiveTag
            content = bytes
        case .constructed(let constructedTag, let children):
            tag = constructedTag
            content = children.flatMap(\.encoded)
        }
        guard content.count >= 0x80 else { return [tag, UInt8(content.count)] + content }
        var octets: [UInt8] = []
        var rest = content.count
        while rest > 0 {
            octets.insert(UInt8(rest & 0xff), at: 0)
            rest >>= 8
        }
        return [tag, 0x80 | UInt8(octets.count)] + octets + content
    }

    func replacing(at path: ArraySlice<Int>, with node: TestDER) throws -> TestDER {
        guard let first = path.first else { return node }
        guard case .constructed(let tag, var children) = self, children.indices.contains(first) else {
            throw Malformed()
        }
        children[first] = try children[first].replacing(at: path.dropFirst(), with: node)
        return .constructed(tag: tag, children: children)
    }

    /// A DER INTEGER (X.690 §8.3) holding a non-negative value.
    static func integer(_ value: UInt64) -> TestDER {
        var content: [UInt8] = []
        var rest = value
        repeat {
            content.insert(UInt8(rest & 0xff), at: 0)
            rest >>= 8
        } while rest > 0
        if content[0] & 0x80 != 0 { content.insert(0, at: 0) }
        return .primitive(tag: 0x02, content: content)
    }

    /// `der` with the INTEGER at `path` replaced by `integer`; lengths are re-encoded.
    static func settingInteger(_ integer: TestDER, at path: [Int], in der: [UInt8]) throws -> [UInt8] {
        let tree = try parse(der)
        var node = tree
        for index in path {
            guard case .constructed(_, let children) = node, children.indices.contains(index) else {
                throw Malformed()
            }
            node = children[index]
        }
        guard case .primitive(tag: 0x02, _) = node else { throw Malformed() }
        return try tree.replacing(at: path[...], with: integer).encoded
    }

    /// PEM (RFC 7468) with 64-character base64 lines.
    static func pem(_ label: String, _ der: [UInt8]) -> String {
        "-----BEGIN \(label)-----\n"
            + Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END \(label)-----\n"
    }
}

/// Expects `body` to throw `KeyFileError.corrupt` for `path`, whatever the reason text.
private func expectCorrupt(
    _ path: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> some Any
) {
    do {
        _ = try body()
        Issue.record(
            "expected KeyFileError.corrupt for \(path), got success", sourceLocation: sourceLocation)
    } catch let error as KeyFileError {
        guard case .corrupt(let reported, _) = error, reported == path else {
            Issue.record("expected .corrupt for \(path), got \(error)", sourceLocation: sourceLocation)
            return
        }
        #expect(
            error.description.hasPrefix("\(path) is not a valid key file: "),
            sourceLocation: sourceLocation)
        #expect(!error.isIOError && !error.isUsageError, sourceLocation: sourceLocation)
    } catch {
        Issue.record(
            "expected KeyFileError.corrupt for \(path), got \(error)", sourceLocation: sourceLocation)
    }
}

private func secure(_ text: String) throws -> SecureBytes {
    let bytes = Array(text.utf8)
    let buffer = try SecureBytes(capacity: bytes.count)
    buffer.withUnsafeMutableBytes { $0.copyBytes(from: bytes) }
    return buffer
}

/// Test-only: the passphrase as a String, to compare it.
private func string(_ secret: SecureBytes) -> String {
    secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
}

private func permissions(of path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

/// A private environment for `Passphrase.obtain`, so tests never call setenv on the shared
/// process environment while other tests run.
private final class CStringTable: @unchecked Sendable {
    private var storage: [String: UnsafeMutablePointer<CChar>] = [:]

    init(_ values: [String: String]) {
        for (name, value) in values { storage[name] = strdup(value) }
    }

    deinit {
        for pointer in storage.values { free(pointer) }
    }

    func lookup(_ name: String) -> UnsafeMutablePointer<CChar>? { storage[name] }
}

/// A pseudo-terminal standing in for /dev/tty: the test types into the master side and
/// reads what `Passphrase.obtain` writes (its prompts, and any echo) from it.
private final class PseudoTerminal: @unchecked Sendable {
    private let master: Int32
    /// Held open by the test so the slave's settings can be inspected afterwards.
    private let slave: Int32
    let slavePath: String
    private(set) var output = ""
    /// TIOCSPTLCK and TIOCGPTN (`_IOW('T', 0x31, int)`, `_IOR('T', 0x30, unsigned int)`).
    private static let setLock: UInt = 0x4004_5431
    private static let getNumber: UInt = 0x8004_5430

    init() throws {
        // posix_openpt and friends are not exported by Swift's Glibc module; this is what
        // they do on Linux: open the multiplexer, unlock the new slave, ask for its number.
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { throw TerminalSetupFailed() }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard ioctl(master, Self.setLock, &unlock) == 0, ioctl(master, Self.getNumber, &number) == 0
        else {
            close(master)
            throw TerminalSetupFailed()
        }
        slavePath = "/dev/pts/\(number)"
        slave = open(slavePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else {
            close(master)
            throw TerminalSetupFailed()
        }
    }

    deinit {
        close(slave)
        close(master)
    }

    /// Starts `Passphrase.obtain` on its own thread (it blocks reading the terminal).
    func startObtaining(confirm: Bool, prompt: String) -> ObtainSession {
        let session = ObtainSession()
        let path = slavePath
        let thread = Thread {
            let environment = CStringTable([:])
            session.finish(
                Result {
                    try Passphrase.obtain(
                        file: nil, environmentVariable: "PINION_PASSPHRASE", confirm: confirm, prompt: prompt,
                        terminalPath: path, environment: environment.lookup)
                })
        }
        thread.start()
        return session
    }

    func type(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ write(master, $0.baseAddress, $0.count) }) == bytes.count else {
            throw TerminalSetupFailed()
        }
    }

    /// Reads the master side until `text` has appeared. The 20 s bound only stops a broken
    /// implementation from hanging the suite; a passing run never comes near it.
    func waitForOutput(containing text: String) throws {
        var polls = 0
        while !output.contains(text) {
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 100)
            if ready > 0 {
                var buffer = [UInt8](repeating: 0, count: 512)
                let count = read(master, &buffer, buffer.count)
                if count > 0 { output += String(decoding: buffer.prefix(count), as: UTF8.self) }
            }
            polls += 1
            if polls > 200 { throw TerminalSetupFailed() }
        }
    }

    func echoIsOn() throws -> Bool {
        var attributes = termios()
        guard tcgetattr(slave, &attributes) == 0 else { throw TerminalSetupFailed() }
        return attributes.c_lflag & tcflag_t(ECHO) != 0
    }
}

/// The outcome of `Passphrase.obtain` running on another thread.
private final class ObtainSession: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var outcome: Result<SecureBytes, any Error>?

    func finish(_ result: Result<SecureBytes, any Error>) {
        lock.withLock { outcome = result }
        done.signal()
    }

    /// Waits for the outcome (bounded, so a hang fails instead of blocking the suite).
    func result() throws -> SecureBytes {
        guard done.wait(timeout: .now() + 20) == .success else { throw TerminalSetupFailed() }
        let result = lock.withLock { outcome }
        guard let result else { throw TerminalSetupFailed() }
        return try result.get()
    }
}

private struct TerminalSetupFailed: Error {}
