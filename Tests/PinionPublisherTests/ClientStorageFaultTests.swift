// The SDK over `pinion serve` when its storage fails: a full disk, a
// read-only state directory, or a state copy that cannot be read (EACCES, EIO), injected through
// the SDK's storage protocol (CI runs as root, and root ignores file modes, so permissions cannot
// simulate them). The client keeps its in-memory policy, reports the error, and loses nothing
// already persisted; an unreadable copy skips the refresh and nothing is written.

import Foundation
import PinionCore
import PinionCrypto
import PinionLinux
import PinionPublisher
import PinionSystem
import PinionTestSupport
import Synchronization
import Testing

/// Storage that passes everything to a directory, except writes, renames and removals
/// while a fault is armed, and reads of one file while a read fault is armed.
final class FaultyStorage: StateStorage {
    let base: DirectoryStorage
    private let fault = Mutex<Int32?>(nil)
    private let readFault = Mutex<(name: String, code: Int32)?>(nil)
    private let attemptedWrites = Mutex(0)

    init(path: String) throws { base = try DirectoryStorage(path: path) }

    /// Fails every later write with `code` (ENOSPC: disk full, EROFS: read-only); nil heals.
    func arm(_ code: Int32?) { fault.withLock { $0 = code } }

    /// Fails every read of `name` with `code` (EACCES, EIO); nil heals.
    func armReads(of name: String, _ code: Int32?) { readFault.withLock { $0 = code.map { (name, $0) } } }

    /// Writes and removals tried so far, failed or not.
    var writesTried: Int { attemptedWrites.withLock { $0 } }

    func read(_ name: String, maxBytes: Int) throws(StorageError) -> [UInt8]? {
        if let fault = readFault.withLock({ $0 }), fault.name == name {
            throw StorageError.posix(.read, name, code: fault.code)
        }
        return try base.read(name, maxBytes: maxBytes)
    }

    func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(StorageError) {
        attemptedWrites.withLock { $0 += 1 }
        if let code = fault.withLock({ $0 }) { throw StorageError.posix(.write, name, code: code) }
        try base.writeAtomically(name, bytes)
    }

    func remove(_ name: String) throws(StorageError) {
        attemptedWrites.withLock { $0 += 1 }
        if let code = fault.withLock({ $0 }) { throw StorageError.posix(.remove, name, code: code) }
        try base.remove(name)
    }

    func lockExclusively() throws(StorageError) -> StorageLock { try base.lockExclusively() }
}

