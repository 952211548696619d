// Cross-checks with code nobody here wrote: Go's golang.org/x/mod sumdb/note and sumdb/tlog, and a Python cosignature vector.

import Foundation
import PinionCore
import PinionLog
import PinionPublisher
import PinionTrust
import Testing

private let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
private let fixtures = testsDirectory.appendingPathComponent("Fixtures")
private let goSource = testsDirectory.deletingLastPathComponent().appendingPathComponent("Interop/tlogcheck/main.go")

@Suite struct CosignatureVectorTests {
    /// Fixtures/cosignature-vector.txt was made by Fixtures/make_cosignature_vector.py with
    /// Debian's python3-cryptography; line 1 is the witness vkey, the rest the cosigned note.
    private func vector() throws -> (key: NoteVerifierKey, note: SignedNote) {
        let bytes = try [UInt8](Data(contentsOf: fixtures.appendingPathComponent("cosignature-vector.txt")))
        guard let newline = bytes.firstIndex(of: 0x0A) else { throw NoteError.malformedNote("no vkey line") }
        let key = try NoteVerifierKey(
            parsing: String(decoding: bytes[..<newline], as: UTF8.self), hasher: crypto.hasher)
        return (key, try SignedNote.parse(Array(bytes[(newline + 1)...])))
    }

    @Test func theIndependentPythonVectorVerifies() throws {
        let (key, note) = try vector()
        #expect(key.type == .cosignatureV1)
        #expect(
            try note.verify(keys: [key], verifier: crypto.verifier) == [
                VerifiedNoteSignature(key: key, timestamp: 1_679_315_147)
            ])
        let checkpoint = try Checkpoint.parse(note.text, hasher: merkle)
        #expect(checkpoint.size == 20_852_163)
    }

    @Test func signingWithTheVectorsSeedGivesTheVectorsBytes() throws {
        let (key, note) = try vector()
        let signer = try seededSigner(
            seed: crypto.hasher.sha256(Array("pinion tlog-cosignature vector witness seed".utf8)))
        #expect(signer.publicKey == key.publicKey)
        let signature = try Cosignature.sign(
            text: note.text, keyName: "witness.example/w1", timestamp: 1_679_315_147, signer: signer,
            hasher: crypto.hasher)
        #expect(signature == note.signatures[0])
        #expect(try vkey("witness.example/w1", .cosignatureV1, signer).text == key.text)
    }
}

@Suite struct GoInteropTests {
    /// The `go` binary, or nil when it is not installed (then the test fails under CI=true).
    private func goBinary() -> String? {
        let paths =
            (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + [
                "/usr/bin", "/usr/lib/go/bin",
            ]
        return paths.map { $0 + "/go" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @discardableResult
    private func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (
        status: Int32, output: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (name, value) in environment { env[name] = value }
        process.environment = env
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    /// Builds tlogcheck offline in GOPATH mode against Debian's golang-golang-x-mod-dev.
    private func buildChecker(go: String, in directory: URL) throws -> String {
        let binary = directory.appendingPathComponent("tlogcheck").path
        let result = try run(
            go, ["build", "-o", binary, goSource.path],
            environment: [
                "GO111MODULE": "off", "GOPATH": "/usr/share/gocode", "GOPROXY": "off", "GOFLAGS": "",
                "GOCACHE": directory.appendingPathComponent("gocache").path,
            ])
        guard result.status == 0 else {
            Issue.record("go build failed: \(result.output)")
            throw TileError.missingTile("tlogcheck")
        }
        return binary
    }

    /// Writes a log of 517 heads with checkpoints at 260 and 517, as the publisher would lay it out.
    private func writeLog(to directory: URL) throws {
        var log = try LogFixture()
        let witness = log.witnessSigners[0]
        func write(_ name: String, _ bytes: [UInt8]) throws {
            let url = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        func cosigned() throws -> SignedNote {
            let note = try log.note(cosignedBy: [])
            let line = try WitnessDecision.cosign(
                note, name: "w1.example", timestamp: 1_800_000_000, signer: witness, hasher: crypto.hasher)
            return SignedNote(text: note.text, signatures: note.signatures + (try SignedNote.parseSignatureLines(line)))
        }
        try log.appendHeads(1...260)
        let oldSize = log.size
        try write("old-checkpoint", try cosigned().bytes)
        try log.appendHeads(261...517)
        let note = try cosigned()
        try write("checkpoint", note.bytes)
        try write("manifest.proof", try log.proof(note: note).bytes)
        try write(
            "consistency", Array(try log.consistencyProof(from: oldSize).map { Base64.encode($0) + "\n" }.joined().utf8)
        )
        try write("log.vkey", Array(log.policy.logKey.text.utf8))
        try write("witness.vkey", Array(log.policy.witnesses[0].key.text.utf8))
        for (path, bytes) in log.store.files { try write(path, bytes) }
    }

    @Test func goVerifiesTheLogSwiftWroteAndRefusesAnyChangedByte() throws {
        let xmod = FileManager.default.fileExists(atPath: "/usr/share/gocode/src/golang.org/x/mod/sumdb/tlog/tlog.go")
        guard let go = goBinary(), xmod else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("go or x/mod is not installed; CI needs golang-go and golang-golang-x-mod-dev")
            }
            return
        }
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pinion-tlogcheck-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: temporary) }
        let logDirectory = temporary.appendingPathComponent("log")
        try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: true)
        let checker = try buildChecker(go: go, in: temporary)
        try writeLog(to: logDirectory)

        let good = try run(checker, ["log", logDirectory.path])
        if good.status != 0 { Issue.record("Go refused the log: \(good.output)") }
        let vector = try run(checker, ["cosig", fixtures.appendingPathComponent("cosignature-vector.txt").path])
        if vector.status != 0 { Issue.record("Go refused the Python vector: \(vector.output)") }

        var files = [String]()
        let enumerator = FileManager.default.enumerator(atPath: logDirectory.path)
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(
                atPath: logDirectory.appendingPathComponent(path).path, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                files.append(path)
            }
        }
        #expect(files.count == 16)
        var flips = 0
        for path in files.sorted() {
            let url = logDirectory.appendingPathComponent(path)
            let original = try Data(contentsOf: url)
            let step = max(1, original.count / 12)
            for position in Set(Array(stride(from: 0, to: original.count, by: step)) + [original.count - 1]).sorted() {
                var changed = original
                changed[position] ^= 0x01
                try changed.write(to: url)
                let result = try run(checker, ["log", logDirectory.path])
                if result.status == 0 { Issue.record("byte \(position) of \(path) changed, Go still accepted the log") }
                flips += 1
            }
            try original.write(to: url)
        }
        #expect(flips > 150)
        #expect(try run(checker, ["log", logDirectory.path]).status == 0)
    }
}
