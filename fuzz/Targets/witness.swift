// Fuzz target 8: `pinion witness`'s inputs: its configuration file (WitnessConfiguration.parse),
// the monitoring route `<origin hash>/checkpoint` (WitnessCheckpointPath), and
// add-checkpoint bodies through Witness.addCheckpoint on a real state directory (on /dev/shm
// when it exists), both raw and as sequences of honest, forked, replayed and stale
// checkpoints of a fixed-key log that the input steers.
//
// Properties: a parsed configuration has distinct origins and type 0x01 keys and parses
// again from its own JSON; a decoded origin, percent-encoded again, decodes to itself; the
// witness's size never shrinks and it only ever holds the honest tree for a size; every
// honest extension and replay is cosigned with a cosignature that verifies, every fork is
// refused with 422 and a stale old size with 409 carrying the current size; a refusal
// leaves the state unchanged; a reopened witness loads exactly the state in memory.

import Foundation
import PinionCore
import PinionCrypto
import PinionLog
import PinionTrust

@testable import PinionPublisher

private let crypto = CryptoProvider.sodium
private let merkle = MerkleHasher(CryptoProvider.sodium.hasher)
private let origin = "fuzz.pinion/witness/log"
private let maxLeaves = 80

/// Stops the run: the target's own set-up failed (not a finding in the code under test).
private func setupFailure(_ message: String) -> Never {
    report("fuzz witness: \(message)")
    abort()
}

private func seeded(_ byte: UInt8) -> Ed25519NoteSigner {
    guard let buffer = try? SecureBytes(capacity: 32) else { setupFailure("fuzz set-up: no guarded memory") }
    buffer.withUnsafeMutableBytes { $0.copyBytes(from: [UInt8](repeating: byte, count: 32)) }
    guard let key = try? Ed25519SecretKey(seed: buffer) else { setupFailure("fuzz set-up: no key") }
    return Ed25519NoteSigner(key: key)
}

private let logSigner = seeded(0x31)
private let witnessSigner = seeded(0x32)
private let leaves = (0..<maxLeaves).map { merkle.leafHash(Array("entry \($0)".utf8)) }
private let logKey: NoteVerifierKey = {
    guard
        let key = try? NoteVerifierKey(
            name: origin, type: .ed25519, publicKey: logSigner.publicKey, hasher: crypto.hasher)
    else { setupFailure("fuzz set-up: no log key") }
    return key
}()
private let configuration: WitnessConfiguration = {
    let text = "{\"name\": \"fuzz-witness\", \"logs\": [{\"origin\": \"\(origin)\", \"key\": \"\(logKey.text)\"}]}"
    guard let parsed = try? WitnessConfiguration.parse(Array(text.utf8), hasher: crypto.hasher) else {
        setupFailure("fuzz set-up: configuration refused")
    }
    return parsed
}()
private let stateRoot: String = {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    return base + "/pinion-fuzz-witness-\(getpid())"
}()

/// The witness under test and the process's model of it: its size (always the honest tree).
private final class WitnessUnderTest: @unchecked Sendable {  // the fuzzer calls from one thread
    /// Never nil outside `reopen()`.
    var witness: Witness!
    var size = 0
    var generation = 0
    /// The cosignature clock, kept across inputs: the witness (and its state on disk)
    /// outlives one input, and refuses a time before the latest one it was asked for.
    var time: UInt64 = 1_800_000_000

    init() {
        witness = WitnessUnderTest.open(generation: 0)
        // libFuzzer ends with exit(): the state directories go with the process.
        atexit { try? FileManager.default.removeItem(atPath: stateRoot) }
    }

    static func open(generation: Int) -> Witness {
        let directory = stateRoot + "/\(generation)"
        do {
            return try Witness(
                configuration: configuration, signer: witnessSigner, stateDirectory: directory, crypto: crypto)
        } catch {
            report("cannot open the witness state \(directory): \(error)")
            abort()
        }
    }

