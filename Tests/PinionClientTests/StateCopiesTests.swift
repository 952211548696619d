// The two state copies at the store (docs/DESIGN.md §6): a lost copy (garbage,
// truncated, a flipped bit, deleted, foreign, newer) gives way to the other and is rewritten; the
// higher floor wins; a read error concludes nothing and writes nothing; formatVersion 1 migrates.

import Foundation
import PinionCore
import PinionCrypto
import PinionLinux
import Testing

#if canImport(Glibc)
    import Glibc
#endif

private let scope = "com.example.app"
private let copyA = StateStore.copyFileNames[0]
private let copyB = StateStore.copyFileNames[1]

private func state(version: Int64 = 7, names: [String] = ["api.example.com", "cdn.example.com"], scope: String = scope)
    -> ClientState
{
    ClientState(
        scope: scope, manifest: Array("manifest-\(version)".utf8),
        floor: ManifestOrder(rootVersion: 1, version: version),
        lastKnownTime: Timestamp(secondsSince1970: 1_796_029_200 + version), manifestDomainNames: names,
        manifestETag: "\"v\(version)\"", floorPayloadSHA256: [UInt8](repeating: UInt8(version), count: 32))
}

private func store(_ storage: MemoryStateStorage) -> StateStore {
    StateStore(storage: storage, scope: scope, hasher: SodiumSHA256())
}

/// A storage holding `state` saved normally (both copies).
private func saved(_ state: ClientState) throws -> MemoryStateStorage {
    let storage = MemoryStateStorage()
    try store(storage).save(state)
    return storage
}

/// The damages of the issue's test list, each applied to one copy's bytes (nil: delete it).
struct CopyDamage: Sendable, CustomTestStringConvertible {
    let name: String
    let apply: @Sendable ([UInt8]) -> [UInt8]?
    var testDescription: String { name }
}

let copyDamages: [CopyDamage] = [
    CopyDamage(name: "garbage") { _ in Array("\u{0}\u{FF}not a state at all".utf8) },
    CopyDamage(name: "truncated to half") { Array($0.prefix($0.count / 2)) },
    CopyDamage(name: "truncated by one byte before the closing brace") { Array($0.dropLast(2)) },
    CopyDamage(name: "one flipped bit") { bytes in
        var flipped = bytes
        flipped[bytes.count / 3] ^= 0x04
        return flipped
    },
    CopyDamage(name: "zero-filled (a lost block)") { [UInt8](repeating: 0, count: $0.count) },
    CopyDamage(name: "deleted") { _ in nil },
]

@Suite("State copies")
struct StateCopiesTests {
    @Test(arguments: copyDamages, [0, 1])
    func aLostCopyGivesWayToTheOtherAndIsRewritten(damage: CopyDamage, copy: Int) throws {
        let good = state()
        let storage = try saved(good)
        let file = StateStore.copyFileNames[copy]
        storage.set(file, damage.apply(storage.get(file) ?? []))
        #expect(store(storage).load() == .loaded(good))
        let recovery = store(storage).recover()
        #expect(recovery.load == .loaded(good))
        #expect(recovery.rewritten.map(\.file) == [file])
        #expect((recovery.rewritten.first?.reason == nil) == (damage.name == "deleted"))
        #expect(recovery.repairFailure == nil)
        let encoded = StateCodec.encode(good, hasher: SodiumSHA256())
        #expect(storage.files == [copyA: encoded, copyB: encoded])
    }

