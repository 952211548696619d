// `pinion serve` serves a scope's log files (manifest.proof, log/checkpoint, tiles) with their content types and cache rules, and nothing else under log/.

import Foundation
import PinionTestSupport
import Testing

@testable import PinionPublisher

@Suite struct ServeLogFilesTests {
    @Test func logFilesAreServedWithTheirTypesAndCacheRules() throws {
        let tree = try TestTree()
        try FileManager.default.createDirectory(
            atPath: tree.directory + "/v1/s/log/tile/0", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            atPath: tree.directory + "/v1/s/log/tile/entries/000.p", withIntermediateDirectories: true)
        try tree.write("v1/s/manifest.proof", "c2sp.org/tlog-proof@v1\nindex 0\n\nnote\n")
        try tree.write("v1/s/log/checkpoint", "origin\n1\nhash\n\n— sig\n")
        try Data(repeating: 7, count: 32 * 256).write(to: URL(fileURLWithPath: tree.directory + "/v1/s/log/tile/0/000"))
        try tree.write("v1/s/log/tile/entries/000.p/2", "entries")
        try tree.write("v1/s/log/notes.txt", "not a log file")
        let server = try RunningPublisher(tree: tree)
        let client = try RawTLSClient(port: server.port)
        let proof = try #require(client.request(get("/v1/s/manifest.proof")))
        #expect(proof.status == 200)
        #expect(proof.header("content-type") == "text/plain; charset=utf-8")
        #expect(proof.header("cache-control") == "no-cache")
        #expect(proof.header("etag") != nil)
        #expect(String(decoding: proof.body, as: UTF8.self).hasPrefix("c2sp.org/tlog-proof@v1\n"))
        let checkpoint = try #require(client.request(get("/v1/s/log/checkpoint")))
        #expect(checkpoint.status == 200)
        #expect(checkpoint.header("cache-control") == "no-cache")
        let tile = try #require(client.request(get("/v1/s/log/tile/0/000")))
        #expect(tile.status == 200)
        #expect(tile.body.count == 8192)
        #expect(tile.header("content-type") == "application/octet-stream")
        #expect(tile.header("cache-control") == "public, max-age=31536000, immutable")
        let bundle = try #require(client.request(get("/v1/s/log/tile/entries/000.p/2")))
        #expect(bundle.status == 200)
        #expect(bundle.body == Array("entries".utf8))
        for path in ["/v1/s/log/notes.txt", "/v1/s/log/tile/0/000.p/256", "/v1/s/log/tile/0/001", "/v1/s/log/"] {
            let refused = try #require(client.request(get(path)))
            #expect(refused.status == 404, "\(path)")
        }
    }
}
