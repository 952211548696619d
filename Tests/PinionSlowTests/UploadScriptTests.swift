// deploy/rsync/upload with the real rsync, and deploy/s3/upload with the AWS CLI against moto's
// S3 emulator (PyPI moto[server], installed by scripts/install-s3-emulator): uploads phase by
// phase, and the refusals (a malformed plan, a plan for another tree, a missing file, a bucket
// that refuses) that exit non-zero leaving what clients can see untouched. No real S3 or CDN is used.

import Foundation
import PinionTestSupport
import Testing

@Suite(.serialized) struct UploadScriptTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    let rsyncUpload = repository + "/deploy/rsync/upload"
    let s3Upload = repository + "/deploy/s3/upload"
    let scope = "v1/com.example.app"
    static let pinA = "sha256/" + Data(repeating: 0xA1, count: 32).base64EncodedString()
    static let pinB = "sha256/" + Data(repeating: 0xB2, count: 32).base64EncodedString()

    /// root.json and m1.json published to tree/, m2.json signed (not published).
    func world() throws -> Workspace {
        let w = try Workspace(prefix: "pinion-upload", files: [:])
        w.standardRoot()
        w.ok(["publish", "--repo", "@tree", "@root.json"])
        w.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@p1.json"])
        w.ok(["manifest", "set-domain", "@p1.json", "api.example.com", "--pin", Self.pinA, "--pin", Self.pinB])
        w.ok(["sign", "--key", "@pins.key", "@p1.json", "-o", "@m1.json"])
        w.ok(["publish", "--repo", "@tree", "@m1.json"])
        w.ok([
            "manifest", "init", "--previous", "@m1.json", "--root", "@root.json", "--expires-in", "30d", "-o",
            "@p2.json",
        ])
        w.ok(["sign", "--key", "@pins.key", "@p2.json", "-o", "@m2.json"])
        return w
    }

    /// Every regular file below `directory`, relative, with its bytes.
    func snapshot(_ directory: String) -> [String: Data] {
        var files: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return files }
        while let name = walker.nextObject() as? String {
            if let data = FileManager.default.contents(atPath: directory + "/" + name),
                (try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.type] as? FileAttributeType)
                    == .typeRegular
            {
                files[name] = data
            }
        }
        return files
    }

    @Test func rsyncCopiesEachPlanAPhaseAtATime() throws {
        let w = try world()
        try FileManager.default.createDirectory(atPath: w.path("mirror"), withIntermediateDirectories: true)
        w.ok(["plan", "@tree", "--since", "1", "--out", "@all.json"])
        let first = try w.exec(rsyncUpload, ["@all.json", "@mirror"])
        #expect(first.status == 0, "\(first.err)")
        #expect(first.out.contains("phase roots: 1 file(s) copied"))
        #expect(snapshot(w.path("mirror")) == snapshot(w.path("tree")).filter { !$0.key.hasPrefix(".") })
        w.ok(["publish", "--repo", "@tree", "@m2.json", "--plan", "@plan2.json"])
        let second = try w.exec(rsyncUpload, ["@plan2.json", "@mirror"])
        #expect(second.status == 0, "\(second.err)")
        #expect(try w.readBytes("mirror/\(scope)/manifest.json") == (try w.readBytes("m2.json")))
        #expect(snapshot(w.path("mirror")) == snapshot(w.path("tree")))
    }

    @Test func rsyncRefusesAndCopiesNothing() throws {
        let w = try world()
        try FileManager.default.createDirectory(atPath: w.path("mirror"), withIntermediateDirectories: true)
        w.ok(["plan", "@tree", "--since", "1", "--out", "@all.json"])
        #expect(try w.exec(rsyncUpload, ["@all.json", "@mirror"]).status == 0)
        w.ok(["publish", "--repo", "@tree", "@m2.json", "--plan", "@plan2.json"])
        let before = snapshot(w.path("mirror"))

        try w.write("garbage.json", "{\"type\": \"pinion.upload-plan\", \"formatVersion\": 1, \"tree\": 3}")
        let malformed = try w.exec(rsyncUpload, ["@garbage.json", "@mirror"])
        #expect(malformed.status == 1)
        #expect(malformed.err.contains("no tree object"))

        let plan = try w.read("plan2.json")
        try w.write("escape.json", plan.replacingOccurrences(of: "\(scope)/history/2.json", with: "\(scope)/../x"))
        let escape = try w.exec(rsyncUpload, ["@escape.json", "@mirror"])
        #expect(escape.status == 1)
        #expect(escape.err.contains("a component is empty, hidden"))

        // The mirror holds another tree: its root/1.json differs.
        try w.copy("mirror", to: "other")
        try w.write("other/\(scope)/root/1.json", "{}")
        let otherBefore = snapshot(w.path("other"))
        let other = try w.exec(rsyncUpload, ["@plan2.json", "@other"])
        #expect(other.status == 1)
        #expect(other.err.contains("holds another tree"))
        #expect(snapshot(w.path("other")) == otherBefore)

        // A file changed or missing since the plan was made.
        let history = try w.readBytes("tree/\(scope)/history/2.json")
        try FileManager.default.removeItem(atPath: w.path("tree/\(scope)/history/2.json"))
        let missing = try w.exec(rsyncUpload, ["@plan2.json", "@mirror"])
        #expect(missing.status == 1)
        #expect(missing.err.contains("history/2.json: missing"))
        try w.writeBytes("tree/\(scope)/history/2.json", history + [0x0A])
        let changed = try w.exec(rsyncUpload, ["@plan2.json", "@mirror"])
        #expect(changed.status == 1)
        #expect(changed.err.contains("changed since the plan was made"))
        #expect(snapshot(w.path("mirror")) == before)

        let noPlan = try w.exec(rsyncUpload, ["@absent.json", "@mirror"])
        #expect(noPlan.status == 1)
        #expect(noPlan.err.contains("cannot read the plan"))
    }
}

