// pinsRoleSince (docs/DESIGN.md §4, §5): its range, the rotation rule in the chain walk, and
// manifests verified under the newest root from pinsRoleSince to its version.

import PinionCore
import PinionCrypto
import PinionTestSupport
import Testing

@Suite struct PinsRoleSinceTests {
    /// Root 1 (root key R, pins key P) and helpers to sign the next roots with R.
    struct World {
        let setup: Setup
        var chain: RootChain

        init() throws {
            setup = try Setup()
            chain = try setup.chain()
        }

        /// The next root's payload: same keys unless `pinsKeys` is given.
        func next(
            pinsKeys: [Ed25519SecretKey]? = nil, pinsRoleSince: Int64?, cap: Int64 = 90 * day
        ) -> RootPayload {
            var payload = rootPayload(
                version: chain.newest.version + 1, rootKeys: [setup.rootKey], pinsKeys: pinsKeys ?? [setup.pinsKey],
                maxManifestLifetime: cap)
            payload.pinsRoleSince = pinsRoleSince
            return payload
        }

        mutating func append(_ payload: RootPayload) throws {
            try chain.append(try sign(.root, payload.serialized(), with: [setup.rootKey]).serialized(), crypto: sodium)
        }

        func manifest(rootVersion: Int64, keys: [Ed25519SecretKey]? = nil, lifetime: Int64 = 30 * day) throws
            -> [UInt8]
        {
            try sign(
                .pins, manifestPayload(rootVersion: rootVersion, lifetime: lifetime).serialized(),
                with: keys ?? [setup.pinsKey]
            ).serialized()
        }
    }

    /// A root payload's bytes with `pinsRoleSince` set to `text` (any JSON value).
    func rootBytes(version: Int64, pinsRoleSince text: String) throws -> [UInt8] {
        let setup = try Setup()
        var payload = rootPayload(version: version, rootKeys: [setup.rootKey], pinsKeys: [setup.pinsKey])
        payload.pinsRoleSince = nil
        var json = String(decoding: payload.serialized(), as: UTF8.self)
        while let last = json.last, last != "}" { json.removeLast() }
        json.removeLast()
        return Array((json + ",\"pinsRoleSince\":\(text)}").utf8)
    }

    @Test func parsesAndSerializesTheMember() throws {
        let world = try World()
        let payload = world.next(pinsRoleSince: 1)
        let parsed = try RootPayload.parse(payload.serialized(), crypto: sodium)
        #expect(parsed.pinsRoleSince == 1)
        #expect(parsed.effectivePinsRoleSince == 1)
        let absent = try RootPayload.parse(world.next(pinsRoleSince: nil).serialized(), crypto: sodium)
        #expect(absent.pinsRoleSince == nil)
        #expect(absent.effectivePinsRoleSince == 2)
        #expect(!String(decoding: absent.serialized(), as: UTF8.self).contains("pinsRoleSince"))
    }

    @Test(arguments: [("0", 3), ("4", 3), ("-1", 3), ("2", 1), ("1.5", 3), ("\"1\"", 3), ("null", 3)])
    func refusesValuesOutsideOneToVersion(text: String, version: Int64) throws {
        let bytes = try rootBytes(version: version, pinsRoleSince: text)
        #expect(throws: FormatError.self) { try RootPayload.parse(bytes, crypto: sodium) }
        do {
            _ = try RootPayload.parse(bytes, crypto: sodium)
        } catch {
            #expect(error.path == "pinsRoleSince")
        }
    }

    @Test func acceptsTheBounds() throws {
        #expect(try RootPayload.parse(try rootBytes(version: 3, pinsRoleSince: "1"), crypto: sodium).pinsRoleSince == 1)
        #expect(try RootPayload.parse(try rootBytes(version: 3, pinsRoleSince: "3"), crypto: sodium).pinsRoleSince == 3)
    }

    @Test func aRotationThatChangesThePinsRoleMustMoveIt() throws {
        var world = try World()
        let newPins = try makeKey()
        let kept = world.next(pinsKeys: [newPins], pinsRoleSince: 1)
        #expect(
            throws: TrustError.pinsRoleSinceInvalid(rootVersion: 2, found: 1, allowed: 2...2, pinsRoleChanged: true)
        ) { try world.append(kept) }
        #expect(world.chain.newest.version == 1)
        // A raised cap is a change too; a lowered one is not.
        #expect(throws: TrustError.self) { try world.append(world.next(pinsRoleSince: 1, cap: 91 * day)) }
        try world.append(world.next(pinsRoleSince: 1, cap: 60 * day))
        #expect(world.chain.newest.payload.effectivePinsRoleSince == 1)
        try world.append(world.next(pinsKeys: [newPins], pinsRoleSince: nil))
        #expect(world.chain.newest.payload.effectivePinsRoleSince == 3)
    }

    @Test func anUnchangedRotationNeverLowersIt() throws {
        var world = try World()
        try world.append(world.next(pinsRoleSince: nil))  // root 2: since 2 (cut off)
        // Root 3 may keep 2 or say 3, never 1 (manifests of root 1 were cut off by root 2).
        #expect(
            throws: TrustError.pinsRoleSinceInvalid(rootVersion: 3, found: 1, allowed: 2...3, pinsRoleChanged: false)
        ) { try world.append(world.next(pinsRoleSince: 1)) }
        try world.append(world.next(pinsRoleSince: 2))
        #expect(world.chain.newest.payload.effectivePinsRoleSince == 2)
        // Moving it up without reaching the new version is allowed (roots 2 to 4 share the
        // pins role): root 4 cuts off manifests of root 2 only.
        try world.append(world.next(pinsRoleSince: 3))
        #expect(world.chain.newest.payload.effectivePinsRoleSince == 3)
    }

    @Test func manifestsVerifyUnderTheNewestRootFromPinsRoleSince() throws {
        var world = try World()
        try world.append(world.next(pinsRoleSince: 1))
        let older = try world.manifest(rootVersion: 1)
        #expect(try ManifestVerifier.verify(older, under: world.chain.newest, crypto: sodium).payload.rootVersion == 1)
        #expect(throws: TrustError.rootVersionMismatch(expected: 2, found: 3)) {
            try ManifestVerifier.verify(try world.manifest(rootVersion: 3), under: world.chain.newest, crypto: sodium)
        }
        // The newest cap applies to the older manifest too.
        try world.append(world.next(pinsRoleSince: 1, cap: 20 * day))
        #expect(throws: TrustError.lifetimeExceedsCap(lifetime: 30 * day, cap: 20 * day)) {
            try ManifestVerifier.verify(older, under: world.chain.newest, crypto: sodium)
        }
        // A changed pins role cuts off every manifest below its version.
        let newPins = try makeKey()
        try world.append(world.next(pinsKeys: [newPins], pinsRoleSince: nil, cap: 20 * day))
        // Signed by the new pins key, so only its rootVersion is wrong.
        let short = try world.manifest(rootVersion: 3, keys: [newPins], lifetime: 10 * day)
        #expect(throws: TrustError.rootVersionBeforePinsRole(found: 3, pinsRoleSince: 4, newest: 4)) {
            try ManifestVerifier.verify(short, under: world.chain.newest, crypto: sodium)
        }
        let resigned = try world.manifest(rootVersion: 4, keys: [newPins], lifetime: 10 * day)
        #expect(
            try ManifestVerifier.verify(resigned, under: world.chain.newest, crypto: sodium).payload.rootVersion == 4)
    }
}
