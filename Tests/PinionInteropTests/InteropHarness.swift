// Test harness of the interop tests: runs `pinion` in-process in a fresh temporary directory
// with a fixed "now", and reads the fixtures next to this file.

import Foundation
import PinionCLI
import PinionCore
import Testing

/// Output captured from one in-process command.
final class InteropCaptured: @unchecked Sendable {
    private let lock = NSLock()
    private var outText = ""
    private var errText = ""

    var out: String { lock.withLock { outText } }
    var err: String { lock.withLock { errText } }

    func appendOut(_ text: String) { lock.withLock { outText += text } }
    func appendErr(_ text: String) { lock.withLock { errText += text } }
}

struct InteropRun {
    let status: Int32
    let out: String
    let err: String
}

/// A temporary directory in which commands run; `@name` arguments stand for its files.
final class InteropWorkspace: @unchecked Sendable {
    let directory: URL
    /// The fixed "now" of in-process commands: 2026-11-30T09:00:00Z.
    let now: Timestamp

    init(now: Timestamp = Timestamp(secondsSince1970: 1_796_029_200)) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pinion-interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.now = now
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func path(_ name: String) -> String { directory.path + "/" + name }

    func write(_ name: String, _ text: String) throws { try writeBytes(name, Array(text.utf8)) }

    func writeBytes(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: directory.appendingPathComponent(name))
    }

    func read(_ name: String) throws -> String { String(decoding: try readBytes(name), as: UTF8.self) }

    func readBytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path(name)) }

    /// Runs `pinion ARGS` in-process.
    @discardableResult
    func run(_ arguments: [String]) -> InteropRun {
        let captured = InteropCaptured()
        let now = self.now
        let context = CLIContext(out: { captured.appendOut($0) }, err: { captured.appendErr($0) }, now: { now })
        let status = PinionCommandLine.run(
            arguments.map { $0.hasPrefix("@") ? path(String($0.dropFirst())) : $0 }, context: context)
        return InteropRun(status: status, out: captured.out, err: captured.err)
    }

    /// Runs `pinion ARGS` and expects exit status 0.
    @discardableResult
    func ok(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) -> InteropRun {
        let result = run(arguments)
        #expect(
            result.status == 0, "pinion \(arguments.joined(separator: " ")) failed: \(result.err)",
            sourceLocation: sourceLocation)
        return result
    }

    /// The manifest payload file `name`, parsed strictly.
    func payload(_ name: String) throws -> ManifestPayload { try ManifestPayload.parse(try readBytes(name)) }

    /// Root (1-of-1) and pins keys, unencrypted; root envelope root.json.
    func standardRoot(scope: String = "com.example.app") {
        for name in ["root", "pins"] { ok(["keygen", "--out", "@" + name, "--insecure-no-passphrase"]) }
        ok([
            "root", "init", "--scope", scope, "--root-key", "@root.pub", "--root-threshold", "1", "--pins-key",
            "@pins.pub", "--pins-threshold", "1", "-o", "@root-payload.json",
        ])
        ok(["sign", "--key", "@root.key", "@root-payload.json", "-o", "@root.json"])
    }

    /// Signs payload file `payload` into envelope `name` with the pins key.
    func sign(_ payload: String, to name: String, _ extra: [String] = []) {
        ok(["sign", "--key", "@pins.key", "@" + payload, "-o", "@" + name] + extra)
    }
}

/// A fixture file next to this source file.
func fixture(_ relativePath: String) throws -> [UInt8] {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        .appendingPathComponent(relativePath)
    return [UInt8](try Data(contentsOf: url))
}

/// A pin of 32 equal bytes.
func testPin(_ byte: UInt8) -> String { "sha256/" + Data(repeating: byte, count: 32).base64EncodedString() }

/// The bare base64 of a `testPin`.
func testBase64(_ byte: UInt8) -> String { Data(repeating: byte, count: 32).base64EncodedString() }

/// The path of a tool when it is installed (xmllint, plutil), else nil.
func installedTool(_ name: String) -> String? {
    let candidates = ["/usr/bin/\(name)", "/opt/swift/usr/bin/\(name)", "/usr/local/bin/\(name)"]
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// Runs a program; returns its exit status and combined output.
func runProgram(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
