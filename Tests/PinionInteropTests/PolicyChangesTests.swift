// What a new manifest changes in each host's effective policy (docs/DESIGN.md §7), and which
// live chains such a change cuts off: the pure comparison behind `publish --check-live`.

import PinionCore
import PinionInterop
import PinionTrust
import Testing

private func pin(_ byte: UInt8) -> Pin {
    // A constant 32-byte digest is always a valid pin.
    (try? Pin(digest: [UInt8](repeating: byte, count: 32)))!
}

private func manifest(_ version: Int64, _ domains: [ManifestPayload.Domain], revoked: [Pin] = []) -> ManifestPayload {
    ManifestPayload(
        scope: "com.example.app", rootVersion: 1, version: version, issuedAt: Timestamp(secondsSince1970: 1_000),
        expiresAt: Timestamp(secondsSince1970: 9_000_000_000), domains: domains, revokedPins: revoked)
}

@Suite struct PolicyChangesTests {
    @Test func aRemovedPinIsListedWithThePinsKept() {
        let changes = PolicyChanges.compare(
            from: manifest(1, [.init(name: "api.example.com", pins: [pin(1), pin(2)])]),
            to: manifest(2, [.init(name: "api.example.com", pins: [pin(2), pin(3)])]), baselines: [])
        #expect(changes.count == 1)
        #expect(changes.first?.removed == [pin(1)])
        #expect(changes.first?.added == [pin(3)])
        #expect(changes.first?.namedByManifest == true)
    }

    @Test func unchangedDomainsAreNotListed() {
        let domain = ManifestPayload.Domain(name: "api.example.com", pins: [pin(1), pin(2)])
        #expect(PolicyChanges.compare(from: manifest(1, [domain]), to: manifest(2, [domain]), baselines: []).isEmpty)
    }

    @Test func aDroppedDomainWithoutABaselineIsNoLongerPinnedAndRemovesNothing() {
        let changes = PolicyChanges.compare(
            from: manifest(1, [.init(name: "api.example.com", pins: [pin(1), pin(2)])]), to: manifest(2, []),
            baselines: [])
        #expect(changes.count == 1)
        #expect(changes.first?.after == nil)
        #expect(changes.first?.removed == [])
        #expect(
            changes.first?.description == "api.example.com: no longer pinned (no entry of the new manifest covers it)")
    }

    @Test func aDroppedDomainFallsBackToEachBaseline() throws {
        let release1 = try Baseline(domains: [PinnedDomain(name: "api.example.com", pins: [pin(2), pin(8)])])
        let release2 = try Baseline(domains: [PinnedDomain(name: "api.example.com", pins: [pin(1), pin(2)])])
        let changes = PolicyChanges.compare(
            from: manifest(1, [.init(name: "api.example.com", pins: [pin(1), pin(2)])]), to: manifest(2, []),
            baselines: [("1.0", release1), ("2.0", release2)])
        // Release 2.0's baseline lists what version 1 listed: nothing changes there.
        #expect(changes.count == 1)
        #expect(changes.first?.baselines == ["1.0"])
        #expect(changes.first?.removed == [pin(1)])
        #expect(changes.first?.namedByManifest == false)
    }

    @Test func aDroppedEntryFallsBackToAParentCoveringSubdomains() {
        let parent = ManifestPayload.Domain(name: "example.com", includeSubdomains: true, pins: [pin(5), pin(6)])
        let changes = PolicyChanges.compare(
            from: manifest(1, [.init(name: "api.example.com", pins: [pin(1), pin(2)]), parent]),
            to: manifest(2, [parent]), baselines: [])
        #expect(changes.map(\.host) == ["api.example.com"])
        #expect(changes.first?.removed == [pin(1), pin(2)])
        #expect(changes.first?.after?.entry.name == "example.com")
    }

    @Test func aHostUnderAnIncludeSubdomainsEntryIsComparedWhenNamed() {
        let changes = PolicyChanges.compare(
            from: manifest(1, [.init(name: "example.com", includeSubdomains: true, pins: [pin(1), pin(2)])]),
            to: manifest(2, [.init(name: "example.com", includeSubdomains: true, pins: [pin(2), pin(3)])]),
            baselines: [], hosts: ["WWW.example.com."])
        #expect(changes.map(\.host) == ["example.com", "www.example.com"])
        #expect(changes.allSatisfy { $0.coversSubdomains && $0.removed == [pin(1)] })
    }

    @Test func aRevokedPinCountsAsRemoved() {
        let changes = PolicyChanges.compare(
            from: manifest(1, [.init(name: "api.example.com", pins: [pin(1), pin(2)])]),
            to: manifest(2, [.init(name: "api.example.com", pins: [pin(1), pin(2)])], revoked: [pin(1)]),
            baselines: [])
        #expect(changes.first?.removed == [pin(1)])
    }

    @Test func onlyAChainMatchingNoKeptPinIsCutOff() throws {
        let changes = PolicyChanges.compare(
            from: manifest(1, [.init(name: "api.example.com", pins: [pin(1), pin(2)])]),
            to: manifest(2, [.init(name: "api.example.com", pins: [pin(2), pin(3)])]), baselines: [])
        let change = try #require(changes.first)
        // Leaf on the removed key, issued by a CA whose key is still pinned: still accepted.
        #expect(change.removedPinsStillPresented([pin(1), pin(2)]) == [])
        #expect(change.removedPinsStillPresented([pin(1), pin(9)]) == [pin(1)])
        #expect(change.removedPinsStillPresented([pin(9)]) == [])
    }
}
