// Edge cases of the client trust state: root expiry, pins-role order,
// long-lived rotation counts, newer embedded roots, dropped manifests, ETags, lastKnownTime.

import Foundation
import PinionCore
import PinionCrypto
import PinionLinux
import PinionTestSupport
import PinionTrust
import PinionTrustTestSupport
import Testing

@Suite struct ClientTrustStateEdgeCaseTests {
    @Test func expiredNewestRootRefusesManifestsAndEndsCurrentness() throws {
        let rootKey = try makeKey()
        let pinsKey = try makeKey()
        let root = rootPayload(rootKeys: [rootKey], pinsKeys: [pinsKey], expiresAt: t0.adding(seconds: 10 * day))
        let core = try TrustCore(
            scope: "com.example.app", embeddedRoot: try sign(.root, root.serialized(), with: [rootKey]).serialized(),
            crypto: sodium)
        let state = core.initialState()
        let late = t0.adding(seconds: 20 * day)
        let manifest = try sign(.pins, manifestPayload(issuedAt: late).serialized(), with: [pinsKey]).serialized()
        let result = core.refresh(
            state, startTime: late, fetchRoot: { _ in .notFound }, fetchManifest: { _ in .found(manifest, etag: nil) })
        expectRefused(
            result, .trust(.rootExpired(version: 1, expiresAt: t0.adding(seconds: 10 * day), now: late)), from: state)

        // A manifest accepted before the root expired stops counting when the root expires.
        let early = try sign(.pins, manifestPayload(lifetime: 30 * day).serialized(), with: [pinsKey]).serialized()
        let accepted = core.refresh(
            state, startTime: t0, fetchRoot: { _ in .notFound }, fetchManifest: { _ in .found(early, etag: nil) }
        ).state
        let snapshot = PolicySnapshot(
            baseline: .empty, manifest: accepted.manifest, manifestValid: accepted.manifestValid,
            revoked: accepted.revoked,
            staleGrace: 30 * day, rootExpiresAt: t0.adding(seconds: 10 * day))
        #expect(snapshot.isManifestCurrent(at: t0.adding(seconds: 10 * day - 1)))
        #expect(!snapshot.isManifestCurrent(at: t0.adding(seconds: 10 * day)))
    }

    @Test func reorderingThePinsRoleKeepsTheRevokedSet() throws {
        let rootKey = try makeKey()
        let pinsA = try makeKey()
        let pinsB = try makeKey()
        let root1 = rootPayload(rootKeys: [rootKey], pinsKeys: [pinsA, pinsB])
        let core = try TrustCore(
            scope: "com.example.app", embeddedRoot: try sign(.root, root1.serialized(), with: [rootKey]).serialized(),
            crypto: sodium)
        var payload = manifestPayload()
        payload.revokedPins = [pin(9)]
        let manifest = try sign(.pins, payload.serialized(), with: [pinsA]).serialized()
        var state = core.refresh(
            core.initialState(), startTime: t0, fetchRoot: { _ in .notFound },
            fetchManifest: { _ in .found(manifest, etag: nil) }
        ).state
        #expect(state.revoked == [pin(9)])
        // The same pins keys in another order: `root rotate` keeps pinsRoleSince 1.
        var reordered = rootPayload(version: 2, rootKeys: [rootKey], pinsKeys: [pinsB, pinsA])
        reordered.pinsRoleSince = 1
        let root2 = try sign(.root, reordered.serialized(), with: [rootKey])
        var payload2 = manifestPayload(version: 2, rootVersion: 2)
        payload2.revokedPins = []
        let manifest2 = try sign(.pins, payload2.serialized(), with: [pinsB]).serialized()
        state =
            core.refresh(
                state, startTime: t0, fetchRoot: { $0 == 2 ? .found(root2.serialized()) : .notFound },
                fetchManifest: { _ in .found(manifest2, etag: nil) }
            ).state
        #expect(state.floor == ManifestOrder(rootVersion: 2, version: 2))
        #expect(state.revoked == [pin(9)])
    }

    @Test func changedPinsRoleKeepsRevocationsUntilItsFirstManifest() throws {
        let world = try ClientWorld()
        let state = world.refresh(world.core.initialState(), manifest: try world.manifest(revoked: [pin(9)])).state
        let newPins = try makeKey()
        let root2 = try sign(
            .root, rootPayload(version: 2, rootKeys: [world.setup.rootKey], pinsKeys: [newPins]).serialized(),
            with: [world.setup.rootKey])
        let rotated = world.core.refresh(
            state, startTime: t0, fetchRoot: { $0 == 2 ? .found(root2.serialized()) : .notFound },
            fetchManifest: { _ in .notModified }
        ).state
        #expect(rotated.chain.newest.version == 2)
        #expect(rotated.revoked == [pin(9)])
        let fresh = try world.manifest(version: 2, rootVersion: 2, keys: [newPins])
        let recovered = world.refresh(rotated, manifest: fresh).state
        #expect(recovered.revoked.isEmpty)
    }

