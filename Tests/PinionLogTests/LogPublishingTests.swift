// The publisher's log steps end to end with pure witnesses: append, cosign by quorum, manifest.proof the client accepts, refresh.

import PinionCore
import PinionLog
import PinionLogWriter
import PinionPublisher
import PinionTrust
import Testing

private let now: Int64 = 1_800_000_000

/// A witness as its server would run it: the pure decision plus its stored latest checkpoint.
private struct PureWitness {
    let index: Int
    var latest: Checkpoint?
    var up = true

    mutating func post(_ body: [UInt8], log: LogFixture, at time: Int64) throws -> (status: Int, body: [UInt8]) {
        let latest = self.latest
        do {
            let (checkpoint, note) = try WitnessDecision.decide(
                body: body, logKeys: [LogFixture.origin: [log.policy.logKey]], latest: { _ in latest }, crypto: crypto)
            self.latest = checkpoint
            let line = try WitnessDecision.cosign(
                note, name: "w\(index + 1).example", timestamp: UInt64(time), signer: log.witnessSigners[index],
                hasher: crypto.hasher)
            return (200, line)
        } catch let refusal as WitnessRefusal {
            if case .conflict(let size) = refusal { return (409, Array("\(size)\n".utf8)) }
            return (refusal.httpStatus, [])
        }
    }
}

private func head(_ sequence: Int64, manifest: Int64) throws -> HeadRecord {
    try HeadRecord(
        scope: "example", sequence: sequence, rootVersion: 1, rootPayloadSHA256: LogFixture.digest("root 1"),
        manifestRootVersion: 1, manifestVersion: manifest,
        manifestPayloadSHA256: LogFixture.digest("manifest \(manifest)"))
}

@Suite struct LogPublishingTests {
    /// One publish step: append, ask every witness (resyncing after a 409), merge.
    private func publish(
        _ heads: [HeadRecord], current: Checkpoint?, log: LogFixture, witnesses: inout [PureWitness], at time: Int64
    ) throws -> (append: LogAppend, cosigned: SignedNote, cosigners: [String]) {
        let append = try LogPublishing.append(
            heads: heads, current: current, reader: log.store, origin: LogFixture.origin, logSigner: log.logSigner,
            crypto: crypto)
        let overlay = OverlayTileReader(writes: append.writes, base: log.store)
        var responses = [(witness: LogPolicy.Witness, body: [UInt8])]()
        for position in witnesses.indices where witnesses[position].up {
            var answer = try witnesses[position].post(append.addCheckpointBody, log: log, at: time)
            if answer.status == 409, let size = UInt64(String(decoding: answer.body.dropLast(), as: UTF8.self)) {
                let body = try LogPublishing.addCheckpointBody(
                    note: append.note, checkpoint: append.checkpoint, fromWitnessSize: size, reader: overlay,
                    hasher: merkle)
                answer = try witnesses[position].post(body, log: log, at: time)
            }
            if answer.status == 200 { responses.append((log.policy.witnesses[position], answer.body)) }
        }
        let merged = LogPublishing.mergeCosignatures(
            note: append.note, logKey: log.policy.logKey, responses: responses, crypto: crypto)
        return (append, merged.note, merged.cosigners)
    }

    @Test func withOneWitnessDownAPublishReachesTheQuorumAndTheClientAccepts() throws {
        let log = try LogFixture()
        var witnesses = [PureWitness(index: 0), PureWitness(index: 1), PureWitness(index: 2, up: false)]
        // Backfill: one head per earlier step, then the step itself.
        let first = try publish(
            [try head(0, manifest: 1), try head(1, manifest: 2), try head(2, manifest: 3)], current: nil, log: log,
            witnesses: &witnesses, at: now)
        #expect(first.cosigners == ["w1.example", "w2.example"])
        log.store.store(first.append.writes)
        let proof = LogPublishing.manifestProof(cosigned: first.cosigned, append: first.append)
        let verified = try LogVerification.verify(
            proofBytes: proof.bytes, policy: log.policy, manifest: log.manifest(version: 3, rootVersion: 1),
            newestRoot: log.root(1), stored: nil, now: now, crypto: crypto)
        #expect(verified.head == (try head(2, manifest: 3)))

        // The third witness comes back empty: it answers 409 with size 0 and is caught up.
        witnesses[2].up = true
        witnesses[1].up = false
        let second = try publish(
            [try head(3, manifest: 4)], current: first.append.checkpoint, log: log, witnesses: &witnesses, at: now + 60)
        #expect(second.cosigners == ["w1.example", "w3.example"])
        log.store.store(second.append.writes)
        let next = try LogVerification.verify(
            proofBytes: LogPublishing.manifestProof(cosigned: second.cosigned, append: second.append).bytes,
            policy: log.policy, manifest: log.manifest(version: 4, rootVersion: 1), newestRoot: log.root(1),
            stored: verified.stored, now: now + 60, crypto: crypto)
        #expect(next.stored.checkpoint.size == 4)
        try TileAudit.verify(size: 4, rootHash: second.append.checkpoint.rootHash, reader: log.store, hasher: merkle)
    }

