// Test fixtures for publishing with a transparency log: in-process fake witnesses (WitnessDecision + Ed25519NoteSigner) and a scope whose root lists them.

import Foundation
import PinionCore
import PinionCrypto
import PinionLog
import PinionSystem
import PinionTrust

@testable import PinionPublisher

/// A witness in the test process: C2SP tlog-witness decisions by `WitnessDecision`, the
/// latest checkpoint kept in memory, cosignatures at a fixed, settable time.
public final class FakeWitness: @unchecked Sendable {
    public let name: String
    public let key: Ed25519SecretKey
    public let url: String
    private let lock = NSLock()
    private var latest: Checkpoint?
    private var note: [UInt8]?
    private var state = (down: false, answersBeforeDown: Int?.none, time: UInt64(t0.secondsSince1970), requests: 0)

    public init(name: String, url: String) throws {
        self.name = name
        self.url = url
        key = try makeKey()
    }

    public var verifierKey: NoteVerifierKey {
        get throws {
            try NoteVerifierKey(name: name, type: .cosignatureV1, publicKey: key.publicKey.raw, hasher: sodium.hasher)
        }
    }

    public var isDown: Bool {
        get { lock.withLock { state.down } }
        set { lock.withLock { state.down = newValue } }
    }
    /// The witness goes down after answering this many more requests.
    public func goDown(afterAnswers count: Int) { lock.withLock { state.answersBeforeDown = count } }
    public var time: UInt64 {
        get { lock.withLock { state.time } }
        set { lock.withLock { state.time = newValue } }
    }
    public var latestSize: UInt64? { lock.withLock { latest?.size } }
    /// The note it serves at its checkpoint path: the latest it cosigned (settable, to serve another).
    public var servedNote: [UInt8]? {
        get { lock.withLock { note } }
        set { lock.withLock { note = newValue } }
    }
    public var requests: Int { lock.withLock { state.requests } }
    /// The latest checkpoint it cosigned (to save and restore between simulated crashes).
    public var latestCheckpoint: Checkpoint? {
        get { lock.withLock { latest } }
        set { lock.withLock { latest = newValue } }
    }

    public func answer(_ body: [UInt8], logKey: NoteVerifierKey, origin: String) throws -> WitnessAnswer {
        try lock.withLock {
            if let remaining = state.answersBeforeDown {
                if remaining == 0 { state.down = true }
                state.answersBeforeDown = remaining - 1
            }
            guard !state.down else { throw WitnessClientError.exchange("\(url): connection refused") }
            state.requests += 1
            do {
                let known = latest
                let decided = try WitnessDecision.decide(
                    body: body, logKeys: [origin: [logKey]], latest: { _ in known }, crypto: sodium)
                latest = decided.checkpoint
                let line = try WitnessDecision.cosign(
                    decided.note, name: name, timestamp: state.time, signer: Ed25519NoteSigner(key: key),
                    hasher: sodium.hasher)
                note = decided.note.bytes + line
                return WitnessAnswer(status: 200, body: line)
            } catch let refusal as WitnessRefusal {
                if case .conflict(let size) = refusal {
                    return WitnessAnswer(status: 409, body: Array("\(size)\n".utf8))
                }
                return WitnessAnswer(status: refusal.httpStatus, body: Array(refusal.description.utf8))
            }
        }
    }
}

/// Routes add-checkpoint requests to fake witnesses by URL.
public struct FakeWitnessNetwork: WitnessClient {
    public let witnesses: [FakeWitness]
    public let logKey: NoteVerifierKey
    public let origin: String

    /// - Parameters:
    ///   - witnesses: the witnesses reachable, each at its URL.
    ///   - logKey: the log's verifier key they check checkpoints against.
    ///   - origin: the log's origin.
    public init(witnesses: [FakeWitness], logKey: NoteVerifierKey, origin: String) {
        self.witnesses = witnesses
        self.logKey = logKey
        self.origin = origin
    }

