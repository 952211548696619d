// The trust generation: a policy change that removes trust (a revoked pin, an expiry) must reach a
// pool that reuses connections without a pin check; a change that only adds a pin must not.

import PinionCore
import PinionTrust
import Testing

@Suite struct TrustGenerationTests {
    let harness: Harness
    let pool = ConnectionPool()
    var certificates: Certificates { harness.certificates }

    init() throws { harness = try Harness() }

    /// A client whose trustRemoved events flush the pool, refreshed to manifest 1 pinning `pins`.
    func pooledClient(pins: [Pin], lifetime: Int64 = 30 * day) throws -> PinningClient {
        try harness.publishManifest(version: 1, pins: pins, lifetime: lifetime)
        let pool = self.pool
        let client = try harness.client(onEvent: { event in
            if case .trustRemoved(let generation) = event { pool.flush(below: generation) }
        })
        pool.attach(client)
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        return client
    }

    var trustRemovedEvents: [ClientEvent] {
        harness.recorder.events.filter { if case .trustRemoved = $0 { return true } else { return false } }
    }

    @Test func theFirstManifestPinningADomainRaisesIt() throws {
        // Before it, api.example.test was not pinned: a connection made then, with any key,
        // must not be reused once the domain is pinned.
        let pool = self.pool
        let client = try harness.client(onEvent: { event in
            if case .trustRemoved(let generation) = event { pool.flush(below: generation) }
        })
        pool.attach(client)
        let other = certificates.chain(certificates.secondLeaf)
        guard case .opened(_, .notPinned) = pool.request("api.example.test", verifiedChainDER: other) else {
            Issue.record("expected an unpinned connection")
            return
        }
        #expect(client.trustGeneration == 0)
        try harness.publishManifest(version: 1, pins: [try certificates.pin("leaf.der")])
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        #expect(client.trustGeneration == 1)
        #expect(trustRemovedEvents == [.trustRemoved(generation: 1)])
        guard case .refused(.rejected) = pool.request("api.example.test", verifiedChainDER: other) else {
            Issue.record("expected the unpinned connection to be gone and the other key refused")
            return
        }
    }

    @Test func revokingThePinInUseFlushesThePooledConnection() throws {
        let leaf = try certificates.pin("leaf.der")
        let second = try certificates.pin("second-leaf.der")
        let client = try pooledClient(pins: [leaf, second])
        let before = client.trustGeneration
        let chain = certificates.chain(certificates.leaf)
        guard case .opened(let connection, .trusted) = pool.request("api.example.test", verifiedChainDER: chain)
        else {
            Issue.record("expected a new trusted connection")
            return
        }
        #expect(pool.request("api.example.test", verifiedChainDER: chain) == .reused(connection: connection))

        // Manifest 2 revokes the leaf's key.
        try harness.publishManifest(version: 2, pins: [second], revokedPins: [leaf])
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
        #expect(client.trustGeneration == before + 1)
        #expect(trustRemovedEvents.last == .trustRemoved(generation: before + 1))
        #expect(pool.pooledHosts.isEmpty)
        // The very next request makes a new connection, and its verdict refuses the revoked key.
        guard case .refused(.rejected(let failure)) = pool.request("api.example.test", verifiedChainDER: chain) else {
            Issue.record("expected the revoked key to be refused on a new connection")
            return
        }
        #expect(failure.reason == .noMatchingPin)
        guard
            case .opened(_, .trusted(second, _)) = pool.request(
                "api.example.test", verifiedChainDER: certificates.chain(certificates.secondLeaf))
        else {
            Issue.record("expected the remaining pin to be trusted")
            return
        }
    }

