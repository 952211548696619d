// The floor's payload hash in the trust core (docs/DESIGN.md §6): recorded with every accepted
// manifest; at the floor with no stored envelope only the recorded payload is accepted (another is
// equivocation); start-up fills it in for a formatVersion 1 state and refuses a mismatched manifest.

import PinionCore
import PinionCrypto
import PinionLinux
import PinionTestSupport
import Testing

private func payloadHash(_ envelope: [UInt8]) throws -> [UInt8] {
    sodium.hasher.sha256(try Envelope.parse(envelope).payload)
}

@Suite struct FloorHashTests {
    @Test func everyAcceptedManifestRecordsItsPayloadHash() throws {
        let world = try ClientWorld()
        let first = try world.manifest(version: 1)
        let state = world.refresh(world.core.initialState(), manifest: first).state
        #expect(state.persisted.floorPayloadSHA256 == (try payloadHash(first)))
        let second = try world.manifest(version: 2, domains: [.init(name: "api.example.com", pins: [pin(3)])])
        let next = world.refresh(state, manifest: second).state
        #expect(next.floor == ManifestOrder(rootVersion: 1, version: 2))
        #expect(next.persisted.floorPayloadSHA256 == (try payloadHash(second)))
    }

    /// A state whose envelope was dropped (it no longer verified at start-up): floor and hash
    /// kept, no manifest.
    private func withoutEnvelope(_ world: ClientWorld, accepted bytes: [UInt8]) -> TrustedState {
        var stored = world.refresh(world.core.initialState(), manifest: bytes).state.persisted
        stored.manifest = nil
        stored.manifestETag = nil
        return world.core.restore(stored).0
    }

    @Test func atTheFloorWithoutAnEnvelopeTheRecordedPayloadIsAcceptedAndStored() throws {
        let world = try ClientWorld()
        let bytes = try world.manifest(version: 5)
        let state = withoutEnvelope(world, accepted: bytes)
        #expect(state.persisted.manifest == nil && state.floor == ManifestOrder(rootVersion: 1, version: 5))
        // Other co-signatures do not matter: the payload decides.
        let result = world.refresh(state, manifest: bytes)
        #expect(result.outcome == .updated(ManifestOrder(rootVersion: 1, version: 5)))
        #expect(result.state.persisted.manifest == bytes)
        #expect(result.state.manifest != nil && result.state.forcedDomains.isEmpty)
    }

    @Test func atTheFloorWithoutAnEnvelopeAnotherPayloadIsEquivocation() throws {
        let world = try ClientWorld()
        let state = withoutEnvelope(world, accepted: try world.manifest(version: 5))
        let other = try world.manifest(version: 5, domains: [.init(name: "api.example.com", pins: [pin(9)])])
        let result = world.refresh(state, manifest: other)
        expectRefused(result, .equivocation(order: ManifestOrder(rootVersion: 1, version: 5)), from: state)
        #expect(result.events.contains(.equivocation(ManifestOrder(rootVersion: 1, version: 5))))
    }

    @Test func aStateWithoutARecordedHashAcceptsAManifestThatVerifiesAtItsFloor() throws {
        // formatVersion 1 recorded no hash: nothing to compare with (documented).
        let world = try ClientWorld()
        var state = withoutEnvelope(world, accepted: try world.manifest(version: 5))
        var persisted = state.persisted
        persisted.floorPayloadSHA256 = nil
        state = world.core.restore(persisted).0
        let other = try world.manifest(version: 5, domains: [.init(name: "api.example.com", pins: [pin(9)])])
        let result = world.refresh(state, manifest: other)
        #expect(result.outcome == .updated(ManifestOrder(rootVersion: 1, version: 5)))
        #expect(result.state.persisted.floorPayloadSHA256 == (try payloadHash(other)))
    }

    @Test func startUpFillsInTheHashOfAFormatVersion1State() throws {
        let world = try ClientWorld()
        let bytes = try world.manifest(version: 3)
        var stored = world.refresh(world.core.initialState(), manifest: bytes).state.persisted
        stored.floorPayloadSHA256 = nil
        let (restored, events) = world.core.restore(stored)
        #expect(events.isEmpty)
        #expect(restored.persisted.floorPayloadSHA256 == (try payloadHash(bytes)))
        #expect(restored.manifest?.version == 3)
    }

    @Test func aStoredManifestThatIsNotThePayloadRecordedAtTheFloorIsDropped() throws {
        let world = try ClientWorld()
        let accepted = try world.manifest(version: 3)
        var stored = world.refresh(world.core.initialState(), manifest: accepted).state.persisted
        // A validly signed manifest of the same version, but not the one the floor recorded.
        stored.manifest = try world.manifest(version: 3, domains: [.init(name: "api.example.com", pins: [pin(9)])])
        let (restored, events) = world.core.restore(stored)
        #expect(restored.manifest == nil && restored.persisted.manifest == nil)
        #expect(restored.floor == ManifestOrder(rootVersion: 1, version: 3))
        #expect(restored.persisted.floorPayloadSHA256 == (try payloadHash(accepted)))
        #expect(restored.forcedDomains == ["api.example.com"])
        #expect(
            events.contains {
                if case .storeDropped(let reason) = $0 { return reason.contains("recorded at the floor") }
                return false
            })
    }
}
