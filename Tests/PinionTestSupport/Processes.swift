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