    /// Releases the witness (and its directory lock), then opens its state again.
    func reopen() {
        witness = nil
        witness = WitnessUnderTest.open(generation: generation)
    }

    /// Starts over on an empty state when the log is at its cap.
    func resetIfFull(_ needed: Int) {
        guard size + needed > maxLeaves else { return }
        try? FileManager.default.removeItem(atPath: stateRoot + "/\(generation)")
        generation += 1
        witness = nil
        witness = WitnessUnderTest.open(generation: generation)
        size = 0
    }
}

private let underTest = WitnessUnderTest()

/// The honest tree's checkpoint at every size, computed once (the fuzzer compares against them often).
private let honest: [Checkpoint] = (0...maxLeaves).map { computeCheckpoint(leaves, size: $0) }

private func checkpoint(_ hashes: [[UInt8]], size: Int) -> Checkpoint {
    hashes == leaves ? honest[size] : computeCheckpoint(hashes, size: size)
}

private func computeCheckpoint(_ hashes: [[UInt8]], size: Int) -> Checkpoint {
    guard
        let root = try? MerkleProofs.treeHash(
            size: UInt64(size), source: LeafHashes(Array(hashes[0..<size]), hasher: merkle), hasher: merkle),
        let made = try? Checkpoint(origin: origin, size: UInt64(size), rootHash: root)
    else { setupFailure("fuzz: cannot make a checkpoint") }
    return made
}

private func body(_ hashes: [[UInt8]], old: Int, size: Int) -> [UInt8] {
    let text = checkpoint(hashes, size: size).text
    guard let signature = try? SignedNote.sign(text: text, keyName: origin, signer: logSigner, hasher: crypto.hasher),
        let proof =
            old == 0 || old >= size
            ? []
            : try? MerkleProofs.consistencyProof(
                oldSize: UInt64(old), newSize: UInt64(size),
                source: LeafHashes(Array(hashes[0..<size]), hasher: merkle),
                hasher: merkle)
    else { setupFailure("fuzz: cannot sign or prove") }
    return AddCheckpointRequest(
        oldSize: UInt64(old), consistencyProof: proof, note: SignedNote(text: text, signatures: [signature])
    ).bytes
}

private func verifies(_ line: [UInt8], _ checkpoint: Checkpoint) -> Bool {
    guard let signatures = try? SignedNote.parseSignatureLines(line),
        let verified = try? SignedNote(text: checkpoint.text, signatures: signatures).verify(
            keys: [underTest.witness.verifierKey], verifier: crypto.verifier)
    else { return false }
    return verified.count == 1
}

/// The state after any input: the honest tree at the model's size (nil at size 0).
private func checkState(_ context: String) {
    let held = underTest.witness.latestCheckpoint(origin: origin)
    if underTest.size == 0 {
        expect(held == nil, "\(context): a checkpoint appeared at size 0")
    } else {
        expect(held == checkpoint(leaves, size: underTest.size), "\(context): the state is not the honest tree")
    }
}

