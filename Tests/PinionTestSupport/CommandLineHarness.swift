// Runs `pinion` commands in-process (output captured, clock fixed) or as the built
// executable, in a fresh temporary workspace: the harness shared by the CLI, interop,
// audit, drill, publisher and client tests.

import Foundation
import PinionCLI
import PinionCore
import Testing

/// What one command (in-process or a child process) did: its exit status and what it
/// wrote to standard output and standard error.
public struct CommandResult: Sendable {
    /// The exit status.
    public let status: Int32
    /// Everything written to standard output.
    public let out: String
    /// Everything written to standard error.
    public let err: String

    public init(status: Int32, out: String, err: String) {
        self.status = status
        self.out = out
        self.err = err
    }
}

/// Output captured from one in-process command; safe to append to from any thread.
public final class CapturedOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var outText = ""
    private var errText = ""

    public init() {}

    /// Standard output so far.
    public var out: String { lock.withLock { outText } }
    /// Standard error so far.
    public var err: String { lock.withLock { errText } }

    public func appendOut(_ text: String) { lock.withLock { outText += text } }
    public func appendErr(_ text: String) { lock.withLock { errText += text } }

    /// A `CLIContext` writing into this capture, whose clock always reads `now`.
    public func context(now: Timestamp) -> CLIContext {
        CLIContext(out: { self.appendOut($0) }, err: { self.appendErr($0) }, now: { now })
    }
}

/// Runs `pinion ARGUMENTS` in-process with the clock fixed at `now`, capturing its output.
/// Paths in `arguments` are taken as they are (the working directory is shared by
/// parallel tests: pass absolute paths).
public func runPinion(_ arguments: [String], now: Timestamp = t0) -> CommandResult {
    let captured = CapturedOutput()
    let status = PinionCommandLine.run(arguments, context: captured.context(now: now))
    return CommandResult(status: status, out: captured.out, err: captured.err)
}

/// The `pinion` executable built next to the test bundle (else `.build/debug/pinion` of
/// the package).
public let pinionExecutable: String = {
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

/// A fresh temporary directory, removed when released, in which `pinion` commands run
/// in-process at a fixed "now" (or at an explicit time) and other programs run as child
/// processes. An argument `@name` stands for the workspace file `name` (the process's
/// working directory is shared by parallel tests, so commands get absolute paths).
public final class Workspace: @unchecked Sendable {
    /// The workspace directory.
    public let directory: URL
    /// The fixed "now" of in-process commands run without an explicit time (tests never
    /// read the wall clock).
    public let now: Timestamp

    /// Creates `<temporary directory>/<prefix>-<UUID>`.
    ///
    /// - Parameters:
    ///   - prefix: the start of the directory's name (which tests made it).
    ///   - now: the clock of `run(_:)` and `ok(_:)`.
    ///   - files: text files written into the new directory, by name.
    public init(prefix: String, now: Timestamp = t0, files: [String: String] = [:]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.now = now
        for (name, text) in files { try write(name, text) }
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// The absolute path of the workspace file `name`.
    public func path(_ name: String) -> String { directory.path + "/" + name }

    /// Writes the text file `name`.
    public func write(_ name: String, _ text: String) throws { try writeBytes(name, Array(text.utf8)) }

    /// Writes the file `name`.
    public func writeBytes(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: directory.appendingPathComponent(name))
    }

    /// The file `name` as UTF-8 text.
    public func read(_ name: String) throws -> String { String(decoding: try readBytes(name), as: UTF8.self) }

    /// The bytes of the file `name`.
    public func readBytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// Whether the file (or directory) `name` exists.
    public func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path(name)) }

    /// Copies a file or a directory tree inside the workspace.
    public func copy(_ from: String, to: String) throws {
        try FileManager.default.copyItem(atPath: path(from), toPath: path(to))
    }

    /// Creates the directory `name` (and its parents); returns its path.
    public func makeDirectory(_ name: String) throws -> String {
        try FileManager.default.createDirectory(atPath: path(name), withIntermediateDirectories: true)
        return path(name)
    }

    /// `arguments` with every `@name` replaced by the path of the workspace file `name`.
    public func resolve(_ arguments: [String]) -> [String] {
        arguments.map { $0.hasPrefix("@") ? path(String($0.dropFirst())) : $0 }
    }

    /// Runs `pinion ARGS` in-process at the workspace's `now`.
    @discardableResult
    public func run(_ arguments: [String]) -> CommandResult { run(arguments, at: now) }

    /// Runs `pinion ARGS` in-process with the clock fixed at `time`.
    public func run(_ arguments: [String], at time: Timestamp) -> CommandResult {
        runPinion(resolve(arguments), now: time)
    }

    /// Runs `pinion ARGS` at the workspace's `now` and expects exit status 0 (a failed
    /// expectation; the test goes on).
    @discardableResult
    public func ok(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) -> CommandResult {
        let result = run(arguments)
        #expect(
            result.status == 0, "pinion \(arguments.joined(separator: " ")) failed: \(result.err)",
            sourceLocation: sourceLocation)
        return result
    }

    /// Runs `pinion ARGS` at `time` and requires exit status 0: throws otherwise (for
    /// set-up steps that a test cannot go on without).
    @discardableResult
    public func require(_ arguments: [String], at time: Timestamp, sourceLocation: SourceLocation = #_sourceLocation)
        throws -> CommandResult
    {
        let result = run(arguments, at: time)
        try #require(
            result.status == 0, "pinion \(arguments.joined(separator: " ")) exited \(result.status): \(result.err)",
            sourceLocation: sourceLocation)
        return result
    }

    /// Runs a program (the built `pinion`, openssl, ...) with the workspace as its working
    /// directory, `@name` arguments resolved, `PINION_PASSPHRASE` unset and `environment`
    /// added; `stdin` (default: nothing) is its standard input.
    public func exec(
        _ program: String, _ arguments: [String], environment: [String: String] = [:], stdin: [UInt8]? = nil
    ) throws -> CommandResult {
        var env = ProcessInfo.processInfo.environment
        env["PINION_PASSPHRASE"] = nil
        for (key, value) in environment { env[key] = value }
        return try runProgram(
            program, resolve(arguments), in: directory.path, environment: env, stdin: stdin ?? [])
    }

    /// Runs /usr/bin/openssl in the workspace.
    public func openssl(_ arguments: [String]) throws -> CommandResult { try exec("/usr/bin/openssl", arguments) }

    /// Runs the built `pinion` executable in the workspace.
    public func pinion(_ arguments: [String], environment: [String: String] = [:]) throws -> CommandResult {
        try exec(pinionExecutable, arguments, environment: environment)
    }
}

extension Workspace {
    /// Makes an unencrypted key pair NAME.key/NAME.pub; returns the key id.
    @discardableResult
    public func quickKey(_ name: String) -> String {
        ok(["keygen", "--out", "@" + name, "--insecure-no-passphrase"]).out.trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    /// Root (key root, 1-of-1) and pins key (1-of-1), unencrypted; root envelope root.json
    /// (version 1, its payload in root-payload.json).
    public func standardRoot(scope: String = "com.example.app") {
        quickKey("root")
        quickKey("pins")
        ok([
            "root", "init", "--scope", scope, "--root-key", "@root.pub", "--root-threshold", "1", "--pins-key",
            "@pins.pub", "--pins-threshold", "1", "-o", "@root-payload.json",
        ])
        ok(["sign", "--key", "@root.key", "@root-payload.json", "-o", "@root.json"])
    }
}
