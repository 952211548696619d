// The log members of the client state (formatVersion 3): round trip, the older formats still read and migrated, and bad log members refused.

import Foundation
import PinionCore
import PinionLog
import PinionTrust
import PinionTrustTestSupport
import Testing

private let hasher = LogPublisher.hasher
private let jsonLimits = JSONLimits(maxBytes: StateCodec.maxStateBytes, maxDepth: 8, maxElements: 100_000)

/// The state document as JSON, edited, and sealed again with a correct checksum.
private func resealed(_ bytes: [UInt8], _ edit: (inout JSONObject) -> Void) throws -> [UInt8] {
    guard case .object(var object) = try StrictJSONParser.parse(bytes, limits: jsonLimits) else {
        throw FixtureFailure(description: "not an object")
    }
    edit(&object)
    var content = JSONObject(object.members.filter { $0.name != "contentSHA256" })
    let checksum = Hex.encode(hasher.sha256(JSONWriter.write(.object(content))))
    content.set("contentSHA256", JSONValue.string(checksum))
    return JSONWriter.write(.object(content))
}

@Suite struct LogStateCodecTests {
    /// A state that verified a checkpoint of a 2-entry log.
    private func loggedState() throws -> (LogWorld, ClientState) {
        var world = try LogWorld()
        try world.publish(version: 1)
        try world.publish(version: 2)
        try world.serveProof(cosignedAt: t0.adding(seconds: -100))
        return (world, try world.accepted().persisted)
    }

    @Test func roundTripsTheCheckpoint() throws {
        let (_, state) = try loggedState()
        #expect(state.logCheckpoint != nil)
        let bytes = StateCodec.encode(state, hasher: hasher)
        #expect(try StateCodec.decode(bytes, hasher: hasher) == state)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("\"formatVersion\": 3") || text.contains("\"formatVersion\":3"))
    }

    @Test func readsFormatVersion2WithoutALogAndWritesVersion3() throws {
        let (_, logged) = try loggedState()
        var state = logged
        state.logCheckpoint = nil
        let version2 = try resealed(StateCodec.encode(state, hasher: hasher)) { object in
            object = JSONObject(object.members.filter { $0.name != "logCheckpoint" })
            object.set("formatVersion", .number("2"))
        }
        #expect(try StateCodec.decode(version2, hasher: hasher) == state)

        // Through the store: the version 2 copies load, and the next save writes version 3.
        let storage = MemoryStorage()
        for name in StateStore.copyFileNames { storage.overwrite(name, version2) }
        let store = StateStore(storage: storage, scope: scope, hasher: hasher)
        guard case .loaded(let loaded) = store.recover().load else {
            Issue.record("the formatVersion 2 copies were not loaded")
            return
        }
        #expect(loaded == state)
        try store.save(logged)
        let saved = try #require(try storage.read(StateStore.copyFileNames[0], maxBytes: StateCodec.maxStateBytes))
        #expect(try StateCodec.decode(saved, hasher: hasher).logCheckpoint == logged.logCheckpoint)
        guard case .object(let object) = try StrictJSONParser.parse(saved, limits: jsonLimits) else { return }
        #expect(object["formatVersion"] == .number("3"))
    }

    /// Log members that must be refused as corrupt (the copy then counts as lost).
    static let damages: [(String, @Sendable (inout JSONObject, ClientState) -> Void)] = [
        (
            "a negative t_q",
            { object, state in
                object.set(
                    "logCheckpoint",
                    .object(
                        JSONObject([
                            .init("note", .string(Base64.encode(state.logCheckpoint?.note ?? []))),
                            .init("quorumTime", .number("-1")),
                        ])))
            }
        ),
        (
            "an unknown member in logCheckpoint",
            { object, state in
                object.set(
                    "logCheckpoint",
                    .object(
                        JSONObject([
                            .init("note", .string(Base64.encode(state.logCheckpoint?.note ?? []))),
                            .init("quorumTime", .number("5")), .init("size", .number("2")),
                        ])))
            }
        ),
        (
            "a note that is not canonical base64",
            { object, _ in
                object.set(
                    "logCheckpoint",
                    .object(JSONObject([.init("note", .string("!!!")), .init("quorumTime", .number("5"))])))
            }
        ),
    ]

    @Test(arguments: damages.indices)
    func refusesBadLogMembers(index: Int) throws {
        let (_, state) = try loggedState()
        let (name, damage) = LogStateCodecTests.damages[index]
        let bytes = try resealed(StateCodec.encode(state, hasher: hasher)) { damage(&$0, state) }
        #expect(throws: StateError.self, "decoded a state with \(name)") {
            try StateCodec.decode(bytes, hasher: hasher)
        }
    }

    @Test func aStoredCheckpointThatNoLongerVerifiesIsDroppedAtStartUp() throws {
        let (world, state) = try loggedState()
        // The note's log signature damaged in the stored copy (the checksum recomputed).
        var damaged = state
        let stored = try #require(state.logCheckpoint)
        var note = stored.note
        note[note.count - 3] ^= 0x01
        damaged.logCheckpoint = StoredCheckpoint(
            checkpoint: stored.checkpoint, note: note, quorumTime: stored.quorumTime)
        #expect(world.core.restore(damaged).0.persisted.logCheckpoint == nil)
        #expect(world.core.restore(state).0.persisted.logCheckpoint == stored)
    }
}