    @Test func expiryRaisesTheGenerationAtTheFirstEvaluationPastExpiresAt() throws {
        let leaf = try certificates.pin("leaf.der")
        let client = try pooledClient(pins: [leaf], lifetime: day)
        let before = client.trustGeneration
        let removedBefore = trustRemovedEvents.count
        let chain = certificates.chain(certificates.leaf)
        guard case .opened(_, .trusted) = pool.request("api.example.test", verifiedChainDER: chain) else {
            Issue.record("expected a trusted connection")
            return
        }
        // One second before expiry nothing changes.
        harness.clock.set(t0.adding(seconds: day - 1))
        #expect(isTrusted(client.verdict(for: "api.example.test", verifiedChainDER: chain)))
        #expect(client.trustGeneration == before)
        // At expiresAt the manifest-only domain loses its pins (no baseline). The first
        // evaluation, whatever host it is for, raises the generation and announces it (the
        // generation is not read in between, so the evaluation is what raised it).
        harness.clock.set(t0.adding(seconds: day))
        #expect(trustRemovedEvents.count == removedBefore)
        #expect(client.verdict(for: "www.other.test", verifiedChainDER: chain) == .notPinned)
        #expect(trustRemovedEvents.dropFirst(removedBefore) == [.trustRemoved(generation: before + 1)])
        #expect(pool.pooledHosts.isEmpty)
        #expect(client.trustGeneration == before + 1)
        guard case .refused(.rejected) = pool.request("api.example.test", verifiedChainDER: chain) else {
            Issue.record("expected the expired pin to be refused")
            return
        }
        // Evaluating again under the same expired policy does not raise it again.
        _ = client.verdict(for: "api.example.test", verifiedChainDER: chain)
        #expect(client.trustGeneration == before + 1)
    }

    @Test func aPoolAskingBeforeReusePastExpiresAtDoesNotReuse() throws {
        let leaf = try certificates.pin("leaf.der")
        let client = try pooledClient(pins: [leaf], lifetime: day)
        let before = client.trustGeneration
        let chain = certificates.chain(certificates.leaf)
        guard case .opened(let connection, .trusted) = pool.request("api.example.test", verifiedChainDER: chain)
        else {
            Issue.record("expected a trusted connection")
            return
        }
        harness.clock.set(t0.adding(seconds: day - 1))
        #expect(pool.request("api.example.test", verifiedChainDER: chain) == .reused(connection: connection))
        // Expired, and no connection evaluated since: reading the generation is what tells the
        // pool, so its next request makes a new connection, which the narrowed policy refuses.
        harness.clock.set(t0.adding(seconds: day))
        guard case .refused(.rejected) = pool.request("api.example.test", verifiedChainDER: chain) else {
            Issue.record("a connection made under the current manifest was reused after it expired")
            return
        }
        #expect(client.trustGeneration == before + 1)
        #expect(trustRemovedEvents.last == .trustRemoved(generation: before + 1))
    }

    @Test func aManifestThatOnlyAddsAPinKeepsTheGeneration() throws {
        let leaf = try certificates.pin("leaf.der")
        let client = try pooledClient(pins: [leaf])
        let before = client.trustGeneration
        let removedBefore = trustRemovedEvents.count
        let chain = certificates.chain(certificates.leaf)
        guard case .opened(let connection, .trusted) = pool.request("api.example.test", verifiedChainDER: chain)
        else {
            Issue.record("expected a trusted connection")
            return
        }
        try harness.publishManifest(version: 2, pins: [leaf, try certificates.pin("second-leaf.der")])
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
        #expect(client.trustGeneration == before)
        #expect(trustRemovedEvents.count == removedBefore)
        #expect(pool.request("api.example.test", verifiedChainDER: chain) == .reused(connection: connection))
    }

    @Test func droppingAPinOrNewlyEnforcingRaisesIt() throws {
        let leaf = try certificates.pin("leaf.der")
        let second = try certificates.pin("second-leaf.der")
        let client = try pooledClient(pins: [leaf, second])
        let before = client.trustGeneration
        // Version 2 drops the second leaf's pin without revoking it.
        try harness.publishManifest(version: 2, pins: [leaf])
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
        #expect(client.trustGeneration == before + 1)
        // Version 3 pins a new domain: connections to it were unpinned before.
        let domains: [ManifestPayload.Domain] = [
            .init(name: "api.example.test", pins: [leaf]), .init(name: "cdn.example.test", pins: [leaf]),
        ]
        harness.transport.serve("manifest.json", try harness.publisher.manifest(version: 3, domains: domains))
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 3)))
        #expect(client.trustGeneration == before + 2)
        #expect(
            trustRemovedEvents.suffix(2) == [
                .trustRemoved(generation: before + 1), .trustRemoved(generation: before + 2),
            ])
    }
}
