// Benchmark: a client refresh with manifest.proof (docs/DESIGN.md §12) against the same refresh without a log, at 10 and 10,000 domains, with the proof's own cost split into signature checks and hashing.

import Foundation
import PinionCore
import PinionCrypto
import PinionLinux
import PinionLog
import PinionLogWriter

/// One scope published twice, with and without a `log` member: the same keys and the same
/// manifest payload (signed under each root), a log of `logSize` heads whose last names the
/// manifest, cosigned by 2 of 3 witnesses (quorum 2).
struct LogRefreshFixture {
    let plainCore: TrustCore
    let loggedCore: TrustCore
    let plainManifest: [UInt8]
    let loggedManifest: [UInt8]
    let proof: [UInt8]
    let policy: LogPolicy
    let loggedRoot: VerifiedRoot
    let limits: Limits
    let now: Timestamp

    init(domains count: Int, logSize: Int) {
        let now = Timestamp(Date())
        self.now = now
        let rootKey = newKey()
        let pinsKey = newKey()
        let hasher = SodiumSHA256()
        let merkle = MerkleHasher(hasher)
        let origin = "bench.example/\(benchScope)"
        let logSigner = Ed25519NoteSigner(key: newKey())
        let witnessSigners = (0..<3).map { _ in Ed25519NoteSigner(key: newKey()) }
        guard
            let logKey = try? NoteVerifierKey(
                name: origin, type: .ed25519, publicKey: logSigner.publicKey, hasher: hasher),
            let witnesses = try? witnessSigners.enumerated().map({ index, signer in
                LogPolicy.Witness(
                    key: try NoteVerifierKey(
                        name: "w\(index).bench.example", type: .cosignatureV1, publicKey: signer.publicKey,
                        hasher: hasher),
                    url: "https://w\(index).bench.example")
            }),
            let policy = try? LogPolicy(
                origin: origin, logKey: logKey, witnesses: witnesses, quorum: 2, maxCheckpointAge: day,
                checkpointGrace: 7 * day)
        else { fail("cannot build the log policy") }
        self.policy = policy

        func root(log: LogPolicy?) -> [UInt8] {
            var payload = try? RootPayload.parse(
                Envelope.parse(
                    makeRoot(rootKey: rootKey, pinsKey: pinsKey, issuedAt: now.adding(seconds: -day))
                        .serialized()
                ).payload, crypto: .sodium)
            payload?.log = log
            guard let payload else { fail("cannot build the root") }
            return signEnvelope(.root, payload.serialized(), with: rootKey).serialized()
        }
        var domains = [ManifestPayload.Domain(name: pinnedName, includeSubdomains: true, pins: [randomPin()])]
        for index in 1..<count {
            domains.append(
                ManifestPayload.Domain(
                    name: "s\(index).pinion-bench.example", includeSubdomains: index % 2 == 0,
                    pins: [randomPin(), randomPin(), randomPin()]))
        }
        let payload = ManifestPayload(
            scope: benchScope, rootVersion: 1, version: 1, issuedAt: now.adding(seconds: -3600),
            expiresAt: now.adding(seconds: 30 * day), domains: domains)
        let manifest = signEnvelope(.pins, payload.serialized(), with: pinsKey).serialized()
        plainManifest = manifest
        loggedManifest = manifest
        limits = benchLimits(for: manifest)
        let plainRoot = root(log: nil)
        let loggedRootBytes = root(log: policy)
        guard
            let plainCore = try? TrustCore(scope: benchScope, embeddedRoot: plainRoot, crypto: .sodium, limits: limits),
            let loggedCore = try? TrustCore(
                scope: benchScope, embeddedRoot: loggedRootBytes, crypto: .sodium, limits: limits)
        else { fail("the benchmark roots do not verify") }
        self.plainCore = plainCore
        self.loggedCore = loggedCore
        loggedRoot = loggedCore.initialState().chain.newest

        // The log: logSize - 1 earlier heads, then the head naming this manifest.
        let tiles = BenchTiles()
        guard var appender = try? TileLogAppender(size: 0, reader: tiles, hasher: merkle) else { fail("appender") }
        var heads: [HeadRecord] = []
        let rootSHA = hasher.sha256((try? Envelope.parse(loggedRootBytes).payload) ?? [])
        let manifestSHA = hasher.sha256((try? Envelope.parse(manifest, limits: limits).payload) ?? [])
        for sequence in 0..<logSize {
            let last = sequence == logSize - 1
            guard
                let head = try? HeadRecord(
                    scope: benchScope, sequence: Int64(sequence), rootVersion: 1, rootPayloadSHA256: rootSHA,
                    manifestRootVersion: 1, manifestVersion: 1,
                    manifestPayloadSHA256: last ? manifestSHA : hasher.sha256(Array("old \(sequence)".utf8))),
                (try? appender.append(head.bytes)) != nil
            else { fail("cannot append head \(sequence)") }
            heads.append(head)
        }
        tiles.store(appender.writes)
        let size = UInt64(logSize)
        let time = UInt64(now.secondsSince1970 - 60)
        guard let checkpoint = try? Checkpoint(origin: origin, size: size, rootHash: appender.rootHash),
            let logLine = try? SignedNote.sign(
                text: checkpoint.text, keyName: origin, signer: logSigner, hasher: hasher),
            let cosignatures = try? (0..<2).map({ index in
                try Cosignature.sign(
                    text: checkpoint.text, keyName: "w\(index).bench.example", timestamp: time,
                    signer: witnessSigners[index], hasher: hasher)
            }),
            let inclusion = try? MerkleProofs.inclusionProof(
                index: size - 1, size: size, source: TileHashSource(treeSize: size, reader: tiles, hasher: merkle),
                hasher: merkle)
        else { fail("cannot build the proof") }
        let note = SignedNote(text: checkpoint.text, signatures: [logLine] + cosignatures)
        proof =
            TlogProof(extra: heads[logSize - 1].bytes, index: size - 1, inclusionProof: inclusion, checkpointNote: note)
            .bytes
    }

