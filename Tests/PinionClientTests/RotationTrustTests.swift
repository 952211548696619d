// The client across root rotations (docs/DESIGN.md §4-§7): a manifest stays current under a
// newest root whose pinsRoleSince covers it, start-up re-verifies it under the newest chain,
// and the revoked set restarts at a changed pinsRoleSince.

import PinionCore
import PinionCrypto
import PinionTestSupport
import PinionTrust
import PinionTrustTestSupport
import Testing

@Suite struct RotationTrustTests {
    /// Root 2 with the same keys as root 1 and the given pinsRoleSince, signed by the root key.
    func root2(_ world: ClientWorld, pinsRoleSince: Int64?) throws -> [UInt8] {
        var payload = rootPayload(version: 2, rootKeys: [world.setup.rootKey], pinsKeys: [world.setup.pinsKey])
        payload.pinsRoleSince = pinsRoleSince
        return try sign(.root, payload.serialized(), with: [world.setup.rootKey]).serialized()
    }

    /// A state that accepted manifest 1 revoking pin 9.
    func acceptedRevoking(_ world: ClientWorld) throws -> TrustedState {
        let result = world.refresh(
            world.core.initialState(), manifest: try world.manifest(version: 1, revoked: [pin(9)]))
        #expect(result.outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        return result.state
    }

    func rotate(_ world: ClientWorld, _ state: TrustedState, to root: [UInt8]) -> RefreshedState {
        world.core.refresh(
            state, startTime: t0.adding(seconds: 60), fetchRoot: { $0 == 2 ? .found(root) : .notFound },
            fetchManifest: { _ in .notModified })
    }

    @Test func aRotationThatKeepsThePinsRoleKeepsTheManifestCurrentAndTheRevokedSet() throws {
        let world = try ClientWorld()
        let state = try acceptedRevoking(world)
        let rotated = rotate(world, state, to: try root2(world, pinsRoleSince: 1))
        #expect(rotated.outcome == .unchanged)
        #expect(rotated.state.chain.newest.version == 2)
        #expect(rotated.state.manifestValid)
        #expect(rotated.events.contains(.rootAccepted(version: 2)))
        #expect(!rotated.events.contains { if case .manifestNotCurrent = $0 { return true } else { return false } })
        // A manifest still naming root 1 is accepted under root 2; so is one naming root 2.
        let two = world.refresh(rotated.state, manifest: try world.manifest(version: 2, rootVersion: 1))
        #expect(two.outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
        let three = world.refresh(two.state, manifest: try world.manifest(version: 3, rootVersion: 2))
        #expect(three.outcome == .updated(ManifestOrder(rootVersion: 2, version: 3)))
        // Same pins epoch throughout: pin 9 stays revoked.
        #expect(three.state.revoked.contains(pin(9)))
    }

    @Test func theRevokedSetRestartsWithTheFirstManifestAtAChangedPinsRoleSince() throws {
        let world = try ClientWorld()
        let state = try acceptedRevoking(world)
        // Same keys, but cut off (--cut-off-manifests): pinsRoleSince 2.
        let rotated = rotate(world, state, to: try root2(world, pinsRoleSince: 2))
        #expect(!rotated.state.manifestValid)
        #expect(rotated.state.revoked.contains(pin(9)))
        let two = world.refresh(rotated.state, manifest: try world.manifest(version: 2, rootVersion: 2))
        #expect(two.outcome == .updated(ManifestOrder(rootVersion: 2, version: 2)))
        #expect(two.state.revoked.isEmpty)
        let three = world.refresh(
            two.state, manifest: try world.manifest(version: 3, rootVersion: 2, revoked: [pin(8)]))
        let four = world.refresh(three.state, manifest: try world.manifest(version: 4, rootVersion: 2))
        #expect(four.state.revoked == [pin(8)])
    }

    @Test func startUpReverifiesAManifestOlderThanTheEmbeddedRoot() throws {
        let world = try ClientWorld()
        let stored = try acceptedRevoking(world).persisted
        // An app update embeds root 2 that keeps manifests of root 1: the stored one is
        // checked under it and stays current.
        let keeping = try TrustCore(
            scope: "com.example.app", embeddedRoot: try root2(world, pinsRoleSince: 1), crypto: sodium)
        let (kept, keptEvents) = keeping.restore(stored)
        #expect(kept.manifestValid)
        #expect(kept.manifest?.version == 1)
        #expect(keptEvents.isEmpty)
        // One that cut them off: the stored manifest's signatures still meet the pins role,
        // so it is kept, not current (it can take trust away, never grant it).
        let cutting = try TrustCore(
            scope: "com.example.app", embeddedRoot: try root2(world, pinsRoleSince: 2), crypto: sodium)
        let (notCurrent, events) = cutting.restore(stored)
        #expect(notCurrent.manifest?.version == 1)
        #expect(!notCurrent.manifestValid)
        #expect(events.contains { if case .manifestNotCurrent = $0 { return true } else { return false } })
        // One whose pins role changed: the stored manifest's signatures no longer count, so
        // it is dropped and its domains stay enforced.
        var replaced = rootPayload(version: 2, rootKeys: [world.setup.rootKey], pinsKeys: [try makeKey()])
        replaced.pinsRoleSince = 2
        let replacing = try TrustCore(
            scope: "com.example.app",
            embeddedRoot: try sign(.root, replaced.serialized(), with: [world.setup.rootKey]).serialized(),
            crypto: sodium)
        let (dropped, droppedEvents) = replacing.restore(stored)
        #expect(dropped.manifest == nil)
        #expect(dropped.forcedDomains == ["api.example.com"])
        #expect(droppedEvents.contains { if case .storeDropped = $0 { return true } else { return false } })
        // A stored manifest whose signatures were tampered with is dropped too, however old
        // its root (it used to be loaded unchecked when older than the embedded root).
        var tampered = stored
        if var bytes = tampered.manifest, let index = bytes.lastIndex(of: UInt8(ascii: "A")) {
            bytes[index] = UInt8(ascii: "B")
            tampered.manifest = bytes
        }
        #expect(tampered.manifest != stored.manifest)
        #expect(keeping.restore(tampered).0.manifest == nil)
        #expect(cutting.restore(tampered).0.manifest == nil)
    }
}