    @Test func stateWithMoreThan256RootsStillSaves() throws {
        let world = try ClientWorld()
        var state = try world.accepted().persisted
        state.acceptedRoots = Array(repeating: world.setup.rootEnvelope.serialized(), count: 300)
        let decoded = try StateCodec.decode(StateCodec.encode(state, hasher: SodiumSHA256()), hasher: SodiumSHA256())
        #expect(decoded.acceptedRoots.count == 300)
    }

    @Test func newerEmbeddedRootKeepsTheStoredManifestAsNonCurrent() throws {
        let world = try ClientWorld()
        let stored = try world.accepted().persisted
        let root2 = try sign(
            .root,
            rootPayload(version: 2, rootKeys: [world.setup.rootKey], pinsKeys: [world.setup.pinsKey]).serialized(),
            with: [world.setup.rootKey])
        let core2 = try TrustCore(scope: "com.example.app", embeddedRoot: root2.serialized(), crypto: sodium)
        let (restored, _) = core2.restore(stored)
        #expect(restored.manifest != nil)
        #expect(!restored.manifestValid)
        #expect(restored.forcedDomains.isEmpty)
        // B ∩ M for a domain in both: the shared pin still works.
        let baseline = try Baseline(domains: [PinnedDomain(name: "api.example.com", pins: [pin(1)])])
        let snapshot = PolicySnapshot(
            baseline: baseline, manifest: restored.manifest, manifestValid: restored.manifestValid,
            revoked: restored.revoked, staleGrace: 0)
        #expect(
            evaluate(host: "api.example.com", verifiedChain: [pin(1).digest], policy: snapshot.policy(at: t0))
                == .trusted(pin: pin(1), entry: "api.example.com"))
    }

    @Test func droppedManifestClearsTheETagAndSameBytesAreNotEquivocation() throws {
        let world = try ClientWorld()
        var stored = try world.accepted().persisted
        let original = stored.manifest ?? []
        var envelope = try Envelope.parse(original)
        envelope.signatures[0].signature[0] ^= 1
        stored.manifest = envelope.serialized()
        let (restored, _) = world.core.restore(stored)
        #expect(restored.persisted.manifestETag == nil)
        let result = world.refresh(restored, manifest: original)
        #expect(result.outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        #expect(!result.events.contains(.equivocation(ManifestOrder(rootVersion: 1, version: 1))))
    }

    @Test func hostileETagIsDroppedNotStored() throws {
        let world = try ClientWorld()
        let long = "\"" + String(repeating: "e", count: 5000) + "\""
        let result = world.refresh(world.core.initialState(), manifest: try world.manifest(), etag: long)
        #expect(result.outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        #expect(result.state.persisted.manifestETag == nil)
        let crlf = world.refresh(world.core.initialState(), manifest: try world.manifest(), etag: "\"a\"\r\nX: y")
        #expect(crlf.state.persisted.manifestETag == nil)
        #expect(
            try StateCodec.decode(
                StateCodec.encode(result.state.persisted, hasher: SodiumSHA256()), hasher: SodiumSHA256())
                == result.state.persisted)
    }

    @Test func notModifiedMovesLastKnownTimeAndNoOpUpdatesTheETag() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        let later = t0.adding(seconds: day)
        let result = world.core.refresh(
            state, startTime: later, fetchRoot: { _ in .notFound }, fetchManifest: { _ in .notModified })
        #expect(result.outcome == .unchanged)
        #expect(result.state.persisted.lastKnownTime == later)
        let sameBytes = world.refresh(state, at: later, manifest: state.persisted.manifest ?? [], etag: "\"e2\"")
        #expect(sameBytes.outcome == .unchanged)
        #expect(sameBytes.state.persisted.manifestETag == "\"e2\"")
    }

    @Test func scheduleSettingsCannotMakeThePollerSpin() {
        for interval in [0, -5, Double.nan, Double.infinity] {
            let schedule = UpdateSchedule(interval: interval, jitter: 0, minimumInterval: 60)
            #expect(schedule.delay(consecutiveFailures: 0, maxAge: nil, random: 0.5) >= 60)
        }
    }

    @Test func eventHandlerMayCallBackIntoTheClient() throws {
        let setup = try Setup()
        let directory = try makeTemporaryDirectory(prefix: "pinion-reentrant") + "/state"
        final class Box: @unchecked Sendable {
            var client: PinningClient?
            var calls = 0
        }
        let box = Box()
        let configuration = ClientConfiguration(
            scope: "com.example.app", baseURL: nil, embeddedRoot: setup.rootEnvelope.serialized(),
            stateDirectory: directory, clock: { t0 })
        box.client = try PinningClient(
            configuration: configuration,
            onEvent: { _ in
                box.calls += 1
                // Re-entering from the handler must neither deadlock nor trap.
                if box.calls == 1 { _ = box.client?.refresh() }
            })
        let report = box.client?.refresh()
        #expect(report?.failed == true)
        #expect(box.calls == 2)
    }
}
