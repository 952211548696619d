// `pinion witness` killed with SIGKILL at 200 seeded moments while a driver submits a growing log and forks of it: after every restart it still holds at least every size it acknowledged, and it never cosigns a fork.

import Foundation
import PinionCore
import PinionCrypto
import PinionLog
import PinionPublisher
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

/// A `pinion witness` child process; the verifier key and port come from its first two lines.
final class WitnessProcess: @unchecked Sendable {
    let process = Process()
    private let outPipe = Pipe()
    private(set) var port: UInt16 = 0
    private(set) var verifierKey = ""

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: pinionExecutable)
        process.arguments = ["witness"] + arguments
        process.standardOutput = outPipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let lines = try readLines(2)
        guard lines.count == 2, lines[0].hasPrefix("witness key "),
            lines[1].hasPrefix("listening on https://127.0.0.1:"),
            let port = UInt16(lines[1].split(separator: ":").last?.prefix { $0 != "/" } ?? "")
        else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw SetupFailure(description: "pinion witness did not announce itself: \(lines)")
        }
        verifierKey = String(lines[0].dropFirst("witness key ".count))
        self.port = port
    }

    private func readLines(_ count: Int) throws -> [String] {
        let descriptor = outPipe.fileHandleForReading.fileDescriptor
        var bytes: [UInt8] = []
        let deadline = IODeadline(seconds: 60)
        while bytes.filter({ $0 == 10 }).count < count,
            SocketSupport.waitReady(descriptor, for: Int16(POLLIN), until: deadline)
        {
            var byte: UInt8 = 0
            guard read(descriptor, &byte, 1) == 1 else { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Sends `signal` and waits up to `timeout` seconds for the exit status (nil: still running, then killed).
    func stop(_ signal: Int32, timeout: Double = 30) -> Int32? {
        kill(process.processIdentifier, signal)
        let deadline = IODeadline(seconds: timeout)
        while process.isRunning, !deadline.hasPassed { usleep(20_000) }
        guard !process.isRunning else {
            kill9()
            return nil
        }
        return process.terminationStatus
    }

    /// SIGKILL, then waits for the exit.
    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { if process.isRunning { kill9() } }
}

@Suite struct WitnessCrashTests {
    @Test func reloadsOnSIGHUPAndDrainsToExitZeroOnSIGTERM() throws {
        let log = try TestLog(size: 2)
        let workspace = try Workspace(prefix: "pinion-witness-signals")
        workspace.quickKey("w")
        try workspace.write(
            "config.json",
            "{\"name\": \"w1.test\", \"logs\": [{\"origin\": \"\(log.origin)\", \"key\": \"\(try log.verifierKey.text)\"}]}"
        )
        let credentials = try ServerCredentials.shared()
        let child = try WitnessProcess([
            "--config", workspace.path("config.json"), "--key", workspace.path("w.key"), "--state-dir",
            workspace.path("state"), "--cert", credentials.certificate, "--tls-key", credentials.key, "--listen",
            "127.0.0.1:0", "--access-log", "off", "--path-prefix", "/w1",
        ])
        let client = try RawTLSClient(port: child.port)
        #expect(try RunningWitness.post(client, "/w1/add-checkpoint", try log.body(old: 0, size: 2)).status == 200)
        kill(child.process.processIdentifier, SIGHUP)
        // Still answering after the reload, on a new connection.
        let after = try RawTLSClient(port: child.port)
        let fetched = after.request("GET /w1\(checkpointRoute(log.origin)) HTTP/1.1\r\nHost: w\r\n\r\n")
        #expect(fetched?.status == 200)
        #expect(child.stop(SIGTERM) == 0)
    }

    @Test(.timeLimit(.minutes(3))) func neverForgetsAnAcknowledgedSizeNorCosignsAForkAcrossTwoHundredKills() throws {
        let kills = 200
        var random = SplitMix(state: 0x5eed_2026)
        var log = try TestLog(size: 0)
        let workspace = try Workspace(prefix: "pinion-witness-crash")
        workspace.quickKey("w")
        try workspace.write(
            "config.json",
            "{\"name\": \"w1.test\", \"logs\": [{\"origin\": \"\(log.origin)\", \"key\": \"\(try log.verifierKey.text)\"}]}"
        )
        let credentials = try ServerCredentials.shared()
        let arguments = [
            "--config", workspace.path("config.json"), "--key", workspace.path("w.key"), "--state-dir",
            workspace.path("state"), "--cert", credentials.certificate, "--tls-key", credentials.key, "--listen",
            "127.0.0.1:0", "--workers", "1", "--no-rate-limit", "--access-log", "off",
        ]
        let statePath = checkpointRoute(log.origin)
        var acknowledged = 0  // the largest size the driver received a cosignature for
        var cosignatures = 0
        var forkAttempts = 0
        var inFlightKills = 0
        var witnessKey: NoteVerifierKey?

        for round in 0..<kills {
            let child = try WitnessProcess(arguments)
            let key = try NoteVerifierKey(parsing: child.verifierKey, hasher: witnessCrypto.hasher)
            #expect(witnessKey == nil || witnessKey == key)
            witnessKey = key
            let client = try RawTLSClient(port: child.port)

            // What survived the kill: at least every acknowledged size, and the honest tree.
            guard let stateResponse = client.request("GET \(statePath) HTTP/1.1\r\nHost: w\r\n\r\n") else {
                Issue.record("round \(round): no answer to GET after restart")
                return
            }
            var size = 0
            if stateResponse.status == 200 {
                let note = try SignedNote.parse(stateResponse.body)
                let checkpoint = try Checkpoint.parse(note.text, hasher: witnessMerkle)
                size = Int(checkpoint.size)
                log.grow(to: size)
                #expect(checkpoint == (try log.checkpoint(size: size)), "round \(round): the state holds a fork")
                #expect(try !note.verify(keys: [key], verifier: witnessCrypto.verifier).isEmpty)
            } else {
                #expect(stateResponse.status == 404, "round \(round): GET answered \(stateResponse.status)")
            }
            #expect(size >= acknowledged, "round \(round): state size \(size) below the acknowledged \(acknowledged)")
            if size < acknowledged { return }

            // A seeded number of requests, each growing the log or trying a fork, then the kill:
            // between requests, or right after sending one (its answer never read).
            for _ in 0..<random.number(in: 0...3) {
                let body: [UInt8]
                let target: Int
                let isFork = size > 0 && random.number(in: 0...3) == 0
                if isFork {
                    forkAttempts += 1
                    let fork = log.forked(at: random.number(in: 0...(size - 1)))
                    var grown = fork
                    target = size + random.number(in: 0...2)
                    grown.grow(to: target)
                    body = try grown.body(old: size, size: target)
                } else {
                    target = size + random.number(in: 1...5)
                    log.grow(to: target)
                    body = try log.body(old: size, size: target)
                }
                let response = try RunningWitness.post(client, "/add-checkpoint", body)
                if isFork {
                    #expect(response.status == 422, "round \(round): a fork was answered \(response.status)")
                    continue
                }
                #expect(response.status == 200, "round \(round): growth answered \(response.status)")
                guard response.status == 200 else { return }
                let checkpoint = try log.checkpoint(size: target)
                let note = SignedNote(
                    text: checkpoint.text, signatures: try SignedNote.parseSignatureLines(response.body))
                #expect(try note.verify(keys: [key], verifier: witnessCrypto.verifier).count == 1)
                cosignatures += 1
                size = target
                acknowledged = max(acknowledged, target)
            }
            if random.number(in: 0...1) == 0 {
                inFlightKills += 1
                let target = size + random.number(in: 1...5)
                log.grow(to: target)
                let body = try log.body(old: size, size: target)
                let head = "POST /add-checkpoint HTTP/1.1\r\nHost: w\r\nContent-Length: \(body.count)\r\n\r\n"
                _ = client.send(Array(head.utf8) + body)
            }
            child.kill9()
        }
        // The run did exercise growth, forks and kills mid-request.
        #expect(cosignatures > kills / 2)
        #expect(forkAttempts > 20)
        #expect(inFlightKills > kills / 4)
    }
}