/// moto's S3 server on 127.0.0.1 (an ephemeral port), for as long as the value lives.
final class S3Emulator {
    let process = Process()
    let port: Int
    let bin: String

    init(bin: String) throws {
        self.bin = bin
        process.executableURL = URL(fileURLWithPath: bin + "/python3")
        process.arguments = [
            "-c",
            """
            import sys
            from moto.server import ThreadedMotoServer
            server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
            server.start()
            print(server._server.server_port, flush=True)
            sys.stdin.read()
            server.stop()
            """,
        ]
        let out = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while let byte = try out.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data([0x0A]) {
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            process.terminate()
            throw TestSetupError(description: "moto did not start")
        }
        self.port = port
        stdinHandle = input.fileHandleForWriting
    }

    private let stdinHandle: FileHandle

    var endpoint: String { "http://127.0.0.1:\(port)" }

    var environment: [String: String] {
        [
            "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
        ]
    }

    deinit {
        try? stdinHandle.close()
        process.waitUntilExit()
    }
}

extension UploadScriptTests {
    /// The emulator's bin directory from scripts/install-s3-emulator, or nil when it cannot be
    /// installed here (then only the refusals before any S3 call are tested).
    static let emulatorBin: String? = {
        guard let result = try? runProgram(Self.repository + "/scripts/install-s3-emulator", []), result.status == 0
        else { return nil }
        return result.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }()

    func aws(_ w: Workspace, _ s3: S3Emulator, _ arguments: [String]) throws -> CommandResult {
        try w.exec(s3.bin + "/aws", ["--endpoint-url", s3.endpoint] + arguments, environment: s3.environment)
    }

