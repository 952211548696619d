// Go's golang.org/x/mod sumdb/note and sumdb/tlog (Tests/Interop/tlogcheck) verify a log written by the real publish path, with the verifier keys `pinion key note-vkey` prints; one byte changed anywhere is refused.

import Foundation
import PinionCore
import PinionCrypto
import PinionLog
import PinionPublisher
import PinionTestSupport
import PinionTrust
import Testing

@Suite(.serialized) struct PublishedLogGoInteropTests {
    private static let goSource = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Interop/tlogcheck/main.go")

    private func goBinary() -> String? {
        let paths =
            (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + [
                "/usr/bin", "/usr/lib/go/bin",
            ]
        return paths.map { $0 + "/go" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws
        -> CommandResult
    {
        var env = ProcessInfo.processInfo.environment
        for (name, value) in environment { env[name] = value }
        return try runProgram(
            executable, arguments, in: FileManager.default.temporaryDirectory.path, environment: env, stdin: [])
    }

    /// The verifier key string `pinion key note-vkey` prints for `key`.
    private func noteVkey(_ key: Ed25519SecretKey, name: String, type: String, in directory: String) throws -> String {
        let base = directory + "/\(type)-\(UUID().uuidString)"
        try KeyFile.writeKeyPair(key, basePath: base, passphrase: nil, kdfIterations: 1000)
        let result = runPinion(["key", "note-vkey", base + ".pub", "--name", name, "--type", type])
        try #require(result.status == 0, "note-vkey: \(result.err)")
        return result.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func goVerifiesALogWrittenByPublishAndRefusesAnyChangedByte() throws {
        let xmod = FileManager.default.fileExists(atPath: "/usr/share/gocode/src/golang.org/x/mod/sumdb/tlog/tlog.go")
        guard let go = goBinary(), xmod else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("go or x/mod is not installed; CI needs golang-go and golang-golang-x-mod-dev")
            }
            return
        }
        // Quorum 1 with w1 only answering: tlogcheck verifies one witness, so every
        // signature line in the checkpoints is one Go checks.
        let world = try LogWorld(quorum: 1)
        world.witnesses[1].isDown = true
        world.witnesses[2].isDown = true
        let work = world.repo + "-go"
        defer { try? FileManager.default.removeItem(atPath: work) }
        try FileManager.default.createDirectory(atPath: work + "/log", withIntermediateDirectories: true)
        let checker = work + "/tlogcheck"
        let build = try run(
            go, ["build", "-o", checker, Self.goSource.path],
            environment: [
                "GO111MODULE": "off", "GOPATH": "/usr/share/gocode", "GOPROXY": "off", "GOFLAGS": "",
                "GOCACHE": work + "/gocache",
            ])
        try #require(build.status == 0, "go build: \(build.out) \(build.err)")

        // 257 manifests without a log, then a root that adds it: 258 heads in one publish
        // (a full tile and a backfill), then one more publish: the incremental path.
        try world.publish([try world.root(withLog: false)], log: false)
        for _ in 1...257 { try world.publish([try world.nextManifest()], log: false) }
        try world.publish([try world.root(version: 2), try world.nextManifest(rootVersion: 2)])
        let oldCheckpoint = try #require(world.read("log/checkpoint"))
        try world.publish([try world.nextManifest(rootVersion: 2)])

        let logDirectory = work + "/log"
        let scopeLog = world.scopeDirectory + "/log"
        try FileManager.default.copyItem(atPath: scopeLog + "/tile", toPath: logDirectory + "/tile")
        try Data(try #require(world.read("log/checkpoint"))).write(
            to: URL(fileURLWithPath: logDirectory + "/checkpoint"))
        try Data(oldCheckpoint).write(to: URL(fileURLWithPath: logDirectory + "/old-checkpoint"))
        try Data(try #require(world.read("manifest.proof"))).write(
            to: URL(fileURLWithPath: logDirectory + "/manifest.proof"))
        let hasher = MerkleHasher(sodium.hasher)
        let old = try Checkpoint.parse(try SignedNote.parse(oldCheckpoint).text, hasher: hasher)
        let new = try Checkpoint.parse(
            try SignedNote.parse(try #require(world.read("log/checkpoint"))).text, hasher: hasher)
        #expect(old.size == 258)
        #expect(new.size == 259)
        let proof = try MerkleProofs.consistencyProof(
            oldSize: old.size, newSize: new.size,
            source: TileHashSource(treeSize: new.size, reader: DiskTiles(logDirectory: scopeLog), hasher: hasher),
            hasher: hasher)
        try Data(proof.map { Base64.encode($0) + "\n" }.joined().utf8).write(
            to: URL(fileURLWithPath: logDirectory + "/consistency"))
        try Data(try noteVkey(world.logKey, name: LogWorld.origin, type: "log", in: work).utf8).write(
            to: URL(fileURLWithPath: logDirectory + "/log.vkey"))
        try Data(try noteVkey(world.witnesses[0].key, name: "w1.example", type: "witness", in: work).utf8).write(
            to: URL(fileURLWithPath: logDirectory + "/witness.vkey"))

        let good = try run(checker, ["log", logDirectory])
        try #require(good.status == 0, "Go refused the published log: \(good.out) \(good.err)")

        var files = [String]()
        let enumerator = FileManager.default.enumerator(atPath: logDirectory)
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: logDirectory + "/" + path, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                files.append(path)
            }
        }
        var flips = 0
        for path in files.sorted() {
            let url = URL(fileURLWithPath: logDirectory + "/" + path)
            let original = try Data(contentsOf: url)
            let step = max(1, original.count / 8)
            for position in Set(Array(stride(from: 0, to: original.count, by: step)) + [original.count - 1]).sorted() {
                var changed = original
                changed[position] ^= 0x01
                try changed.write(to: url)
                if try run(checker, ["log", logDirectory]).status == 0 {
                    Issue.record("byte \(position) of \(path) changed, Go still accepted the log")
                }
                flips += 1
            }
            try original.write(to: url)
        }
        #expect(files.contains("manifest.proof") && files.contains("tile/0/000"))
        #expect(flips > 8 * files.count)
        #expect(try run(checker, ["log", logDirectory]).status == 0)
    }
}
