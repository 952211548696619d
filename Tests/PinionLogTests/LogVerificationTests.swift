// The client's manifest.proof check (docs/DESIGN.md §12) in its order, and each attack on it refused with its reason.

import PinionCore
import PinionLog
import PinionLogWriter
import PinionTrust
import Testing

private let now: Int64 = 1_800_000_000

@Suite struct LogVerificationTests {
    private func threeSteps() throws -> LogFixture {
        var log = try LogFixture()
        try log.appendHead(rootVersion: 1, manifestVersion: 1)
        try log.appendHead(rootVersion: 1, manifestVersion: 2)
        try log.appendHead(rootVersion: 1, manifestVersion: 3)
        return log
    }

    private func check(
        _ log: LogFixture, _ proof: TlogProof, manifest: Int64 = 3, root: Int64 = 1, stored: StoredCheckpoint? = nil,
        policy: LogPolicy? = nil, at time: Int64 = now
    ) throws(LogVerificationError) -> VerifiedLogProof {
        try LogVerification.verify(
            proofBytes: proof.bytes, policy: policy ?? log.policy,
            manifest: log.manifest(version: manifest, rootVersion: root),
            newestRoot: log.root(root), stored: stored, now: time, crypto: crypto)
    }

    private func fresh(_ log: LogFixture) throws -> SignedNote {
        try log.note(cosignedBy: [(0, UInt64(now - 100)), (1, UInt64(now - 200))])
    }

    @Test func acceptsTheLastHeadWithAQuorumOfCosignatures() throws {
        let log = try threeSteps()
        let result = try check(log, try log.proof(note: try fresh(log)))
        #expect(result.head == log.heads[2])
        #expect(result.witnesses == ["w1.example", "w2.example"])
        #expect(result.stored.checkpoint == (try log.checkpoint))
        #expect(result.stored.quorumTime == now - 200)
        #expect(result.freshness == .fresh(age: 200))
        #expect(result.futureCosignatures.isEmpty && !result.quorumTimeInFuture)
    }

    @Test func tQIsTheQthNewestCosignatureTime() throws {
        let log = try threeSteps()
        let note = try log.note(cosignedBy: [(0, UInt64(now - 50)), (1, UInt64(now - 9000)), (2, UInt64(now - 700))])
        #expect(try check(log, try log.proof(note: note)).stored.quorumTime == now - 700)
    }

    @Test func refusesACheckpointWithoutTheLogSignature() throws {
        let log = try threeSteps()
        let note = try log.note(cosignedBy: [(0, UInt64(now)), (1, UInt64(now))], logSigned: false)
        #expect(throws: LogVerificationError.logSignatureMissing) { try check(log, try log.proof(note: note)) }
        // A key with the log's name but not its key is ignored: still no log signature.
        let impostor = try seededSigner(0x77)
        let forged = try SignedNote.sign(
            text: note.text, keyName: LogFixture.origin, signer: impostor, hasher: crypto.hasher)
        let withImpostor = SignedNote(text: note.text, signatures: [forged] + note.signatures)
        #expect(throws: LogVerificationError.logSignatureMissing) { try check(log, try log.proof(note: withImpostor)) }
    }

