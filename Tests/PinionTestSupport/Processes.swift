// Child processes of the tests: run a program and capture what it printed.

import Foundation

/// Runs `program` with `arguments` to completion and captures its output.
///
/// - Parameters:
///   - directory: the working directory (nil: this process's).
///   - environment: the whole environment (nil: this process's).
///   - stdin: written to standard input, which is then closed (nil: /dev/null).
///   - mergeStandardError: standard error goes into the same pipe as standard output, so
///     `out` holds both, interleaved as written, and `err` is empty.
/// - Returns: the exit status and the output, decoded as UTF-8.
public func runProgram(
    _ program: String, _ arguments: [String], in directory: String? = nil, environment: [String: String]? = nil,
    stdin: [UInt8]? = nil, mergeStandardError: Bool = false
) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    if let environment { process.environment = environment }
    let outPipe = Pipe()
    let errPipe = mergeStandardError ? outPipe : Pipe()
    process.standardOutput = outPipe
    process.standardError = errPipe
    let inPipe = stdin.map { _ in Pipe() }
    process.standardInput = inPipe ?? FileHandle.nullDevice
    try process.run()
    if let inPipe, let stdin {
        if !stdin.isEmpty { inPipe.fileHandleForWriting.write(Data(stdin)) }
        try inPipe.fileHandleForWriting.close()
    }
    let out = outPipe.fileHandleForReading.readDataToEndOfFile()
    let err = mergeStandardError ? Data() : errPipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CommandResult(
        status: process.terminationStatus, out: String(decoding: out, as: UTF8.self),
        err: String(decoding: err, as: UTF8.self))
}

/// A set-up step of a test helper failed (openssl, python3, a server, files).
public struct TestSetupError: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}

/// A new empty directory `<temporary directory>/<prefix>-<UUID>`; the caller removes it.
public func makeTemporaryDirectory(prefix: String) throws(TestSetupError) -> String {
    let path = FileManager.default.temporaryDirectory.path + "/\(prefix)-\(UUID().uuidString)"
    do {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    } catch {
        throw TestSetupError(description: "cannot create \(path): \(error)")
    }
    return path
}

/// Runs a tool found in PATH (`arguments[0]`, through /usr/bin/env) in `directory`, with
/// standard input and output at /dev/null; throws with its standard error when it fails.
public func runTool(_ arguments: [String], in directory: String) throws(TestSetupError) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    let errorPath = directory + "/tool-\(UUID().uuidString).stderr"
    _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
    defer { try? FileManager.default.removeItem(atPath: errorPath) }
    guard let errorHandle = FileHandle(forWritingAtPath: errorPath) else {
        throw TestSetupError(description: "cannot open \(errorPath)")
    }
    defer { try? errorHandle.close() }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = errorHandle
    do {
        try process.run()
    } catch {
        throw TestSetupError(description: "cannot run \(arguments.joined(separator: " ")): \(error)")
    }
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        let message = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        throw TestSetupError(
            description: "\(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(message)")
    }
}
