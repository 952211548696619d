// Benchmark 6: the cost of one log append (LogPublishing.append: right-edge tiles read, hashing, checkpoint signed, proofs) at entry 101 and entry 10,001; index.json's rewrite reported separately.

import Foundation
import PinionCore
import PinionCrypto
import PinionLog
import PinionLogWriter
import PinionPublisher
import PinionTrust

/// Tiles in memory, counting what the append reads.
private final class MemoryTiles: TileReader {
    var files: [TileID: [UInt8]] = [:]
    var reads = 0
    var bytesRead = 0
    func readTile(_ tile: TileID) throws -> [UInt8] {
        guard let bytes = files[tile] else { throw TileError.missingTile(tile.path) }
        reads += 1
        bytesRead += bytes.count
        return bytes
    }
}

private func head(_ sequence: Int) -> HeadRecord {
    let hash = [UInt8](repeating: UInt8(truncatingIfNeeded: sequence), count: 32)
    guard
        let record = try? HeadRecord(
            scope: "com.example.app", sequence: Int64(sequence), rootVersion: 1, rootPayloadSHA256: hash,
            manifestRootVersion: 1, manifestVersion: Int64(sequence + 1), manifestPayloadSHA256: hash)
    else { fail("head record \(sequence)") }
    return record
}

/// Prints one JSON line per size (100 and 10,000 entries before the append) with the
/// append's CPU time, files and bytes written and read, and the ratios 10,001st / 101st;
/// then the index.json rewrite at 100 and 10,000 manifests.
func benchLogAppend(repetitions: Int) {
    let crypto = CryptoProvider.sodium
    let hasher = MerkleHasher(crypto.hasher)
    let origin = "example.com/pinion/com.example.app"
    guard let key = try? Ed25519SecretKey.generate() else { fail("key") }
    let signer = Ed25519NoteSigner(key: key)
    let tiles = MemoryTiles()
    var checkpoints: [Int: Checkpoint] = [:]
    // One log of 10,000 heads; the partial tiles of size 100 are kept too (they have their own paths).
    do {
        var appender = try TileLogAppender(size: 0, reader: tiles, hasher: hasher)
        for sequence in 0..<10_000 {
            try appender.append(head(sequence).bytes)
            if sequence + 1 == 100 || sequence + 1 == 10_000 {
                for write in appender.writes { tiles.files[write.tile] = write.bytes }
                checkpoints[sequence + 1] = try Checkpoint(
                    origin: origin, size: appender.size, rootHash: appender.rootHash)
            }
        }
    } catch {
        fail("building the log: \(error)")
    }
    var results: [Int: (ns: Double, written: Int, files: Int, read: Int, reads: Int)] = [:]
    var samples: [Int: [Double]] = [100: [], 10_000: []]
    var last: [Int: LogAppend] = [:]
    for _ in 0..<repetitions {
        for size in [100, 10_000] {  // interleaved, so load on the shared machine hits both alike
            guard let current = checkpoints[size] else { fail("checkpoint \(size)") }
            let nanoseconds = cpuNanosecondsPerCall(minimumNanoseconds: 100_000_000) {
                guard
                    let append = try? LogPublishing.append(
                        heads: [head(size)], current: current, reader: tiles, origin: origin, logSigner: signer,
                        crypto: crypto)
                else { fail("append at \(size)") }
                last[size] = append
                blackHole(append)
            }
            samples[size, default: []].append(nanoseconds)
        }
    }
    for size in [100, 10_000] {
        guard let current = checkpoints[size], let append = last[size] else { fail("no sample") }
        tiles.reads = 0
        tiles.bytesRead = 0
        blackHole(
            try? LogPublishing.append(
                heads: [head(size)], current: current, reader: tiles, origin: origin, logSigner: signer,
                crypto: crypto))
        results[size] = (
            median(samples[size] ?? []), append.writes.reduce(0) { $0 + $1.bytes.count }, append.writes.count,
            tiles.bytesRead, tiles.reads
        )
    }
    guard let small = results[100], let large = results[10_000] else { fail("no results") }
    for (size, result) in [(100, small), (10_000, large)] {
        var line = ResultLine()
        line["benchmark"] = "log-append"
        line["entry"] = size + 1
        line["appendNs"] = result.ns
        line["bytesWritten"] = result.written
        line["filesWritten"] = result.files
        line["bytesRead"] = result.read
        line["tilesRead"] = result.reads
        line.print()
    }
    var ratio = ResultLine()
    ratio["benchmark"] = "log-append-ratio"
    ratio["timeRatio"] = large.ns / small.ns
    ratio["bytesRatio"] = Double(large.written) / Double(small.written)
    ratio.print()

    // index.json (PinionCore's PublishedIndex), rewritten by every publish, with or without a log.
    for count in [100, 10_000] {
        var index = PublishedIndex(scope: "com.example.app")
        for version in 1...count {
            index.manifests.append(
                PublishedIndex.Entry(
                    version: Int64(version), rootVersion: 1,
                    payloadSHA256: [UInt8](repeating: UInt8(truncatingIfNeeded: version), count: 32),
                    issuedAt: Timestamp(secondsSince1970: 1_796_029_200),
                    expiresAt: Timestamp(secondsSince1970: 1_798_621_200), sequence: Int64(version)))
        }
        var bytes: [UInt8] = []
        let nanoseconds = median(
            (0..<repetitions).map { _ in
                cpuNanosecondsPerCall(minimumNanoseconds: 50_000_000) { bytes = index.serialized() }
            })
        var line = ResultLine()
        line["benchmark"] = "index-rewrite"
        line["manifests"] = count
        line["serializeNs"] = nanoseconds
        line["bytes"] = bytes.count
        line.print()
    }
}