    @Test func refusesABadLogSignature() throws {
        let log = try threeSteps()
        let note = try fresh(log)
        var signatures = note.signatures
        var bytes = signatures[0].signature
        bytes[3] ^= 1
        signatures[0] = NoteSignature(keyName: signatures[0].keyName, keyID: signatures[0].keyID, signature: bytes)
        #expect(throws: LogVerificationError.logSignatureInvalid) {
            try check(log, try log.proof(note: SignedNote(text: note.text, signatures: signatures)))
        }
    }

    @Test func refusesBelowTheQuorum() throws {
        let log = try threeSteps()
        let note = try log.note(cosignedBy: [(0, UInt64(now))])
        #expect(throws: LogVerificationError.quorumNotMet(valid: 1, quorum: 2)) {
            try check(log, try log.proof(note: note))
        }
    }

    @Test func oneWitnessKeyCountsOnceHoweverOftenItCosigns() throws {
        let log = try threeSteps()
        let note = try log.note(cosignedBy: [(0, UInt64(now)), (0, UInt64(now - 10)), (0, UInt64(now - 20))])
        #expect(throws: LogVerificationError.quorumNotMet(valid: 1, quorum: 2)) {
            try check(log, try log.proof(note: note))
        }
    }

    @Test func unlistedWitnessesDoNotCount() throws {
        let log = try threeSteps()
        let note = try log.note(cosignedBy: [(0, UInt64(now))])
        let stranger = try seededSigner(0x55)
        let extra = try Cosignature.sign(
            text: note.text, keyName: "w4.example", timestamp: UInt64(now), signer: stranger, hasher: crypto.hasher)
        // A stranger using a listed witness's name has another key ID and is ignored too.
        let namesake = try Cosignature.sign(
            text: note.text, keyName: "w2.example", timestamp: UInt64(now), signer: stranger, hasher: crypto.hasher)
        let padded = SignedNote(text: note.text, signatures: note.signatures + [extra, namesake])
        #expect(throws: LogVerificationError.quorumNotMet(valid: 1, quorum: 2)) {
            try check(log, try log.proof(note: padded))
        }
    }

    @Test func refusesABadCosignatureByAListedWitness() throws {
        let log = try threeSteps()
        let note = try log.note(cosignedBy: [(0, UInt64(now)), (1, UInt64(now)), (2, UInt64(now))])
        var signatures = note.signatures
        var bytes = signatures[2].signature
        bytes[20] ^= 1
        signatures[2] = NoteSignature(keyName: signatures[2].keyName, keyID: signatures[2].keyID, signature: bytes)
        #expect(throws: LogVerificationError.cosignatureInvalid(witness: "w2.example")) {
            try check(log, try log.proof(note: SignedNote(text: note.text, signatures: signatures)))
        }
    }

    @Test func refusesAStaleProofOfAnOlderHead() throws {
        let log = try threeSteps()
        #expect(throws: LogVerificationError.notLastEntry(index: 1, size: 3)) {
            try check(log, try log.proof(note: try fresh(log), index: 1), manifest: 2)
        }
    }

    @Test func refusesAnUnloggedManifestSignedWithAStolenPinsKey() throws {
        let log = try threeSteps()
        #expect(throws: LogVerificationError.manifestNotLogged(loggedVersion: 3, servedVersion: 4)) {
            try check(log, try log.proof(note: try fresh(log)), manifest: 4)
        }
    }

    @Test func refusesARootThatIsLoggedButNotServed() throws {
        var log = try threeSteps()
        try log.appendHead(rootVersion: 2, manifestVersion: 3, manifestRootVersion: 1)
        let error = #expect(throws: LogVerificationError.rootLoggedNotServed(logged: 2, newest: 1)) {
            try check(log, try log.proof(note: try fresh(log)), manifest: 3, root: 1)
        }
        #expect(error?.description == "root 2 is logged but not served")
        // Served, it verifies.
        let result = try LogVerification.verify(
            proofBytes: try log.proof(note: try fresh(log)).bytes, policy: log.policy,
            manifest: log.manifest(version: 3, rootVersion: 1), newestRoot: log.root(2), stored: nil, now: now,
            crypto: crypto)
        #expect(result.head.rootVersion == 2)
    }

    @Test func refusesAHeadNamingAnotherNewestRoot() throws {
        let log = try threeSteps()
        let proof = try log.proof(note: try fresh(log))
        #expect(throws: LogVerificationError.rootMismatch(logged: 1, newest: 1)) {
            try LogVerification.verify(
                proofBytes: proof.bytes, policy: log.policy, manifest: log.manifest(version: 3, rootVersion: 1),
                newestRoot: RootIdentity(version: 1, payloadSHA256: LogFixture.digest("another root")), stored: nil,
                now: now, crypto: crypto)
        }
        var older = try threeSteps()
        try older.appendHead(rootVersion: 1, manifestVersion: 4)
        #expect(throws: LogVerificationError.rootMismatch(logged: 1, newest: 2)) {
            try LogVerification.verify(
                proofBytes: try older.proof(note: try fresh(older)).bytes, policy: older.policy,
                manifest: older.manifest(version: 4, rootVersion: 1), newestRoot: older.root(2), stored: nil, now: now,
                crypto: crypto)
        }
    }

    @Test func refusesAHeadThatIsNotInTheTree() throws {
        let log = try threeSteps()
        let note = try fresh(log)
        let other = try HeadRecord(
            scope: "example", sequence: 2, rootVersion: 1, rootPayloadSHA256: LogFixture.digest("root 1"),
            manifestRootVersion: 1, manifestVersion: 4, manifestPayloadSHA256: LogFixture.digest("manifest 4"))
        #expect(throws: LogVerificationError.inclusionFailed(.rootMismatch)) {
            try check(log, try log.proof(note: note, extra: other.bytes), manifest: 4)
        }
        var proof = try log.proof(note: note)
        var hashes = proof.inclusionProof
        hashes[0][0] ^= 1
        proof = TlogProof(extra: proof.extra, index: proof.index, inclusionProof: hashes, checkpointNote: note)
        #expect(throws: LogVerificationError.inclusionFailed(.rootMismatch)) { try check(log, proof) }
        let short = TlogProof(
            extra: proof.extra, index: proof.index, inclusionProof: Array(hashes.dropLast()), checkpointNote: note)
        #expect(throws: LogVerificationError.inclusionFailed(.wrongProofLength)) { try check(log, short) }
    }

    @Test func refusesAMissingMalformedOrMisplacedHead() throws {
        let log = try threeSteps()
        let note = try fresh(log)
        let bare = TlogProof(
            extra: nil, index: 2, inclusionProof: try log.proof(note: note).inclusionProof, checkpointNote: note)
        #expect(throws: LogVerificationError.headMissing) { try check(log, bare) }
        #expect(throws: LogVerificationError.malformedHead(.malformed("expected five lines starting pinion.head/v1"))) {
            try check(log, try log.proof(note: note, extra: Array("not a head\n".utf8)))
        }
        var shifted = try LogFixture()
        try shifted.appendHead(rootVersion: 1, manifestVersion: 1)
        let wrongSequence = try HeadRecord(
            scope: "example", sequence: 5, rootVersion: 1, rootPayloadSHA256: LogFixture.digest("root 1"),
            manifestRootVersion: 1, manifestVersion: 3, manifestPayloadSHA256: LogFixture.digest("manifest 3"))
        var appender = try TileLogAppender(size: shifted.size, reader: shifted.store, hasher: merkle)
        try appender.append(wrongSequence.bytes)
        shifted.store.store(appender.writes)
        let checkpoint = try Checkpoint(origin: LogFixture.origin, size: 2, rootHash: appender.rootHash)
        let text = checkpoint.text
        let signatures = [
            try SignedNote.sign(
                text: text, keyName: LogFixture.origin, signer: shifted.logSigner, hasher: crypto.hasher),
            try Cosignature.sign(
                text: text, keyName: "w1.example", timestamp: UInt64(now), signer: shifted.witnessSigners[0],
                hasher: crypto.hasher),
            try Cosignature.sign(
                text: text, keyName: "w2.example", timestamp: UInt64(now), signer: shifted.witnessSigners[1],
                hasher: crypto.hasher),
        ]
        let proof = TlogProof(
            extra: wrongSequence.bytes, index: 1,
            inclusionProof: try MerkleProofs.inclusionProof(
                index: 1, size: 2, source: TileHashSource(treeSize: 2, reader: shifted.store, hasher: merkle),
                hasher: merkle),
            checkpointNote: SignedNote(text: text, signatures: signatures))
        #expect(throws: LogVerificationError.sequenceMismatch(sequence: 5, index: 1)) { try check(shifted, proof) }
    }

    @Test func refusesAnotherLogsCheckpoint() throws {
        let log = try threeSteps()
        let policy = try LogPolicy(
            origin: "other.example/log", logKey: log.policy.logKey, witnesses: log.policy.witnesses, quorum: 2,
            maxCheckpointAge: 3600)
        #expect(throws: LogVerificationError.wrongOrigin(LogFixture.origin)) {
            try check(log, try log.proof(note: try fresh(log)), policy: policy)
        }
    }

    @Test func refusesACheckpointSmallerThanTheStoredOne() throws {
        var log = try threeSteps()
        let oldProof = try log.proof(note: try fresh(log))
        try log.appendHead(rootVersion: 1, manifestVersion: 4)
        let newer = try check(log, try log.proof(note: try fresh(log)), manifest: 4)
        #expect(throws: LogVerificationError.checkpointShrank(stored: 4, received: 3)) {
            try check(log, oldProof, stored: newer.stored)
        }
        // Growing from the stored checkpoint is accepted.
        let older = try check(log, try log.proof(note: try fresh(log)), manifest: 4)
        #expect(
            try check(log, try log.proof(note: try fresh(log)), manifest: 4, stored: older.stored).stored.checkpoint
                .size == 4)
    }

    @Test func aStoredCheckpointOfAnotherOriginIsNotCompared() throws {
        let log = try threeSteps()
        let other = try Checkpoint(origin: "old.example/log", size: 99, rootHash: merkle.leafHash([1]))
        let stored = StoredCheckpoint(checkpoint: other, note: [], quorumTime: now - 10)
        #expect(try check(log, try log.proof(note: try fresh(log)), stored: stored).stored.checkpoint.size == 3)
    }

    @Test func aSplitViewIsEquivocationAndCarriesBothCheckpoints() throws {
        var honest = try threeSteps()
        var forked = try LogFixture()
        try forked.appendHead(rootVersion: 1, manifestVersion: 1)
        try forked.appendHead(rootVersion: 1, manifestVersion: 2)
        try forked.appendHead(rootVersion: 1, manifestVersion: 33)
        try honest.appendHead(rootVersion: 1, manifestVersion: 4)
        try forked.appendHead(rootVersion: 1, manifestVersion: 4)
        let seen = try check(honest, try honest.proof(note: try fresh(honest)), manifest: 4)
        let forkNote = try fresh(forked)
        let error = #expect(throws: LogVerificationError.self) {
            try check(forked, try forked.proof(note: forkNote), manifest: 4, stored: seen.stored)
        }
        guard case .equivocation(let evidence) = error else {
            Issue.record("expected equivocation, got \(String(describing: error))")
            return
        }
        #expect(evidence.stored == (try honest.checkpoint))
        #expect(evidence.received == (try forked.checkpoint))
        #expect(evidence.storedNote == seen.stored.note)
        #expect(evidence.receivedNote == forkNote.bytes)
        #expect(
            try SignedNote.parse(evidence.storedNote).verify(keys: [honest.policy.logKey], verifier: crypto.verifier)
                .count == 1)
    }

    @Test func aFutureQuorumTimeIsReportedCountsAsAgeZeroAndIsStoredAsNow() throws {
        let log = try threeSteps()
        let note = try log.note(cosignedBy: [(0, UInt64(now + 3600)), (1, UInt64(now + 7200)), (2, UInt64(now - 10))])
        let result = try check(log, try log.proof(note: note))
        #expect(result.quorumTimeInFuture)
        #expect(result.futureCosignatures == ["w2.example", "w1.example"])
        #expect(result.freshness == .fresh(age: 0))
        #expect(result.stored.quorumTime == now)
        let skewed = try log.note(cosignedBy: [(0, UInt64(now + 299)), (1, UInt64(now + 299))])
        let small = try check(log, try log.proof(note: skewed))
        #expect(!small.quorumTimeInFuture && small.futureCosignatures.isEmpty)
    }

    /// Cosignatures dated years ahead (witnesses with wrong clocks, or colluding) count as
    /// age 0 once; the same tree seen again keeps its stored t_q, so a frozen view ages from
    /// when it was first seen instead of staying fresh until that date.
    @Test func aFutureQuorumTimeDoesNotKeepTheSameTreeFreshForEver() throws {
        let log = try threeSteps()
        let farFuture = UInt64(now + 9 * 365 * 86_400)
        let proof = try log.proof(note: try log.note(cosignedBy: [(0, farFuture), (1, farFuture)]))
        let first = try check(log, proof)
        #expect(first.freshness == .fresh(age: 0))
        #expect(first.stored.quorumTime == now)
        // Two days later, the same proof: aged from the first sight, stale past maxCheckpointAge (1 day).
        let later = now + 2 * 86_400
        let again = try check(log, proof, stored: first.stored, at: later)
        #expect(again.quorumTimeInFuture)
        #expect(again.stored.quorumTime == now, "the stored t_q stays")
        #expect(again.freshness == .stale(age: 2 * 86_400))
        // Past the grace: expired.
        let muchLater = now + 86_400 + LogPolicy.defaultGrace + 1
        #expect(
            try check(log, proof, stored: again.stored, at: muchLater).freshness
                == .expired(age: 86_400 + LogPolicy.defaultGrace + 1))
        // A new tree (one more entry) with future times is anchored at its own first sight.
        var grown = log
        try grown.appendHead(rootVersion: 1, manifestVersion: 4)
        let grownProof = try grown.proof(note: try grown.note(cosignedBy: [(0, farFuture), (1, farFuture)]))
        let newer = try check(grown, grownProof, manifest: 4, stored: again.stored, at: later)
        #expect(newer.stored.quorumTime == later)
        #expect(newer.freshness == .fresh(age: 0))
    }

    @Test func freshnessIsStalePastTheMaximumAgeAndExpiredPastTheGrace() throws {
        let log = try threeSteps()
        let note = try log.note(cosignedBy: [(0, UInt64(now)), (1, UInt64(now))])
        let proof = try log.proof(note: note)
        #expect(try check(log, proof, at: now + 86_400).freshness == .fresh(age: 86_400))
        #expect(try check(log, proof, at: now + 86_401).freshness == .stale(age: 86_401))
        let limit = 86_400 + LogPolicy.defaultGrace
        #expect(try check(log, proof, at: now + limit).freshness == .stale(age: limit))
        #expect(try check(log, proof, at: now + limit + 1).freshness == .expired(age: limit + 1))
        let off = try LogFixture(maxCheckpointAge: 0)
        #expect(LogFreshness.evaluate(quorumTime: 0, now: now, policy: off.policy) == .unchecked)
    }

    @Test func refusesMalformedOrOversizedProofFiles() throws {
        let log = try threeSteps()
        let good = try log.proof(note: try fresh(log)).bytes
        #expect(throws: LogVerificationError.malformedProof(.malformed("the first line is not c2sp.org/tlog-proof@v1")))
        {
            try LogVerification.verify(
                proofBytes: Array("garbage\n".utf8), policy: log.policy,
                manifest: log.manifest(version: 3, rootVersion: 1),
                newestRoot: log.root(1), stored: nil, now: now, crypto: crypto)
        }
        #expect(throws: LogVerificationError.malformedProof(.tooLarge(limit: 500))) {
            try LogVerification.verify(
                proofBytes: good, policy: log.policy, manifest: log.manifest(version: 3, rootVersion: 1),
                newestRoot: log.root(1), stored: nil, now: now, crypto: crypto, limits: TlogProofLimits(maxBytes: 500))
        }
        for position in stride(from: 0, to: good.count, by: 7) {
            var bad = good
            bad[position] ^= 0x01
            if let accepted = try? LogVerification.verify(
                proofBytes: bad, policy: log.policy, manifest: log.manifest(version: 3, rootVersion: 1),
                newestRoot: log.root(1), stored: nil, now: now, crypto: crypto)
            {
                Issue.record("byte \(position) changed, still accepted: \(accepted.stored.checkpoint.size)")
            }
        }
    }
}

