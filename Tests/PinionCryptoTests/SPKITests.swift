// SPKI pins (RFC 7469 §2.4) of certificates, CSRs and keys, cross-checked against the openssl CLI.

import Foundation
import PinionCrypto
import PinionSystem
import Testing

// MARK: - Support shared with TLSProbeTests.swift

/// Temporary directories, openssl runs and passphrases for the SPKI and TLS probe tests.
enum SPKITestSupport {
    static let openssl = "/usr/bin/openssl"

    struct CommandFailed: Error, CustomStringConvertible {
        let script: String
        let status: Int32
        let stderr: String
        var description: String { "script exited with \(status): \(stderr)\n--- script ---\n\(script)" }
    }

    /// A fresh directory of its own for one test; remove it with `removeDirectory`.
    static func makeDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pinion-spki-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        return url.path
    }

    static func removeDirectory(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Runs `script` with bash (`set -euo pipefail`, `openssl` = /usr/bin/openssl) in
    /// `directory`; returns its standard output.
    static func shell(_ script: String, in directory: String) throws -> String {
        let full = "set -euo pipefail\nopenssl() { \(openssl) \"$@\"; }\n" + script
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", full]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let errorPath = directory + "/.stderr-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: errorPath, contents: nil) else {
            throw CommandFailed(script: script, status: -1, stderr: "cannot create \(errorPath)")
        }
        defer { try? FileManager.default.removeItem(atPath: errorPath) }
        let errorHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        defer { try? errorHandle.close() }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errorHandle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let stderr = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            throw CommandFailed(script: script, status: process.terminationStatus, stderr: stderr)
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// `| openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary | base64` as a
    /// shell fragment: the RFC 7469 pin of the PEM public key on standard input.
    static let pinPipeline =
        "openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary | base64"

    /// A passphrase in guarded memory.
    static func secure(_ text: String) throws -> SecureBytes {
        let bytes = Array(text.utf8)
        let secure = try SecureBytes(capacity: bytes.count)
        secure.withUnsafeMutableBytes { target in
            for (index, byte) in bytes.enumerated() { target[index] = byte }
        }
        return secure
    }

    /// Creates a self-signed EC P-256 certificate `NAME.pem` (key `NAME.key`) with the
    /// given subject; returns its pin as computed by openssl.
    static func makeCertificate(_ name: String, subject: String, in directory: String) throws
        -> String
    {
        let output = try shell(
            """
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout \(name).key \
              -out \(name).pem -subj '\(subject)' -days 2 2>/dev/null
            openssl x509 -in \(name).pem -pubkey -noout | \(pinPipeline)
            """, in: directory)
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func read(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func noPassphrase() -> SecureBytes? { nil }
}

/// The SPKI error a closure throws, or nil.
private func spkiError(_ body: () throws -> [SPKIObject]) -> SPKIError? {
    do {
        _ = try body()
        return nil
    } catch let error as SPKIError {
        return error
    } catch {
        return nil
    }
}

private func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

// MARK: - Key fixtures

/// The key types `pinion spki` must describe, with the openssl options that make them.
enum SPKITestKeyType: String, CaseIterable, Sendable {
    case rsa2048 = "RSA 2048"
    case p256 = "EC P-256"
    case p384 = "EC P-384"
    case ed25519 = "Ed25519"

    var genpkeyOptions: String {
        switch self {
        case .rsa2048: return "-algorithm RSA -pkeyopt rsa_keygen_bits:2048"
        case .p256: return "-algorithm EC -pkeyopt ec_paramgen_curve:P-256"
        case .p384: return "-algorithm EC -pkeyopt ec_paramgen_curve:P-384"
        case .ed25519: return "-algorithm ED25519"
        }
    }

    var traditionalLabel: String? {
        switch self {
        case .rsa2048: return "RSA PRIVATE KEY"
        case .p256, .p384: return "EC PRIVATE KEY"
        case .ed25519: return nil
        }
    }
}

/// One way of writing a key to a file, with the openssl commands that write it from
/// `key.pem` (PKCS#8) to `subject.*` and that compute its pin from that file alone.
enum SPKITestKeyForm: String, CaseIterable, Sendable {
    case pkcs8PEM = "PKCS#8 PEM"
    case pkcs8DER = "PKCS#8 DER"
    case encryptedPKCS8PEM = "encrypted PKCS#8 PEM"
    case encryptedPKCS8DER = "encrypted PKCS#8 DER"
    case traditionalPEM = "traditional PEM"
    case traditionalEncryptedPEM = "traditional encrypted PEM"
    case traditionalDER = "traditional DER"
    case publicPEM = "public key PEM"
    case publicDER = "public key DER"
    case csrPEM = "CSR PEM"
    case csrDER = "CSR DER"

    static let passphrase = "correct horse battery staple"

    var file: String { isDER ? "subject.der" : "subject.pem" }
    var isDER: Bool { rawValue.hasSuffix("DER") }
    var isEncrypted: Bool {
        self == .encryptedPKCS8PEM || self == .encryptedPKCS8DER || self == .traditionalEncryptedPEM
    }
    var needsTraditional: Bool {
        self == .traditionalPEM || self == .traditionalEncryptedPEM || self == .traditionalDER
    }

    var kind: SPKIObject.Kind {
        switch self {
        case .publicPEM, .publicDER: return .publicKey
        case .csrPEM, .csrDER: return .certificateRequest
        default: return .privateKey
        }
    }

    /// Writes `file` from key.pem.
    var writeScript: String {
        let pass = "pass:'\(Self.passphrase)'"
        switch self {
        case .pkcs8PEM: return "cp key.pem subject.pem"
        case .pkcs8DER: return "openssl pkcs8 -topk8 -nocrypt -in key.pem -outform DER -out subject.der"
        case .encryptedPKCS8PEM:
            return "openssl pkcs8 -topk8 -v2 aes-256-cbc -in key.pem -passout \(pass) -out subject.pem"
        case .encryptedPKCS8DER:
            return
                "openssl pkcs8 -topk8 -v2 aes-256-cbc -in key.pem -passout \(pass) -outform DER -out subject.der"
        case .traditionalPEM: return "openssl pkey -in key.pem -traditional -out subject.pem"
        case .traditionalEncryptedPEM:
            return "openssl pkey -in key.pem -traditional -aes256 -passout \(pass) -out subject.pem"
        case .traditionalDER:
            return "openssl pkey -in key.pem -outform DER -out subject.der 2>/dev/null"
        case .publicPEM: return "openssl pkey -in key.pem -pubout -out subject.pem"
        case .publicDER: return "openssl pkey -in key.pem -pubout -outform DER -out subject.der"
        case .csrPEM:
            return "openssl req -new -key key.pem -subj '/CN=csr.example/O=Pinion Test' -out subject.pem"
        case .csrDER:
            return
                "openssl req -new -key key.pem -subj '/CN=csr.example/O=Pinion Test' -outform DER -out subject.der"
        }
    }

    /// Prints the openssl pin of `file`, read by openssl from that file only.
    var pinScript: String {
        let pass = "-passin pass:'\(Self.passphrase)'"
        let pipeline = SPKITestSupport.pinPipeline
        switch self {
        case .pkcs8PEM, .traditionalPEM: return "openssl pkey -in subject.pem -pubout | \(pipeline)"
        case .pkcs8DER, .traditionalDER:
            return "openssl pkey -inform DER -in subject.der -pubout | \(pipeline)"
        case .encryptedPKCS8PEM, .traditionalEncryptedPEM:
            return "openssl pkey -in subject.pem \(pass) -pubout | \(pipeline)"
        case .encryptedPKCS8DER:
            return "openssl pkey -inform DER -in subject.der \(pass) -pubout | \(pipeline)"
        case .publicPEM: return "openssl pkey -pubin -in subject.pem | \(pipeline)"
        case .publicDER: return "openssl pkey -pubin -inform DER -in subject.der | \(pipeline)"
        case .csrPEM: return "openssl req -in subject.pem -pubkey -noout | \(pipeline)"
        case .csrDER: return "openssl req -inform DER -in subject.der -pubkey -noout | \(pipeline)"
        }
    }
}

/// A key type written in one form.
struct SPKITestKeyCase: Sendable, CustomTestStringConvertible {
    let type: SPKITestKeyType
    let form: SPKITestKeyForm

    var testDescription: String { "\(type.rawValue), \(form.rawValue)" }

    static let all: [SPKITestKeyCase] = SPKITestKeyType.allCases.flatMap { type in
        SPKITestKeyForm.allCases.filter { !$0.needsTraditional || type.traditionalLabel != nil }
            .map { SPKITestKeyCase(type: type, form: $0) }
    }

    /// Writes the key in this form to `directory` and returns (path, openssl's pin).
    func make(in directory: String) throws -> (path: String, pin: String) {
        let output = try SPKITestSupport.shell(
            """
            openssl genpkey \(type.genpkeyOptions) -out key.pem
            \(form.writeScript)
            \(form.pinScript)
            """, in: directory)
        return (directory + "/" + form.file, output.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

/// The tag of the element after the leading INTEGER in a DER SEQUENCE (0x30 for PKCS#8
/// AlgorithmIdentifier, 0x02 for an RSA modulus, 0x04 for an SEC 1 private key).
private func tagAfterVersion(_ der: [UInt8]) -> UInt8? {
    guard der.count > 4, der[0] == 0x30 else { return nil }
    var index = 1
    index += der[index] < 0x80 ? 1 : 1 + Int(der[index] & 0x7f)
    guard index + 2 < der.count, der[index] == 0x02 else { return nil }
    index += 2 + Int(der[index + 1])
    return index < der.count ? der[index] : nil
}

// MARK: - Tests

@Suite("SPKI pins")
struct SPKITests {
    @Test func everySystemCertificatePinMatchesOpenSSL() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        // One bash run for all certificates; the pin pipeline is RFC 7469's, as
        // documented: x509 -pubkey | pkey -pubin -outform DER | dgst -sha256 | base64.
        let output = try SPKITestSupport.shell(
            """
            shopt -s nullglob
            for f in /etc/ssl/certs/*.pem; do
              out=$(openssl x509 -in "$f" -noout -subject -nameopt RFC2253,-esc_msb -pubkey)
              pin=$(printf '%s\\n' "${out#*$'\\n'}" | \(SPKITestSupport.pinPipeline))
              subject=${out%%$'\\n'*}
              printf '%s\\t%s\\t%s\\n' "$f" "$pin" "${subject#subject=}"
            done
            """, in: directory)
        let lines = output.split(separator: "\n")
        #expect(lines.count > 0, "no certificates in /etc/ssl/certs")
        for line in lines {
            let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false).map(
                String.init)
            try #require(fields.count == 3)
            let objects = try SPKIReader.objects(
                inFile: fields[0], passphrase: SPKITestSupport.noPassphrase)
            try #require(objects.count == 1, "\(fields[0])")
            #expect(objects[0].kind == .certificate)
            #expect(base64(objects[0].spkiSHA256) == fields[1], "\(fields[0])")
            #expect(objects[0].label == fields[2], "\(fields[0])")
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/etc/ssl/certs/ISRG_Root_X1.pem")))
    func isrgRootX1HasItsPublishedPin() throws {
        let objects = try SPKIReader.objects(
            inFile: "/etc/ssl/certs/ISRG_Root_X1.pem", passphrase: SPKITestSupport.noPassphrase)
        #expect(objects.count == 1)
        #expect(
            PinFormat.sha256.render(objects[0].spkiSHA256)
                == "sha256/C5+lpZ7tcVwmwQIMcRtPbsQtWLABXhQzejna0wHFr8M=")
        #expect(objects[0].label == "CN=ISRG Root X1,O=Internet Security Research Group,C=US")
        #expect(objects[0].keyType == "RSA 4096")
    }

    @Test(arguments: SPKITestKeyCase.all)
    func keyPinMatchesOpenSSL(_ keyCase: SPKITestKeyCase) throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let (path, expectedPin) = try keyCase.make(in: directory)
        let bytes = try SPKITestSupport.read(path)
        if keyCase.form == .traditionalDER {
            #expect(tagAfterVersion(bytes) != 0x30, "fixture is PKCS#8, not traditional")
        }
        if keyCase.form == .pkcs8DER { #expect(tagAfterVersion(bytes) == 0x30) }
        if keyCase.form == .traditionalPEM || keyCase.form == .traditionalEncryptedPEM,
            let label = keyCase.type.traditionalLabel
        {
            #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("-----BEGIN \(label)-----"))
        }

        var calls = 0
        let objects = try SPKIReader.objects(inFile: path) {
            calls += 1
            return try SPKITestSupport.secure(SPKITestKeyForm.passphrase)
        }
        try #require(objects.count == 1)
        let object = objects[0]
        #expect(base64(object.spkiSHA256) == expectedPin)
        #expect(object.kind == keyCase.form.kind)
        #expect(object.keyType == keyCase.type.rawValue)
        switch object.kind {
        case .privateKey: #expect(object.label == "private key (\(keyCase.type.rawValue))")
        case .publicKey: #expect(object.label == "public key (\(keyCase.type.rawValue))")
        case .certificateRequest: #expect(object.label == "CSR O=Pinion Test,CN=csr.example")
        case .certificate: Issue.record("unexpected certificate")
        }
        #expect(calls == (keyCase.form.isEncrypted ? 1 : 0), "passphrase asked only for encrypted keys")
    }

    @Test func spkiDERHashesToThePin() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        _ = try SPKITestSupport.makeCertificate("leaf", subject: "/CN=leaf.example", in: directory)
        let spki = try SPKITestSupport.shell(
            "openssl x509 -in leaf.pem -pubkey -noout | openssl pkey -pubin -outform DER | base64 -w0",
            in: directory)
        let object = try #require(
            try SPKIReader.objects(
                inFile: directory + "/leaf.pem", passphrase: SPKITestSupport.noPassphrase
            ).first)
        #expect(base64(object.spkiDER) == spki)
        #expect(object.spkiSHA256.count == 32)
    }

    @Test func encryptedKeyWithWrongPassphraseIsDecryptionFailure() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let (path, _) = try SPKITestKeyCase(type: .p256, form: .encryptedPKCS8PEM).make(in: directory)
        let error = spkiError {
            try SPKIReader.objects(inFile: path) { try SPKITestSupport.secure("wrong passphrase") }
        }
        #expect(error == .decryptionFailed(file: path, label: "ENCRYPTED PRIVATE KEY", line: 1))
        #expect(error?.isIOError == false)
    }

    @Test func legacyEncryptedKeyWithWrongPassphraseIsDecryptionFailure() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let (path, _) = try SPKITestKeyCase(type: .p256, form: .traditionalEncryptedPEM).make(
            in: directory)
        let error = spkiError {
            try SPKIReader.objects(inFile: path) { try SPKITestSupport.secure("wrong passphrase") }
        }
        #expect(error == .decryptionFailed(file: path, label: "EC PRIVATE KEY", line: 1))
    }

    @Test func encryptedKeyWithoutPassphraseIsPassphraseRequired() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let (path, _) = try SPKITestKeyCase(type: .p256, form: .encryptedPKCS8PEM).make(in: directory)
        let error = spkiError {
            try SPKIReader.objects(inFile: path, passphrase: SPKITestSupport.noPassphrase)
        }
        #expect(error == .passphraseRequired(file: path, label: "ENCRYPTED PRIVATE KEY", line: 1))
    }

    @Test func passphraseSourceErrorsPropagateUnchanged() throws {
        struct NoTerminal: Error {}
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let (path, _) = try SPKITestKeyCase(type: .p256, form: .encryptedPKCS8PEM).make(in: directory)
        #expect(throws: NoTerminal.self) { try SPKIReader.objects(inFile: path) { throw NoTerminal() } }
    }

    /// A hostile PBKDF2 iteration count (here 20,000,000, raised in the DER of a key openssl
    /// made at 1000) is refused before the passphrase is asked for and before decryption.
    @Test func encryptedKeyWithCostlyPBKDF2IsRefusedBeforeDecryption() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        _ = try SPKITestSupport.shell(
            """
            openssl genpkey -algorithm ed25519 -out key.pem
            openssl pkcs8 -topk8 -v2 aes-256-cbc -iter 1000 -in key.pem -passout pass:pw -outform DER -out key.der
            """, in: directory)
        let costly = try TestDER.settingInteger(
            TestDER.integer(20_000_000), at: TestDER.pbkdf2IterationsPath,
            in: try SPKITestSupport.read(directory + "/key.der"))
        let derPath = directory + "/costly.der"
        let pemPath = directory + "/costly.pem"
        try SPKITestSupport.write(costly, to: derPath)
        try SPKITestSupport.write(Array(TestDER.pem("ENCRYPTED PRIVATE KEY", costly).utf8), to: pemPath)
        for (path, label, line) in [
            (pemPath, "ENCRYPTED PRIVATE KEY", Optional(1)), (derPath, "DER encrypted private key", nil),
        ] {
            var asked = false
            let error = spkiError {
                try SPKIReader.objects(inFile: path) {
                    asked = true
                    return try SPKITestSupport.secure("pw")
                }
            }
            guard case .kdfTooCostly(let file, let reportedLabel, let reportedLine, let detail) = error else {
                Issue.record("\(path): expected .kdfTooCostly, got \(String(describing: error))")
                continue
            }
            #expect(file == path)
            #expect(reportedLabel == label)
            #expect(reportedLine == line)
            #expect(detail.contains("20000000"))
            #expect(!asked, "the passphrase was asked for")
            #expect(error?.isIOError == false)
        }
    }

    @Test func encryptedKeyWithCostlyScryptIsRefusedBeforeDecryption() throws {
        struct PassphraseAsked: Error {}
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        _ = try SPKITestSupport.shell(
            """
            openssl genpkey -algorithm ed25519 -out key.pem
            openssl pkcs8 -topk8 -scrypt -in key.pem -passout pass:pw -outform DER -out key.der
            """, in: directory)
        var costly = try TestDER.settingInteger(
            TestDER.integer(1 << 23), at: TestDER.scryptNPath, in: try SPKITestSupport.read(directory + "/key.der"))
        costly = try TestDER.settingInteger(TestDER.integer(1), at: TestDER.scryptRPath, in: costly)
        let path = directory + "/costly.pem"
        try SPKITestSupport.write(Array(TestDER.pem("ENCRYPTED PRIVATE KEY", costly).utf8), to: path)
        let error = spkiError { try SPKIReader.objects(inFile: path) { throw PassphraseAsked() } }
        guard case .kdfTooCostly(let file, _, _, let detail) = error else {
            Issue.record("expected .kdfTooCostly, got \(String(describing: error))")
            return
        }
        #expect(file == path)
        #expect(detail.contains("N=8388608"))
        #expect(error?.description.contains("too costly") == true)
    }

    @Test func onePassphraseServesEveryEncryptedKeyOfAFile() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let first = try SPKITestKeyCase(type: .p256, form: .encryptedPKCS8PEM).make(in: directory)
        let firstBytes = try SPKITestSupport.read(first.path)
        let second = try SPKITestKeyCase(type: .p384, form: .traditionalEncryptedPEM).make(
            in: directory)
        let both = directory + "/both.pem"
        try SPKITestSupport.write(firstBytes + (try SPKITestSupport.read(second.path)), to: both)
        var calls = 0
        let objects = try SPKIReader.objects(inFile: both) {
            calls += 1
            return try SPKITestSupport.secure(SPKITestKeyForm.passphrase)
        }
        #expect(objects.map { base64($0.spkiSHA256) } == [first.pin, second.pin])
        #expect(calls == 1)
    }

    @Test func derCertificatePinMatchesOpenSSL() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let pin = try SPKITestSupport.makeCertificate(
            "leaf", subject: "/C=DE/O=Pinion Test/CN=der.example", in: directory)
        _ = try SPKITestSupport.shell(
            "openssl x509 -in leaf.pem -outform DER -out leaf.der", in: directory)
        let objects = try SPKIReader.objects(
            inFile: directory + "/leaf.der", passphrase: SPKITestSupport.noPassphrase)
        #expect(objects.count == 1)
        #expect(objects.first?.kind == .certificate)
        #expect(objects.first.map { base64($0.spkiSHA256) } == pin)
        #expect(objects.first?.label == "CN=der.example,O=Pinion Test,C=DE")
        #expect(objects.first?.keyType == "EC P-256")
    }

    @Test func pemBundleYieldsEveryObjectInOrder() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        var pins: [String] = []
        var bundle: [UInt8] = Array("Bundle made by a test; text outside PEM blocks is ignored.\n".utf8)
        for name in ["one", "two", "three"] {
            pins.append(
                try SPKITestSupport.makeCertificate(name, subject: "/CN=\(name).example", in: directory))
            bundle += try SPKITestSupport.read(directory + "/\(name).pem")
        }
        let key = try SPKITestKeyCase(type: .ed25519, form: .pkcs8PEM).make(in: directory)
        bundle += try SPKITestSupport.read(key.path)
        pins.append(key.pin)
        let path = directory + "/bundle.pem"
        try SPKITestSupport.write(bundle, to: path)

        let objects = try SPKIReader.objects(inFile: path, passphrase: SPKITestSupport.noPassphrase)
        #expect(objects.map { base64($0.spkiSHA256) } == pins)
        #expect(objects.map(\.kind) == [.certificate, .certificate, .certificate, .privateKey])
        #expect(
            objects.map(\.label) == [
                "CN=one.example", "CN=two.example", "CN=three.example", "private key (Ed25519)",
            ])
    }

    @Test func pemWithoutFinalNewlineIsRead() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let pin = try SPKITestSupport.makeCertificate(
            "leaf", subject: "/CN=leaf.example", in: directory)
        var bytes = try SPKITestSupport.read(directory + "/leaf.pem")
        while bytes.last == 0x0a { bytes.removeLast() }
        let objects = try SPKIReader.objects(
            in: bytes, source: "leaf.pem", passphrase: SPKITestSupport.noPassphrase)
        #expect(objects.map { base64($0.spkiSHA256) } == [pin])
    }

    @Test func pemWithCRLFLineEndsIsRead() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let pin = try SPKITestSupport.makeCertificate(
            "leaf", subject: "/CN=leaf.example", in: directory)
        let key = try SPKITestKeyCase(type: .rsa2048, form: .traditionalPEM).make(in: directory)
        let lf = try SPKITestSupport.read(directory + "/leaf.pem") + SPKITestSupport.read(key.path)
        let crlf = lf.flatMap { $0 == 0x0a ? [0x0d, 0x0a] : [$0] }
        let path = directory + "/crlf.pem"
        try SPKITestSupport.write(crlf, to: path)
        let objects = try SPKIReader.objects(inFile: path, passphrase: SPKITestSupport.noPassphrase)
        #expect(objects.map { base64($0.spkiSHA256) } == [pin, key.pin])
    }

    @Test func pemWithByteOrderMarkIsRead() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let pin = try SPKITestSupport.makeCertificate(
            "leaf", subject: "/CN=leaf.example", in: directory)
        let bytes = [0xef, 0xbb, 0xbf] + (try SPKITestSupport.read(directory + "/leaf.pem"))
        let objects = try SPKIReader.objects(
            in: bytes, source: "bom.pem", passphrase: SPKITestSupport.noPassphrase)
        #expect(objects.map { base64($0.spkiSHA256) } == [pin])
    }

    @Test func subjectControlAndBidiCharactersAreEscaped() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        // CN = "evil" U+202E (right-to-left override) "gpj.exe" U+0085 (next line, C1 control)
        _ = try SPKITestSupport.shell(
            """
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout leaf.key -out leaf.pem \
              -days 2 -utf8 -subj "/O=Zoë/CN=evil$(printf '\\342\\200\\256')gpj.exe$(printf '\\302\\205')" 2>/dev/null
            """, in: directory)
        let objects = try SPKIReader.objects(
            inFile: directory + "/leaf.pem", passphrase: SPKITestSupport.noPassphrase)
        #expect(objects.first?.label == "CN=evil\\E2\\80\\AEgpj.exe\\C2\\85,O=Zoë")
    }

    @Test func textDumpBeforePEMBlockIsIgnored() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let pin = try SPKITestSupport.makeCertificate(
            "leaf", subject: "/CN=leaf.example", in: directory)
        _ = try SPKITestSupport.shell("openssl x509 -in leaf.pem -text -out dump.pem", in: directory)
        let objects = try SPKIReader.objects(
            inFile: directory + "/dump.pem", passphrase: SPKITestSupport.noPassphrase)
        #expect(objects.map { base64($0.spkiSHA256) } == [pin])
    }

    @Test func ecParametersBlockIsSkipped() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let output = try SPKITestSupport.shell(
            """
            openssl ecparam -name prime256v1 -genkey -out key.pem
            openssl pkey -in key.pem -pubout | \(SPKITestSupport.pinPipeline)
            """, in: directory)
        let text = try String(contentsOfFile: directory + "/key.pem", encoding: .utf8)
        #expect(text.hasPrefix("-----BEGIN EC PARAMETERS-----"))
        let objects = try SPKIReader.objects(
            inFile: directory + "/key.pem", passphrase: SPKITestSupport.noPassphrase)
        #expect(
            objects.map { base64($0.spkiSHA256) } == [
                output.trimmingCharacters(in: .whitespacesAndNewlines)
            ])
        #expect(objects.first?.label == "private key (EC P-256)")
    }

    @Test func missingFileIsAnIOError() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let path = directory + "/absent.pem"
        let error = spkiError {
            try SPKIReader.objects(inFile: path, passphrase: SPKITestSupport.noPassphrase)
        }
        #expect(error == .unreadable(file: path, errno: ENOENT))
        #expect(error?.isIOError == true)
        #expect(error?.description.hasPrefix(path + ": ") == true)
    }

    @Test func emptyFileIsRejected() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let path = directory + "/empty.pem"
        try SPKITestSupport.write([], to: path)
        let error = spkiError {
            try SPKIReader.objects(inFile: path, passphrase: SPKITestSupport.noPassphrase)
        }
        #expect(error == .empty(file: path))
        #expect(error?.isIOError == false)
        let blank = spkiError {
            try SPKIReader.objects(
                in: Array(" \r\n\n\t".utf8), source: "blank", passphrase: SPKITestSupport.noPassphrase)
        }
        #expect(blank == .empty(file: "blank"))
    }

    @Test func garbageIsUnrecognized() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let path = directory + "/garbage"
        try SPKITestSupport.write(
            Array("this is not a certificate\n".utf8) + [0x00, 0xff, 0x30, 0x82], to: path)
        let error = spkiError {
            try SPKIReader.objects(inFile: path, passphrase: SPKITestSupport.noPassphrase)
        }
        #expect(error == .unrecognized(file: path))
        #expect(error?.description.contains(path) == true)
    }

    @Test func derSequenceOfUnknownShapeIsUnrecognized() {
        // A well-formed DER SEQUENCE { INTEGER 5 } that is no certificate, CSR or key.
        let error = spkiError {
            try SPKIReader.objects(
                in: [0x30, 0x03, 0x02, 0x01, 0x05], source: "seq.der",
                passphrase: SPKITestSupport.noPassphrase)
        }
        #expect(error == .unrecognized(file: "seq.der"))
    }

    @Test func truncatedPEMIsRejected() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        _ = try SPKITestSupport.makeCertificate("leaf", subject: "/CN=leaf.example", in: directory)
        let bytes = try SPKITestSupport.read(directory + "/leaf.pem")
        let path = directory + "/truncated.pem"
        try SPKITestSupport.write(Array(bytes.prefix(bytes.count / 2)), to: path)
        let error = spkiError {
            try SPKIReader.objects(inFile: path, passphrase: SPKITestSupport.noPassphrase)
        }
        #expect(error == .truncatedPEM(file: path, label: "CERTIFICATE", line: 1))
    }

    @Test func badBase64InsidePEMIsRejected() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        _ = try SPKITestSupport.makeCertificate("leaf", subject: "/CN=leaf.example", in: directory)
        var lines = try String(contentsOfFile: directory + "/leaf.pem", encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[2] = "*" + lines[2].dropFirst()
        let error = spkiError {
            try SPKIReader.objects(
                in: Array(lines.joined(separator: "\n").utf8), source: "bad.pem",
                passphrase: SPKITestSupport.noPassphrase)
        }
        #expect(error == .invalidBase64(file: "bad.pem", label: "CERTIFICATE", line: 1))
    }

    @Test func misplacedBase64PaddingIsRejected() {
        let pem = "-----BEGIN PUBLIC KEY-----\nMA==MA==\n-----END PUBLIC KEY-----\n"
        let error = spkiError {
            try SPKIReader.objects(
                in: Array(pem.utf8), source: "pad.pem", passphrase: SPKITestSupport.noPassphrase)
        }
        #expect(error == .invalidBase64(file: "pad.pem", label: "PUBLIC KEY", line: 1))
    }

    @Test func validBase64ThatIsNotDERIsInvalidDER() {
        let pem = "junk\n-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n"
        let error = spkiError {
            try SPKIReader.objects(
                in: Array(pem.utf8), source: "hello.pem", passphrase: SPKITestSupport.noPassphrase)
        }
        guard case .invalidDER(let file, let label, let line, _) = error else {
            Issue.record("expected invalidDER, got \(String(describing: error))")
            return
        }
        #expect(file == "hello.pem" && label == "CERTIFICATE" && line == 2)
    }

    @Test func trailingBytesAfterDERInsidePEMAreRejected() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        _ = try SPKITestSupport.makeCertificate("leaf", subject: "/CN=leaf.example", in: directory)
        let padded = try SPKITestSupport.shell(
            """
            { openssl x509 -in leaf.pem -outform DER; printf 'XYZ'; } > padded.der
            printf -- '-----BEGIN CERTIFICATE-----\\n%s\\n-----END CERTIFICATE-----\\n' "$(base64 -w64 padded.der)"
            """, in: directory)
        let error = spkiError {
            try SPKIReader.objects(
                in: Array(padded.utf8), source: "padded.pem", passphrase: SPKITestSupport.noPassphrase)
        }
        #expect(
            error
                == .invalidDER(
                    file: "padded.pem", label: "CERTIFICATE", line: 1, detail: "3 bytes after the DER object")
        )
    }

    @Test func unknownPEMLabelIsNamed() {
        let pem = "-----BEGIN PINION THING-----\nAAAA\n-----END PINION THING-----\n"
        let error = spkiError {
            try SPKIReader.objects(
                in: Array(pem.utf8), source: "thing.pem", passphrase: SPKITestSupport.noPassphrase)
        }
        #expect(error == .unsupportedPEMLabel(file: "thing.pem", label: "PINION THING", line: 1))
        #expect(
            error?.description
                == "thing.pem:1: PEM block \"PINION THING\" is not a certificate, CSR, public key or private key"
        )
    }

    @Test func mismatchedEndLineIsRejected() {
        let pem = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END PUBLIC KEY-----\n"
        let error = spkiError {
            try SPKIReader.objects(
                in: Array(pem.utf8), source: "mix.pem", passphrase: SPKITestSupport.noPassphrase)
        }
        #expect(
            error
                == .malformedPEM(
                    file: "mix.pem", label: "CERTIFICATE", line: 1,
                    problem: .mismatchedEnd(found: "-----END PUBLIC KEY-----")))
        #expect(
            error?.description
                == "mix.pem:1: PEM block \"CERTIFICATE\" ends with \"-----END PUBLIC KEY-----\" instead of \"-----END CERTIFICATE-----\""
        )
    }

    @Test func parametersOnlyFileHasNoObjects() {
        let pem = "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n"
        let error = spkiError {
            try SPKIReader.objects(
                in: Array(pem.utf8), source: "params.pem", passphrase: SPKITestSupport.noPassphrase)
        }
        #expect(error == .noObjects(file: "params.pem"))
    }

    @Test func everyPinFormatRendersTheDigest() {
        let digest = (0..<32).map { UInt8($0) }
        let base64 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
        #expect(PinFormat.sha256.render(digest) == "sha256/" + base64)
        #expect(PinFormat.base64.render(digest) == base64)
        #expect(PinFormat.hpkp.render(digest) == "pin-sha256=\"" + base64 + "\"")
        #expect(
            PinFormat.hex.render(digest)
                == "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        #expect(PinFormat.allCases == [.sha256, .base64, .hpkp, .hex])
        #expect(PinFormat(rawValue: "hpkp") == .hpkp)
    }

    @Test func base64RenderingPadsEveryTailLength() {
        #expect(PinFormat.base64.render([]) == "")
        #expect(PinFormat.base64.render([0xff]) == "/w==")
        #expect(PinFormat.base64.render([0xff, 0xfe]) == "//4=")
        #expect(PinFormat.base64.render([0xff, 0xfe, 0xfd]) == "//79")
        #expect(PinFormat.hex.render([0xab, 0x0c]) == "ab0c")
    }
}
