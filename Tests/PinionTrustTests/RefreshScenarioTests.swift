// The refresh and merge rules (docs/DESIGN.md §6-§7) through PinningClient built only from its seams:
// accepted, unchanged, rollback, equivocation, tampering, expiry narrowing and root rotation.

import Foundation
import PinionCore
import PinionTrust
import Testing

@Suite struct RefreshScenarioTests {
    let harness: Harness

    init() throws { harness = try Harness() }

    @Test func firstRefreshAcceptsAManifestAndPersistsIt() throws {
        let leaf = try harness.certificates.pin("leaf.der")
        try harness.publishManifest(version: 1, pins: [leaf, try junkPin(0xEE)])
        let client = try harness.client()
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        #expect(harness.pins(client) == [leaf, try junkPin(0xEE)])
        #expect(harness.recorder.events.contains(.updated(ManifestOrder(rootVersion: 1, version: 1))))
        // The root walk asked for root 2 (a 404) before the manifest.
        #expect(harness.transport.requests.map(\.path) == ["/v1/\(scope)/root/2.json", "/v1/\(scope)/manifest.json"])
        // A client started on the same storage restores the same policy.
        let restarted = try harness.client()
        #expect(restarted.trustedState.floor == ManifestOrder(rootVersion: 1, version: 1))
        #expect(restarted.policyNow() == client.policyNow())
    }

    @Test func notModifiedKeepsEverythingAndSendsTheETag() throws {
        try harness.publishManifest(version: 1, pins: [try harness.certificates.pin("leaf.der")])
        let client = try harness.client()
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        let policy = client.policyNow()
        harness.transport.clearRequests()
        harness.clock.set(t0.adding(seconds: 3600))
        #expect(client.refresh().outcome == .unchanged)
        let etag = client.trustedState.persisted.manifestETag
        #expect(etag != nil)
        let manifestRequest = harness.transport.requests.last { $0.path.hasSuffix("manifest.json") }
        #expect(manifestRequest?.headers.contains { $0.0 == "If-None-Match" && $0.1 == etag } == true)
        #expect(harness.transport.statuses == [404, 304])
        #expect(client.policyNow() == policy)
        #expect(harness.recorder.events.last == .unchanged)
        // A 304 is a successful refresh: the last known time moves to its start.
        #expect(client.trustedState.persisted.lastKnownTime == t0.adding(seconds: 3600))
    }

    @Test func rollbackIsRefusedAndNothingChanges() throws {
        let leaf = try harness.certificates.pin("leaf.der")
        try harness.publishManifest(version: 2, pins: [leaf])
        let client = try harness.client()
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
        let state = client.trustedState
        let stored = harness.storage.snapshot
        // Version 1, validly signed, offered after version 2.
        try harness.publishManifest(version: 1, pins: [try junkPin(0x11)])
        let offered = ManifestOrder(rootVersion: 1, version: 1)
        let floor = ManifestOrder(rootVersion: 1, version: 2)
        #expect(client.refresh().outcome == .rejected(.rollback(offered: offered, floor: floor)))
        #expect(client.trustedState == state)
        #expect(harness.storage.snapshot == stored)
        #expect(harness.pins(client) == [leaf])
        #expect(harness.recorder.events.contains(.rejected(.rollback(offered: offered, floor: floor))))
    }

    @Test func equivocationIsRefusedAndReported() throws {
        let leaf = try harness.certificates.pin("leaf.der")
        try harness.publishManifest(version: 1, pins: [leaf])
        let client = try harness.client()
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        let state = client.trustedState
        // Another manifest with the same (rootVersion, version), validly signed: a split view.
        try harness.publishManifest(version: 1, pins: [try junkPin(0x22)])
        let order = ManifestOrder(rootVersion: 1, version: 1)
        #expect(client.refresh().outcome == .rejected(.equivocation(order: order)))
        #expect(client.trustedState == state)
        #expect(harness.pins(client) == [leaf])
        #expect(harness.recorder.events.contains(.equivocation(order)))
    }

    @Test func tamperedPayloadIsRefused() throws {
        let leaf = try harness.certificates.pin("leaf.der")
        let signed = try harness.publisher.manifest(
            version: 1, domains: [.init(name: "api.example.test", pins: [leaf])])
        var envelope = try Envelope.parse(signed)
        // Re-point the pin set at another key without the pins key's signature.
        let text = String(decoding: envelope.payload, as: UTF8.self)
        let forged = text.replacingOccurrences(of: leaf.description, with: try junkPin(0x33).description)
        #expect(forged != text)
        envelope.payload = Array(forged.utf8)
        harness.transport.serve("manifest.json", envelope.serialized())
        let client = try harness.client()
        let outcome = client.refresh().outcome
        #expect(outcome == .rejected(.trust(.thresholdNotMet(role: .pins, rootVersion: 1, valid: 0, threshold: 1))))
        #expect(client.trustedState.floor == nil)
        #expect(client.policyNow().domains.isEmpty)
        #expect(harness.storage.snapshot.isEmpty)
    }