    public func addCheckpoint(url: String, body: [UInt8]) throws -> WitnessAnswer {
        guard let witness = witnesses.first(where: { $0.url == url }) else {
            throw WitnessClientError.exchange("\(url): no such host")
        }
        return try witness.answer(body, logKey: logKey, origin: origin)
    }

    public func fetchCheckpoint(url: String) throws -> WitnessAnswer {
        guard
            let witness = witnesses.first(where: {
                url == WitnessCheckpointPath.url(base: $0.url, origin: origin, hasher: sodium.hasher)
            })
        else { return WitnessAnswer(status: 404, body: Array("not found".utf8)) }
        guard !witness.isDown else { throw WitnessClientError.exchange("\(url): connection refused") }
        guard let note = witness.servedNote else { return WitnessAnswer(status: 404, body: []) }
        return WitnessAnswer(status: 200, body: note)
    }
}

/// A scope whose root lists a log with three fake witnesses (quorum 2), and its manifests.
public final class LogWorld: @unchecked Sendable {
    public static let origin = "example.com/pinion/com.example.app"
    public let setup: Setup
    public let logKey: Ed25519SecretKey
    public let witnesses: [FakeWitness]
    public let repo: String
    public var scopeDirectory: String { repo + "/v1/com.example.app" }
    public private(set) var previous: [UInt8]?
    public private(set) var version: Int64 = 0

    public init(quorum: Int = 2) throws {
        setup = try Setup()
        logKey = try makeKey()
        witnesses = try (1...3).map { try FakeWitness(name: "w\($0).example", url: "https://w\($0).example/w") }
        repo = FileManager.default.temporaryDirectory.appendingPathComponent("pinion-publog-\(UUID())").path
        self.quorum = quorum
    }

    public let quorum: Int

    deinit { try? FileManager.default.removeItem(atPath: repo) }

    public var logVerifierKey: NoteVerifierKey {
        get throws {
            try NoteVerifierKey(
                name: LogWorld.origin, type: .ed25519, publicKey: logKey.publicKey.raw, hasher: sodium.hasher)
        }
    }

    public func policy() throws -> LogPolicy {
        try LogPolicy(
            origin: LogWorld.origin, logKey: logVerifierKey,
            witnesses: witnesses.map { LogPolicy.Witness(key: try $0.verifierKey, url: $0.url) }, quorum: quorum,
            maxCheckpointAge: 86_400)
    }

    /// Root version 1 with the log (or without, for backfill tests).
    public func root(version: Int64 = 1, withLog: Bool = true, previousKeys: [Ed25519SecretKey] = []) throws -> [UInt8]
    {
        var payload = rootPayload(version: version, rootKeys: [setup.rootKey], pinsKeys: [setup.pinsKey])
        if withLog { payload.log = try policy() }
        return try sign(.root, payload.serialized(), with: [setup.rootKey] + previousKeys).serialized()
    }

    /// The next manifest version, chained to the previous one.
    public func nextManifest(rootVersion: Int64 = 1) throws -> [UInt8] {
        version += 1
        var payload = manifestPayload(
            version: version, rootVersion: rootVersion, issuedAt: t0.adding(seconds: version),
            domains: [.init(name: "api.example.com", pins: [pin(UInt8(version % 200) + 1), pin(255)])])
        payload.previous = previous
        let bytes = payload.serialized()
        previous = sodium.hasher.sha256(bytes)
        return try sign(.pins, bytes, with: [setup.pinsKey]).serialized()
    }

    public func context(crashAfterWrites: Int? = nil) throws -> LogPublishContext {
        var context = LogPublishContext(
            signer: Ed25519NoteSigner(key: logKey),
            witnesses: FakeWitnessNetwork(witnesses: witnesses, logKey: try logVerifierKey, origin: LogWorld.origin))
        context.crashAfterWrites = crashAfterWrites.map { CrashGate(afterWrites: $0) }
        return context
    }

