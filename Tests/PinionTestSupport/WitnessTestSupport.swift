// Helpers for the witness tests: an in-memory log with its Ed25519 key and forks of it, add-checkpoint bodies, a witness configuration and a running in-process witness.

import Foundation
import PinionCore
import PinionCrypto
import PinionLog
import PinionPublisher
import PinionTrust

public let witnessCrypto = CryptoProvider.sodium
public let witnessMerkle = MerkleHasher(CryptoProvider.sodium.hasher)

/// A log of numbered entries, signed by its own fresh key; `forked(at:)` changes one entry.
public struct TestLog {
    public let origin: String
    public let signer: Ed25519NoteSigner
    public private(set) var leaves: [[UInt8]]

    public init(origin: String = "pinion.test/witness/log", size: Int = 0, signer: Ed25519NoteSigner? = nil) throws {
        self.origin = origin
        self.signer = try signer ?? Ed25519NoteSigner(key: Ed25519SecretKey.generate())
        leaves = (0..<size).map { witnessMerkle.leafHash(Array("entry \($0)".utf8)) }
    }

    /// The log's verifier key string's key (type 0x01, named after the origin).
    public var verifierKey: NoteVerifierKey {
        get throws {
            try NoteVerifierKey(name: origin, type: .ed25519, publicKey: signer.publicKey, hasher: witnessCrypto.hasher)
        }
    }

    /// Grows the log to `size` entries.
    public mutating func grow(to size: Int) {
        while leaves.count < size { leaves.append(witnessMerkle.leafHash(Array("entry \(leaves.count)".utf8))) }
    }

    /// The same log (same key) with entry `index` replaced: a split view from that entry on.
    public func forked(at index: Int) -> TestLog {
        var copy = self
        copy.leaves[index] = witnessMerkle.leafHash(Array("forked entry \(index)".utf8))
        return copy
    }

    public func checkpoint(size: Int) throws -> Checkpoint {
        let root = try MerkleProofs.treeHash(
            size: UInt64(size), source: LeafHashes(Array(leaves[0..<size]), hasher: witnessMerkle),
            hasher: witnessMerkle)
        return try Checkpoint(origin: origin, size: UInt64(size), rootHash: root)
    }

    /// The checkpoint note of the first `size` entries, signed by the log key.
    public func note(size: Int) throws -> SignedNote {
        let text = try checkpoint(size: size).text
        return SignedNote(
            text: text,
            signatures: [try SignedNote.sign(text: text, keyName: origin, signer: signer, hasher: witnessCrypto.hasher)]
        )
    }

    /// An add-checkpoint body from `old` to `size`, with this log's consistency proof.
    public func body(old: Int, size: Int, note: SignedNote? = nil) throws -> [UInt8] {
        let proof =
            old == 0 || old >= size
            ? []
            : try MerkleProofs.consistencyProof(
                oldSize: UInt64(old), newSize: UInt64(size),
                source: LeafHashes(Array(leaves[0..<size]), hasher: witnessMerkle), hasher: witnessMerkle)
        return AddCheckpointRequest(
            oldSize: UInt64(old), consistencyProof: proof, note: try note ?? self.note(size: size)
        )
        .bytes
    }
}

/// A witness key, its configuration text and a fresh state directory.
public final class WitnessSetupFixture: @unchecked Sendable {
    public let key: Ed25519SecretKey
    public let name: String
    public let logs: [TestLog]
    public let stateDirectory: String

    public init(name: String = "witness1.test", logs: [TestLog]) throws {
        key = try Ed25519SecretKey.generate()
        self.name = name
        self.logs = logs
        stateDirectory = try makeTemporaryDirectory(prefix: "pinion-witness-state") + "/state"
    }

    deinit { try? FileManager.default.removeItem(atPath: (stateDirectory as NSString).deletingLastPathComponent) }

    /// The configuration file's JSON.
    public var configurationText: String {
        get throws {
            let entries = try logs.map { log in
                "{\"origin\": \(JSONWriter.quote(log.origin)), \"key\": \(JSONWriter.quote(try log.verifierKey.text))}"
            }
            return "{\"name\": \(JSONWriter.quote(name)), \"logs\": [\(entries.joined(separator: ", "))]}"
        }
    }

