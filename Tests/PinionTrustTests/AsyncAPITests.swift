// The async platform API: `try await refresh()`, the events() stream beside onEvent, and cancellation
// before a refresh starts (nothing fetched).

import PinionCore
import PinionTrust
import PinionTrustTestSupport
import Testing

@Suite struct AsyncAPITests {
    let harness: Harness

    init() throws { harness = try Harness() }

    @Test func asyncRefreshAcceptsAManifest() async throws {
        let leaf = try harness.certificates.pin("leaf.der")
        try harness.publishManifest(version: 1, pins: [leaf])
        let client = try harness.client()
        let report = try await client.refresh()
        #expect(report.outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        #expect(harness.pins(client) == [leaf])
    }

    @Test func eventsStreamSeesWhatOnEventSees() async throws {
        let leaf = try harness.certificates.pin("leaf.der")
        let second = try harness.certificates.pin("second-leaf.der")
        try harness.publishManifest(version: 1, pins: [leaf, second])
        let client = try harness.client()
        let stream = client.events()
        #expect(try await client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        // A rejection, and a revocation that raises the trust generation.
        try harness.publishManifest(version: 1, pins: [try junkPin(0x55)])
        _ = try await client.refresh()
        try harness.publishManifest(version: 2, pins: [second], revokedPins: [leaf])
        #expect(try await client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))

        let delivered = harness.recorder.events
        #expect(delivered.contains(.equivocation(ManifestOrder(rootVersion: 1, version: 1))))
        #expect(delivered.contains(.trustRemoved(generation: 1)))
        // Events are yielded before refresh returns, so all of them are buffered by now.
        var streamed: [ClientEvent] = []
        var iterator = stream.makeAsyncIterator()
        while streamed.count < delivered.count, let event = await iterator.next() { streamed.append(event) }
        #expect(streamed == delivered)
    }

    @Test func twoStreamsEachSeeEveryEventBesideADroppedOne() async throws {
        try harness.publishManifest(version: 1, pins: [try harness.certificates.pin("leaf.der")])
        let client = try harness.client()
        let first = client.events()
        do {
            // A stream whose iterator is never used and is dropped at once.
            _ = client.events()
        }
        let second = client.events()
        _ = try await client.refresh()
        let delivered = harness.recorder.events
        #expect(!delivered.isEmpty)
        for stream in [first, second] {
            var streamed: [ClientEvent] = []
            var iterator = stream.makeAsyncIterator()
            while streamed.count < delivered.count, let event = await iterator.next() { streamed.append(event) }
            #expect(streamed == delivered)
        }
    }

    @Test func cancellationBeforeTheRefreshStartsThrowsAndFetchesNothing() async throws {
        try harness.publishManifest(version: 1, pins: [try harness.certificates.pin("leaf.der")])
        let client = try harness.client()
        let (gate, open) = AsyncStream<Void>.makeStream()
        let task = Task {
            // Waits until the test has cancelled it (AsyncStream's iterator ends on cancellation).
            for await _ in gate { break }
            return try await client.refresh()
        }
        task.cancel()
        open.finish()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(harness.transport.requests.isEmpty)
        #expect(client.trustedState.floor == nil)
        #expect(harness.storage.snapshot.isEmpty)
        #expect(harness.recorder.events.isEmpty)
    }

    @Test func aRefreshRunningWhenCancelledCompletesAndIsKept() async throws {
        // Cancellation is checked only before the refresh starts: a task cancelled while its
        // refresh is fetching still gets the report, and what was accepted is persisted whole.
        try harness.publishManifest(version: 1, pins: [try harness.certificates.pin("leaf.der")])
        let client = try harness.client()
        let handle = Guarded<Task<RefreshReport, any Error>?>(nil)
        harness.transport.onRequest { handle.withLock { $0 }?.cancel() }
        let (gate, open) = AsyncStream<Void>.makeStream()
        let task = Task {
            for await _ in gate { break }
            return try await client.refresh()
        }
        handle.withLock { $0 = task }
        open.yield(())
        let report = try await task.value
        #expect(task.isCancelled)
        #expect(report.outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        #expect(client.trustedState.floor == ManifestOrder(rootVersion: 1, version: 1))
        #expect(!harness.storage.snapshot.isEmpty)
    }
}