    @Test(arguments: stateFileDamages, [0, 1])
    func everyRefusedCopyGivesWayToTheOther(damage: StateFileDamage, copy: Int) throws {
        let good = state()
        let storage = try saved(good)
        let file = StateStore.copyFileNames[copy]
        storage.set(file, try damage.apply(storage.get(file) ?? []))
        guard case .lost(let reason, _) = store(storage).readCopy(file) else {
            Issue.record("\(damage.name): the copy was not refused")
            return
        }
        if copy == 0, let expected = damage.reason { #expect(reason == expected) }
        #expect(store(storage).load() == .loaded(good))
    }

    @Test(arguments: [0, 1])
    func everyTruncationAndEveryFlippedBitOfOneCopyIsSurvived(copy: Int) throws {
        let good = state()
        let storage = try saved(good)
        let file = StateStore.copyFileNames[copy]
        let bytes = storage.get(file) ?? []
        var undetected: [String] = []
        // Every length short of the whole copy, the final newline included (the bytes must be
        // exactly the canonical encoding).
        for length in 0..<bytes.count {
            storage.set(file, Array(bytes.prefix(length)))
            if case .valid = store(storage).readCopy(file) { undetected.append("truncated to \(length)") }
            if store(storage).load() != .loaded(good) { undetected.append("load after truncation to \(length)") }
        }
        for offset in bytes.indices {
            var flipped = bytes
            flipped[offset] ^= UInt8(1 << (offset % 8))
            storage.set(file, flipped)
            if case .valid = store(storage).readCopy(file) { undetected.append("bit flip at \(offset)") }
            if store(storage).load() != .loaded(good) { undetected.append("load after bit flip at \(offset)") }
        }
        #expect(undetected.isEmpty)
    }

    @Test(arguments: [0, 1])
    func theValidCopyWithTheHigherFloorWinsAndTheOtherIsRewritten(newerCopy: Int) throws {
        let old = state(version: 7)
        let new = state(version: 8, names: ["api.example.com"])
        let storage = try saved(old)
        let file = StateStore.copyFileNames[newerCopy]
        storage.set(file, StateCodec.encode(new, hasher: SodiumSHA256()))
        #expect(store(storage).load() == .loaded(new))
        let recovery = store(storage).recover()
        #expect(recovery.rewritten == [StateCopyLoss(file: StateStore.copyFileNames[1 - newerCopy], reason: nil)])
        #expect(store(storage).readCopy(copyA) == .valid(new))
        #expect(store(storage).readCopy(copyB) == .valid(new))
    }

    @Test func aCopyOfAnotherScopeIsLost() throws {
        let good = state()
        let storage = try saved(good)
        storage.set(copyA, StateCodec.encode(state(version: 99, scope: "com.other.app"), hasher: SodiumSHA256()))
        #expect(store(storage).load() == .loaded(good))
        let recovery = store(storage).recover()
        #expect(
            recovery.rewritten == [
                StateCopyLoss(file: copyA, reason: .foreignScope(expected: scope, found: "com.other.app"))
            ])
        #expect(store(storage).readCopy(copyA) == .valid(good))
    }

    @Test func bothCopiesLostIsADropKeepingTheNamesStillReadableAndWritesNothing() throws {
        let storage = try saved(state())
        // A flipped bit in the floor: the checksum fails, the names can still be read.
        let edited = String(decoding: storage.get(copyA) ?? [], as: UTF8.self)
            .replacingOccurrences(of: "\"version\": 7", with: "\"version\": 6")
        storage.set(copyA, Array(edited.utf8))
        storage.set(copyB, Array("garbage".utf8))
        let writes = storage.writes
        let files = storage.files
        let recovery = store(storage).recover()
        #expect(
            recovery.load
                == .dropped(
                    reason: .checksumMismatch(file: copyA), keptDomainNames: ["api.example.com", "cdn.example.com"]))
        #expect(recovery.rewritten.isEmpty)
        #expect(storage.writes == writes)
        #expect(storage.files == files)

        storage.set(copyA, Array("{\"type\": \"pinion.client-st".utf8))
        guard case .dropped(.corrupt, let kept) = store(storage).load() else {
            Issue.record("two unparseable copies were not a drop")
            return
        }
        #expect(kept.isEmpty)
    }

    @Test func twoForeignCopiesAreADropKeepingTheirNames() throws {
        let storage = MemoryStateStorage()
        let foreign = state(names: ["other.example.net"], scope: "com.other.app")
        try StateStore(storage: storage, scope: "com.other.app", hasher: SodiumSHA256()).save(foreign)
        #expect(
            store(storage).load()
                == .dropped(
                    reason: .foreignScope(expected: scope, found: "com.other.app"),
                    keptDomainNames: ["other.example.net"]))
    }

    @Test func bothCopiesDeletedIsAFreshInstall() throws {
        let storage = try saved(state())
        storage.set(copyA, nil)
        storage.set(copyB, nil)
        #expect(store(storage).load() == .empty)
    }

    @Test(arguments: [EACCES, EIO], [0, 1])
    func anUnreadableCopyConcludesNothingAndWritesNothing(code: Int32, copy: Int) throws {
        let good = state()
        let storage = try saved(good)
        // Damage the other copy too: even then nothing may be rewritten or dropped.
        for damageOther in [false, true] {
            if damageOther { storage.set(StateStore.copyFileNames[1 - copy], Array("garbage".utf8)) }
            storage.failReads(of: StateStore.copyFileNames[copy], with: code)
            let files = storage.files
            let writes = storage.writes
            let recovery = store(storage).recover()
            guard case .unreadable(let error) = recovery.load else {
                Issue.record("read error \(code) on copy \(copy) gave \(recovery.load)")
                return
            }
            #expect(error.code == code)
            #expect(error.name == StateStore.copyFileNames[copy])
            #expect(recovery.rewritten.isEmpty)
            #expect(storage.writes == writes)
            #expect(storage.files == files)
            // Healed: the state is there as it was.
            storage.failReads(of: StateStore.copyFileNames[copy], with: nil)
            #expect(store(storage).load() == .loaded(good))
        }
    }

    @Test func aFailedRewriteIsReportedAndTheLoadedStateStillUsable() throws {
        let good = state()
        let storage = try saved(good)
        storage.set(copyB, nil)
        // Steps from here: read A, read B, then the write of B (its temporary file).
        storage.arm(at: storage.steps + 2, .fail(ENOSPC))
        let recovery = store(storage).recover()
        #expect(recovery.load == .loaded(good))
        #expect(recovery.repairFailure?.code == ENOSPC)
        storage.restart()
        #expect(store(storage).load() == .loaded(good))
    }
}

