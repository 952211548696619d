// Test harness: runs `pinion` commands in-process (captured output) or as the built
// executable, in a fresh temporary directory per test.

import Foundation
import PinionCLI
import PinionCore
import Testing

/// Output captured from one in-process command.
final class Captured: @unchecked Sendable {
    private let lock = NSLock()
    private var outText = ""
    private var errText = ""

    var out: String { lock.withLock { outText } }
    var err: String { lock.withLock { errText } }

    func appendOut(_ text: String) { lock.withLock { outText += text } }
    func appendErr(_ text: String) { lock.withLock { errText += text } }
}

struct Result {
    let status: Int32
    let out: String
    let err: String
}

/// A temporary directory with helpers to run commands in it.
final class Workspace: @unchecked Sendable {
    let directory: URL
    /// The fixed "now" of in-process commands (tests never read the wall clock).
    let now: Timestamp

    init(now: Timestamp = Timestamp(secondsSince1970: 1_796_029_200)) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pinion-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.now = now
        try write("passphrase", "correct horse battery staple\n")
        try write("wrong-passphrase", "not the passphrase\n")
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func path(_ name: String) -> String { directory.path + "/" + name }

    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: directory.appendingPathComponent(name))
    }

    func writeBytes(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: directory.appendingPathComponent(name))
    }

    func read(_ name: String) throws -> String {
        String(decoding: try readBytes(name), as: UTF8.self)
    }
    func readBytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }
    func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path(name)) }

    /// Runs `pinion ARGS` in-process. An argument `@name` stands for the workspace file
    /// `name` (the process's working directory is shared by parallel tests, so commands
    /// get absolute paths).
    @discardableResult
    func run(_ arguments: [String]) -> Result {
        let captured = Captured()
        let now = self.now
        let context = CLIContext(
            out: { captured.appendOut($0) }, err: { captured.appendErr($0) }, now: { now })
        let status = PinionCommandLine.run(resolve(arguments), context: context)
        return Result(status: status, out: captured.out, err: captured.err)
    }

    func resolve(_ arguments: [String]) -> [String] {
        arguments.map { $0.hasPrefix("@") ? path(String($0.dropFirst())) : $0 }
    }

    /// Runs `pinion ARGS` and expects exit status 0.
    @discardableResult
    func ok(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) -> Result {
        let result = run(arguments)
        #expect(
            result.status == 0, "pinion \(arguments.joined(separator: " ")) failed: \(result.err)",
            sourceLocation: sourceLocation)
        return result
    }

    /// Runs a program (the built `pinion`, openssl, ...) with the workspace as its directory.
    func exec(
        _ program: String, _ arguments: [String], environment: [String: String] = [:],
        stdin: [UInt8]? = nil
    ) throws
        -> Result
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = resolve(arguments)
        process.currentDirectoryURL = directory
        var env = ProcessInfo.processInfo.environment
        env["PINION_PASSPHRASE"] = nil
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let outPipe = Pipe()
        let errPipe = Pipe()
        let inPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = inPipe
        try process.run()
        if let stdin { inPipe.fileHandleForWriting.write(Data(stdin)) }
        try inPipe.fileHandleForWriting.close()
        let out = outPipe.fileHandleForReading.readDataToEndOfFile()
        let err = errPipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, out: String(decoding: out, as: UTF8.self),
            err: String(decoding: err, as: UTF8.self))
    }

    func openssl(_ arguments: [String]) throws -> Result { try exec("/usr/bin/openssl", arguments) }

    /// Runs the built `pinion` executable.
    func pinion(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        try exec(pinionExecutable, arguments, environment: environment)
    }
}

/// The `pinion` executable built next to the test bundle.
let pinionExecutable: String = {
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("pinion").path,
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent(".build/debug/pinion").path,
    ]
    return candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        ?? candidates[1]
}()

extension Workspace {
    /// Makes an unencrypted key pair NAME.key/NAME.pub quickly; returns the key id.
    @discardableResult
    func quickKey(_ name: String) -> String {
        ok(["keygen", "--out", "@" + name, "--insecure-no-passphrase"]).out.trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    /// Root (key root, 1-of-1), pins key, root envelope root.json; version 1.
    func standardRoot(scope: String = "com.example.app") {
        quickKey("root")
        quickKey("pins")
        ok([
            "root", "init", "--scope", scope, "--root-key", "@root.pub", "--root-threshold", "1",
            "--pins-key", "@pins.pub",
            "--pins-threshold", "1", "-o", "@root-payload.json",
        ])
        ok(["sign", "--key", "@root.key", "@root-payload.json", "-o", "@root.json"])
    }

    /// A signed manifest manifest.json with one enforced domain and two pins.
    func standardManifest(pins: [String] = [pinA, pinB], name: String = "manifest.json") {
        ok([
            "manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@payload.json",
            "--force",
        ])
        ok(
            ["manifest", "set-domain", "@payload.json", "api.example.com"]
                + pins.flatMap { ["--pin", $0] })
        ok(["sign", "--key", "@pins.key", "@payload.json", "-o", "@" + name])
    }
}

let pinA = "sha256/" + Data(repeating: 0xA1, count: 32).base64EncodedString()
let pinB = "sha256/" + Data(repeating: 0xB2, count: 32).base64EncodedString()
let pinC = "sha256/" + Data(repeating: 0xC3, count: 32).base64EncodedString()
