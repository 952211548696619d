// The auditor's log checks on trees written with the pure log API: a clean log passes and each attack is named.

import Foundation
import PinionAudit
import PinionCore
import PinionCrypto
import PinionLog
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

/// `count` versions (300: a full level-0 tile and a partial one), a rotation before version 120, all logged.
func cleanLoggedTree(_ count: Int = 300, keys: LogKeys? = nil) throws -> LoggedTree {
    let tree = try LoggedTree(keys: keys)
    try tree.fixture.extend(min(count, 119))
    if count > 119 {
        try tree.fixture.rotate(pinsKeys: [try makeKey()])
        try tree.fixture.extend(count - 119)
    }
    try tree.logAll()
    return tree
}

/// Every witness answering the publisher's checkpoint with its own cosignature.
func honestWitnesses(_ tree: LoggedTree) throws -> FakeWitnesses {
    FakeWitnesses(
        answers: Dictionary(
            uniqueKeysWithValues: try (0..<3).map { ("w\($0 + 1).example", .success(try tree.witnessAnswer($0))) }))
}

@Suite struct LogAuditTests {
    @Test func cleanLogPassesWithEveryWitnessConsistent() throws {
        let directory = try TemporaryDirectory()
        let tree = try cleanLoggedTree()
        try tree.write(to: directory.path)
        let report = try auditLogged(tree, repo: directory.path, witnesses: try honestWitnesses(tree))
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(report.warnings.isEmpty, "\(report.warnings)")
        let log = try #require(report.log)
        #expect(log.checkpointVerified)
        #expect(log.expectedHeads == 300)
        #expect(log.loggedEntries == 300)
        #expect(log.cosigners == ["w1.example", "w2.example"])
        #expect(log.quorumTime == tree.cosignTime)
        #expect(log.freshness == .fresh(age: 3600))
        #expect(log.witnesses.map(\.state) == Array(repeating: .consistent(size: 300), count: 3))
        #expect(log.checkpointNote == (try tree.note(cosignedBy: [(0, tree.cosignTime), (1, tree.cosignTime)]).bytes))
    }

    @Test func withoutALogMemberNoLogIsChecked() throws {
        let directory = try TemporaryDirectory()
        let fixture = try simpleHistory(3)
        _ = try fixture.write(to: directory.path)
        let report = try audit(fixture, repo: directory.path)
        #expect(report.passed)
        #expect(report.log == nil)
    }

    @Test func missingCheckpointAndProofAreViolations() throws {
        let directory = try TemporaryDirectory()
        let tree = try cleanLoggedTree(5)
        let files = try tree.write(to: directory.path)
        try files.remove(.logCheckpoint)
        try files.remove(.manifestProof)
        let report = try auditLogged(tree, repo: directory.path)
        #expect(!report.passed)
        #expect(report.violations(.logCheckpoint).count == 1)
        // Every published manifest is then without a head.
        #expect(report.violations(.logDocumentNotLogged).map(\.version) == Array(1...5).map { Int64($0) })
        #expect(report.log?.checkpointVerified == false)
    }

    @Test func documentWithoutHeadIsNamed() throws {
        // A manifest signed (as with a stolen pins key) and published but left out of the log.
        let directory = try TemporaryDirectory()
        let tree = try cleanLoggedTree(10)
        try tree.fixture.extend(1)
        try tree.write(to: directory.path)
        let report = try auditLogged(tree, repo: directory.path)
        #expect(report.violations(.logDocumentNotLogged).map(\.version) == [11])
        let proof = try #require(report.violations(.logProof).first)
        #expect(proof.message.hasPrefix("log-manifest-not-logged:"), "\(proof.message)")
        #expect(report.violations(.logHeadWithoutDocuments).isEmpty)
    }

