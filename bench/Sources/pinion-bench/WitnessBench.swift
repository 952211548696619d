// Benchmark 7: `pinion witness` cosign throughput in-process (parse, log signature check, consistency proof, persist with fsync, cosign) against raw libsodium verify + sign of the same bytes.

import BenchSodium
import Foundation
import PinionCore
import PinionCrypto
import PinionLog
import PinionPublisher
import PinionTrust

/// `witness DIR REQUESTS REPS`: a log grows by one entry per request; each repetition opens a
/// fresh witness state under DIR and times `Witness.addCheckpoint` over every request (thread
/// CPU time and wall time; the wall time includes the fsyncs of the state file and directory).
/// The reference, alternated with it, is libsodium's crypto_sign_verify_detached of each
/// request's log signature over its checkpoint text and crypto_sign_detached of its
/// cosignature/v1 message. Bodies are built beforehand, outside the timed part.
func benchWitness(directory: String, requests: Int, repetitions: Int) {
    let crypto = CryptoProvider.sodium
    let merkle = MerkleHasher(crypto.hasher)
    let origin = "bench.pinion/witness/log"
    guard let logKey = try? Ed25519SecretKey.generate(), let witnessKey = try? Ed25519SecretKey.generate(),
        let logVerifier = try? NoteVerifierKey(
            name: origin, type: .ed25519, publicKey: logKey.publicKey.raw, hasher: crypto.hasher)
    else { fail("cannot make keys") }
    let logSigner = Ed25519NoteSigner(key: logKey)
    let leaves = (0...requests).map { merkle.leafHash(Array("entry \($0)".utf8)) }
    var bodies: [[UInt8]] = []
    var texts: [[UInt8]] = []
    var logSignatures: [[UInt8]] = []
    for size in 1...requests {
        let source = LeafHashes(Array(leaves[0..<size]), hasher: merkle)
        guard let root = try? MerkleProofs.treeHash(size: UInt64(size), source: source, hasher: merkle),
            let text = try? Checkpoint(origin: origin, size: UInt64(size), rootHash: root).text,
            let signature = try? SignedNote.sign(text: text, keyName: origin, signer: logSigner, hasher: crypto.hasher),
            let proof =
                size == 1
                ? []
                : try? MerkleProofs.consistencyProof(
                    oldSize: UInt64(size - 1), newSize: UInt64(size), source: source, hasher: merkle)
        else { fail("cannot build request \(size)") }
        let note = SignedNote(text: text, signatures: [signature])
        bodies.append(AddCheckpointRequest(oldSize: UInt64(size - 1), consistencyProof: proof, note: note).bytes)
        texts.append(Array(text.utf8))
        logSignatures.append(signature.signature)
    }
    let configurationText =
        "{\"name\": \"bench-witness\", \"logs\": [{\"origin\": \"\(origin)\", \"key\": \"\(logVerifier.text)\"}]}"
    guard let configuration = try? WitnessConfiguration.parse(Array(configurationText.utf8), hasher: crypto.hasher)
    else { fail("cannot parse the witness configuration") }

    var referenceSecret = [UInt8](repeating: 0, count: 64)
    var referencePublic = [UInt8](repeating: 0, count: 32)
    crypto_sign_keypair(&referencePublic, &referenceSecret)
    let logPublic = logKey.publicKey.raw
    let cosignMessages = texts.map { Array("cosignature/v1\ntime 1800000000\n".utf8) + $0 }
    func reference() -> Double {
        var signature = [UInt8](repeating: 0, count: 64)
        let start = threadCPUNanoseconds()
        for index in 0..<requests {
            let text = texts[index]
            guard crypto_sign_verify_detached(logSignatures[index], text, UInt64(text.count), logPublic) == 0 else {
                fail("a log signature does not verify")
            }
            let message = cosignMessages[index]
            crypto_sign_detached(&signature, nil, message, UInt64(message.count), referenceSecret)
            blackHole(signature)
        }
        return Double(threadCPUNanoseconds() - start)
    }
    var run = 0
    func witness() -> (cpu: Double, wall: Double) {
        run += 1
        let state = directory + "/witness-state-\(run)"
        try? FileManager.default.removeItem(atPath: state)
        guard
            let witness = try? Witness(
                configuration: configuration, signer: Ed25519NoteSigner(key: witnessKey), stateDirectory: state,
                crypto: crypto)
        else { fail("cannot open the witness state") }
        let wallStart = wallNanoseconds()
        let start = threadCPUNanoseconds()
        for body in bodies {
            guard case .cosigned = witness.addCheckpoint(body, timestamp: 1_800_000_000) else {
                fail("the witness refused a consistent checkpoint")
            }
        }
        let cpu = Double(threadCPUNanoseconds() - start)
        let wall = Double(wallNanoseconds() - wallStart)
        try? FileManager.default.removeItem(atPath: state)
        return (cpu, wall)
    }
    // The pure part alone: the decision and the cosignature, no state file.
    let checkpoints = bodies.indices.map { index -> Checkpoint? in
        index == 0 ? nil : try? Checkpoint.parse(String(decoding: texts[index - 1], as: UTF8.self), hasher: merkle)
    }
    let logKeys = configuration.logKeys
    let witnessSigner = Ed25519NoteSigner(key: witnessKey)
    func decision() -> Double {
        let start = threadCPUNanoseconds()
        for (index, body) in bodies.enumerated() {
            guard
                let decided = try? WitnessDecision.decide(
                    body: body, logKeys: logKeys, latest: { _ in checkpoints[index] }, crypto: crypto),
                let line = try? WitnessDecision.cosign(
                    decided.note, name: configuration.name, timestamp: 1_800_000_000, signer: witnessSigner,
                    hasher: crypto.hasher)
            else { fail("the decision refused a consistent checkpoint") }
            blackHole(line)
        }
        return Double(threadCPUNanoseconds() - start)
    }
    _ = reference()
    _ = decision()
    _ = witness()
    var decisionTimes: [Double] = []
    var referenceTimes: [Double] = []
    var cpuTimes: [Double] = []
    var wallTimes: [Double] = []
    var ratios: [Double] = []
    for _ in 0..<repetitions {
        let r = reference()
        decisionTimes.append(decision())
        let w = witness()
        referenceTimes.append(r)
        cpuTimes.append(w.cpu)
        wallTimes.append(w.wall)
        ratios.append(w.cpu / r)
    }
    var line = ResultLine()
    line["benchmark"] = "witness-cosign"
    line["requests"] = requests
    line["referenceNsPerRequest"] = median(referenceTimes) / Double(requests)
    line["witnessCPUNsPerRequest"] = median(cpuTimes) / Double(requests)
    line["decisionCPUNsPerRequest"] = median(decisionTimes) / Double(requests)
    line["witnessWallNsPerRequest"] = median(wallTimes) / Double(requests)
    line["requestsPerSecondWall"] = Double(requests) / (median(wallTimes) / 1e9)
    line["ratio"] = median(ratios)
    line.print()
}