@Suite struct LogPolicyTests {
    @Test func refusesBadWitnessListsAndQuorums() throws {
        let log = try LogFixture()
        let witnesses = log.policy.witnesses
        let logKey = log.policy.logKey
        func make(_ witnesses: [LogPolicy.Witness], quorum: Int = 1, age: Int64 = 60, grace: Int64 = 60)
            throws(LogPolicyError)
        {
            _ = try LogPolicy(
                origin: "o", logKey: logKey, witnesses: witnesses, quorum: quorum, maxCheckpointAge: age,
                checkpointGrace: grace)
        }
        #expect(throws: LogPolicyError.invalidQuorum(quorum: 0, witnesses: 3)) { try make(witnesses, quorum: 0) }
        #expect(throws: LogPolicyError.invalidQuorum(quorum: 4, witnesses: 3)) { try make(witnesses, quorum: 4) }
        #expect(throws: LogPolicyError.invalidQuorum(quorum: 1, witnesses: 0)) { try make([]) }
        let twin = LogPolicy.Witness(
            key: try vkey("w9.example", .cosignatureV1, log.witnessSigners[0]), url: "https://w9.example")
        #expect(throws: LogPolicyError.duplicateWitnessKey("w9.example")) { try make(witnesses + [twin]) }
        let sameName = LogPolicy.Witness(
            key: try vkey("w1.example", .cosignatureV1, try seededSigner(0x99)), url: "https://x")
        #expect(throws: LogPolicyError.duplicateWitnessName("w1.example")) { try make(witnesses + [sameName]) }
        let logAsWitness = LogPolicy.Witness(
            key: try vkey("log.example", .cosignatureV1, log.logSigner), url: "https://x")
        #expect(throws: LogPolicyError.logKeyIsWitness("log.example")) { try make(witnesses + [logAsWitness]) }
        let wrongType = LogPolicy.Witness(
            key: try vkey("w8.example", .ed25519, try seededSigner(0x98)), url: "https://x")
        #expect(throws: LogPolicyError.wrongKeyType("w8.example")) { try make([wrongType]) }
        #expect(throws: LogPolicyError.wrongKeyType("w1.example")) {
            _ = try LogPolicy(
                origin: "o", logKey: witnesses[0].key, witnesses: [witnesses[1]], quorum: 1, maxCheckpointAge: 1)
        }
        #expect(throws: LogPolicyError.invalidValue("maxCheckpointAge is negative")) { try make(witnesses, age: -1) }
        #expect(throws: LogPolicyError.invalidValue("checkpointGrace is negative")) { try make(witnesses, grace: -1) }
        #expect(
            throws: LogPolicyError.invalidValue("the origin must be 1-256 printable ASCII characters without spaces")
        ) {
            _ = try LogPolicy(origin: "", logKey: logKey, witnesses: witnesses, quorum: 1, maxCheckpointAge: 1)
        }
        // Three witnesses: quorum 1 lets two disjoint quorums cosign two trees; 2 does not.
        func minority(_ witnesses: ArraySlice<LogPolicy.Witness>, quorum: Int) throws -> Bool {
            try LogPolicy(
                origin: "o", logKey: logKey, witnesses: Array(witnesses), quorum: quorum, maxCheckpointAge: 1
            ).isMinorityQuorum
        }
        #expect(try minority(witnesses[...], quorum: 1))
        #expect(!(try minority(witnesses[...], quorum: 2)))
        #expect(try minority(witnesses.prefix(2), quorum: 1))
        #expect(!(try minority(witnesses.prefix(2), quorum: 2)))
    }
}