@Suite(.serialized) struct ClientStorageFaultTests {
    @Test(arguments: [ENOSPC, EROFS])
    func aFailingStorageKeepsThePolicyReportsAndLosesNothing(code: Int32) throws {
        let setup = try Setup()
        let workspace = FileManager.default.temporaryDirectory.appendingPathComponent("pinion-faults-\(UUID())").path
        try FileManager.default.createDirectory(atPath: workspace, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: workspace) }
        let repo = workspace + "/repo"
        let at = t0.adding(seconds: 3600)
        try Data(setup.rootEnvelope.serialized()).write(to: URL(fileURLWithPath: workspace + "/root.json"))
        #expect(
            runPinion(["publish", "--repo", repo, workspace + "/root.json", "--at", at.description]).status == 0)
        var previous: [UInt8]?
        func publish(_ version: Int64, pins: [Pin]) throws {
            var payload = manifestPayload(
                version: version, issuedAt: t0.adding(seconds: version),
                domains: [.init(name: "api.example.com", pins: pins)])
            payload.previous = previous
            let bytes = payload.serialized()
            previous = OpenSSLSupport.sha256(bytes)
            let file = workspace + "/m\(version).json"
            try Data(try sign(.pins, bytes, with: [setup.pinsKey]).serialized()).write(to: URL(fileURLWithPath: file))
            #expect(runPinion(["publish", "--repo", repo, file, "--at", at.description]).status == 0)
        }
        try publish(1, pins: [pin(1), pin(2)])

        let credentials = try ServerCredentials.shared()
        let server = try HTTPSPublisher(
            configuration: PublisherConfiguration(
                repository: repo, certificateChainFile: credentials.certificate, privateKeyFile: credentials.key,
                host: "127.0.0.1", port: 0),
            accessLog: .disabled)
        server.start()
        defer { server.drain(timeout: 5) }
        let stateDirectory = workspace + "/state"
        let configuration = ClientConfiguration(
            scope: "com.example.app", baseURL: URL(string: "https://127.0.0.1:\(server.port)/"),
            embeddedRoot: setup.rootEnvelope.serialized(), stateDirectory: stateDirectory,
            caFile: credentials.certificate, connectTimeout: 20, ioTimeout: 20, totalDeadline: 60, clock: { at })
        let storage = try FaultyStorage(path: stateDirectory)
        let client = try PinningClient(configuration: configuration, storage: storage)
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        let persistedPolicy = client.policyNow()

        // Version 2 is published while the disk is full (or read-only).
        try publish(2, pins: [pin(3), pin(4)])
        storage.arm(code)
        let report = client.refresh()
        guard case .networkFailure(let error) = report.outcome else {
            Issue.record("expected the storage failure to be reported, got \(report.outcome)")
            return
        }
        #expect(error.description.contains("could not persist"))
        #expect(error.description.contains(String(cString: strerror(code))))
        #expect(client.trustedState.floor == ManifestOrder(rootVersion: 1, version: 1))
        #expect(client.policyNow() == persistedPolicy, "the in-memory policy stays the persisted one")
        // Pins keep being enforced from memory.
        let entry = try #require(client.policyNow().entry(named: "api.example.com"))
        #expect(Set(entry.pins) == [pin(1), pin(2)])

        // What was persisted is intact: a restart (plain directory storage) finds version 1.
        let restarted = try PinningClient(configuration: configuration)
        #expect(restarted.trustedState.floor == ManifestOrder(rootVersion: 1, version: 1))
        #expect(restarted.policyNow() == persistedPolicy)

        // Once the disk is healthy again the next refresh adopts and keeps version 2.
        storage.arm(nil)
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
        let again = try PinningClient(configuration: configuration)
        #expect(again.trustedState.floor == ManifestOrder(rootVersion: 1, version: 2))
    }

    @Test(arguments: [EACCES, EIO])
    func anUnreadableStateCopySkipsTheRefreshAndWritesNothing(code: Int32) throws {
        let setup = try Setup()
        let workspace = FileManager.default.temporaryDirectory.appendingPathComponent("pinion-faults-\(UUID())").path
        try FileManager.default.createDirectory(atPath: workspace, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: workspace) }
        let repo = workspace + "/repo"
        let at = t0.adding(seconds: 3600)
        try Data(setup.rootEnvelope.serialized()).write(to: URL(fileURLWithPath: workspace + "/root.json"))
        #expect(
            runPinion(["publish", "--repo", repo, workspace + "/root.json", "--at", at.description]).status == 0)
        var previous: [UInt8]?
        func publish(_ version: Int64) throws {
            var payload = manifestPayload(
                version: version, issuedAt: t0.adding(seconds: version),
                domains: [.init(name: "api.example.com", pins: [pin(UInt8(version)), pin(9)])])
            payload.previous = previous
            let bytes = payload.serialized()
            previous = OpenSSLSupport.sha256(bytes)
            let file = workspace + "/m\(version).json"
            try Data(try sign(.pins, bytes, with: [setup.pinsKey]).serialized()).write(to: URL(fileURLWithPath: file))
            #expect(runPinion(["publish", "--repo", repo, file, "--at", at.description]).status == 0)
        }
        try publish(1)
        let credentials = try ServerCredentials.shared()
        let server = try HTTPSPublisher(
            configuration: PublisherConfiguration(
                repository: repo, certificateChainFile: credentials.certificate, privateKeyFile: credentials.key,
                host: "127.0.0.1", port: 0),
            accessLog: .disabled)
        server.start()
        defer { server.drain(timeout: 5) }
        let stateDirectory = workspace + "/state"
        let configuration = ClientConfiguration(
            scope: "com.example.app", baseURL: URL(string: "https://127.0.0.1:\(server.port)/"),
            embeddedRoot: setup.rootEnvelope.serialized(), stateDirectory: stateDirectory,
            caFile: credentials.certificate, connectTimeout: 20, ioTimeout: 20, totalDeadline: 60, clock: { at })
        let storage = try FaultyStorage(path: stateDirectory)
        let client = try PinningClient(configuration: configuration, storage: storage)
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        func copies() throws -> [Data] {
            try StateStore.copyFileNames.map { try Data(contentsOf: URL(fileURLWithPath: stateDirectory + "/" + $0)) }
        }
        let before = try copies()

        // Version 2 is published while copy B cannot be read: the running client skips the
        // refresh (another process might have written a higher floor there).
        try publish(2)
        storage.armReads(of: StateStore.copyFileNames[1], code)
        let writes = storage.writesTried
        guard case .networkFailure(let failure) = client.refresh().outcome, let error = failure.storageError else {
            Issue.record("the refresh was not skipped")
            return
        }
        #expect(error.code == code)
        #expect(client.trustedState.floor == ManifestOrder(rootVersion: 1, version: 1))
        // A client started now enforces the readable copy (nothing unpinned), reports the
        // unreadable one, and writes nothing either.
        let events = Mutex<[ClientEvent]>([])
        let started = try PinningClient(
            configuration: configuration, storage: storage, onEvent: { event in events.withLock { $0.append(event) } })
        #expect(events.withLock { $0 }.first == .stateUnreadable(error))
        #expect(started.trustedState.floor == ManifestOrder(rootVersion: 1, version: 1))
        guard case .networkFailure(let failure) = started.refresh().outcome, failure.storageError != nil else {
            Issue.record("the refresh of a client started on an unreadable state was not skipped")
            return
        }
        #expect(storage.writesTried == writes)
        #expect(try copies() == before)

        // Readable again: the state is loaded first, then version 2 is accepted on top of it.
        storage.armReads(of: StateStore.copyFileNames[1], nil)
        #expect(started.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
        #expect(try PinningClient(configuration: configuration).trustedState.floor?.version == 2)
    }
}