    func plain() -> RefreshedState {
        plainCore.refresh(
            plainCore.initialState(), startTime: now, fetcher: MemoryFetcher(manifest: plainManifest, etag: "\"bench\"")
        )
    }

    func logged() -> RefreshedState {
        loggedCore.refresh(
            loggedCore.initialState(), startTime: now,
            fetcher: MemoryFetcher(manifest: loggedManifest, etag: "\"bench\"", proof: proof))
    }
}

/// Tiles in memory for building the benchmark log.
final class BenchTiles: TileReader {
    var files: [String: [UInt8]] = [:]

    func readTile(_ tile: TileID) throws -> [UInt8] {
        guard let bytes = files[tile.path] else { throw TileError.missingTile(tile.path) }
        return bytes
    }

    func store(_ writes: [TileWrite]) {
        for write in writes { files[write.tile.path] = write.bytes }
    }
}

/// `log-refresh REPS`: one result line per manifest size (10 and 10,000 domains), log of 1,000 heads.
func benchLogRefresh(repetitions: Int) {
    for count in [10, 10_000] {
        let fixture = LogRefreshFixture(domains: count, logSize: 1000)
        guard case .updated = fixture.plain().outcome, case .updated = fixture.logged().outcome else {
            fail("a benchmark refresh did not update: \(fixture.logged().outcome)")
        }
        var plainTimes: [Double] = []
        var loggedTimes: [Double] = []
        var ratios: [Double] = []
        var phases: [String: [Double]] = [:]
        let identity = ManifestIdentity(
            scope: benchScope, rootVersion: 1, version: 1,
            payloadSHA256: SodiumSHA256().sha256(
                (try? Envelope.parse(fixture.loggedManifest, limits: fixture.limits).payload) ?? []))
        let root = RootIdentity(version: 1, payloadSHA256: fixture.loggedRoot.payloadSHA256)
        let parsed = try? TlogProof.parse(fixture.proof)
        guard let parsed else { fail("the benchmark proof does not parse") }
        let message = Array(parsed.checkpointNote.text.utf8)
        let signature = parsed.checkpointNote.signatures[0].signature
        let merkle = MerkleHasher(SodiumSHA256())
        guard let checkpoint = try? Checkpoint.parse(parsed.checkpointNote.text, hasher: merkle) else {
            fail("the benchmark checkpoint does not parse")
        }
        for _ in 0..<repetitions {
            let p = cpuNanosecondsPerCall { blackHole(fixture.plain()) }
            let l = cpuNanosecondsPerCall { blackHole(fixture.logged()) }
            plainTimes.append(p)
            loggedTimes.append(l)
            ratios.append(l / p)
            phases["logVerify", default: []].append(
                cpuNanosecondsPerCall {
                    blackHole(
                        try? LogVerification.verify(
                            proofBytes: fixture.proof, policy: fixture.policy, manifest: identity, newestRoot: root,
                            stored: nil, now: fixture.now.secondsSince1970, crypto: .sodium))
                })
            phases["proofParse", default: []].append(
                cpuNanosecondsPerCall { blackHole(try? TlogProof.parse(fixture.proof)) })
            // One Ed25519 verification of the checkpoint text: the log check; each cosignature
            // verifies a slightly longer message, so about three of these in all.
            phases["oneSignatureCheck", default: []].append(
                cpuNanosecondsPerCall {
                    blackHole(
                        CryptoProvider.sodium.verifier.isValidSignature(
                            signature, of: message, publicKey: fixture.policy.logKey.publicKey))
                })
            phases["inclusionHashing", default: []].append(
                cpuNanosecondsPerCall {
                    blackHole(
                        try? parsed.verifyInclusion(
                            leafHash: merkle.leafHash(parsed.extra ?? []),
                            checkpoint: checkpoint, hasher: merkle))
                })
        }
        var line = ResultLine()
        line["benchmark"] = "log-refresh"
        line["domains"] = count
        line["logSize"] = 1000
        line["proofBytes"] = fixture.proof.count
        line["inclusionProofHashes"] = parsed.inclusionProof.count
        line["withoutLogNs"] = median(plainTimes)
        line["withLogNs"] = median(loggedTimes)
        line["ratio"] = median(ratios)
        line["ratios"] = ratios
        line["repetitions"] = repetitions
        line["phasesNs"] = phases.mapValues { median($0) }
        line.print()
    }
}