    @Test func indexWithoutRootsLeavesNoHeadToRecompute() throws {
        // index.json in the older manifest-only form: no root to place in any head.
        let directory = try TemporaryDirectory()
        let tree = try cleanLoggedTree(3)
        let files = try tree.write(to: directory.path)
        var index = try files.index()
        index.roots = []
        try files.writeIndex(index)
        let report = try auditLogged(tree, repo: directory.path)
        let finding = try #require(report.violations(.logDocumentNotLogged).first)
        #expect(finding.version == 1)
        #expect(finding.message.contains("lists no root"), "\(finding.message)")
        // The three logged entries then have no recomputed step.
        #expect(report.violations(.logHeadWithoutDocuments).count == 3)
    }

    @Test func rootPublishedWithoutAHeadIsNamed() throws {
        // A rotation published alone after the last logged step: no head names root 2, and
        // clients that walk to it refuse manifest.proof (the head names root 1).
        let directory = try TemporaryDirectory()
        let tree = try cleanLoggedTree(5)
        try tree.fixture.rotate()
        try tree.write(to: directory.path)
        let report = try auditLogged(tree, repo: directory.path)
        let finding = try #require(report.violations(.logDocumentNotLogged).first)
        #expect(finding.file == "root/2.json")
        #expect(finding.message.contains("the last head names root 1"), "\(finding.message)")
        #expect(report.violations(.logProof).first?.message.hasPrefix("log-root-mismatch:") == true)
    }

    @Test func headWithoutDocumentsIsNamed() throws {
        // The log records a step whose documents were never published (withheld root or manifest).
        let directory = try TemporaryDirectory()
        let tree = try cleanLoggedTree(10)
        let withheld = try HeadRecord(
            scope: tree.fixture.scope, sequence: 10, rootVersion: 2, rootPayloadSHA256: Array(repeating: 7, count: 32),
            manifestRootVersion: 2, manifestVersion: 11, manifestPayloadSHA256: Array(repeating: 8, count: 32))
        try tree.append([withheld.bytes])
        try tree.write(to: directory.path)
        let report = try auditLogged(tree, repo: directory.path)
        let finding = try #require(report.violations(.logHeadWithoutDocuments).first)
        #expect(finding.message.contains("entry 10"), "\(finding.message)")
        #expect(finding.message.contains("has no published step"), "\(finding.message)")
        #expect(report.violations(.logDocumentNotLogged).isEmpty)
    }

    @Test func rewrittenHeadIsNamedWithItsVersion() throws {
        // A log whose entry 4 names another payload for version 5 than the published one.
        let directory = try TemporaryDirectory()
        let tree = try LoggedTree()
        try tree.fixture.extend(8)
        var entries = try (0..<8).map { try tree.head(ofManifest: $0).bytes }
        let real = try tree.head(ofManifest: 4)
        entries[4] =
            try HeadRecord(
                scope: real.scope, sequence: 4, rootVersion: real.rootVersion,
                rootPayloadSHA256: real.rootPayloadSHA256, manifestRootVersion: real.manifestRootVersion,
                manifestVersion: 5, manifestPayloadSHA256: Array(repeating: 0xEE, count: 32)
            ).bytes
        try tree.append(entries)
        try tree.write(to: directory.path)
        let report = try auditLogged(tree, repo: directory.path)
        #expect(report.violations(.logHeadWithoutDocuments).map(\.version) == [5])
        #expect(report.violations(.logTile).isEmpty)
    }