    public var configuration: WitnessConfiguration {
        get throws { try WitnessConfiguration.parse(Array(configurationText.utf8), hasher: witnessCrypto.hasher) }
    }

    public var verifierKey: NoteVerifierKey {
        get throws {
            try NoteVerifierKey(
                name: name, type: .cosignatureV1, publicKey: key.publicKey.raw, hasher: witnessCrypto.hasher)
        }
    }

    /// Opens the witness on the state directory (one at a time: the directory is locked).
    public func open() throws -> Witness {
        try Witness(
            configuration: configuration, signer: Ed25519NoteSigner(key: key), stateDirectory: stateDirectory,
            crypto: witnessCrypto)
    }

    /// `open()`, retried while an earlier witness on the same state (released by the test,
    /// still held by a drained server's exiting threads) keeps the lock; at most 20 s.
    public func openOnceReleased() throws -> Witness {
        let deadline = Date().addingTimeInterval(20)
        while true {
            do { return try open() } catch WitnessStartError.stateInUse where Date() < deadline {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
    }

    /// The state file of `origin`.
    public func stateFile(_ origin: String) -> String {
        stateDirectory + "/" + Witness.stateFileName(origin: origin, hasher: witnessCrypto.hasher)
    }

    /// True when `line` is a valid cosignature by this witness on `checkpoint`.
    public func verifies(_ line: [UInt8], on checkpoint: Checkpoint) throws -> Bool {
        let signatures = try SignedNote.parseSignatureLines(line)
        let note = SignedNote(text: checkpoint.text, signatures: signatures)
        return try !note.verify(keys: [verifierKey], verifier: witnessCrypto.verifier).isEmpty
    }
}

/// A `WitnessServer` on 127.0.0.1:0, drained when released.
public final class RunningWitness: @unchecked Sendable {
    public let server: WitnessServer
    public var port: UInt16 { server.port }

    public init(
        _ witness: Witness, pathPrefix: String = "", rateLimit: WitnessRateLimit? = nil,
        clock: @escaping @Sendable () -> UInt64 = { 1_800_000_000 }
    ) throws {
        let credentials = try ServerCredentials.shared()
        var configuration = PublisherConfiguration(
            repository: "", certificateChainFile: credentials.certificate, privateKeyFile: credentials.key,
            host: "127.0.0.1", port: 0)
        configuration.workers = 2
        server = try WitnessServer(
            witness: witness, server: configuration, pathPrefix: pathPrefix, rateLimit: rateLimit, clock: clock,
            accessLog: .disabled)
        server.start()
    }

    deinit { server.drain(timeout: 5) }

    /// POSTs `body` to `path` on a new connection.
    public func post(_ path: String, _ body: [UInt8]) throws -> TestResponse {
        let client = try RawTLSClient(port: port)
        return try Self.post(client, path, body)
    }

    public static func post(_ client: RawTLSClient, _ path: String, _ body: [UInt8]) throws -> TestResponse {
        let head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.count)\r\n\r\n"
        guard client.send(Array(head.utf8) + body), let response = client.request("") else {
            throw SetupFailure(description: "no response to POST \(path)")
        }
        return response
    }

    /// Sends a request head without a body (GET, HEAD, DELETE...).
    public func send(_ method: String, _ path: String) throws -> TestResponse {
        let client = try RawTLSClient(port: port)
        guard
            let response = client.request(
                "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", bodiless: method == "HEAD")
        else { throw SetupFailure(description: "no response to \(method) \(path)") }
        return response
    }
}

/// The witness's checkpoint route of `origin` (C2SP tlog-witness): `/<lowercase hex SHA-256 of origin>/checkpoint`.
public func checkpointRoute(_ origin: String) -> String {
    "/" + WitnessCheckpointPath.originHash(origin, hasher: witnessCrypto.hasher) + "/checkpoint"
}
