// The auditor reading a tree over real TLS on 127.0.0.1 (a CA and server certificate made
// with openssl at test time, PinionTestSupport's TLSFileServer).

import Foundation
import PinionAudit
import PinionCore
import PinionLinux
import PinionLog
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

/// A CA (`ca.pem`) and a server certificate for IP 127.0.0.1 (`server.pem`, `server.key`).
func makeServerPKI(in directory: String) throws {
    let pki = try OpenSSLPKIBuilder(
        directory: directory,
        sections: """
            [ v3_ca ]
            basicConstraints = critical, CA:TRUE
            keyUsage = critical, keyCertSign

            """ + OpenSSLPKIBuilder.serverSection("v3_server", subjectAltName: "IP:127.0.0.1"))
    try pki.generateKey("ca")
    try pki.selfSign("ca", subject: "/CN=Pinion Audit Test CA", extensions: "v3_ca")
    try pki.issueNew("server", subject: "/CN=127.0.0.1", by: "ca", serial: 2, extensions: "v3_server")
}

@Suite(.serialized) struct HTTPSTreeTests {
    @Test func auditsATreeOverHTTPSAndNamesOneThatChangesBetweenTwoReads() throws {
        let world = try AuditWorld(try simpleHistory(5))
        let work = world.directory.path
        try makeServerPKI(in: work)
        // From its second request on, the server hands out another manifest.json: the
        // latest is now version 4 (as if a rollback were being served).
        let changed = work + "/changed-manifest.json"
        try Data(try world.tree.read(.history(4))).write(to: URL(fileURLWithPath: changed))
        let server = try TLSFileServer(
            root: work + "/tree", certificate: work + "/server.pem", key: work + "/server.key",
            changes: ["/v1/com.example.app/manifest.json": changed], work: work)
        let url = "https://127.0.0.1:\(server.port)/"
        let result = runPinion([
            "audit", "--root", world.rootFile, url, "--cafile", work + "/ca.pem", "--at",
            world.fixture.auditTime.description,
        ])
        #expect(result.status == 1, "\(result.err)")
        #expect(result.out.contains("tree        \(url)v1/com.example.app/"))
        #expect(result.out.contains("manifests (5, versions 1...5; manifest.json holds version 5)"))
        #expect(result.out.contains("manifest.json: [tree-changed] changed between two reads during the audit"))
        #expect(result.out.contains("violations (1)"))

        // On later audits the server consistently serves version 4: no longer a change
        // between reads, but a manifest.json that is not the latest.
        let source = HTTPSTreeSource(
            baseURL: try #require(URL(string: url)), scope: "com.example.app",
            configuration: .init(caFile: work + "/ca.pem"))
        let counted = InstrumentedSource(source)
        let again = try audit(world.fixture, repo: "", source: counted)
        #expect(rulesAndVersions(again.violations) == ["manifest-not-latest@4"])
        // HTTPS cannot list history/: the file after the index's latest is probed once.
        #expect(counted.reads(.history(6)) == 1)
        #expect(counted.reads(.history(5)) == 1)
    }

    @Test func aStableTreeOverHTTPSPassesAndAnUntrustedServerIsAnIOError() throws {
        let world = try AuditWorld(try simpleHistory(3))
        let work = world.directory.path
        try makeServerPKI(in: work)
        let server = try TLSFileServer(
            root: work + "/tree", certificate: work + "/server.pem", key: work + "/server.key", work: work)
        let url = "https://127.0.0.1:\(server.port)"
        let at = world.fixture.auditTime.description
        let result = runPinion(["audit", "--root", world.rootFile, url, "--cafile", work + "/ca.pem", "--at", at])
        #expect(result.status == 0, "\(result.out)\(result.err)")
        #expect(result.out.contains("PASS"))
        let untrusted = runPinion(["audit", "--root", world.rootFile, url, "--at", at])
        #expect(untrusted.status == 3)
        #expect(untrusted.err.contains("certificate verification failed"))
    }

    /// Tiles are asked for with `Accept-Encoding: gzip` and decoded within the read's limit;
    /// documents are asked for without it. A gzip bomb, a broken member, a coding not asked
    /// for or not known are each refused with the file named, never read as the file.
    @Test func gzipFromTheServerIsDecodedWithinTheLimitOrRefused() throws {
        let work = try makeTemporaryDirectory(prefix: "pinion-audit-gzip")
        defer { try? FileManager.default.removeItem(atPath: work) }
        try makeServerPKI(in: work)
        let line = Array("{\"version\":3}\n".utf8)
        let bundle = (0..<5000).map { line[$0 % line.count] }
        let files: [(String, [UInt8])] = [
            ("bundle.gz", Gzip.encode(bundle)),
            ("bomb.gz", Gzip.encode([UInt8](repeating: 0x20, count: 4 << 20))),
            ("cut.gz", Array(Gzip.encode(bundle).dropLast(5))),
            ("manifest.gz", Gzip.encode(Array("{}".utf8))),
        ]
        for (name, bytes) in files { try Data(bytes).write(to: URL(fileURLWithPath: work + "/" + name)) }
        try FileManager.default.createDirectory(atPath: work + "/tree", withIntermediateDirectories: true)
        let scope = "/v1/com.example.app/"
        let server = try TLSFileServer(
            root: work + "/tree", certificate: work + "/server.pem", key: work + "/server.key",
            codings: [
                scope + "log/tile/entries/000": ("gzip", work + "/bundle.gz"),
                scope + "log/tile/entries/001": ("gzip", work + "/bomb.gz"),
                scope + "log/tile/entries/002": ("gzip", work + "/cut.gz"),
                scope + "log/tile/entries/003": ("br", work + "/bundle.gz"),
                scope + "log/tile/entries/004": ("gzip, gzip", work + "/bundle.gz"),
                scope + "manifest.json": ("gzip", work + "/manifest.gz"),
            ], work: work)
        let source = HTTPSTreeSource(
            baseURL: try #require(URL(string: "https://127.0.0.1:\(server.port)/")), scope: "com.example.app",
            configuration: .init(caFile: work + "/ca.pem"))
        func bundleFile(_ index: UInt64) throws -> TreeFile { .logTile(try TileID(path: "tile/entries/00\(index)")) }
        #expect(try source.read(try bundleFile(0), limit: 65_536) == bundle)
        #expect(throws: TreeSourceError.self) { try source.read(try bundleFile(0), limit: 4999) }
        let refusals: [(TreeFile, String)] = [
            (try bundleFile(1), "larger than"),
            (try bundleFile(2), "malformed gzip data"),
            (try bundleFile(3), "unsupported Content-Encoding \"br\""),
            (try bundleFile(4), "unsupported Content-Encoding \"gzip, gzip\""),
            (.manifest, "unsupported Content-Encoding \"gzip\""),
        ]
        for (file, expected) in refusals {
            do {
                let bytes = try source.read(file, limit: 65_536)
                Issue.record("\(file): read \(bytes?.count ?? -1) bytes")
            } catch {
                #expect("\(error)".contains(expected), "\(file): \(error)")
                #expect("\(error)".contains(source.url(for: file.path).absoluteString), "\(file): \(error)")
            }
        }
        let asked = try String(contentsOfFile: work + "/accept.log", encoding: .utf8)
        #expect(asked.contains(scope + "log/tile/entries/000 gzip\n"))
        #expect(asked.contains(scope + "manifest.json -\n"), "documents ask for no coding")
    }
}