    @Test func truncatedOrRewrittenTilesAreRefused() throws {
        let tree = try cleanLoggedTree()
        let level0 = try TileID(level: 0, index: 0)
        let bundle = try TileID(entriesIndex: 1, width: 44)
        let level1 = try TileID(level: 1, index: 0, width: 1)
        let cases: [(String, TileID, ([UInt8]) -> [UInt8]?)] = [
            ("truncated hash tile", level0, { Array($0.dropLast(1)) }),
            (
                "rewritten hash tile", level0,
                {
                    var bytes = $0
                    bytes[100] ^= 1
                    return bytes
                }
            ),
            (
                "rewritten entry bundle", bundle,
                {
                    var bytes = $0
                    bytes[bytes.count - 3] ^= 1
                    return bytes
                }
            ),
            ("truncated entry bundle", bundle, { Array($0.prefix($0.count / 2)) }),
            (
                "rewritten level-1 tile", level1,
                {
                    var bytes = $0
                    bytes[0] ^= 0x80
                    return bytes
                }
            ),
            ("missing tile", level1, { _ in nil }),
        ]
        for (name, tile, change) in cases {
            let directory = try TemporaryDirectory()
            let files = try tree.write(to: directory.path)
            let original = try files.read(.logTile(tile))
            if let changed = change(original) {
                try files.writeLog(.logTile(tile), changed)
            } else {
                try files.remove(.logTile(tile))
            }
            let report = try auditLogged(tree, repo: directory.path, witnesses: try honestWitnesses(tree))
            #expect(report.violations(.logTile).count == 1, "\(name): \(report.violations)")
            #expect(report.log?.checkpointVerified == false, "\(name)")
            // Nothing is claimed about witnesses that cannot be compared with unproven tiles.
            #expect(report.violations(.logSplitView).isEmpty, "\(name)")
        }
    }