    @Test func s3UploadsWithServingFieldsAndRefuses() throws {
        let w = try world()
        w.ok(["plan", "@tree", "--since", "1", "--out", "@all.json"])
        guard let bin = Self.emulatorBin else {
            // Without the emulator: a malformed plan is still refused before any S3 call.
            try w.write("garbage.json", "not json")
            let refused = try w.exec(s3Upload, ["@garbage.json", "bucket"])
            #expect(refused.status == 1)
            #expect(refused.err.contains("not a JSON upload plan"))
            return
        }
        let s3 = try S3Emulator(bin: bin)
        let env = s3.environment
        #expect(try aws(w, s3, ["s3api", "create-bucket", "--bucket", "pins"]).status == 0)

        let missingBucket = try w.exec(
            s3Upload, ["@all.json", "absent-bucket", "--endpoint-url", s3.endpoint], environment: env)
        #expect(missingBucket.status == 1)
        #expect(missingBucket.err.contains("absent-bucket"))

        let first = try w.exec(
            s3Upload,
            [
                "@all.json", "pins", "--endpoint-url", s3.endpoint, "--public-url", s3.endpoint + "/pins/", "--wait",
                "20", "--acl", "public-read",
            ],
            environment: env)
        #expect(first.status == 0, "\(first.err)")
        let head = try aws(w, s3, ["s3api", "head-object", "--bucket", "pins", "--key", "\(scope)/root/1.json"])
        #expect(head.out.contains("\"CacheControl\": \"public, max-age=31536000, immutable\""))
        #expect(head.out.contains("\"ContentType\": \"application/json\""))
        let manifest = try aws(w, s3, ["s3api", "head-object", "--bucket", "pins", "--key", "\(scope)/manifest.json"])
        #expect(manifest.out.contains("\"CacheControl\": \"no-cache\""))

        // Re-running keeps the immutable objects (same SHA-256) and succeeds.
        let again = try w.exec(s3Upload, ["@all.json", "pins", "--endpoint-url", s3.endpoint], environment: env)
        #expect(again.status == 0, "\(again.err)")
        #expect(again.out.contains("already there"))

        // Another tree in the bucket: refused before any upload.
        #expect(try aws(w, s3, ["s3api", "create-bucket", "--bucket", "other"]).status == 0)
        try w.write("fake-root.json", "{}")
        #expect(
            try aws(
                w, s3,
                [
                    "s3api", "put-object", "--bucket", "other", "--key", "\(scope)/root/1.json", "--body",
                    "fake-root.json",
                ]
            ).status == 0)
        let other = try w.exec(s3Upload, ["@all.json", "other", "--endpoint-url", s3.endpoint], environment: env)
        #expect(other.status == 1)
        #expect(other.err.contains("holds another tree"))
        let listed = try aws(w, s3, ["s3api", "list-objects-v2", "--bucket", "other", "--query", "length(Contents)"])
        #expect(listed.out.trimmingCharacters(in: .whitespacesAndNewlines) == "1")

        // An immutable object with other bytes is never replaced.
        w.ok(["publish", "--repo", "@tree", "@m2.json", "--plan", "@plan2.json"])
        try w.write("wrong-history.json", "{}")
        #expect(
            try aws(
                w, s3,
                [
                    "s3api", "put-object", "--bucket", "pins", "--key", "\(scope)/history/2.json", "--body",
                    "wrong-history.json",
                ]
            ).status == 0)
        let manifestBefore = try aws(
            w, s3, ["s3api", "get-object", "--bucket", "pins", "--key", "\(scope)/manifest.json", "before.json"])
        #expect(manifestBefore.status == 0)
        let clash = try w.exec(s3Upload, ["@plan2.json", "pins", "--endpoint-url", s3.endpoint], environment: env)
        #expect(clash.status == 1)
        #expect(clash.err.contains("exists with other bytes"))
        #expect(
            try aws(
                w, s3, ["s3api", "get-object", "--bucket", "pins", "--key", "\(scope)/manifest.json", "after.json"]
            ).status == 0)
        #expect(try w.readBytes("after.json") == (try w.readBytes("before.json")))
    }
}