private func steer(_ input: ArraySlice<UInt8>) {
    for byte in input.prefix(12) {
        underTest.time += UInt64(byte) * 7
        let time = underTest.time
        let size = underTest.size
        switch byte % 4 {
        case 0:  // an honest extension
            let target = size + Int(byte >> 2) % 5 + 1
            underTest.resetIfFull(target - size)
            let from = underTest.size
            let to = from + (target - size)
            let outcome = underTest.witness.addCheckpoint(body(leaves, old: from, size: to), timestamp: time)
            guard case .cosigned(let line, let cosigned) = outcome else {
                expect(false, "an honest extension \(from) -> \(to) was not cosigned: \(outcome)")
                return
            }
            expect(cosigned == checkpoint(leaves, size: to) && verifies(line, cosigned), "a bad cosignature")
            underTest.size = to
        case 1 where size > 0:  // a fork of an entry the witness holds, at its size or beyond
            var forked = leaves
            let index = Int(byte >> 2) % size
            forked[index] = merkle.leafHash(Array("fork \(index) \(byte)".utf8))
            let target = min(maxLeaves, size + Int(byte >> 4) % 3)
            let outcome = underTest.witness.addCheckpoint(body(forked, old: size, size: target), timestamp: time)
            guard case .refused(let refusal) = outcome, refusal.httpStatus == 422 else {
                expect(false, "a fork at entry \(index), size \(target), was answered \(outcome)")
                return
            }
        case 2 where size > 0:  // a replay of the current checkpoint: re-cosigned, state unchanged
            let outcome = underTest.witness.addCheckpoint(body(leaves, old: size, size: size), timestamp: time)
            guard case .cosigned(let line, let cosigned) = outcome else {
                expect(false, "a replay of size \(size) was not re-cosigned: \(outcome)")
                return
            }
            expect(cosigned == checkpoint(leaves, size: size) && verifies(line, cosigned), "a bad re-cosignature")
        case 3 where size > 0:  // a stale old size: 409 with the current size
            let old = Int(byte >> 2) % size
            let outcome = underTest.witness.addCheckpoint(body(leaves, old: old, size: size), timestamp: time)
            expect(outcome == .refused(.conflict(latestSize: UInt64(size))), "old \(old) at size \(size): \(outcome)")
        default:
            break
        }
        checkState("after steering byte \(byte)")
    }
    // What is on disk is what is in memory: a reopened witness loads the same state.
    underTest.reopen()
    checkState("after reopening the state")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWitness(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    guard let mode = bytes.first else { return 0 }
    let rest = bytes.dropFirst()
    switch mode % 4 {
    case 0:
        if let parsed = try? WitnessConfiguration.parse(Array(rest), hasher: crypto.hasher) {
            expect(Set(parsed.logs.map(\.origin)).count == parsed.logs.count, "duplicate origins accepted")
            expect(parsed.logs.allSatisfy { $0.key.type == .ed25519 }, "a cosignature key accepted as a log key")
            let entries = parsed.logs.map {
                "{\"origin\": \(JSONWriter.quote($0.origin)), \"key\": \(JSONWriter.quote($0.key.text))}"
            }
            let again = "{\"name\": \(JSONWriter.quote(parsed.name)), \"logs\": [\(entries.joined(separator: ","))]}"
            expect(
                (try? WitnessConfiguration.parse(Array(again.utf8), hasher: crypto.hasher)) == parsed,
                "a configuration does not parse again from its own JSON")
        }
    case 1:
        // The tlog-witness monitoring route: only `/<64 lowercase hex>/checkpoint` names a log,
        // and the hash of any origin text reads back from the route made of it.
        let route = String(decoding: rest, as: UTF8.self)
        if let hash = WitnessCheckpointPath.originHash(ofRoute: route[...]) {
            expect(route == "/" + hash + "/checkpoint", "a route other than /<hash>/checkpoint was accepted")
        }
        let hash = WitnessCheckpointPath.originHash(route, hasher: crypto.hasher)
        expect(
            WitnessCheckpointPath.originHash(ofRoute: ("/" + hash + "/checkpoint")[...]) == hash,
            "an origin hash does not read back from its route")
    case 2:
        let before = underTest.witness.latestCheckpoint(origin: origin)
        let outcome = underTest.witness.addCheckpoint(Array(rest), timestamp: underTest.time)
        if case .cosigned(_, let cosigned) = outcome {
            // Only the log key signs; a mutation can at most replay or extend the honest tree.
            expect(Int(cosigned.size) >= underTest.size && Int(cosigned.size) <= maxLeaves, "the size shrank or grew")
            expect(cosigned == checkpoint(leaves, size: Int(cosigned.size)), "a foreign tree was cosigned")
            underTest.size = Int(cosigned.size)
        } else {
            expect(underTest.witness.latestCheckpoint(origin: origin) == before, "a refusal changed the state")
        }
        checkState("after a raw body")
    default:
        steer(rest)
    }
    return 0
}
