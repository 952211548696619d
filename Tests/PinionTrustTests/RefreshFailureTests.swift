// What the seams can do wrong, through PinningClient: publisher errors, garbage, a compressed body,
// the update channel's own pins, a full disk and a damaged store. Each leaves nothing unpinned.

import PinionCore
import PinionTrust
import Testing

@Suite struct RefreshFailureTests {
    let harness: Harness

    init() throws { harness = try Harness() }

    /// A client refreshed to manifest 1 pinning `api.example.test` to the leaf.
    func refreshedClient(publisherPins: [Pin] = []) throws -> PinningClient {
        try harness.publishManifest(version: 1, pins: [try harness.certificates.pin("leaf.der")])
        let client = try harness.client(publisherPins: publisherPins)
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        return client
    }

    /// Expects a network failure that changed neither state, policy nor storage.
    func expectNetworkFailureChangingNothing(_ client: PinningClient, at time: Timestamp) {
        let state = client.trustedState
        let policy = client.policy
        let stored = harness.storage.snapshot
        harness.clock.set(time)
        let outcome = client.refresh().outcome
        guard case .networkFailure = outcome else {
            Issue.record("expected a network failure, got \(outcome)")
            return
        }
        #expect(client.trustedState == state)
        #expect(client.policy == policy)
        #expect(harness.storage.snapshot == stored)
    }

    @Test(arguments: [500, 403])
    func anUnexpectedManifestStatusIsANetworkFailure(status: Int) throws {
        let client = try refreshedClient()
        harness.transport.answer("manifest.json", status: status)
        expectNetworkFailureChangingNothing(client, at: t0.adding(seconds: 60))
    }

    @Test(arguments: [302, 307])
    func aRedirectTheTransportDidNotFollowIsRefusedChangingNothing(status: Int) throws {
        let client = try refreshedClient()
        let state = client.trustedState
        let stored = harness.storage.snapshot
        harness.transport.answer("manifest.json", status: status)
        harness.clock.set(t0.adding(seconds: 60))
        guard case .rejected(let error) = client.refresh().outcome, error.reasonCode == "fetch-refused",
            let resource = error.resource
        else {
            Issue.record("HTTP \(status) on manifest.json was not refused")
            return
        }
        #expect(resource == "manifest.json")
        #expect(client.trustedState == state)
        #expect(harness.storage.snapshot == stored)
    }

    @Test func anUnexpectedRootStatusEndsTheWalk() throws {
        let client = try refreshedClient()
        harness.transport.answer("root/2.json", status: 503)
        harness.transport.clearRequests()
        expectNetworkFailureChangingNothing(client, at: t0.adding(seconds: 60))
        #expect(!harness.transport.requests.contains { $0.path.hasSuffix("manifest.json") })
    }

    @Test(arguments: [[], Array("{}".utf8), Array("not json".utf8), [0xFF, 0xFE, 0x00]])
    func garbageInsteadOfAManifestIsRefused(body: [UInt8]) throws {
        let client = try refreshedClient()
        let state = client.trustedState
        harness.transport.serve("manifest.json", body)
        let outcome = client.refresh().outcome
        guard case .rejected(let error) = outcome, error.trustError != nil else {
            Issue.record("expected a trust rejection, got \(outcome)")
            return
        }
        #expect(client.trustedState == state)
        #expect(harness.pins(client) == [try harness.certificates.pin("leaf.der")])
    }

    @Test func aGarbageRootIsRefusedAndTheManifestNotFetched() throws {
        let client = try refreshedClient()
        harness.transport.serve("root/2.json", Array("{\"payload\": 1}".utf8))
        harness.transport.clearRequests()
        let outcome = client.refresh().outcome
        guard case .rejected(let error) = outcome, error.trustError != nil else {
            Issue.record("expected a trust rejection, got \(outcome)")
            return
        }
        #expect(client.trustedState.chain.newest.version == 1)
        #expect(!harness.transport.requests.contains { $0.path.hasSuffix("manifest.json") })
    }

