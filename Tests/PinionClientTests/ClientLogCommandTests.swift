// `pinion client refresh` under a root with a transparency log (docs/DESIGN.md §12), against a real TLS server on 127.0.0.1: the checkpoint and the log reason codes in text and --json.

import Foundation
import PinionCLI
import PinionCore
import PinionCrypto
import PinionLinux
import PinionLog
import PinionTestSupport
import Testing

/// A one-entry log for the scope: its keys, the root naming it, and manifest.proof bytes.
private struct OneEntryLog {
    static let origin = "pinion.example/com.example.app"
    let setup: Setup
    let root: [UInt8]
    let manifest: [UInt8]
    let proof: [UInt8]

    init(now: Timestamp, pins: [Pin]) throws {
        setup = try Setup()
        let hasher = sodium.hasher
        let logSigner = Ed25519NoteSigner(key: try makeKey())
        let witnessSigners = try (0..<2).map { _ in Ed25519NoteSigner(key: try makeKey()) }
        let witnesses = try witnessSigners.enumerated().map { index, signer in
            LogPolicy.Witness(
                key: try NoteVerifierKey(
                    name: "w\(index).example", type: .cosignatureV1, publicKey: signer.publicKey, hasher: hasher),
                url: "https://w\(index).example")
        }
        var payload = setup.root
        payload.log = try LogPolicy(
            origin: OneEntryLog.origin,
            logKey: try NoteVerifierKey(
                name: OneEntryLog.origin, type: .ed25519, publicKey: logSigner.publicKey, hasher: hasher),
            witnesses: witnesses, quorum: 2, maxCheckpointAge: day, checkpointGrace: 7 * day)
        let rootEnvelope = try sign(.root, payload.serialized(), with: [setup.rootKey])
        root = rootEnvelope.serialized()
        let manifestPayload = manifestPayload(issuedAt: now, domains: [.init(name: "api.example.test", pins: pins)])
        let manifestEnvelope = try sign(.pins, manifestPayload.serialized(), with: [setup.pinsKey])
        manifest = manifestEnvelope.serialized()
        let head = try HeadRecord(
            scope: "com.example.app", sequence: 0, rootVersion: 1,
            rootPayloadSHA256: hasher.sha256(rootEnvelope.payload),
            manifestRootVersion: 1, manifestVersion: 1, manifestPayloadSHA256: hasher.sha256(manifestEnvelope.payload))
        // A tree of one leaf: its root hash is the leaf hash, the inclusion proof is empty.
        let checkpoint = try Checkpoint(
            origin: OneEntryLog.origin, size: 1, rootHash: MerkleHasher(hasher).leafHash(head.bytes))
        let time = UInt64(now.secondsSince1970 - 60)
        let signatures =
            [try SignedNote.sign(text: checkpoint.text, keyName: OneEntryLog.origin, signer: logSigner, hasher: hasher)]
            + (try witnessSigners.enumerated().map { index, signer in
                try Cosignature.sign(
                    text: checkpoint.text, keyName: "w\(index).example", timestamp: time, signer: signer, hasher: hasher
                )
            })
        proof =
            TlogProof(
                extra: head.bytes, index: 0, inclusionProof: [],
                checkpointNote: SignedNote(text: checkpoint.text, signatures: signatures)
            ).bytes
    }
}

@Suite struct ClientLogCommandTests {
    @Test func refreshPrintsTheCheckpointAndTheLogReasonInTextAndJSON() throws {
        let pki = try HTTPSTestPKI.shared()
        let now = Timestamp(Date())
        let log = try OneEntryLog(now: now, pins: [try Pin(digest: try pki.spkiSHA256(.leaf))])
        let directory = try makeTemporaryDirectory(prefix: "pinion-client-log-cli")
        let rootPath = directory + "/root.json"
        try Data(log.root).write(to: URL(fileURLWithPath: rootPath))
        let manifestText = String(decoding: log.manifest, as: UTF8.self)
        let publisher = try TestTLSServer(
            chain: [pki.path(.ipLeaf), pki.path(.intermediate)], key: pki.keyPath(.ipLeaf),
            routes: [
                "/v1/com.example.app/manifest.json": .init(headers: [("ETag", "\"a\"")], body: manifestText),
                "/v1/com.example.app/manifest.proof": .init(body: String(decoding: log.proof, as: UTF8.self)),
            ])
        defer { publisher.stop() }
        let common = [
            "--root", rootPath, "--scope", "com.example.app", "--state", directory + "/state", "--cafile",
            pki.path(.root), "--url", "https://127.0.0.1:\(publisher.port)/",
        ]
        let refreshed = runPinion(["client", "refresh"] + common, now: now)
        #expect(refreshed.status == 0, "\(refreshed.err)")
        #expect(refreshed.out.contains("updated to (rootVersion 1, version 1)"))
        #expect(refreshed.out.contains("log         \(OneEntryLog.origin) checkpoint 1 entries"))
        #expect(refreshed.out.contains("age 60s (fresh)"))

        let json = runPinion(["client", "refresh", "--json"] + common, now: now)
        #expect(json.status == 0, "\(json.err)")
        guard
            case .object(let document) = try StrictJSONParser.parse(Array(json.out.utf8), limits: Limits.standard.json),
            case .object(let logMember)? = document["log"]
        else {
            Issue.record("client refresh --json has no log object: \(json.out)")
            return
        }
        #expect(document["logReason"] == .null)
        #expect(logMember["origin"] == .string(OneEntryLog.origin))
        #expect(logMember["checkpointSize"] == .number("1"))
        #expect(logMember["quorumTimeSeconds"] == .number(String(now.secondsSince1970 - 60)))
        #expect(logMember["freshness"] == .string("fresh"))
        #expect(logMember["equivocationEvidence"] == .bool(false))

        // connect prints the stored checkpoint too, and trusts the manifest's pin.
        let server = try TestTLSServer(
            chain: [pki.path(.leaf), pki.path(.intermediate)], key: pki.keyPath(.leaf), routes: ["*": .init(body: "ok")]
        )
        defer { server.stop() }
        let connect = runPinion(
            [
                "client", "connect", "--root", rootPath, "--scope", "com.example.app", "--state", directory + "/state",
                "--cafile", pki.path(.root), "--connect-to", "127.0.0.1", "api.example.test:\(server.port)",
            ], now: now)
        #expect(connect.status == 0, "\(connect.err)")
        #expect(connect.out.contains("log         \(OneEntryLog.origin) checkpoint 1 entries"))
        #expect(connect.out.contains("trusted: api.example.test"))
    }

