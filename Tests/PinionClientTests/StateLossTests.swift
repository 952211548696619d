// The rollback floor through the SDK when state copies are lost or unreadable (docs/DESIGN.md §6):
// after each damage an older manifest is still refused as a rollback, a read
// error skips the refresh and writes nothing, the same version with other bytes is equivocation,
// both copies lost is the documented restart, and a formatVersion 1 install migrates.

import Foundation
import PinionCore
import PinionCrypto
import PinionLinux
import PinionSystem
import PinionTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A publisher made of bytes behind the SDK's transport protocol: no root after version 1,
/// and one `manifest.json` (with an ETag) that the test changes.
final class BytesPublisher: HTTPSTransport {
    private let manifest = Mutex<[UInt8]>([])

    func serve(_ bytes: [UInt8]) { manifest.withLock { $0 = bytes } }

    func get(
        _ url: URL, headers: [(String, String)], connectTo: (host: String, port: UInt16)?, totalDeadline: Double?,
        pinCheck: @Sendable (PeerChain) -> PinDecision
    ) throws(HTTPSError) -> HTTPSResponse {
        guard url.path.hasSuffix("/manifest.json") else {
            return HTTPSResponse(url: url, status: 404, headers: [], body: [])
        }
        let body = manifest.withLock { $0 }
        let etag = "\"" + Hex.encode(SodiumSHA256().sha256(body)) + "\""
        return HTTPSResponse(url: url, status: 200, headers: [("etag", etag)], body: body)
    }

    func post(_ url: URL, body: [UInt8], contentType: String, pinCheck: @Sendable (PeerChain) -> PinDecision)
        throws(HTTPSError) -> HTTPSResponse
    {
        HTTPSResponse(url: url, status: 204, headers: [], body: [])
    }
}

/// Events the SDK delivered.
final class EventRecorder: Sendable {
    private let events = Mutex<[ClientEvent]>([])
    func append(_ event: ClientEvent) { events.withLock { $0.append(event) } }

    /// The events since the last call.
    func take() -> [ClientEvent] {
        events.withLock { value in
            defer { value = [] }
            return value
        }
    }
}

/// The formatVersion 1 fixture's root and manifests, and SDK clients over a given storage.
private struct Device {
    let publisher = BytesPublisher()
    let root: [UInt8]
    let manifests: [String: [UInt8]]
    /// Three hours after t0: every fixture manifest is current.
    let now = t0.adding(seconds: 3 * 3600)

    init() throws {
        root = try FormatVersion1Fixture.bytes("root-1.json")
        var manifests: [String: [UInt8]] = [:]
        for name in ["2", "3", "3-other", "4"] {
            manifests[name] = try FormatVersion1Fixture.bytes("manifest-\(name).json")
        }
        self.manifests = manifests
    }

    func manifest(_ name: String) -> [UInt8] { manifests[name] ?? [] }

    func client(_ storage: any StateStorage, events: EventRecorder = EventRecorder()) throws -> PinningClient {
        let time = now
        let configuration = ClientConfiguration(
            scope: "com.example.app", baseURL: URL(string: "https://publisher.example.com/"), embeddedRoot: root,
            stateDirectory: "/nonexistent", clock: { time })
        return try PinningClient(
            configuration: configuration, crypto: sodium, transport: publisher, storage: storage,
            onEvent: { events.append($0) })
    }

    /// A client that accepted version 3 (which revokes pin 1) into `storage`.
    func atVersion3(_ storage: any StateStorage) throws -> PinningClient {
        let client = try client(storage)
        publisher.serve(manifest("3"))
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 3)))
        return client
    }
}

private let floor3 = ManifestOrder(rootVersion: 1, version: 3)

private func payloadHash(_ envelope: [UInt8]) throws -> [UInt8] {
    SodiumSHA256().sha256(try Envelope.parse(envelope).payload)
}

/// The state version 3 left: floor, its hash, the revoked pin, and both copies equal to it.
private func expectVersion3(
    _ client: PinningClient, _ storage: MemoryStateStorage, _ device: Device,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let persisted = client.trustedState.persisted
    #expect(persisted.floor == floor3, sourceLocation: sourceLocation)
    #expect(persisted.floorPayloadSHA256 == (try payloadHash(device.manifest("3"))), sourceLocation: sourceLocation)
    #expect(persisted.manifest == device.manifest("3"), sourceLocation: sourceLocation)
    #expect(client.trustedState.revoked == [pin(1)], sourceLocation: sourceLocation)
    #expect(
        Set(client.policyNow().entry(named: "api.example.com")?.pins ?? []) == [pin(2), pin(3)],
        sourceLocation: sourceLocation)
    let store = StateStore(storage: storage, scope: "com.example.app", hasher: SodiumSHA256())
    for file in StateStore.copyFileNames {
        #expect(store.readCopy(file) == .valid(persisted), "\(file)", sourceLocation: sourceLocation)
    }
}

