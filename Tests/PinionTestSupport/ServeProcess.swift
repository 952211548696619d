// A `pinion serve` child process, for the tests that serve a tree, stop or kill the server,
// and read what it announced.

import Foundation
import PinionCore
import PinionSystem

/// A `pinion serve` child process.
public final class ServeProcess: @unchecked Sendable {
    public let process = Process()
    private let errPipe = Pipe()
    private let outPipe = Pipe()
    public private(set) var port: UInt16 = 0
    public private(set) var firstLine = ""

    /// Starts `pinion serve ARGUMENTS`; with `openFilesLimit`, under `ulimit -n` (soft and
    /// hard) set by /bin/sh.
    public init(_ arguments: [String], openFilesLimit: Int? = nil) throws {
        if let openFilesLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments =
                ["-c", "ulimit -n \(openFilesLimit) && exec \"$0\" serve \"$@\"", pinionExecutable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: pinionExecutable)
            process.arguments = ["serve"] + arguments
        }
        process.standardOutput = outPipe
        process.standardError = errPipe
        try process.run()
        let descriptor = outPipe.fileHandleForReading.fileDescriptor
        var line: [UInt8] = []
        let deadline = IODeadline(seconds: 60)
        while !line.contains(10), SocketSupport.waitReady(descriptor, for: Int16(POLLIN), until: deadline) {
            var byte: UInt8 = 0
            guard read(descriptor, &byte, 1) == 1 else { break }
            line.append(byte)
        }
        firstLine = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .newlines)
        guard firstLine.hasPrefix("listening on https://127.0.0.1:"),
            let value = UInt16(firstLine.split(separator: ":").last ?? "")
        else {
            process.terminate()
            throw SetupFailure(description: "pinion serve did not announce itself: \(firstLine.debugDescription)")
        }
        port = value
    }

    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the exit; nil if it did not exit within `timeout` seconds (then it is killed).
    public func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }

    /// Standard error so far (after exit: all of it).
    public func standardError() -> String {
        String(decoding: errPipe.fileHandleForReading.availableData, as: UTF8.self)
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