    @Test func withTwoWitnessesDownThePublishIsBelowQuorum() throws {
        let log = try LogFixture()
        var witnesses = [PureWitness(index: 0), PureWitness(index: 1, up: false), PureWitness(index: 2, up: false)]
        let step = try publish([try head(0, manifest: 1)], current: nil, log: log, witnesses: &witnesses, at: now)
        #expect(step.cosigners.count == 1)
        #expect(step.cosigners.count < log.policy.quorum)
        let proof = LogPublishing.manifestProof(cosigned: step.cosigned, append: step.append)
        #expect(throws: LogVerificationError.quorumNotMet(valid: 1, quorum: 2)) {
            try LogVerification.verify(
                proofBytes: proof.bytes, policy: log.policy, manifest: log.manifest(version: 1, rootVersion: 1),
                newestRoot: log.root(1), stored: nil, now: now, crypto: crypto)
        }
    }

    @Test func refreshReCosignsTheSameCheckpointAndRestoresFreshness() throws {
        let log = try LogFixture()
        var witnesses = [PureWitness(index: 0), PureWitness(index: 1), PureWitness(index: 2)]
        let step = try publish(
            [try head(0, manifest: 1), try head(1, manifest: 2)], current: nil, log: log, witnesses: &witnesses, at: now
        )
        log.store.store(step.append.writes)
        let later = now + 2 * 86_400
        var responses = [(witness: LogPolicy.Witness, body: [UInt8])]()
        for position in witnesses.indices {
            let answer = try witnesses[position].post(
                LogPublishing.reCosignBody(note: step.cosigned, checkpoint: step.append.checkpoint), log: log, at: later
            )
            #expect(answer.status == 200)
            responses.append((log.policy.witnesses[position], answer.body))
        }
        let refreshed = LogPublishing.mergeCosignatures(
            note: step.cosigned, logKey: log.policy.logKey, responses: responses, crypto: crypto)
        #expect(refreshed.note.signatures.count == 4)
        let proof = try LogPublishing.lastEntryProof(
            cosigned: refreshed.note, checkpoint: step.append.checkpoint, reader: log.store, hasher: merkle)
        let stale = try LogVerification.verify(
            proofBytes: LogPublishing.manifestProof(cosigned: step.cosigned, append: step.append).bytes,
            policy: log.policy,
            manifest: log.manifest(version: 2, rootVersion: 1), newestRoot: log.root(1), stored: nil, now: later,
            crypto: crypto)
        #expect(stale.freshness == .stale(age: 2 * 86_400))
        let fresh = try LogVerification.verify(
            proofBytes: proof.bytes, policy: log.policy, manifest: log.manifest(version: 2, rootVersion: 1),
            newestRoot: log.root(1), stored: stale.stored, now: later, crypto: crypto)
        #expect(fresh.freshness == .fresh(age: 0))
    }

    @Test func mergingKeepsOnlyEachListedWitnessesOwnValidCosignature() throws {
        let log = try LogFixture()
        let append = try LogPublishing.append(
            heads: [try head(0, manifest: 1)], current: nil, reader: log.store, origin: LogFixture.origin,
            logSigner: log.logSigner, crypto: crypto)
        let byW2 = try WitnessDecision.cosign(
            append.note, name: "w2.example", timestamp: 5, signer: log.witnessSigners[1], hasher: crypto.hasher)
        let byW1 = try WitnessDecision.cosign(
            append.note, name: "w1.example", timestamp: 5, signer: log.witnessSigners[0], hasher: crypto.hasher)
        var forged = byW1
        forged[forged.count - 10] ^= 1
        let merged = LogPublishing.mergeCosignatures(
            note: append.note, logKey: log.policy.logKey,
            responses: [
                (log.policy.witnesses[0], byW2), (log.policy.witnesses[0], Array("junk".utf8)),
                (log.policy.witnesses[2], forged), (log.policy.witnesses[0], byW1), (log.policy.witnesses[0], byW1),
            ], crypto: crypto)
        #expect(merged.cosigners == ["w1.example"])
        #expect(merged.note.signatures.count == 2)
    }

    @Test func appendRefusesGapsEmptyBatchesAndTilesThatDisagree() throws {
        let log = try LogFixture()
        #expect(throws: LogPublishingError.sequenceGap(expected: 0, got: 1)) {
            try LogPublishing.append(
                heads: [try head(1, manifest: 1)], current: nil, reader: log.store, origin: LogFixture.origin,
                logSigner: log.logSigner, crypto: crypto)
        }
        #expect(throws: LogPublishingError.noHeads) {
            try LogPublishing.append(
                heads: [], current: nil, reader: log.store, origin: LogFixture.origin, logSigner: log.logSigner,
                crypto: crypto)
        }
        let step = try LogPublishing.append(
            heads: [try head(0, manifest: 1)], current: nil, reader: log.store, origin: LogFixture.origin,
            logSigner: log.logSigner, crypto: crypto)
        log.store.store(step.writes)
        let wrong = try Checkpoint(origin: LogFixture.origin, size: 1, rootHash: merkle.leafHash([1]))
        #expect(throws: LogPublishingError.tilesDisagreeWithCheckpoint) {
            try LogPublishing.append(
                heads: [try head(1, manifest: 2)], current: wrong, reader: log.store, origin: LogFixture.origin,
                logSigner: log.logSigner, crypto: crypto)
        }
    }

    @Test func appendsNeverRewriteAStoredFile() throws {
        let log = try LogFixture()
        var current: Checkpoint? = nil
        for sequence in Int64(0)..<600 {
            let step = try LogPublishing.append(
                heads: [try head(sequence, manifest: sequence + 1)], current: current, reader: log.store,
                origin: LogFixture.origin, logSigner: log.logSigner, crypto: crypto)
            for write in step.writes {
                if let existing = log.store.files[write.tile.path] {
                    #expect(existing == write.bytes, "\(write.tile.path)")
                }
            }
            #expect(step.writes.count <= 5)
            log.store.store(step.writes)
            current = step.checkpoint
        }
    }
}