@Suite("State loss through the SDK")
struct StateLossTests {
    @Test(arguments: copyDamages, [0, 1])
    func afterLosingOneCopyAnOlderManifestIsStillARollback(damage: CopyDamage, copy: Int) throws {
        let device = try Device()
        let storage = MemoryStateStorage()
        _ = try device.atVersion3(storage)
        let file = StateStore.copyFileNames[copy]
        storage.set(file, damage.apply(storage.get(file) ?? []))

        let events = EventRecorder()
        let restarted = try device.client(storage, events: events)
        let startEvents = events.take()
        #expect(
            startEvents.contains {
                if case .stateCopyLost(file, _) = $0 { return true }
                return false
            }, "\(startEvents)")
        #expect(!startEvents.contains { if case .storeDropped = $0 { return true } else { return false } })
        try expectVersion3(restarted, storage, device)

        // Version 2 (which still trusts the revoked pin 1) is replayed: refused.
        device.publisher.serve(device.manifest("2"))
        let report = restarted.refresh()
        #expect(
            report.outcome
                == .rejected(.rollback(offered: ManifestOrder(rootVersion: 1, version: 2), floor: floor3)))
        try expectVersion3(restarted, storage, device)
    }

    @Test(arguments: [EACCES, EIO], [0, 1])
    func anUnreadableCopyAtStartUpSkipsTheRefreshAndDropsNothing(code: Int32, copy: Int) throws {
        let device = try Device()
        let storage = MemoryStateStorage()
        _ = try device.atVersion3(storage)
        let file = StateStore.copyFileNames[copy]
        storage.failReads(of: file, with: code)
        let files = storage.files
        let writes = storage.writes

        let events = EventRecorder()
        let restarted = try device.client(storage, events: events)
        guard case .stateUnreadable(let error)? = events.take().first else {
            Issue.record("the unreadable state was not reported at start-up")
            return
        }
        #expect(error.code == code && error.name == file)
        // Fail-closed meanwhile: the other copy's record is enforced (in memory; nothing is
        // written), so what it pins is never unpinned while this copy cannot be read.
        #expect(restarted.trustedState.floor == floor3)
        #expect(Set(restarted.policyNow().entry(named: "api.example.com")?.pins ?? []) == [pin(2), pin(3)])
        #expect(storage.writes == writes)
        // Version 2 would be accepted by an empty state: the refresh must not even run.
        device.publisher.serve(device.manifest("2"))
        let report = restarted.refresh()
        guard case .networkFailure(let failure) = report.outcome, let refreshError = failure.storageError else {
            Issue.record("the refresh was not skipped: \(report.outcome)")
            return
        }
        #expect(refreshError.code == code)
        #expect(events.take() == [.stateUnreadable(refreshError)])
        #expect(storage.writes == writes)
        #expect(storage.files == files)

        // Readable again: the next refresh loads the floor first, then refuses version 2.
        storage.failReads(of: file, with: nil)
        #expect(
            restarted.refresh().outcome
                == .rejected(.rollback(offered: ManifestOrder(rootVersion: 1, version: 2), floor: floor3)))
        try expectVersion3(restarted, storage, device)
    }

    @Test(arguments: [EACCES, EIO])
    func aCopyThatBecomesUnreadableWhileRunningSkipsTheRefresh(code: Int32) throws {
        let device = try Device()
        let storage = MemoryStateStorage()
        let client = try device.atVersion3(storage)
        storage.failReads(of: StateStore.copyFileNames[1], with: code)
        let files = storage.files
        device.publisher.serve(device.manifest("4"))
        guard case .networkFailure(let failure) = client.refresh().outcome, failure.storageError != nil else {
            Issue.record("the refresh was not skipped")
            return
        }
        #expect(storage.files == files)
        storage.failReads(of: StateStore.copyFileNames[1], with: nil)
        try expectVersion3(client, storage, device)
    }

    @Test func theSameVersionWithOtherBytesIsEquivocation() throws {
        let device = try Device()
        let storage = MemoryStateStorage()
        let events = EventRecorder()
        let client = try device.client(storage, events: events)
        device.publisher.serve(device.manifest("3"))
        #expect(client.refresh().outcome == .updated(floor3))
        _ = events.take()
        device.publisher.serve(device.manifest("3-other"))
        #expect(client.refresh().outcome == .rejected(.equivocation(order: floor3)))
        #expect(events.take().contains(.equivocation(floor3)))
        try expectVersion3(client, storage, device)
    }

    /// The stored envelope no longer verifies (here: a flipped signature bit, so the copies'
    /// checksums are right): it is dropped, the floor and its hash stay. Only the recorded
    /// payload is accepted back at the floor.
    @Test func atTheFloorWithoutAStoredEnvelopeOnlyTheRecordedPayloadIsAccepted() throws {
        let device = try Device()
        let storage = MemoryStateStorage()
        let store = StateStore(storage: storage, scope: "com.example.app", hasher: SodiumSHA256())
        var persisted = try device.atVersion3(storage).trustedState.persisted
        var envelope = try Envelope.parse(device.manifest("3"))
        envelope.signatures[0].signature[0] ^= 1
        persisted.manifest = envelope.serialized()
        try store.save(persisted)

        let events = EventRecorder()
        let restarted = try device.client(storage, events: events)
        #expect(events.take().contains { if case .storeDropped = $0 { return true } else { return false } })
        #expect(restarted.trustedState.persisted.manifest == nil)
        #expect(restarted.trustedState.floor == floor3)
        #expect(restarted.policyNow().entry(named: "api.example.com")?.pins == [])

        device.publisher.serve(device.manifest("3-other"))
        #expect(restarted.refresh().outcome == .rejected(.equivocation(order: floor3)))
        #expect(restarted.trustedState.persisted.manifest == nil)
        device.publisher.serve(device.manifest("2"))
        #expect(
            restarted.refresh().outcome
                == .rejected(.rollback(offered: ManifestOrder(rootVersion: 1, version: 2), floor: floor3)))
        device.publisher.serve(device.manifest("3"))
        #expect(restarted.refresh().outcome == .updated(floor3))
        try expectVersion3(restarted, storage, device)
    }

    @Test func bothCopiesLostKeepTheirReadableDomainsRefusedThenTheFloorRestarts() throws {
        let device = try Device()
        let storage = MemoryStateStorage()
        _ = try device.atVersion3(storage)
        // One copy with its floor edited (checksum fails, names readable), one garbage.
        let edited = String(decoding: storage.get(StateStore.copyFileNames[0]) ?? [], as: UTF8.self)
            .replacingOccurrences(of: "\"version\": 3", with: "\"version\": 1")
        storage.set(StateStore.copyFileNames[0], Array(edited.utf8))
        storage.set(StateStore.copyFileNames[1], [0xFF, 0x00])

        let events = EventRecorder()
        let restarted = try device.client(storage, events: events)
        #expect(events.take().contains { if case .storeDropped = $0 { return true } else { return false } })
        #expect(restarted.trustedState.floor == nil)
        for name in ["api.example.com", "cdn.example.com"] {
            let entry = restarted.policyNow().entry(named: name)
            // Subdomains too: whether the lost entry covered them is not known.
            #expect(entry?.enforce == true && entry?.pins == [] && entry?.includeSubdomains == true, "\(name)")
        }
        // The documented restart: no floor, so the oldest unexpired manifest is accepted.
        device.publisher.serve(device.manifest("2"))
        #expect(restarted.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
        #expect(restarted.trustedState.revoked.isEmpty)
        let store = StateStore(storage: storage, scope: "com.example.app", hasher: SodiumSHA256())
        #expect(store.load() == .loaded(restarted.trustedState.persisted))
    }

    @Test func bothCopiesDeletedIsAFreshInstall() throws {
        let device = try Device()
        let storage = MemoryStateStorage()
        _ = try device.atVersion3(storage)
        for file in StateStore.copyFileNames { storage.set(file, nil) }
        let events = EventRecorder()
        let restarted = try device.client(storage, events: events)
        #expect(events.take().isEmpty)
        #expect(restarted.trustedState.floor == nil)
        #expect(restarted.policyNow().domains.isEmpty)
    }

    @Test func copiesLostWhileRunningAreRewrittenFromMemory() throws {
        let device = try Device()
        let storage = MemoryStateStorage()
        let client = try device.atVersion3(storage)
        storage.set(StateStore.copyFileNames[0], Array("garbage".utf8))
        storage.set(StateStore.copyFileNames[1], nil)
        device.publisher.serve(device.manifest("2"))
        #expect(
            client.refresh().outcome
                == .rejected(.rollback(offered: ManifestOrder(rootVersion: 1, version: 2), floor: floor3)))
        try expectVersion3(client, storage, device)
    }

    @Test func aFormatVersion1InstallMigratesWithItsFloorOnDisk() throws {
        let device = try Device()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pinion-v1-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let disk = try DirectoryStorage(path: directory)
        for name in [StateStore.stateFileName, StateStore.enforcedDomainsFileName] {
            try disk.writeAtomically(name, try FormatVersion1Fixture.bytes(name))
        }
        let events = EventRecorder()
        let client = try device.client(disk, events: events)
        #expect(events.take().isEmpty, "a migration is not a loss")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
                == StateStore.copyFileNames.sorted())
        #expect(client.trustedState.floor == floor3)
        #expect(client.trustedState.persisted.floorPayloadSHA256 == (try payloadHash(device.manifest("3"))))
        #expect(client.trustedState.revoked == [pin(1)])

        device.publisher.serve(device.manifest("2"))
        #expect(
            client.refresh().outcome
                == .rejected(.rollback(offered: ManifestOrder(rootVersion: 1, version: 2), floor: floor3)))
        device.publisher.serve(device.manifest("3-other"))
        #expect(client.refresh().outcome == .rejected(.equivocation(order: floor3)))
        device.publisher.serve(device.manifest("4"))
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 4)))
        let store = StateStore(storage: disk, scope: "com.example.app", hasher: SodiumSHA256())
        #expect(store.load() == .loaded(client.trustedState.persisted))
    }
}