    @Test func expiredManifestNarrowsToTheBaselineIntersection() throws {
        let leaf = try harness.certificates.pin("leaf.der")
        let intermediate = try harness.certificates.pin("intermediate.der")
        let second = try harness.certificates.pin("second-leaf.der")
        let baseline = try Baseline(domains: [
            PinnedDomain(name: "api.example.test", pins: [leaf, intermediate]),
            PinnedDomain(name: "baseline-only.example.test", pins: [intermediate]),
        ])
        let manifest = try harness.publisher.manifest(
            version: 1, lifetime: day,
            domains: [
                .init(name: "api.example.test", pins: [leaf, second]),
                .init(name: "manifest-only.example.test", pins: [leaf]),
            ])
        harness.transport.serve("manifest.json", manifest)
        let client = try harness.client(baseline: baseline)
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        let certificates = harness.certificates
        // While current, the manifest's pins replace the baseline's.
        #expect(
            isTrusted(
                client.verdict(for: "api.example.test", verifiedChainDER: certificates.chain(certificates.secondLeaf))))
        #expect(
            isTrusted(
                client.verdict(
                    for: "manifest-only.example.test", verifiedChainDER: certificates.chain(certificates.leaf))))

        // Expired (now == expiresAt): baseline ∩ manifest; manifest-only domains are refused.
        harness.clock.set(t0.adding(seconds: day))
        #expect(harness.pins(client) == [leaf])
        #expect(
            isTrusted(client.verdict(for: "api.example.test", verifiedChainDER: certificates.chain(certificates.leaf))))
        #expect(
            isRejected(
                client.verdict(for: "api.example.test", verifiedChainDER: certificates.chain(certificates.secondLeaf))))
        #expect(harness.pins(client, "manifest-only.example.test") == [])
        #expect(
            isRejected(
                client.verdict(
                    for: "manifest-only.example.test", verifiedChainDER: certificates.chain(certificates.leaf))))
        #expect(harness.pins(client, "baseline-only.example.test") == [intermediate])
    }

    @Test func rootRotationIsAcceptedAndTheNewPinsKeySigns() throws {
        let leaf = try harness.certificates.pin("leaf.der")
        try harness.publishManifest(version: 1, pins: [leaf])
        let client = try harness.client()
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        harness.transport.serve("root/2.json", try harness.publisher.rotatedRoot())
        let second = try harness.certificates.pin("second-leaf.der")
        harness.transport.serve(
            "manifest.json",
            try harness.publisher.manifest(
                version: 1, rootVersion: 2, domains: [.init(name: "api.example.test", pins: [second])]))
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 2, version: 1)))
        #expect(client.trustedState.chain.newest.version == 2)
        #expect(harness.recorder.events.contains(.rootAccepted(version: 2)))
        #expect(harness.pins(client) == [second])
        #expect(harness.transport.requests.contains { $0.path == "/v1/\(scope)/root/3.json" })
    }

    @Test func manifestSignedByTheOldPinsKeyAfterRotationIsRefused() throws {
        harness.transport.serve("root/2.json", try harness.publisher.rotatedRoot())
        // Root 2's pins role is the new key; a manifest under root 2 signed by the old one fails.
        let payload = ManifestPayload(
            scope: scope, rootVersion: 2, version: 1, issuedAt: t0, expiresAt: t0.adding(seconds: day),
            domains: [.init(name: "api.example.test", pins: [try junkPin(0x44)])])
        harness.transport.serve(
            "manifest.json",
            try harness.publisher.sign(.pins, payload.serialized(), with: [harness.publisher.pinsKey]).serialized())
        let client = try harness.client()
        let outcome = client.refresh().outcome
        guard case .rejected(let error) = outcome, error.trustError != nil else {
            Issue.record("expected a trust rejection, got \(outcome)")
            return
        }
        #expect(client.trustedState.chain.newest.version == 2)
        #expect(client.trustedState.floor == nil)
        #expect(client.policyNow().domains.isEmpty)
    }

    @Test func embeddedRootOfAnotherKeyIsRefusedAtSetUp() throws {
        var envelope = try Envelope.parse(try harness.publisher.embeddedRoot())
        envelope.signatures[0].signature[10] ^= 0x01
        let configuration = ClientConfiguration(
            scope: scope, baseURL: nil, embeddedRoot: envelope.serialized(), stateDirectory: "",
            clock: harness.clock.function)
        #expect(throws: ClientSetupError.self) {
            _ = try PinningClient(
                configuration: configuration, crypto: PortableCrypto.provider, transport: harness.transport,
                storage: harness.storage)
        }
    }
}

/// Whether a verdict lets the connection go on as trusted.
func isTrusted(_ verdict: ConnectionVerdict) -> Bool {
    if case .trusted = verdict { return true }
    return false
}

/// Whether a verdict refuses the connection.
func isRejected(_ verdict: ConnectionVerdict) -> Bool {
    if case .rejected = verdict { return true }
    return false
}