    @discardableResult
    public func publish(_ envelopes: [[UInt8]], log: Bool = true, crashAfterWrites: Int? = nil) throws(PublishError)
        -> PublishOutcome
    {
        let context: LogPublishContext?
        do { context = log ? try self.context(crashAfterWrites: crashAfterWrites) : nil } catch {
            throw .usage("test setup: \(error)")
        }
        return try Publisher.publish(envelopes, into: repo, at: t0.adding(seconds: 3600), crypto: sodium, log: context)
    }

    public func read(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: scopeDirectory + "/" + relative).map { [UInt8]($0) }
    }

    /// Every file under the repository (relative path → SHA-256 hex), for before/after comparisons.
    public func snapshot(under directory: String? = nil) -> [String: String] {
        let base = directory ?? repo
        var files: [String: String] = [:]
        guard let walker = FileManager.default.enumerator(atPath: base) else { return files }
        for case let path as String in walker {
            var isDirectory: ObjCBool = false
            let full = base + "/" + path
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue,
                let data = FileManager.default.contents(atPath: full)
            {
                files[path] = Hex.encode(sodium.hasher.sha256([UInt8](data)))
            }
        }
        return files
    }
}

extension LogWorld {
    /// The thief, holding the log key: appends a head of its own (a rogue manifest) to the
    /// published tree in memory and has `chosen` witnesses (all by default) cosign the larger
    /// checkpoint, writing nothing to the repository.
    @discardableResult
    public func thiefExtends(_ chosen: [FakeWitness]? = nil) throws -> LogAppend {
        guard let bytes = read("log/checkpoint") else { throw TileError.missingTile("log/checkpoint") }
        let current = try Checkpoint.parse(try SignedNote.parse(bytes).text, hasher: MerkleHasher(sodium.hasher))
        return try thiefAppends(
            current: current, reader: DiskTiles(logDirectory: scopeDirectory + "/log"), to: chosen ?? witnesses)
    }

    /// The thief signs its own tree of size 1 (another head than the publisher's first) and
    /// has `witness`, which never cosigned this log, cosign it: a fork.
    public func thiefForks(witness: FakeWitness) throws {
        try thiefAppends(current: nil, reader: DiskTiles(logDirectory: repo + "/nowhere"), to: [witness])
    }

    @discardableResult
    private func thiefAppends(current: Checkpoint?, reader: any TileReader, to chosen: [FakeWitness]) throws
        -> LogAppend
    {
        let head = try HeadRecord(
            scope: "com.example.app", sequence: Int64(current?.size ?? 0), rootVersion: 1,
            rootPayloadSHA256: Array(repeating: 0xAA, count: 32), manifestRootVersion: 1, manifestVersion: 999,
            manifestPayloadSHA256: Array(repeating: 0xBB, count: 32))
        let append = try LogPublishing.append(
            heads: [head], current: current, reader: reader, origin: LogWorld.origin,
            logSigner: Ed25519NoteSigner(key: logKey), crypto: sodium)
        for witness in chosen {
            let answer = try witness.answer(
                append.addCheckpointBody, logKey: try logVerifierKey, origin: LogWorld.origin)
            guard answer.status == 200 else {
                throw WitnessClientError.exchange("\(witness.name) refused the thief: \(answer.status)")
            }
        }
        return append
    }
}

/// Reads tiles of `v1/{scope}/log/` straight from disk (independently of the publisher's reader).
public struct DiskTiles: TileReader {
    public let logDirectory: String

    /// - Parameter logDirectory: the scope's `log/` directory.
    public init(logDirectory: String) { self.logDirectory = logDirectory }
    public func readTile(_ tile: TileID) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: logDirectory + "/" + tile.path) else {
            throw TileError.missingTile(tile.path)
        }
        return [UInt8](data)
    }
}
