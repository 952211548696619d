// The client state store (docs/DESIGN.md §6 step 6 and the start-up rules): the codec's refusals,
// round trips, a crash or a failure at every step of a save of the two copies, and the
// directory storage's modes and refusals. Losing copies: StateCopiesTests.swift.

import Foundation
import PinionCore
import PinionCrypto
import PinionLinux
import PinionSystem
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Fixtures

private let scope = "com.example.app"

/// Bytes shaped like an envelope; the store keeps them exactly and never verifies them.
private func envelope(_ tag: String) -> [UInt8] {
    let payload = Base64.encode(Array(#"{"type":"pinion.root","tag":"\#(tag)"}"#.utf8))
    return Array(#"{"payloadType":"application/vnd.pinion.root+json","payload":"\#(payload)","signatures":[]}"#.utf8)
}

private func pin(_ byte: UInt8) throws -> Pin { try Pin(digest: [UInt8](repeating: byte, count: 32)) }

/// A state with every member set.
private func fullState(
    scope: String = scope, names: [String] = ["api.example.com", "cdn.example.com"], version: Int64 = 7
) throws -> ClientState {
    ClientState(
        scope: scope, acceptedRoots: [envelope("root-2"), envelope("root-3")],
        manifest: envelope("manifest-\(version)"), floor: ManifestOrder(rootVersion: 3, version: version),
        lastKnownTime: Timestamp(secondsSince1970: 1_796_029_200 + version),
        revokedPins: [try pin(9), try pin(10)], revokedSetPinsRole: [String(repeating: "ab", count: 32)],
        manifestDomainNames: names, manifestETag: "\"" + String(repeating: "0f", count: 32) + "\"")
}

private func decodeError(_ bytes: [UInt8], limits: Limits = .standard) -> StateError? {
    do {
        _ = try StateCodec.decode(bytes, limits: limits, hasher: SodiumSHA256())
        return nil
    } catch {
        return error
    }
}

private func saveError(_ store: StateStore, _ state: ClientState) -> StateError? {
    do {
        try store.save(state)
        return nil
    } catch {
        return error
    }
}

/// A fresh directory under the system's temporary directory, removed at the end.
private final class StateTestDirectory {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("pinion-state-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func entries(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }
}

private func mode(_ path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return info.st_mode & 0o7777
}

// MARK: - Tests

@Suite("State store")
struct StateStoreTests {
    // MARK: Codec

    @Test func roundTripsAFullState() throws {
        let state = try fullState()
        #expect(
            try StateCodec.decode(StateCodec.encode(state, hasher: SodiumSHA256()), hasher: SodiumSHA256()) == state)
    }

    @Test func roundTripsAnEmptyState() throws {
        let state = ClientState(scope: scope)
        #expect(
            try StateCodec.decode(StateCodec.encode(state, hasher: SodiumSHA256()), hasher: SodiumSHA256()) == state)
    }

    @Test func encodingIsDeterministicWithHeaderFirstAndChecksumLast() throws {
        let state = try fullState()
        let bytes = StateCodec.encode(state, hasher: SodiumSHA256())
        #expect(bytes == StateCodec.encode(state, hasher: SodiumSHA256()))
        let members = try stateObject(bytes).members.map(\.name)
        #expect(members.first == "type")
        #expect(members.dropFirst().first == "formatVersion")
        #expect(members.last == "contentSHA256")
        #expect(try stateObject(bytes)["type"] == .string("pinion.client-state"))
        #expect(try stateObject(bytes)["formatVersion"] == .number("3"))
    }

    @Test func envelopesAreStoredAsTheirExactBytes() throws {
        var state = try fullState()
        // Bytes that are not even JSON survive unchanged: nothing is re-serialised.
        state.manifest = [0x00, 0xFF, 0x7B, 0x0A, 0x80]
        #expect(
            try StateCodec.decode(StateCodec.encode(state, hasher: SodiumSHA256()), hasher: SodiumSHA256()).manifest
                == state.manifest)
    }

    @Test(arguments: stateFileDamages)
    func refusesADamagedStateFile(damage: StateFileDamage) throws {
        let bytes = try damage.apply(StateCodec.encode(try fullState(), hasher: SodiumSHA256()))
        let error = decodeError(bytes)
        #expect(error != nil, "decoded a state file with \(damage.name)")
        if let expected = damage.reason { #expect(error == expected) }
    }

    @Test func detectsEverySingleBitFlip() throws {
        let bytes = StateCodec.encode(try fullState(), hasher: SodiumSHA256())
        var undetected: [String] = []
        for offset in bytes.indices {
            for bit in 0..<8 {
                var flipped = bytes
                flipped[offset] ^= UInt8(1 << bit)
                if decodeError(flipped) == nil { undetected.append("byte \(offset) bit \(bit)") }
            }
        }
        #expect(undetected.isEmpty)
    }

    @Test func refusesAnEnvelopeOverTheLimit() throws {
        var state = try fullState()
        state.acceptedRoots.append([UInt8](repeating: 0x41, count: 1001))
        let limits = Limits(maxEnvelopeBytes: 1000)
        #expect(
            decodeError(StateCodec.encode(state, hasher: SodiumSHA256()), limits: limits)
                == corruptCopy("acceptedRoots[2]", .tooLarge(bytes: 1001, limit: 1000)))
    }

    // MARK: Store round trips

    @Test func loadOfAnEmptyStorageIsEmpty() {
        #expect(StateStore(storage: MemoryStateStorage(), scope: scope, hasher: SodiumSHA256()).load() == .empty)
    }

    @Test func savedStateLoadsBack() throws {
        let store = StateStore(storage: MemoryStateStorage(), scope: scope, hasher: SodiumSHA256())
        let old = try fullState(version: 7)
        let new = try fullState(names: ["api.example.com"], version: 8)
        try store.save(old)
        #expect(store.load() == .loaded(old))
        try store.save(new)
        #expect(store.load() == .loaded(new))
    }

    @Test func saveWritesTwoIdenticalCopiesAndNothingElse() throws {
        let storage = MemoryStateStorage()
        let state = try fullState()
        try StateStore(storage: storage, scope: scope, hasher: SodiumSHA256()).save(state)
        let encoded = StateCodec.encode(state, hasher: SodiumSHA256())
        #expect(storage.files == [StateStore.copyFileNames[0]: encoded, StateStore.copyFileNames[1]: encoded])
    }

    @Test func clearRemovesBothFiles() throws {
        let storage = MemoryStateStorage()
        let store = StateStore(storage: storage, scope: scope, hasher: SodiumSHA256())
        try store.save(try fullState())
        try store.clear()
        #expect(storage.files.isEmpty)
        #expect(store.load() == .empty)
    }

    // MARK: Crash safety

    /// Runs `save(new)` over a copy of `files` with a fault at every step (and once past the
    /// last), and hands each outcome to `check`.
    private func atEveryStep(
        of files: [String: [UInt8]], saving new: ClientState, fault: MemoryStateStorage.Fault,
        check: (_ step: Int, _ storage: MemoryStateStorage, _ error: StateError?) -> Void
    ) throws {
        let dryRun = MemoryStateStorage(files: files)
        try StateStore(storage: dryRun, scope: scope, hasher: SodiumSHA256()).save(new)
        #expect(dryRun.steps >= 4, "expected the reads and two atomic writes")
        for step in 0...dryRun.steps {
            let storage = MemoryStateStorage(files: files)
            storage.arm(at: step, fault)
            let error = saveError(StateStore(storage: storage, scope: scope, hasher: SodiumSHA256()), new)
            storage.restart()
            check(step, storage, error)
        }
    }

    @Test func crashAtEveryStepOfASaveLeavesTheOldOrTheNewState() throws {
        let old = try fullState(names: ["api.example.com", "old.example.com"], version: 7)
        let new = try fullState(names: ["api.example.com", "new.example.com"], version: 8)
        let before = MemoryStateStorage()
        try StateStore(storage: before, scope: scope, hasher: SodiumSHA256()).save(old)
        var outcomes = Set<String>()
        var crashesLeavingATemporaryFile = 0
        try atEveryStep(of: before.files, saving: new, fault: .crash) { step, storage, _ in
            let load = StateStore(storage: storage, scope: scope, hasher: SodiumSHA256()).load()
            #expect(load == .loaded(old) || load == .loaded(new), "crash at step \(step): \(load)")
            outcomes.insert(load == .loaded(old) ? "old" : "new")
            // Each copy on its own holds the old state or the new one, and B is never ahead of A.
            let store = StateStore(storage: storage, scope: scope, hasher: SodiumSHA256())
            let copies = StateStore.copyFileNames.map(store.readCopy)
            for (file, copy) in zip(StateStore.copyFileNames, copies) {
                #expect(copy == .valid(old) || copy == .valid(new), "crash at step \(step): \(file) \(copy)")
            }
            #expect(copies[1] != .valid(new) || copies[0] == .valid(new), "crash at step \(step): B before A")
            if storage.files.keys.contains(where: { $0.hasPrefix(".") }) { crashesLeavingATemporaryFile += 1 }
        }
        #expect(outcomes == ["old", "new"])
        // A crash between writing a temporary file and renaming it, for each of the two files.
        #expect(crashesLeavingATemporaryFile == 2)
    }

    @Test func crashAtEveryStepOfTheFirstSaveLeavesNoStateOrTheNewOne() throws {
        let new = try fullState()
        var outcomes = Set<String>()
        try atEveryStep(of: [:], saving: new, fault: .crash) { step, storage, _ in
            let load = StateStore(storage: storage, scope: scope, hasher: SodiumSHA256()).load()
            // In particular never `.dropped`: a copy A written before a crash is not mistaken
            // for a lost state, whatever B holds.
            #expect(load == .empty || load == .loaded(new), "crash at step \(step): \(load)")
            outcomes.insert(load == .empty ? "empty" : "new")
        }
        #expect(outcomes == ["empty", "new"])
    }

    @Test(arguments: [ENOSPC, EROFS, EIO])
    func failedStepOfASaveLeavesThePreviousFilesIntact(code: Int32) throws {
        let old = try fullState(names: ["api.example.com", "old.example.com"], version: 7)
        let new = try fullState(names: ["api.example.com", "new.example.com"], version: 8)
        let before = MemoryStateStorage()
        try StateStore(storage: before, scope: scope, hasher: SodiumSHA256()).save(old)
        try atEveryStep(of: before.files, saving: new, fault: .fail(code)) { step, storage, error in
            let load = StateStore(storage: storage, scope: scope, hasher: SodiumSHA256()).load()
            if let error {
                guard case .storage(let storageError) = error else {
                    Issue.record("step \(step): \(error) is not a storage error")
                    return
                }
                #expect(storageError.code == code)
                #expect(storage.files == before.files, "step \(step): files changed by a failed save")
                #expect(load == .loaded(old))
            } else {
                #expect(load == .loaded(new), "step \(step)")
            }
        }
    }

    @Test(arguments: [ENOSPC, EROFS])
    func failedFirstSaveLeavesNoFiles(code: Int32) throws {
        let new = try fullState()
        try atEveryStep(of: [:], saving: new, fault: .fail(code)) { step, storage, error in
            let load = StateStore(storage: storage, scope: scope, hasher: SodiumSHA256()).load()
            if error != nil {
                #expect(storage.files.isEmpty, "step \(step)")
                #expect(load == .empty)
            } else {
                // Only the read of the previous copy A may fail without failing the save.
                #expect(load == .loaded(new), "step \(step)")
            }
        }
    }

    // MARK: Save refusals

    @Test func saveRefusesAStateOfAnotherScope() throws {
        let storage = MemoryStateStorage()
        let error = saveError(
            StateStore(storage: storage, scope: scope, hasher: SodiumSHA256()), try fullState(scope: "com.other.app"))
        #expect(error == .foreignScope(expected: scope, found: "com.other.app"))
        #expect(storage.files.isEmpty)
    }

    @Test func saveRefusesAStateThatWouldNotLoadAndWritesNothing() throws {
        let base = try fullState()
        var tooManyRoots = base
        tooManyRoots.acceptedRoots = Array(repeating: envelope("root"), count: StateCodec.maxAcceptedRoots + 1)
        var emptyEnvelope = base
        emptyEnvelope.manifest = []
        var badName = base
        badName.manifestDomainNames = ["*.example.com"]
        var duplicateName = base
        duplicateName.manifestDomainNames = ["api.example.com", "api.example.com"]
        var duplicatePin = base
        duplicatePin.revokedPins = [try pin(1), try pin(1)]
        var badETag = base
        badETag.manifestETag = "\"x\"\nX-Injected: 1"
        var zeroFloor = base
        zeroFloor.floor = ManifestOrder(rootVersion: 0, version: 1)
        let cases: [(ClientState, String)] = [
            (tooManyRoots, "acceptedRoots"), (emptyEnvelope, "manifest"), (badName, "manifestDomainNames[0]"),
            (duplicateName, "manifestDomainNames[1]"), (duplicatePin, "revokedPins[1]"),
            (badETag, "manifestETag"), (zeroFloor, "floor.rootVersion"),
        ]
        let storage = MemoryStateStorage()
        let store = StateStore(storage: storage, scope: scope, hasher: SodiumSHA256())
        try store.save(base)
        let before = storage.files
        for (state, path) in cases {
            guard case .invalidState(let reason) = saveError(store, state) else {
                Issue.record("\(path): not refused as an invalid state")
                continue
            }
            #expect(reason.path == path)
            #expect(storage.files == before)
        }
        #expect(store.load() == .loaded(base))
    }

    @Test func saveRefusesAnEnvelopeOverTheConfiguredLimit() throws {
        let storage = MemoryStateStorage()
        var state = try fullState()
        state.manifest = [UInt8](repeating: 0x7B, count: 1001)
        let limits = Limits(maxEnvelopeBytes: 1000)
        let error = saveError(StateStore(storage: storage, scope: scope, limits: limits, hasher: SodiumSHA256()), state)
        #expect(error == .invalidState(FormatError(path: "manifest", rule: .tooLarge(bytes: 1001, limit: 1000))))
        #expect(storage.files.isEmpty)
    }

    // MARK: DirectoryStorage

    @Test func createsTheDirectory0700AndFiles0600() throws {
        let temporary = try StateTestDirectory()
        let path = temporary.path + "/missing/parent/state"
        let store = StateStore(storage: try DirectoryStorage(path: path), scope: scope, hasher: SodiumSHA256())
        #expect(mode(path) == 0o700)
        #expect(mode(temporary.path + "/missing") == 0o700)
        try store.save(try fullState())
        for file in StateStore.copyFileNames { #expect(mode(path + "/" + file) == 0o600) }
    }

    @Test func roundTripOnDiskLeavesNoTemporaryFiles() throws {
        let temporary = try StateTestDirectory()
        let store = StateStore(
            storage: try DirectoryStorage(path: temporary.path + "/state/"), scope: scope, hasher: SodiumSHA256())
        let old = try fullState(version: 7)
        let new = try fullState(names: ["api.example.com", "new.example.com"], version: 8)
        try store.save(old)
        #expect(store.load() == .loaded(old))
        for _ in 0..<3 { try store.save(new) }
        #expect(store.load() == .loaded(new))
        let reopened = StateStore(
            storage: try DirectoryStorage(path: temporary.path + "/state"), scope: scope, hasher: SodiumSHA256())
        #expect(reopened.load() == .loaded(new))
        #expect(
            try temporary.entries(temporary.path + "/state") == StateStore.copyFileNames.sorted())
    }

    @Test func refusesASymlinkedStateDirectory() throws {
        let temporary = try StateTestDirectory()
        let real = temporary.path + "/real"
        let link = temporary.path + "/link"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: false)
        #expect(symlink(real, link) == 0)
        for path in [link, link + "/", link + "//"] {
            #expect(throws: StorageError.self, "\(path)") { try DirectoryStorage(path: path) }
            do {
                _ = try DirectoryStorage(path: path)
            } catch {
                #expect(error.code == ELOOP)
            }
        }
    }

    @Test func refusesADirectorySwappedForASymlinkAfterOpening() throws {
        let temporary = try StateTestDirectory()
        let path = temporary.path + "/state"
        let store = StateStore(storage: try DirectoryStorage(path: path), scope: scope, hasher: SodiumSHA256())
        try store.save(try fullState())
        #expect(rename(path, temporary.path + "/elsewhere") == 0)
        #expect(symlink(temporary.path + "/elsewhere", path) == 0)
        guard case .unreadable(let error) = store.load() else {
            Issue.record("followed a symbolic link to the state directory")
            return
        }
        #expect(error.code == ELOOP)
        guard case .storage(let saveFailure) = saveError(store, try fullState()) else {
            Issue.record("saved through a symbolic link")
            return
        }
        #expect(saveFailure.code == ELOOP)
    }

    @Test func refusesAPathThatIsARegularFile() throws {
        let temporary = try StateTestDirectory()
        let file = temporary.path + "/file"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        do {
            _ = try DirectoryStorage(path: file)
            Issue.record("accepted a regular file as the state directory")
        } catch {
            #expect(error.code == ENOTDIR)
        }
    }

    /// Root ignores permission bits, so an unwritable location is made with a parent that is a
    /// regular file: creating the directory fails with ENOTDIR, a typed error.
    @Test func unwritableLocationIsATypedError() throws {
        let temporary = try StateTestDirectory()
        let file = temporary.path + "/file"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        do {
            _ = try DirectoryStorage(path: file + "/state")
            Issue.record("created a directory under a regular file")
        } catch {
            #expect(error == StorageError.posix(.createDirectory, file + "/state", code: ENOTDIR))
        }
    }

    @Test func removedDirectoryMakesSaveFailWithATypedError() throws {
        let temporary = try StateTestDirectory()
        let path = temporary.path + "/state"
        let store = StateStore(storage: try DirectoryStorage(path: path), scope: scope, hasher: SodiumSHA256())
        try FileManager.default.removeItem(atPath: path)
        #expect(saveError(store, try fullState()) == .storage(StorageError.posix(.open, path, code: ENOENT)))
    }

    /// Permission bits only bind a non-root user; as root this test cannot mean anything and
    /// is skipped rather than faked.
    @Test(.enabled(if: geteuid() != 0, "root ignores directory permissions"))
    func readOnlyDirectoryMakesSaveFailAndLeavesTheOldState() throws {
        let temporary = try StateTestDirectory()
        let path = temporary.path + "/state"
        let store = StateStore(storage: try DirectoryStorage(path: path), scope: scope, hasher: SodiumSHA256())
        let old = try fullState()
        try store.save(old)
        #expect(chmod(path, 0o500) == 0)
        defer { _ = chmod(path, 0o700) }
        guard case .storage(let error) = saveError(store, try fullState(version: 8)) else {
            Issue.record("saved into a read-only directory")
            return
        }
        #expect(error.code == EACCES)
        #expect(store.load() == .loaded(old))
    }

    @Test func failedRenameLeavesNoTemporaryFile() throws {
        let temporary = try StateTestDirectory()
        let path = temporary.path + "/state"
        let storage = try DirectoryStorage(path: path)
        // rename(2) of a file over a directory fails with EISDIR after the temporary file is
        // written and synced: the last possible failure of an atomic replace.
        try FileManager.default.createDirectory(atPath: path + "/target", withIntermediateDirectories: false)
        #expect(throws: StorageError.posix(.rename, "target", code: EISDIR)) {
            try storage.writeAtomically("target", [1, 2])
        }
        #expect(try temporary.entries(path) == ["target"])
    }

    @Test func saveOverADirectoryAtTheStateFileFailsAndLeavesNoOtherFile() throws {
        let temporary = try StateTestDirectory()
        let path = temporary.path + "/state"
        let store = StateStore(storage: try DirectoryStorage(path: path), scope: scope, hasher: SodiumSHA256())
        let copyB = StateStore.copyFileNames[1]
        try FileManager.default.createDirectory(atPath: path + "/" + copyB, withIntermediateDirectories: false)
        #expect(saveError(store, try fullState()) == .storage(StorageError.posix(.rename, copyB, code: EISDIR)))
        // Copy A, written first, was removed again: there was none before.
        #expect(try temporary.entries(path) == [copyB])
    }

    @Test func refusesASymlinkedStateFileAndTheNextSaveReplacesTheLink() throws {
        let temporary = try StateTestDirectory()
        let elsewhere = StateStore(
            storage: try DirectoryStorage(path: temporary.path + "/elsewhere"), scope: scope, hasher: SodiumSHA256())
        let planted = try fullState(names: ["planted.example.com"])
        try elsewhere.save(planted)
        let path = temporary.path + "/state"
        let store = StateStore(storage: try DirectoryStorage(path: path), scope: scope, hasher: SodiumSHA256())
        let copyA = StateStore.copyFileNames[0]
        let target = temporary.path + "/elsewhere/" + copyA
        #expect(symlink(target, path + "/" + copyA) == 0)
        guard case .unreadable(let error) = store.load() else {
            Issue.record("followed a symbolic link to the state file")
            return
        }
        #expect(error.code == ELOOP)
        let state = try fullState()
        try store.save(state)
        #expect(store.load() == .loaded(state))
        #expect(mode(path + "/" + copyA) == 0o600)
        #expect(elsewhere.load() == .loaded(planted))
    }

    @Test func refusesAFIFOWithoutHanging() throws {
        let temporary = try StateTestDirectory()
        let storage = try DirectoryStorage(path: temporary.path + "/state")
        let copyA = StateStore.copyFileNames[0]
        #expect(mkfifo(temporary.path + "/state/" + copyA, 0o600) == 0)
        #expect(throws: StorageError.self) { try storage.read(copyA, maxBytes: 100) }
        // A FIFO is not absence: the store concludes nothing.
        guard case .unreadable = StateStore(storage: storage, scope: scope, hasher: SodiumSHA256()).load() else {
            Issue.record("a FIFO in place of a copy was not reported as unreadable")
            return
        }
    }

    @Test func refusesAWorldWritableDirectory() throws {
        let temporary = try StateTestDirectory()
        let path = temporary.path + "/shared"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(chmod(path, 0o777) == 0)
        do {
            _ = try DirectoryStorage(path: path)
            Issue.record("accepted a world-writable directory")
        } catch {
            #expect(error.code == EPERM)
        }
    }

    @Test func temporaryFilesOfDeadProcessesAreRemovedWhenOpened() throws {
        let temporary = try StateTestDirectory()
        let path = temporary.path + "/state"
        _ = try DirectoryStorage(path: path)
        // A pid above Linux's largest pid_max (2^22) belongs to no process.
        let stale = path + "/.state.json.tmp-999999999-5678"
        let inFlight = path + "/.state.json.tmp-\(getpid())-5678"
        #expect(FileManager.default.createFile(atPath: stale, contents: Data("half".utf8)))
        #expect(FileManager.default.createFile(atPath: inFlight, contents: Data("half".utf8)))
        _ = try DirectoryStorage(path: path)
        #expect(try temporary.entries(path) == [".state.json.tmp-\(getpid())-5678"])
    }

    @Test func readStopsOneBytePastTheLimit() throws {
        let temporary = try StateTestDirectory()
        let storage = try DirectoryStorage(path: temporary.path + "/state")
        try storage.writeAtomically("big", [UInt8](repeating: 7, count: 100_000))
        #expect(try storage.read("big", maxBytes: 10)?.count == 11)
        #expect(try storage.read("big", maxBytes: 100_000)?.count == 100_000)
        #expect(try storage.read("absent", maxBytes: 10) == nil)
    }

    @Test func refusesNamesThatAreNotPlainFileNames() throws {
        let temporary = try StateTestDirectory()
        let storage = try DirectoryStorage(path: temporary.path + "/state")
        for name in ["", "../escape", "a/b", ".hidden", "."] {
            #expect(throws: StorageError.self, "\(name)") { try storage.writeAtomically(name, [1]) }
        }
    }
}
