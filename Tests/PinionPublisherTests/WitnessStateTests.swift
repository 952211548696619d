// The witness's configuration file and its state directory: every refused configuration, and a state that is corrupt, foreign or locked never lets it start (it never restarts from size 0).

import Foundation
import PinionCore
import PinionCrypto
import PinionLog
import PinionPublisher
import PinionTestSupport
import PinionTrust
import Testing

@Suite struct WitnessStateTests {
    private func parse(_ text: String) throws(WitnessConfigurationError) -> WitnessConfiguration {
        try WitnessConfiguration.parse(Array(text.utf8), hasher: witnessCrypto.hasher)
    }

    @Test func parsesAConfigurationAndRefusesEveryBadOne() throws {
        let log = try TestLog(size: 1)
        let key = try log.verifierKey.text
        let good = try parse(
            "{\"name\": \"w1.test\", \"logs\": [{\"origin\": \"\(log.origin)\", \"key\": \"\(key)\"}]}")
        #expect(good.name == "w1.test")
        #expect(good.logKeys == [log.origin: [try log.verifierKey]])

        let witnessKey = try NoteVerifierKey(
            name: "w2.test", type: .cosignatureV1, publicKey: log.signer.publicKey, hasher: witnessCrypto.hasher
        ).text
        let entry = "{\"origin\": \"\(log.origin)\", \"key\": \"\(key)\"}"
        let refused: [(String, String)] = [
            ("", "not strict JSON"),
            ("[]", "one JSON object"),
            ("{\"name\": \"w1.test\", \"logs\": [\(entry)], \"extra\": 1}", "unknown member \"extra\""),
            ("{\"name\": \"w1.test\", \"name\": \"w2\", \"logs\": [\(entry)]}", "not strict JSON"),
            ("{\"logs\": [\(entry)]}", "missing member \"name\""),
            ("{\"name\": \"w1 test\", \"logs\": [\(entry)]}", "not a note key name"),
            ("{\"name\": \"w+1\", \"logs\": [\(entry)]}", "not a note key name"),
            ("{\"name\": \"w1.test\", \"logs\": []}", "1 to 4096 logs"),
            ("{\"name\": \"w1.test\", \"logs\": [\(entry), \(entry)]}", "listed twice"),
            ("{\"name\": \"w1.test\", \"logs\": [{\"origin\": \"o\", \"key\": \"junk\"}]}", "not a C2SP verifier key"),
            ("{\"name\": \"w1.test\", \"logs\": [{\"origin\": \"o\", \"key\": \"\(witnessKey)\"}]}", "type 0x01"),
            // The origin rule roots share (LogPolicy.validateCheckpointOrigin, 1-256 bytes), not
            // a second one.
            ("{\"name\": \"w1.test\", \"logs\": [{\"origin\": \"\", \"key\": \"\(key)\"}]}", "1-256 bytes"),
            ("{\"name\": \"w1.test\", \"logs\": [{\"origin\": \"a\\nb\", \"key\": \"\(key)\"}]}", "1-256 bytes"),
            ("{\"name\": \"w1.test\", \"logs\": [{\"origin\": \"a\\u0000b\", \"key\": \"\(key)\"}]}", "1-256 bytes"),
            (
                "{\"name\": \"w1.test\", \"logs\": [{\"origin\": \"\(String(repeating: "o", count: 257))\", \"key\": \"\(key)\"}]}",
                "1-256 bytes"
            ),
            // A NUL or another control character in the witness name.
            ("{\"name\": \"w1\\u0000test\", \"logs\": [\(entry)]}", "control character"),
            ("{\"name\": \"w1\\u001btest\", \"logs\": [\(entry)]}", "control character"),
            ("{\"name\": \"w1\\u007ftest\", \"logs\": [\(entry)]}", "control character"),
            ("{\"name\": \"w1.test\", \"logs\": [{\"origin\": \"o\"}]}", "missing member \"key\""),
            (
                "{\"name\": \"w1.test\", \"logs\": [{\"origin\": \"o\", \"key\": \"\(key)\", \"url\": \"x\"}]}",
                "unknown member \"url\""
            ),
            ("{\"name\": 7, \"logs\": [\(entry)]}", "\"name\" must be a string"),
        ]
        // Every origin a root may name is accepted (256 bytes was refused), and so are other
        // C2SP logs' origins, with spaces or UTF-8.
        for (origin, rootMayName) in [
            (String(repeating: "o", count: 256), true), ("go.sum database tree", false),
            ("pinion.test/sc\u{f6}pe", false),
        ] {
            #expect(
                try parse("{\"name\": \"w1.test\", \"logs\": [{\"origin\": \"\(origin)\", \"key\": \"\(key)\"}]}")
                    .logs.first?.origin == origin)
            #expect(((try? LogPolicy.validateOrigin(origin)) != nil) == rootMayName, "\(origin)")
        }
        for (text, reason) in refused {
            do {
                _ = try parse(text)
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.description.contains(reason), "\(text): \(error)")
            }
        }
    }

    /// A witness that cosigned size 5, closed again.
    private func cosignedState() throws -> (WitnessSetupFixture, TestLog) {
        let log = try TestLog(size: 5)
        let fixture = try WitnessSetupFixture(logs: [log])
        let witness = try fixture.open()
        guard case .cosigned = witness.addCheckpoint(try log.body(old: 0, size: 5), timestamp: 1_800_000_000) else {
            throw SetupFailure(description: "the first checkpoint was not cosigned")
        }
        return (fixture, log)
    }

    @Test func keepsTheCosignedCheckpointInItsStateFileBeforeAnswering() throws {
        let (fixture, log) = try cosignedState()
        let stored = try SignedNote.parse(
            Array(try Data(contentsOf: URL(fileURLWithPath: fixture.stateFile(log.origin)))))
        #expect(stored.text == (try log.checkpoint(size: 5).text))
        #expect(try stored.verify(keys: [try fixture.verifierKey], verifier: witnessCrypto.verifier).count == 1)
        var info = stat()
        #expect(stat(fixture.stateDirectory, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(try fixture.open().latestCheckpoint(origin: log.origin) == (try log.checkpoint(size: 5)))
    }

    @Test func refusesToStartOnACorruptOrForeignStateFile() throws {
        let (fixture, log) = try cosignedState()
        let path = fixture.stateFile(log.origin)
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        let other = try TestLog(origin: "pinion.test/other", size: 2)
        let otherNote = try other.note(size: 2)
        let cases: [(String, Data)] = [
            ("not a checkpoint note", Data("garbage".utf8)),
            ("not a checkpoint note", Data()),
            ("not a checkpoint note", original.prefix(original.count / 2)),
            ("cosignature does not verify", replacing("\n5\n", with: "\n7\n", in: original)),
            ("no cosignature by this witness", Data(try log.note(size: 5).bytes)),
            ("origin pinion.test/other", Data(otherNote.bytes)),
            ("larger than", Data(repeating: 0x41, count: 70_000)),
        ]
        for (reason, bytes) in cases {
            try bytes.write(to: URL(fileURLWithPath: path))
            do {
                _ = try fixture.open()
                Issue.record("started on a state file that should be refused (\(reason))")
            } catch {
                guard case .corruptState(let origin, let file, let detail) = error as? WitnessStartError else {
                    Issue.record("unexpected error \(error)")
                    continue
                }
                #expect(origin == log.origin && file == path)
                #expect(detail.contains(reason), "\(detail)")
            }
            // Refusing never rewrote the file.
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        }
        // A directory or a symbolic link in place of the file: unreadable, refused.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/etc/hostname")
        #expect(throws: WitnessStartError.self) { try fixture.open() }
        try FileManager.default.removeItem(atPath: path)
        try original.write(to: URL(fileURLWithPath: path))
        #expect(try fixture.open().latestCheckpoint(origin: log.origin)?.size == 5)
    }

    @Test func anotherWitnessKeyOnTheSameStateIsRefused() throws {
        let (fixture, log) = try cosignedState()
        let impostor = try Witness.init(
            configuration: fixture.configuration, signer: Ed25519NoteSigner(key: Ed25519SecretKey.generate()),
            stateDirectory: fixture.stateDirectory + "-fresh", crypto: witnessCrypto)
        #expect(impostor.latestCheckpoint(origin: log.origin) == nil)
        #expect(throws: WitnessStartError.self) {
            try Witness(
                configuration: fixture.configuration, signer: Ed25519NoteSigner(key: Ed25519SecretKey.generate()),
                stateDirectory: fixture.stateDirectory, crypto: witnessCrypto)
        }
        try? FileManager.default.removeItem(atPath: fixture.stateDirectory + "-fresh")
    }

    @Test func onlyOneWitnessAtATimeOnAStateDirectory() throws {
        let (fixture, _) = try cosignedState()
        do {
            let first = try fixture.open()
            #expect(throws: WitnessStartError.stateInUse(fixture.stateDirectory)) { try fixture.open() }
            withExtendedLifetime(first) {}
        }
        // Released with the first witness.
        #expect(try fixture.open().latestCheckpoint(origin: fixture.logs[0].origin)?.size == 5)
    }

    @Test func theOfflineDecisionsMatchTheServersAndRefusalsLeaveTheStateAlone() throws {
        let (fixture, log) = try cosignedState()
        let witness = try fixture.open()
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.stateFile(log.origin)))
        let fork = log.forked(at: 2)
        let outcomes = [
            witness.addCheckpoint(try fork.body(old: 5, size: 5), timestamp: 1_800_000_100),
            witness.addCheckpoint(try log.body(old: 0, size: 5), timestamp: 1_800_000_100),
            witness.addCheckpoint(Array("old 5\n".utf8), timestamp: 1_800_000_100),
            witness.addCheckpoint(
                try TestLog(origin: log.origin, size: 5).body(old: 5, size: 5), timestamp: 1_800_000_100),
        ]
        let statuses = outcomes.map { outcome -> Int in
            if case .refused(let refusal) = outcome { return refusal.httpStatus }
            return 200
        }
        #expect(statuses == [422, 409, 400, 403])
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.stateFile(log.origin))) == before)
        if case .cosigned = witness.addCheckpoint(try log.body(old: 5, size: 5), timestamp: 0) {
            Issue.record("a zero cosignature timestamp was accepted")
        }
    }

    /// A cosignature time before the latest one is never signed. A v1 cosignature says its tree was the latest "as of" its time (C2SP
    /// tlog-cosignature): going back in time is refused, with nothing signed or written.
    @Test func aCosignatureTimeBeforeTheLatestOneIsRefused() throws {
        let (fixture, log) = try cosignedState()
        var grown = log
        grown.grow(to: 7)
        try refuseGoingBack(fixture, log, grown)
        // Across a restart the bar is the state file's cosignature time.
        let reopened = try fixture.open()
        guard case .timeBeforeLast(let last) = reopened.addCheckpoint(try grown.body(old: 7, size: 7), timestamp: 5)
        else { throw SetupFailure(description: "went back in time after a restart") }
        #expect(last == 1_800_000_000)
    }

    private func refuseGoingBack(_ fixture: WitnessSetupFixture, _ log: TestLog, _ grown: TestLog) throws {
        let witness = try fixture.open()
        let path = fixture.stateFile(log.origin)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for time: UInt64 in [1_799_999_999, 1, 1_000_000_000] {
            guard
                case .timeBeforeLast(let last) = witness.addCheckpoint(try grown.body(old: 5, size: 7), timestamp: time)
            else {
                Issue.record("cosigned at \(time), before the latest cosignature")
                continue
            }
            #expect(last == 1_800_000_000)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "nothing written")
        #expect(witness.latestCheckpoint(origin: log.origin)?.size == 5)
        // The same second, or later, is fine; after it, the new latest time is the bar.
        guard case .cosigned = witness.addCheckpoint(try grown.body(old: 5, size: 7), timestamp: 1_800_000_000) else {
            throw SetupFailure(description: "the same second was refused")
        }
        guard case .timeBeforeLast = witness.addCheckpoint(try grown.body(old: 7, size: 7), timestamp: 1_799_999_000)
        else { throw SetupFailure(description: "went back in time") }
    }

    /// A state directory, or a parent of it below the first root-owned one, that its group or
    /// others can write lets them rename an older note over the state file: the witness
    /// refuses to start, naming the directory and its mode, and leaves the state alone.
    @Test func aStateDirectoryOrParentWritableByGroupOrOthersStopsTheStart() throws {
        let (fixture, log) = try cosignedState()
        let state = fixture.stateDirectory
        let parent = (state as NSString).deletingLastPathComponent
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.stateFile(log.origin)))
        func refusal() -> String? {
            do {
                _ = try fixture.open()
                return nil
            } catch {
                guard case .stateDirectory(let detail) = error as? WitnessStartError else { return "\(error)" }
                return detail
            }
        }
        for mode: mode_t in [0o770, 0o720, 0o702] {
            #expect(chmod(state, mode) == 0)
            let detail = try #require(refusal(), "started on a state directory of mode \(String(mode, radix: 8))")
            #expect(detail.contains("writable by"), "\(detail)")
            #expect(detail.contains("mode \(String(mode, radix: 8))"), "\(detail)")
        }
        #expect(chmod(state, 0o700) == 0)
        // A parent owned by another user than root, group-writable: refused too.
        let ownedByRoot = getuid() == 0
        if ownedByRoot { #expect(chown(parent, 65534, 65534) == 0) }
        #expect(chmod(parent, 0o775) == 0)
        let detail = try #require(refusal(), "started below a group-writable parent")
        #expect(detail.contains("a parent of the state directory") && detail.contains(parent), "\(detail)")
        #expect(chmod(parent, 0o755) == 0)
        #expect(try fixture.open().latestCheckpoint(origin: log.origin)?.size == 5)
        if ownedByRoot {
            // Owned by root, the parent is the system's: the walk stops there.
            #expect(chown(parent, 0, 0) == 0)
            #expect(chmod(parent, 0o775) == 0)
            #expect(try fixture.open().latestCheckpoint(origin: log.origin)?.size == 5)
            #expect(chmod(parent, 0o755) == 0)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.stateFile(log.origin))) == before)
    }

    /// A state file its group or others may write is not used. The state is the witness's memory of what it cosigned (rolling it back lets it cosign a
    /// fork): the witness refuses to start, naming the file, and leaves the file alone.
    @Test func aStateFileWritableByGroupOrOthersStopsTheStart() throws {
        let (fixture, log) = try cosignedState()
        let path = fixture.stateFile(log.origin)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for mode: mode_t in [0o666, 0o620, 0o602, 0o660] {
            #expect(chmod(path, mode) == 0)
            do {
                _ = try fixture.open()
                Issue.record("started on a state file of mode \(String(mode, radix: 8))")
            } catch {
                guard case .corruptState(let origin, let file, let detail) = error as? WitnessStartError else {
                    Issue.record("unexpected error \(error)")
                    continue
                }
                #expect(origin == log.origin && file == path)
                #expect(detail.contains("writable by its group or others"), "\(detail)")
                #expect(detail.contains("mode \(String(mode, radix: 8))"), "\(detail)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        }
        // Readable by others but not writable: a public checkpoint, accepted.
        for mode: mode_t in [0o600, 0o644, 0o400] {
            #expect(chmod(path, mode) == 0)
            #expect(
                try fixture.open().latestCheckpoint(origin: log.origin)?.size == 5, "mode \(String(mode, radix: 8))")
        }
        #expect(chmod(path, 0o600) == 0)
    }

    private func replacing(_ old: String, with new: String, in data: Data) -> Data {
        Data(String(decoding: data, as: UTF8.self).replacingOccurrences(of: old, with: new).utf8)
    }
}

@Suite struct WitnessReCosignTests {
    @Test func replayedReCosignsWriteTheStateAtMostOncePerInterval() throws {
        let log = try TestLog(size: 4)
        let fixture = try WitnessSetupFixture(logs: [log])
        let witness = try fixture.open()
        let start: UInt64 = 1_800_000_000
        guard case .cosigned = witness.addCheckpoint(try log.body(old: 0, size: 4), timestamp: start) else {
            throw SetupFailure(description: "not cosigned")
        }
        let path = fixture.stateFile(log.origin)
        let written = try Data(contentsOf: URL(fileURLWithPath: path))
        let replay = try log.body(old: 4, size: 4)
        // Within the interval: answered with the stored cosignature (dated `start`), served by
        // GET, nothing signed anew or written: every cosignature given is in the state file, so
        // a restarted witness cannot date a larger tree before one it gave.
        guard case .cosigned(let line, _) = witness.addCheckpoint(replay, timestamp: start + 30) else {
            throw SetupFailure(description: "the re-cosign was refused")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == written)
        #expect(witness.latestNote(origin: log.origin) == Array(written))
        #expect(Array(written.suffix(line.count)) == line)
        let answered = SignedNote(
            text: try log.checkpoint(size: 4).text, signatures: try SignedNote.parseSignatureLines(line))
        let cosignedAt = try answered.verify(keys: [fixture.verifierKey], verifier: witnessCrypto.verifier).first?
            .timestamp
        #expect(cosignedAt == start)
        // A clock gone back below the time asked for is still refused.
        guard case .timeBeforeLast(let last) = witness.addCheckpoint(replay, timestamp: start + 29) else {
            throw SetupFailure(description: "a time before the latest one asked for was accepted")
        }
        #expect(last == start + 30)
        // Past the interval since the cosignature on disk: written again.
        guard case .cosigned = witness.addCheckpoint(replay, timestamp: start + Witness.reCosignWriteInterval) else {
            throw SetupFailure(description: "the re-cosign was refused")
        }
        let rewritten = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(rewritten != written)
        #expect(Array(rewritten) == witness.latestNote(origin: log.origin))
        // A new tree is always written at once, whatever the time.
        var grown = log
        grown.grow(to: 6)
        guard case .cosigned = witness.addCheckpoint(try grown.body(old: 4, size: 6), timestamp: start + 61) else {
            throw SetupFailure(description: "the extension was refused")
        }
        #expect(
            try SignedNote.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path)))).text
                == (try grown.checkpoint(size: 6).text))
    }

    /// A re-cosign within the interval answered with a new time and not written would let a
    /// new process on the state (a restart, each `pinion witness cosign`) know only the older
    /// time and date a larger tree before a
    /// cosignature it had already given.
    @Test func aNewTreeIsNeverDatedBeforeACosignatureGivenBeforeARestart() throws {
        let log = try TestLog(size: 4)
        let fixture = try WitnessSetupFixture(logs: [log])
        let start: UInt64 = 1_800_000_000
        var given: [UInt64] = []
        do {
            let witness = try fixture.open()
            for (body, time) in [(try log.body(old: 0, size: 4), start), (try log.body(old: 4, size: 4), start + 30)] {
                guard case .cosigned(let line, _) = witness.addCheckpoint(body, timestamp: time) else {
                    throw SetupFailure(description: "not cosigned")
                }
                let note = SignedNote(
                    text: try log.checkpoint(size: 4).text, signatures: try SignedNote.parseSignatureLines(line))
                given += try note.verify(keys: [fixture.verifierKey], verifier: witnessCrypto.verifier).compactMap(
                    \.timestamp)
            }
        }
        let reopened = try fixture.openOnceReleased()
        var grown = log
        grown.grow(to: 6)
        guard
            case .cosigned(let line, _) = reopened.addCheckpoint(try grown.body(old: 4, size: 6), timestamp: start + 10)
        else { throw SetupFailure(description: "the larger tree was refused") }
        let note = SignedNote(
            text: try grown.checkpoint(size: 6).text, signatures: try SignedNote.parseSignatureLines(line))
        let larger = try #require(
            try note.verify(keys: [fixture.verifierKey], verifier: witnessCrypto.verifier).first?.timestamp)
        #expect(given == [start, start])
        #expect(
            given.allSatisfy { $0 <= larger },
            "the larger tree (\(larger)) is dated before a cosignature given (\(given))")
    }
}