    @Test func aCompressedManifestIsATransportFault() throws {
        let client = try refreshedClient()
        let bytes = try harness.publisher.manifest(
            version: 2, domains: [.init(name: "api.example.test", pins: [try junkPin(0x66)])])
        harness.transport.serve("manifest.json", bytes, headers: [("content-encoding", "gzip")])
        expectNetworkFailureChangingNothing(client, at: t0.adding(seconds: 60))
    }

    @Test func theUpdateChannelRefusesAPublisherWithoutItsPins() throws {
        // The publisher presents the leaf chain; the app pins the publisher to another key.
        try harness.publishManifest(version: 1, pins: [try harness.certificates.pin("leaf.der")])
        let client = try harness.client(publisherPins: [try harness.certificates.pin("second-leaf.der")])
        let outcome = client.refresh().outcome
        guard case .networkFailure(let error) = outcome else {
            Issue.record("expected a network failure, got \(outcome)")
            return
        }
        #expect(error.description.contains("no publisher pin"))
        #expect(client.trustedState.floor == nil)
        #expect(harness.storage.snapshot.isEmpty)
        // With the intermediate's pin the same publisher is accepted.
        let pinned = try harness.client(publisherPins: [try harness.certificates.pin("intermediate.der")])
        #expect(pinned.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
    }

    @Test func manifestPinsNeverApplyToTheUpdateChannel() throws {
        // Manifest 1 pins the publisher's own host to a key it does not have.
        let domains: [ManifestPayload.Domain] = [.init(name: "publisher.example.test", pins: [try junkPin(0x77)])]
        harness.transport.serve("manifest.json", try harness.publisher.manifest(version: 1, domains: domains))
        let client = try harness.client()
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        #expect(
            isRejected(
                client.verdict(
                    for: "publisher.example.test",
                    verifiedChainDER: harness.certificates.chain(harness.certificates.leaf))))
        // The next manifest still arrives.
        try harness.publishManifest(version: 2, pins: [try harness.certificates.pin("leaf.der")])
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
    }

    @Test func aFullDiskKeepsThePreviousStateAndAnnouncesNoUpdate() throws {
        let client = try refreshedClient()
        try harness.publishManifest(version: 2, pins: [try junkPin(0x88)])
        harness.storage.setFull(true)
        expectNetworkFailureChangingNothing(client, at: t0.adding(seconds: 60))
        #expect(!harness.recorder.events.contains(.updated(ManifestOrder(rootVersion: 1, version: 2))))
        #expect(harness.pins(client) == [try harness.certificates.pin("leaf.der")])
        // Once the disk has room the same manifest is accepted.
        harness.storage.setFull(false)
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
    }

    /// Flips a byte in the middle of a stored state copy.
    func damage(_ name: String) -> Bool {
        guard var bytes = harness.storage.snapshot[name], !bytes.isEmpty else {
            Issue.record("no state copy \(name) was written")
            return false
        }
        bytes[bytes.count / 2] ^= 0x55
        harness.storage.overwrite(name, bytes)
        return true
    }

    @Test func oneDamagedStateCopyIsSurvivedWithTheFloorAndPins() throws {
        _ = try refreshedClient()
        guard let first = StateStore.copyFileNames.first, damage(first) else { return }
        let restarted = try harness.client()
        #expect(restarted.trustedState.floor == ManifestOrder(rootVersion: 1, version: 1))
        #expect(harness.recorder.events.contains { if case .stateCopyLost = $0 { true } else { false } })
        #expect(harness.pins(restarted) == [try harness.certificates.pin("leaf.der")])
        #expect(
            !isRejected(
                restarted.verdict(
                    for: "api.example.test", verifiedChainDER: harness.certificates.chain(harness.certificates.leaf))))
    }

    @Test func bothStateCopiesDamagedAreDroppedAndTheFloorRestarts() throws {
        _ = try refreshedClient()
        for name in StateStore.copyFileNames { guard damage(name) else { return } }
        let restarted = try harness.client()
        // docs/DESIGN.md §6: no record survives, so the floor restarts from the embedded root
        // (what a fresh install has), and the drop is reported.
        #expect(harness.recorder.events.contains { if case .storeDropped = $0 { true } else { false } })
        #expect(restarted.trustedState.floor == nil)
    }
}
