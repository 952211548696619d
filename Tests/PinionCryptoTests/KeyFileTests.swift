// Key files (DESIGN.md §2) against OpenSSL's command line, their failure modes, and the
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
        #expect(warning.contains(base + ".key"))
        #expect(warning.contains("0640"))
        #expect(warning.contains("chmod 600"))
        #expect(chmod(base + ".key", 0o604) == 0)
        #expect(KeyFile.insecurePermissionsWarning(path: base + ".key") != nil)
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