// MARK: - formatVersion 1

/// The committed files of formatVersion 1 (Fixtures/state-format-1/README.md).
enum FormatVersion1Fixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/state-format-1")

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// A storage holding the two formatVersion 1 files.
    static func storage() throws -> MemoryStateStorage {
        MemoryStateStorage(files: [
            StateStore.stateFileName: try bytes(StateStore.stateFileName),
            StateStore.enforcedDomainsFileName: try bytes(StateStore.enforcedDomainsFileName),
        ])
    }
}

@Suite("State format version 1")
struct StateFormatVersion1Tests {
    @Test func theCommittedFilesAreFormatVersion1() throws {
        let text = String(decoding: try FormatVersion1Fixture.bytes(StateStore.stateFileName), as: UTF8.self)
        #expect(text.contains("\"formatVersion\": 1,"))
        #expect(!text.contains("payloadSHA256"))
    }

    @Test func isReadWithItsFloorAndMigratedToTwoCopies() throws {
        let storage = try FormatVersion1Fixture.storage()
        guard case .loaded(let legacy) = store(storage).load() else {
            Issue.record("the formatVersion 1 state was not loaded")
            return
        }
        #expect(legacy.floor == ManifestOrder(rootVersion: 1, version: 3))
        #expect(legacy.floorPayloadSHA256 == nil)
        #expect(legacy.lastKnownTime == Timestamp(secondsSince1970: 1_796_029_200 + 7200))
        #expect(legacy.revokedPins == [try Pin(digest: [UInt8](repeating: 1, count: 32))])
        #expect(legacy.manifestDomainNames == ["api.example.com", "cdn.example.com"])
        #expect(legacy.manifestETag == "\"v3\"")
        #expect(legacy.manifest == (try FormatVersion1Fixture.bytes("manifest-3.json")))

        let recovery = store(storage).recover()
        #expect(recovery.load == .loaded(legacy))
        #expect(recovery.migratedFromFormatVersion == 1)
        #expect(recovery.repairFailure == nil)
        let encoded = StateCodec.encode(legacy, hasher: SodiumSHA256())
        #expect(storage.files == [copyA: encoded, copyB: encoded])
        #expect(store(storage).load() == .loaded(legacy))
        #expect(store(storage).recover().rewritten.isEmpty)
    }

    @Test func aCrashAtEveryStepOfTheMigrationLeavesTheSameState() throws {
        guard case .loaded(let legacy) = store(try FormatVersion1Fixture.storage()).load() else {
            Issue.record("the formatVersion 1 state was not loaded")
            return
        }
        let dryRun = try FormatVersion1Fixture.storage()
        _ = store(dryRun).recover()
        for step in 0...dryRun.steps {
            let storage = try FormatVersion1Fixture.storage()
            storage.arm(at: step, .crash)
            _ = store(storage).recover()
            storage.restart()
            #expect(store(storage).load() == .loaded(legacy), "crash at step \(step)")
        }
    }

    @Test func theRulesOfFormatVersion1StillApplyToItsFiles() throws {
        // state.json lost after a committed save: dropped, its names kept.
        let lost = try FormatVersion1Fixture.storage()
        lost.set(StateStore.stateFileName, nil)
        #expect(
            store(lost).load()
                == .dropped(reason: .stateFileMissing, keptDomainNames: ["api.example.com", "cdn.example.com"]))
        // state.json corrupt: dropped, the names of enforced-domains.json kept; nothing written.
        let corrupt = try FormatVersion1Fixture.storage()
        corrupt.set(StateStore.stateFileName, Array("{}".utf8))
        let files = corrupt.files
        guard case .dropped(.corrupt, let kept) = store(corrupt).recover().load else {
            Issue.record("a corrupt state.json was not dropped")
            return
        }
        #expect(kept == ["api.example.com", "cdn.example.com"])
        #expect(corrupt.files == files)
        // state.json unreadable: nothing concluded.
        let unreadable = try FormatVersion1Fixture.storage()
        unreadable.failReads(of: StateStore.stateFileName, with: EACCES)
        guard case .unreadable(let error) = store(unreadable).load() else {
            Issue.record("an unreadable state.json was not reported as such")
            return
        }
        #expect(error.code == EACCES)
    }

    @Test func theCopiesWinOverLeftoverFormatVersion1Files() throws {
        let storage = try FormatVersion1Fixture.storage()
        let current = state(version: 9)
        try store(storage).save(current)
        #expect(store(storage).load() == .loaded(current))
    }
}