    @Test func tileThatIsALinkIsRefusedNotFollowed() throws {
        let directory = try TemporaryDirectory()
        let tree = try cleanLoggedTree(5)
        let files = try tree.write(to: directory.path)
        let tile = try TileID(level: 0, index: 0, width: 5)
        let path = files.path(.logTile(tile))
        try FileManager.default.moveItem(atPath: path, toPath: directory.path + "/elsewhere")
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: directory.path + "/elsewhere")
        let report = try auditLogged(tree, repo: directory.path)
        #expect(report.violations(.logTile).count == 1, "\(report.violations)")
        #expect(report.violations(.logTile).first?.message.contains("symbolic link") == true)
    }

    @Test func linkedLogFoldersAreRefusedNotFollowed() throws {
        // log/tile/ replaced by a link to a copy: the tiles are refused, not read through it.
        var directory = try TemporaryDirectory()
        let tree = try cleanLoggedTree(5)
        var files = try tree.write(to: directory.path)
        let tiles = files.directory + "/log/tile"
        try FileManager.default.moveItem(atPath: tiles, toPath: directory.path + "/tiles-copy")
        try FileManager.default.createSymbolicLink(atPath: tiles, withDestinationPath: directory.path + "/tiles-copy")
        var report = try auditLogged(tree, repo: directory.path)
        #expect(report.violations(.logTile).first?.message.contains("where a directory belongs") == true)

        // log/ itself a link: log/checkpoint is refused.
        directory = try TemporaryDirectory()
        files = try tree.write(to: directory.path)
        let log = files.directory + "/log"
        try FileManager.default.moveItem(atPath: log, toPath: directory.path + "/log-copy")
        try FileManager.default.createSymbolicLink(atPath: log, withDestinationPath: directory.path + "/log-copy")
        report = try auditLogged(tree, repo: directory.path)
        #expect(report.violations(.fileRefused).map(\.file) == ["log/checkpoint"], "\(report.violations)")
        #expect(!report.passed)
    }

    @Test func badCosignaturesAndMissingQuorumAreViolations() throws {
        let tree = try cleanLoggedTree(5)
        // A bad cosignature by a listed witness.
        var note = try tree.note(cosignedBy: [(0, tree.cosignTime), (1, tree.cosignTime), (2, tree.cosignTime)])
        var signatures = note.signatures
        var broken = signatures[2].signature
        broken[broken.count - 1] ^= 1
        signatures[2] = NoteSignature(keyName: signatures[2].keyName, keyID: signatures[2].keyID, signature: broken)
        note = SignedNote(text: note.text, signatures: signatures)
        var directory = try TemporaryDirectory()
        try tree.write(to: directory.path, note: note)
        var report = try auditLogged(tree, repo: directory.path)
        #expect(
            report.violations(.logCosignature).map(\.message) == ["witness w2.example's cosignature does not verify"])

        // One witness counted twice (its line repeated) is below a quorum of 2.
        let once = try tree.note(cosignedBy: [(0, tree.cosignTime)])
        note = SignedNote(text: once.text, signatures: once.signatures + [once.signatures[1]])
        directory = try TemporaryDirectory()
        try tree.write(to: directory.path, note: note)
        report = try auditLogged(tree, repo: directory.path)
        #expect(report.violations(.logQuorum).count == 1, "\(report.violations)")
        #expect(report.log?.checkpointVerified == false)

        // No log signature.
        directory = try TemporaryDirectory()
        try tree.write(
            to: directory.path,
            note: try tree.note(cosignedBy: [(0, tree.cosignTime), (1, tree.cosignTime)], logSigned: false))
        report = try auditLogged(tree, repo: directory.path)
        #expect(report.violations(.logSignature).count == 1)
        #expect(report.log?.checkpointVerified == false)
    }

    @Test func staleCheckpointWarnsAndExpiredOneIsAViolation() throws {
        let tree = try cleanLoggedTree(3)
        let directory = try TemporaryDirectory()
        try tree.write(to: directory.path)
        let stale = try auditLogged(tree, repo: directory.path, at: tree.fixture.auditTime.adding(seconds: day))
        #expect(stale.passed, "\(stale.violations)")
        #expect(stale.warnings(.logCheckpointStale).count == 1)
        // Past maxCheckpointAge + the default grace of 7 days.
        let expired = try auditLogged(tree, repo: directory.path, at: tree.fixture.auditTime.adding(seconds: 9 * day))
        #expect(expired.violations(.logCheckpointExpired).count == 1, "\(expired.violations)")
    }

    /// A witness cosignature dated in the future is not passed over in silence. Beyond the clients' 5-minute skew it is a warning naming the witness; the audit
    /// still passes (clients accept it, docs/DESIGN.md §12 "future t_q").
    @Test func aCosignatureDatedInTheFutureIsAWarningNamingTheWitness() throws {
        let tree = try cleanLoggedTree(4)
        let skew = LogFreshness.allowedFutureSkew
        let audit = tree.fixture.auditTime.secondsSince1970
        for (w1Time, warned) in [(audit + skew + 1, true), (audit + skew, false), (audit + 86_400 * 365, true)] {
            let directory = try TemporaryDirectory()
            try tree.write(to: directory.path, note: try tree.note(cosignedBy: [(0, w1Time), (1, tree.cosignTime)]))
            let report = try auditLogged(tree, repo: directory.path)
            #expect(report.passed, "\(report.violations)")
            let warnings = report.warnings(.logCosignatureFuture)
            #expect(warnings.count == (warned ? 1 : 0), "\(w1Time): \(report.warnings)")
            if warned {
                #expect(warnings.first?.message.contains("witness w1.example") == true, "\(warnings)")
                #expect(warnings.first?.message.contains("\(w1Time - audit) s after the audit time") == true)
            }
        }
    }

    @Test func splitViewIsNamedByTheAuditor() throws {
        // The log key signs a second tree of the same size (a forked last head) and witness 3
        // cosigns it: one of the two views the publisher showed.
        let tree = try cleanLoggedTree(10)
        let directory = try TemporaryDirectory()
        try tree.write(to: directory.path)
        let fork = try LoggedTree(keys: tree.keys)
        try fork.append(try (0..<9).map { try tree.head(ofManifest: $0).bytes })
        let real = try tree.head(ofManifest: 9)
        try fork.append([
            try HeadRecord(
                scope: real.scope, sequence: 9, rootVersion: real.rootVersion,
                rootPayloadSHA256: real.rootPayloadSHA256,
                manifestRootVersion: real.manifestRootVersion, manifestVersion: 10,
                manifestPayloadSHA256: Array(repeating: 0x66, count: 32)
            ).bytes
        ])
        var witnesses = try honestWitnesses(tree)
        witnesses.answers["w3.example"] = .success(try tree.witnessAnswer(2, try fork.checkpoint))
        let report = try auditLogged(tree, repo: directory.path, witnesses: witnesses)
        let finding = try #require(report.violations(.logSplitView).first)
        #expect(finding.message.contains("SPLIT VIEW: witness w3.example"), "\(finding.message)")
        #expect(finding.message.contains("the same size 10 with another root hash"), "\(finding.message)")
        #expect(report.log?.witnesses.map(\.state.code) == ["consistent", "consistent", "split-view"])
    }

    /// A witness holds a log-signed tree larger than the published one that the tiles do not
    /// contain: the log key signed entries nobody published (a thief's extension). Past the
    /// publish grace it is `log-unpublished-entries`, never a rollback or a split view;
    /// within the grace it is a publish in progress, a warning.
    @Test func witnessAheadWithATreeTheTilesDoNotContainIsUnpublishedEntries() throws {
        let tree = try cleanLoggedTree(10)
        let directory = try TemporaryDirectory()
        try tree.write(to: directory.path)
        let other = try LoggedTree(keys: tree.keys)
        try other.append(try (0..<10).map { try tree.head(ofManifest: $0).bytes } + [Array("elsewhere\n".utf8)])
        for w3CosignedOurs in [false, true] {
            var witnesses = try honestWitnesses(tree)
            witnesses.answers["w3.example"] = .success(try tree.witnessAnswer(2, try other.checkpoint))
            var report = try auditLogged(tree, repo: directory.path, witnesses: witnesses)
            if w3CosignedOurs {
                // The witness also cosigned the published checkpoint: still unpublished entries.
                let cosignedByAll = try TemporaryDirectory()
                try tree.write(
                    to: cosignedByAll.path,
                    note: try tree.note(cosignedBy: [(0, tree.cosignTime), (1, tree.cosignTime), (2, tree.cosignTime)]))
                report = try auditLogged(tree, repo: cosignedByAll.path, witnesses: witnesses)
            }
            let finding = try #require(report.violations(.logUnpublishedEntries).first, "\(report.violations)")
            #expect(finding.message.contains("UNPUBLISHED ENTRIES: witness w3.example"), "\(finding.message)")
            #expect(finding.message.contains("treat the pins key and the log key as stolen"), "\(finding.message)")
            #expect(report.violations(.logRollback).isEmpty, "\(report.violations)")
            #expect(report.violations(.logSplitView).isEmpty, "\(report.violations)")
            #expect(report.log?.witnesses[2].state == .unpublished(size: 11))
        }
        // Cosigned a minute before the audit: a publish in progress (witnesses cosign before
        // the publisher writes what it serves).
        var recent = try honestWitnesses(tree)
        recent.answers["w3.example"] = .success(
            try tree.witnessAnswer(2, try other.checkpoint, time: tree.fixture.auditTime.secondsSince1970 - 60))
        let inFlight = try auditLogged(tree, repo: directory.path, witnesses: recent)
        #expect(inFlight.violations(.logUnpublishedEntries).isEmpty, "\(inFlight.violations)")
        let warning = try #require(inFlight.warnings(.logWitnessAhead).first)
        #expect(warning.message.contains("publish in progress"), "\(warning.message)")
    }

    /// A witness serving a checkpoint it cosigned with a time far in the future (its clock is
    /// wrong) is named by the audit: it refuses every publish until that time.
    @Test func aWitnessCheckpointCosignedInTheFutureIsAWarningNamingIt() throws {
        let tree = try cleanLoggedTree(4)
        let directory = try TemporaryDirectory()
        try tree.write(to: directory.path)
        var witnesses = try honestWitnesses(tree)
        let audit = tree.fixture.auditTime.secondsSince1970
        witnesses.answers["w2.example"] = .success(
            try tree.witnessAnswer(1, time: audit + LogFreshness.allowedFutureSkew + 3600))
        let report = try auditLogged(tree, repo: directory.path, witnesses: witnesses)
        #expect(report.passed, "\(report.violations)")
        let future = report.warnings(.logCosignatureFuture)
        #expect(future.count == 1, "\(report.warnings)")
        #expect(future.first?.message.contains("witness w2.example") == true, "\(future)")
        // Within the skew: no warning.
        witnesses.answers["w2.example"] = .success(
            try tree.witnessAnswer(1, time: audit + LogFreshness.allowedFutureSkew))
        let within = try auditLogged(tree, repo: directory.path, witnesses: witnesses)
        #expect(within.warnings(.logCosignatureFuture).isEmpty, "\(within.warnings)")
    }

    /// A witness that cosigned the publisher's checkpoint and a larger one the tiles do not
    /// contain vouched that the larger extends it: the log key signed entries nobody
    /// published, `log-unpublished-entries` (critical), not a rollback that would send the
    /// operators after a stale mirror. A larger tree whose hash the tiles contradict stays a
    /// split view, even from such a witness.
    @Test func aWitnessThatCosignedOursAndALargerTreeIsUnpublishedEntriesNotARollback() throws {
        let tree = try cleanLoggedTree(10)
        let directory = try TemporaryDirectory()
        try tree.write(to: directory.path)
        let later = try LoggedTree(keys: tree.keys)
        try later.append(try (0..<10).map { try tree.head(ofManifest: $0).bytes } + [Array("later\n".utf8)])
        var witnesses = try honestWitnesses(tree)
        witnesses.answers["w1.example"] = .success(try tree.witnessAnswer(0, try later.checkpoint))
        let report = try auditLogged(tree, repo: directory.path, witnesses: witnesses)
        #expect(!report.passed)
        let finding = try #require(report.violations(.logUnpublishedEntries).first, "\(report.violations)")
        #expect(finding.message.contains("UNPUBLISHED ENTRIES: witness w1.example"), "\(finding.message)")
        #expect(finding.message.contains("size 11") && finding.message.contains("10 entries"), "\(finding.message)")
        #expect(finding.message.contains("also cosigned the published checkpoint"), "\(finding.message)")
        #expect(report.violations(.logRollback).isEmpty, "\(report.violations)")
        #expect(report.violations(.logSplitView).isEmpty, "\(report.violations)")
        #expect(report.log?.witnesses.map(\.state.code) == ["unpublished-entries", "consistent", "consistent"])
        #expect(report.log?.witnesses[0].state.size == 11)

        // The same size with another hash from that witness: still a split view.
        let fork = try LoggedTree(keys: tree.keys)
        try fork.append(try (0..<9).map { try tree.head(ofManifest: $0).bytes } + [Array("fork\n".utf8)])
        witnesses.answers["w1.example"] = .success(try tree.witnessAnswer(0, try fork.checkpoint))
        let forked = try auditLogged(tree, repo: directory.path, witnesses: witnesses)
        #expect(forked.violations(.logSplitView).count == 1, "\(forked.violations)")
        #expect(forked.violations(.logRollback).isEmpty, "\(forked.violations)")
    }

    @Test func witnessBehindOnAnotherBranchIsInconsistent() throws {
        let tree = try cleanLoggedTree(10)
        let directory = try TemporaryDirectory()
        try tree.write(to: directory.path)
        let other = try LoggedTree(keys: tree.keys)
        try other.append(try (0..<5).map { try tree.head(ofManifest: $0).bytes } + [Array("other branch\n".utf8)])
        var witnesses = try honestWitnesses(tree)
        witnesses.answers["w2.example"] = .success(try tree.witnessAnswer(1, try other.checkpoint))
        let report = try auditLogged(tree, repo: directory.path, witnesses: witnesses)
        #expect(report.violations(.logSplitView).count == 1, "\(report.violations)")
        #expect(report.log?.witnesses[1].state == .splitView(size: 6))
    }

    @Test func witnessBehindOnTheSameTreeIsConsistent() throws {
        let tree = try LoggedTree()
        try tree.fixture.extend(6)
        try tree.logAll()
        let old = try tree.checkpoint
        try tree.fixture.extend(270)
        try tree.logAll()
        let directory = try TemporaryDirectory()
        try tree.write(to: directory.path)
        var witnesses = try honestWitnesses(tree)
        witnesses.answers["w3.example"] = .success(try tree.witnessAnswer(2, old))
        let report = try auditLogged(tree, repo: directory.path, witnesses: witnesses)
        #expect(report.passed, "\(report.violations)")
        #expect(report.log?.witnesses[2].state == .consistent(size: 6))
    }

    @Test func witnessAheadWithinTheTilesIsAPendingPublishWarning() throws {
        // A publish appended and wrote tiles, but fewer than a quorum cosigned: log/checkpoint
        // and manifest.proof stay as they were, one witness already holds the new size.
        let tree = try cleanLoggedTree(10)
        let published = try tree.note(cosignedBy: [(0, tree.cosignTime), (1, tree.cosignTime)])
        let publishedCheckpoint = try tree.checkpoint
        let proof = try tree.proof(published)
        try tree.fixture.extend(1)
        try tree.logAll()
        let pending = try tree.checkpoint
        let directory = try TemporaryDirectory()
        let files = try tree.write(to: directory.path)
        try files.writeLog(.logCheckpoint, published.bytes)
        try files.writeLog(.manifestProof, proof.bytes)
        // The documents of the pending step are not out yet either.
        try files.remove(.history(11))
        try files.write(.manifest, try files.read(.history(10)))
        var index = try files.index()
        index.manifests.removeLast()
        try files.writeIndex(index)
        var witnesses = try honestWitnesses(tree)
        witnesses.answers["w1.example"] = .success(try tree.witnessAnswer(0, publishedCheckpoint))
        witnesses.answers["w2.example"] = .success(try tree.witnessAnswer(1, publishedCheckpoint))
        witnesses.answers["w3.example"] = .success(try tree.witnessAnswer(2, pending))
        let report = try auditLogged(tree, repo: directory.path, witnesses: witnesses)
        #expect(report.passed, "\(report.violations)")
        #expect(report.warnings(.logWitnessAhead).count == 1, "\(report.warnings)")
        #expect(report.log?.witnesses[2].state == .ahead(size: 11))
    }

    @Test func unreachableOrUnauthenticatedWitnessesAreWarningsOnly() throws {
        let tree = try cleanLoggedTree(5)
        let directory = try TemporaryDirectory()
        try tree.write(to: directory.path)
        let foreign = try LoggedTree()
        try foreign.append([Array("x\n".utf8)])
        let witnesses = FakeWitnesses(answers: [
            "w1.example": .failure(.unreachable("connection refused")),
            "w2.example": .success(Array("not a note".utf8)),
            // A checkpoint not cosigned by w3's key (another key's cosignature).
            "w3.example": .success(try tree.note(cosignedBy: [(0, tree.cosignTime)]).bytes),
        ])
        let report = try auditLogged(tree, repo: directory.path, witnesses: witnesses)
        #expect(report.passed, "\(report.violations)")
        #expect(report.warnings(.logWitnessUnavailable).count == 3, "\(report.warnings)")
        #expect(report.log?.witnesses.map(\.state.code) == ["unavailable", "unavailable", "unavailable"])
        // A witness-cosigned checkpoint of a log not signed by the root's log key is no evidence.
        let unsigned = FakeWitnesses(answers: [
            "w1.example": .success(
                try tree.note(try foreign.checkpoint, cosignedBy: [(0, tree.cosignTime)], logSigned: false).bytes)
        ])
        let second = try auditLogged(tree, repo: directory.path, witnesses: unsigned)
        #expect(second.violations(.logSplitView).isEmpty)
    }

    @Test func sinceCheckpointMustBeExtended() throws {
        let tree = try LoggedTree()
        try tree.fixture.extend(4)
        try tree.logAll()
        let older = try tree.note(cosignedBy: [(0, tree.cosignTime), (1, tree.cosignTime)])
        try tree.fixture.extend(4)
        try tree.logAll()
        let directory = try TemporaryDirectory()
        try tree.write(to: directory.path)
        let current = try tree.note(cosignedBy: [(0, tree.cosignTime)])

        // An older checkpoint of the same tree, and the current one: consistent.
        for since in [older, current] {
            let report = try auditLogged(tree, repo: directory.path, since: since.bytes)
            #expect(report.passed, "\(report.violations)")
        }
        #expect(try auditLogged(tree, repo: directory.path, since: older.bytes).log?.sinceSize == 4)

        // A larger checkpoint seen before, no witness cosigning both: the log shrank (log-since).
        let bigger = try LoggedTree(keys: tree.keys)
        try bigger.append(try (0..<8).map { try tree.head(ofManifest: $0).bytes } + [Array("next\n".utf8)])
        var report = try auditLogged(
            tree, repo: directory.path, since: try bigger.note(cosignedBy: []).bytes)
        #expect(report.violations(.logSince).first?.message.contains("the log shrank") == true, "\(report.violations)")
        #expect(report.violations(.logRollback).isEmpty)
        // A saved checkpoint (as --save-checkpoint writes it,
        // with its cosignatures) that a witness of the current one also cosigned is a
        // rollback with its own code, not equivocation; a cosignature by an unlisted key or
        // by a witness that did not cosign the current checkpoint does not make it one.
        report = try auditLogged(
            tree, repo: directory.path,
            since: try bigger.note(try bigger.checkpoint, cosignedBy: [(1, tree.cosignTime)]).bytes)
        let rollback = try #require(report.violations(.logRollback).first, "\(report.violations)")
        #expect(rollback.message.contains("witness w2.example cosigned both"), "\(rollback.message)")
        #expect(report.violations(.logSince).isEmpty, "\(report.violations)")
        report = try auditLogged(
            tree, repo: directory.path,
            since: try bigger.note(try bigger.checkpoint, cosignedBy: [(2, tree.cosignTime)]).bytes)
        #expect(report.violations(.logRollback).isEmpty, "w3 did not cosign the current checkpoint")
        #expect(report.violations(.logSince).count == 1, "\(report.violations)")

        // The same size with another hash, and an older size on another branch.
        let forked = try LoggedTree(keys: tree.keys)
        try forked.append(try (0..<7).map { try tree.head(ofManifest: $0).bytes } + [Array("fork\n".utf8)])
        let branch = try LoggedTree(keys: tree.keys)
        try branch.append([Array("branch\n".utf8)] + (1..<4).map { try tree.head(ofManifest: $0).bytes })
        for other in [forked, branch] {
            report = try auditLogged(tree, repo: directory.path, since: try other.note(cosignedBy: []).bytes)
            #expect(report.violations(.logSince).count == 1, "\(report.violations)")
        }

        // Unusable --since input: garbage, not signed by the log key, another origin.
        let stranger = try LoggedTree()
        try stranger.append([Array("y\n".utf8)])
        let otherText = "another.example/log\n1\n\(Base64.encode(try tree.checkpoint.rootHash))\n"
        let otherOrigin = SignedNote(
            text: otherText,
            signatures: [
                try SignedNote.sign(
                    text: otherText, keyName: LogKeys.origin, signer: tree.keys.log, hasher: sodium.hasher)
            ])
        for bad in [
            Array("garbage".utf8), try stranger.note(cosignedBy: []).bytes, otherOrigin.bytes,
            try tree.note(cosignedBy: [(0, tree.cosignTime)], logSigned: false).bytes,
        ] {
            report = try auditLogged(tree, repo: directory.path, since: bad)
            #expect(report.violations(.logSince).count == 1, "\(report.violations)")
        }
    }

    @Test func staleProofIsRefusedWithTheClientReason() throws {
        let tree = try cleanLoggedTree(6)
        let directory = try TemporaryDirectory()
        let files = try tree.write(to: directory.path)
        // manifest.proof of entry 4 under the current checkpoint.
        let note = try tree.note(cosignedBy: [(0, tree.cosignTime), (1, tree.cosignTime)])
        let stale = TlogProof(
            extra: try tree.head(ofManifest: 4).bytes, index: 4,
            inclusionProof: try MerkleProofs.inclusionProof(
                index: 4, size: 6, source: TileHashSource(treeSize: 6, reader: tree.tiles, hasher: merkle),
                hasher: merkle), checkpointNote: note)
        try files.writeLog(.manifestProof, stale.bytes)
        let report = try auditLogged(tree, repo: directory.path)
        #expect(report.violations(.logProof).first?.message.hasPrefix("log-not-last-entry:") == true)
    }
}
