// The auditor's real witness fetch and a logged tree over HTTPS, against a Python 3 `ssl` server on 127.0.0.1.

import Foundation
import PinionAudit
import PinionCore
import PinionCrypto
import PinionLog
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

/// A directory served over HTTPS (TLSFileServer) with the test PKI, and witness paths.
final class WitnessServerWorld: @unchecked Sendable {
    let directory: TemporaryDirectory
    let server: TLSFileServer
    var files: String { directory.path + "/served" }
    var ca: String { directory.path + "/ca.pem" }

    /// - Parameter statuses: request paths answered with that HTTP status.
    init(statuses: [String: Int] = [:]) throws {
        directory = try TemporaryDirectory()
        try makeServerPKI(in: directory.path)
        try FileManager.default.createDirectory(
            atPath: directory.path + "/served", withIntermediateDirectories: true)
        server = try TLSFileServer(
            root: directory.path + "/served", certificate: directory.path + "/server.pem",
            key: directory.path + "/server.key", headers: [], statuses: statuses, work: directory.path)
    }

    deinit { server.stop() }

    func url(_ witness: String) -> String { "https://127.0.0.1:\(server.port)/\(witness)" }

    /// Places the answer of `witness` for `origin` where the server finds it.
    func serve(_ bytes: [UInt8], witness: String, origin: String = LogKeys.origin) throws {
        let path =
            files + "/" + witness + "/" + WitnessCheckpointPath.originHash(origin, hasher: sodium.hasher)
            + "/checkpoint"
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}

func witness(_ url: String) throws -> LogPolicy.Witness {
    let signer = Ed25519NoteSigner(key: try makeKey())
    return LogPolicy.Witness(
        key: try NoteVerifierKey(
            name: "w.example", type: .cosignatureV1, publicKey: signer.publicKey, hasher: sodium.hasher),
        url: url)
}

@Suite(.serialized) struct WitnessFetchTests {
    /// C2SP tlog-witness: `<prefix>/<origin hash>/checkpoint`, the SHA-256 of the origin in
    /// lowercase hex (values from `printf %s ORIGIN | sha256sum`).
    @Test func checkpointPathIsTheLowercaseHexSHA256OfTheOrigin() {
        #expect(
            WitnessCheckpointPath.url(base: "https://w.example/api/", origin: "o", hasher: sodium.hasher)
                == "https://w.example/api/65c74c15a686187bb6bbf9958f494fc6b80068034a659a9ad44991b08c58f2d2/checkpoint")
        #expect(
            WitnessCheckpointPath.url(base: "https://w.example:8443", origin: "o", hasher: sodium.hasher)
                == "https://w.example:8443/65c74c15a686187bb6bbf9958f494fc6b80068034a659a9ad44991b08c58f2d2/checkpoint")
        #expect(
            WitnessCheckpointPath.originHash(
                ofRoute: "/65c74c15a686187bb6bbf9958f494fc6b80068034a659a9ad44991b08c58f2d2/checkpoint") != nil)
        #expect(
            WitnessCheckpointPath.originHash(
                ofRoute: "/65C74C15A686187BB6BBF9958F494FC6B80068034A659A9AD44991B08C58F2D2/checkpoint") == nil)
        #expect(WitnessCheckpointPath.originHash(ofRoute: "/checkpoint/o") == nil)
    }

    @Test func answersAndRefusalsOverRealHTTPS() throws {
        let world = try WitnessServerWorld(statuses: [
            "/failing/" + WitnessCheckpointPath.originHash(LogKeys.origin, hasher: sodium.hasher) + "/checkpoint": 500
        ])
        let fetcher = HTTPSWitnessCheckpoints(caFile: world.ca, hasher: sodium.hasher, timeout: 5)
        let note = Array("audit.example/com.example.app\n1\nAAAA\n\n— sig\n".utf8)
        try world.serve(note, witness: "good")
        #expect(
            try fetcher.latestCheckpoint(of: try witness(world.url("good")), origin: LogKeys.origin, limit: 16_384)
                == note)
        // Larger than the limit: refused while reading.
        try world.serve(Array(repeating: 0x41, count: 20_000), witness: "big")
        #expect(throws: WitnessFetchError.tooLarge(limit: 16_384)) {
            try fetcher.latestCheckpoint(of: try witness(world.url("big")), origin: LogKeys.origin, limit: 16_384)
        }
        #expect(throws: WitnessFetchError.notFound) {
            try fetcher.latestCheckpoint(of: try witness(world.url("none")), origin: LogKeys.origin, limit: 16_384)
        }
        #expect(throws: WitnessFetchError.status(500)) {
            try fetcher.latestCheckpoint(of: try witness(world.url("failing")), origin: LogKeys.origin, limit: 16_384)
        }
        // The system store does not trust the test CA: a TLS failure, reported as unreachable.
        let untrusting = HTTPSWitnessCheckpoints(caFile: nil, hasher: sodium.hasher, timeout: 5)
        do {
            _ = try untrusting.latestCheckpoint(
                of: try witness(world.url("good")), origin: LogKeys.origin, limit: 16_384)
            Issue.record("an untrusted certificate was accepted")
        } catch {
            guard case .unreachable(let reason) = error as? WitnessFetchError else {
                Issue.record("\(error)")
                return
            }
            #expect(reason.contains("certificate"), "\(reason)")
        }
        // Nothing listening.
        let closed = try freeLoopbackPort()
        #expect {
            try fetcher.latestCheckpoint(
                of: try witness("https://127.0.0.1:\(closed)/w"), origin: LogKeys.origin, limit: 16_384)
        } throws: { error in
            guard case .unreachable = error as? WitnessFetchError else { return false }
            return true
        }
    }

    @Test func loggedTreeAuditedOverHTTPSReadsTilesProofAndCheckpoint() throws {
        let world = try WitnessServerWorld()
        let tree = try cleanLoggedTree(6)
        try tree.write(to: world.files)
        let anchor = try RootChain(anchor: tree.fixture.rootBytes, crypto: sodium)
        let source = HTTPSTreeSource(
            baseURL: try #require(URL(string: "https://127.0.0.1:\(world.server.port)/")), scope: tree.fixture.scope,
            configuration: .init(caFile: world.ca))
        var report = try Auditor.audit(
            anchor: anchor, source: source, crypto: sodium, options: AuditOptions(at: tree.fixture.auditTime))
        #expect(report.passed, "\(report.violations)")
        #expect(report.log?.checkpointVerified == true)
        #expect(report.log?.loggedEntries == 6)
        // A tile the server no longer has (404) is a log-tile violation, not an I/O error.
        try FileManager.default.removeItem(
            atPath: world.files + "/v1/com.example.app/"
                + TreeFile.logTile(try TileID(level: 0, index: 0, width: 6)).path)
        report = try Auditor.audit(
            anchor: anchor, source: source, crypto: sodium, options: AuditOptions(at: tree.fixture.auditTime))
        #expect(
            report.violations(.logTile).first?.message.contains("no tile tile/0/000.p/6") == true,
            "\(report.violations)")
    }

    @Test func auditOverRealHTTPSNamesSplitViewAndWarnsForBrokenWitnesses() throws {
        let world = try WitnessServerWorld()
        let keys = try LogKeys(urls: [world.url("w1"), world.url("w2"), world.url("w3")])
        let tree = try cleanLoggedTree(6, keys: keys)
        let directory = try TemporaryDirectory()
        try tree.write(to: directory.path)
        let fetcher = HTTPSWitnessCheckpoints(caFile: world.ca, hasher: sodium.hasher, timeout: 5)

        try world.serve(try tree.witnessAnswer(0), witness: "w1")
        try world.serve(Array(repeating: 0x0A, count: 17_000), witness: "w2")  // oversized
        try world.serve(Array("malformed\n".utf8), witness: "w3")
        let report = try auditLogged(tree, repo: directory.path, witnesses: fetcher)
        #expect(report.passed, "\(report.violations)")
        #expect(report.log?.witnesses.map(\.state.code) == ["consistent", "unavailable", "unavailable"])
        #expect(report.warnings(.logWitnessUnavailable).count == 2)

        // Witness 1 now answers another tree of the same size, cosigned and log-signed.
        let fork = try LoggedTree(keys: keys)
        try fork.append(try (0..<5).map { try tree.head(ofManifest: $0).bytes } + [Array("fork\n".utf8)])
        try world.serve(try tree.witnessAnswer(0, try fork.checkpoint), witness: "w1")
        let split = try auditLogged(tree, repo: directory.path, witnesses: fetcher)
        #expect(split.violations(.logSplitView).count == 1, "\(split.violations)")
    }
}