    @Test func refreshWithoutAProofIsRefusedWithItsReasonCode() throws {
        let pki = try HTTPSTestPKI.shared()
        let now = Timestamp(Date())
        let log = try OneEntryLog(now: now, pins: [pin(0xAA)])
        let directory = try makeTemporaryDirectory(prefix: "pinion-client-log-cli")
        let rootPath = directory + "/root.json"
        try Data(log.root).write(to: URL(fileURLWithPath: rootPath))
        let publisher = try TestTLSServer(
            chain: [pki.path(.ipLeaf), pki.path(.intermediate)], key: pki.keyPath(.ipLeaf),
            routes: [
                "/v1/com.example.app/manifest.json": .init(body: String(decoding: log.manifest, as: UTF8.self))
            ])
        defer { publisher.stop() }
        let common = [
            "--root", rootPath, "--scope", "com.example.app", "--state", directory + "/state", "--cafile",
            pki.path(.root), "--url", "https://127.0.0.1:\(publisher.port)/",
        ]
        let refused = runPinion(["client", "refresh"] + common, now: now)
        #expect(refused.status == 1)
        #expect(refused.out.contains("log reason  log-proof-missing"))
        #expect(refused.out.contains("rejected: manifest.proof"))
        #expect(refused.out.contains("log         no verified checkpoint yet"))
        #expect(refused.out.contains("floor       none"))

        let json = runPinion(["client", "refresh", "--json"] + common, now: now)
        #expect(json.status == 1)
        guard
            case .object(let document) = try StrictJSONParser.parse(Array(json.out.utf8), limits: Limits.standard.json)
        else {
            Issue.record("client refresh --json is not an object: \(json.out)")
            return
        }
        #expect(document["logReason"] == .string("log-proof-missing"))
        #expect(document["outcomeKind"] == .string("rejected"))
    }

    @Test func anOversizedProofIsRefusedWhileReadingOverTLS() throws {
        let pki = try HTTPSTestPKI.shared()
        let now = Timestamp(Date())
        let log = try OneEntryLog(now: now, pins: [pin(0xAA)])
        let directory = try makeTemporaryDirectory(prefix: "pinion-client-log-cli")
        let rootPath = directory + "/root.json"
        try Data(log.root).write(to: URL(fileURLWithPath: rootPath))
        // The real proof followed by padding: 64 KiB in all, twice the limit.
        let padding = String(repeating: "A", count: 2 * TlogProofLimits.standard.maxBytes - log.proof.count)
        let publisher = try TestTLSServer(
            chain: [pki.path(.ipLeaf), pki.path(.intermediate)], key: pki.keyPath(.ipLeaf),
            routes: [
                "/v1/com.example.app/manifest.json": .init(body: String(decoding: log.manifest, as: UTF8.self)),
                "/v1/com.example.app/manifest.proof": .init(body: String(decoding: log.proof, as: UTF8.self) + padding),
            ])
        defer { publisher.stop() }
        let refused = runPinion(
            [
                "client", "refresh", "--root", rootPath, "--scope", "com.example.app", "--state", directory + "/state",
                "--cafile", pki.path(.root), "--url", "https://127.0.0.1:\(publisher.port)/",
            ], now: now)
        #expect(refused.status == 1, "\(refused.out) \(refused.err)")
        #expect(refused.out.contains("log reason  log-proof-too-large"))
        #expect(refused.out.contains("floor       none"))
    }
}
