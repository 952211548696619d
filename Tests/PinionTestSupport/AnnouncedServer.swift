// A `pinion serve` child that announces its HTTPS and metrics URLs, for the runbook and
// `pinion status` tests.

import Foundation
import PinionCore
import PinionSystem

/// A `pinion serve` child that announces its HTTPS and (when asked) metrics URLs.
public final class AnnouncedServer: @unchecked Sendable {
    public let process = Process()
    private let outPipe = Pipe()
    public private(set) var url = ""
    public private(set) var metricsURL: String?

    public init(_ arguments: [String], expectMetrics: Bool) throws {
        process.executableURL = URL(fileURLWithPath: pinionExecutable)
        process.arguments = arguments
        process.standardOutput = outPipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let descriptor = outPipe.fileHandleForReading.fileDescriptor
        let deadline = IODeadline(seconds: 60)
        var lines: [String] = []
        var line: [UInt8] = []
        while lines.count < (expectMetrics ? 2 : 1),
            SocketSupport.waitReady(descriptor, for: Int16(POLLIN), until: deadline)
        {
            var byte: UInt8 = 0
            guard read(descriptor, &byte, 1) == 1 else { break }
            if byte == 10 {
                lines.append(String(decoding: line, as: UTF8.self))
                line = []
            } else {
                line.append(byte)
            }
        }
        guard let first = lines.first, first.hasPrefix("listening on ") else {
            kill(process.processIdentifier, SIGKILL)
            throw SetupFailure(description: "pinion serve did not announce itself: \(lines)")
        }
        url = String(first.dropFirst("listening on ".count))
        if expectMetrics {
            guard lines.count == 2, lines[1].hasPrefix("metrics on ") else {
                kill(process.processIdentifier, SIGKILL)
                throw SetupFailure(description: "no metrics line: \(lines)")
            }
            metricsURL = String(lines[1].dropFirst("metrics on ".count))
        }
    }

    /// SIGTERM and wait; the exit status.
    public func stop() -> Int32 {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
