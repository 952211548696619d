// Benchmark 4: `pinion audit` of a 10,000-version history against libsodium verification
// of the same 10,000 signatures alone.

import BenchSodium
import Foundation
import PinionCore

#if canImport(Glibc)
    import Glibc
#endif

/// `audit DIR PINION VERSIONS REPS`: times `PINION audit` as a child process (its user +
/// system CPU time, from wait4 via RUSAGE_CHILDREN; start-up included) and, alternately,
/// crypto_sign_verify_detached over the PAE of every history file (inputs read and parsed
/// beforehand, outside the timed part).
func benchAudit(directory: String, pinion: String, versions: Int, repetitions: Int) {
    let tree = directory + "/history-tree"
    let rootPath = directory + "/history-root.json"
    guard let rootEnvelope = try? Envelope.parse(readFile(rootPath)),
        let root = try? RootPayload.parse(rootEnvelope.payload, crypto: .sodium)
    else { fail("cannot read \(rootPath)") }
    var inputs: [(signature: [UInt8], pae: [UInt8], key: [UInt8])] = []
    for version in 1...versions {
        let path = tree + "/v1/\(benchScope)/history/\(version).json"
        guard let envelope = try? Envelope.parse(readFile(path)), let signature = envelope.signatures.first,
            let key = root.publicKey(for: signature.keyID)
        else { fail("cannot read \(path)") }
        inputs.append((signature.signature, envelope.signingInput, key))
    }
    func reference() -> Double {
        let start = threadCPUNanoseconds()
        for input in inputs {
            guard
                crypto_sign_verify_detached(input.signature, input.pae, UInt64(input.pae.count), input.key) == 0
            else { fail("a history signature does not verify") }
        }
        return Double(threadCPUNanoseconds() - start)
    }
    func audit() -> (cpu: Double, wall: Double) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: pinion)
        process.arguments = ["audit", "--root", rootPath, tree]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        var before = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &before)
        let start = wallNanoseconds()
        do { try process.run() } catch { fail("cannot run \(pinion): \(error)") }
        process.waitUntilExit()
        let wall = Double(wallNanoseconds() - start)
        var after = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &after)
        guard process.terminationStatus == 0 else { fail("pinion audit exited \(process.terminationStatus)") }
        func nanoseconds(_ time: timeval) -> Double { Double(time.tv_sec) * 1e9 + Double(time.tv_usec) * 1e3 }
        let cpu =
            nanoseconds(after.ru_utime) + nanoseconds(after.ru_stime) - nanoseconds(before.ru_utime)
            - nanoseconds(before.ru_stime)
        return (cpu, wall)
    }
    _ = reference()
    _ = audit()
    var referenceTimes: [Double] = []
    var auditTimes: [Double] = []
    var auditWalls: [Double] = []
    var ratios: [Double] = []
    for _ in 0..<repetitions {
        let r = reference()
        let a = audit()
        referenceTimes.append(r)
        auditTimes.append(a.cpu)
        auditWalls.append(a.wall)
        ratios.append(a.cpu / r)
    }
    var line = ResultLine()
    line["benchmark"] = "audit"
    line["versions"] = versions
    line["referenceNs"] = median(referenceTimes)
    line["auditCPUNs"] = median(auditTimes)
    line["auditWallNs"] = median(auditWalls)
    line["ratio"] = median(ratios)
    line["ratios"] = ratios
    line["repetitions"] = repetitions
    line.print()
}
