// nginx with the shipped deploy/nginx/pinion.conf serving a scope's transparency log files (manifest.proof, log/checkpoint, tiles) with the headers `pinion serve` sends.

import Foundation
import PinionCrypto
import PinionLog
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

extension NginxPublisherTests {
    /// The shipped configuration serves the transparency log: manifest.proof and log/checkpoint as text notes that must be revalidated, and the
    /// canonical tile paths as immutable binaries, the headers `pinion serve` sends
    /// (PublishedPath); other paths under log/ stay 404.
    @Test func logFilesCarryTheTypeAndCacheControlPinionServeSends() throws {
        try publishFirstVersion()
        let files = [
            ("manifest.proof", "text/plain; charset=utf-8", "no-cache"),
            ("log/checkpoint", "text/plain; charset=utf-8", "no-cache"),
            ("log/tile/0/000.p/3", "application/octet-stream", "public, max-age=31536000, immutable"),
            ("log/tile/63/x001/234", "application/octet-stream", "public, max-age=31536000, immutable"),
            ("log/tile/entries/000.p/255", "application/octet-stream", "public, max-age=31536000, immutable"),
        ]
        let absent = ["log/tile/64/000", "log/tile/0/1", "log/notes.txt", "log/tile/0/000.x", "log/checkpoint.bak"]
        for (index, file) in (files.map(\.0) + absent).enumerated() {
            let path = scopeDirectory + "/" + file
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data([UInt8](repeating: UInt8(index), count: 40 + index)).write(to: URL(fileURLWithPath: path))
        }
        let nginx = try startNginx()
        defer { nginx.stop() }
        for (file, contentType, cacheControl) in files {
            let response = try get("/v1/com.example.app/" + file, port: nginx.port)
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: scopeDirectory + "/" + file)))
            #expect(response.status == 200, "\(file): \(nginx.errorLog)")
            #expect(response.body == bytes, "\(file)")
            #expect(response.value(forHeader: "content-type") == contentType, "\(file)")
            #expect(response.value(forHeader: "cache-control") == cacheControl, "\(file)")
            #expect(response.value(forHeader: "x-content-type-options") == "nosniff", "\(file)")
        }
        for file in absent {
            let response = try get("/v1/com.example.app/" + file, port: nginx.port)
            #expect(response.status == 404, "\(file) is not a canonical log path")
            #expect(response.value(forHeader: "cache-control") == "no-store", "\(file)")
        }
    }

    /// Entry bundles come gzip-encoded to a client that accepts gzip, with `Vary:
    /// Accept-Encoding`, as `pinion serve` sends them; the auditor's tree source asks for gzip
    /// and reads the bundle's bytes back; hash tiles stay as they are.
    @Test func entryBundlesAreGzipEncodedForReadersThatAcceptIt() throws {
        try publishFirstVersion()
        let line = Array("{\"version\":1,\"manifest\":\"0f3a\"}\n".utf8)
        let bundle = (0..<20_000).map { line[$0 % line.count] }
        let hashes = try (0..<256).flatMap { try #require(OpenSSLSupport.sha256(Array("\($0)".utf8))) }
        for (file, bytes) in [("log/tile/entries/000", bundle), ("log/tile/0/000", hashes)] {
            let path = scopeDirectory + "/" + file
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        let nginx = try startNginx()
        defer { nginx.stop() }
        let encoded = try get(
            "/v1/com.example.app/log/tile/entries/000", port: nginx.port, headers: [ResponseBody.acceptGzip])
        #expect(encoded.status == 200, "\(nginx.errorLog)")
        #expect(encoded.value(forHeader: "content-encoding") == "gzip")
        #expect(encoded.value(forHeader: "vary") == "Accept-Encoding")
        #expect(encoded.body.count < bundle.count / 10)
        #expect(try ResponseBody.decode(encoded, gzipAccepted: true, maxBytes: bundle.count) == bundle)
        let plain = try get("/v1/com.example.app/log/tile/entries/000", port: nginx.port)
        #expect(plain.value(forHeader: "content-encoding") == nil)
        #expect(plain.body == bundle)
        let tile = try get("/v1/com.example.app/log/tile/0/000", port: nginx.port, headers: [ResponseBody.acceptGzip])
        #expect(tile.value(forHeader: "content-encoding") == nil)
        let sameBytes = tile.body == hashes
        #expect(sameBytes)

        let source = HTTPSTreeSource(
            baseURL: try #require(URL(string: "https://127.0.0.1:\(nginx.port)/")), scope: "com.example.app",
            configuration: .init(caFile: pki.path(.root)))
        let read = try source.read(.logTile(try TileID(path: "tile/entries/000")), limit: bundle.count)
        #expect(read == bundle)
        #expect(throws: TreeSourceError.self) {
            try source.read(.logTile(try TileID(path: "tile/entries/000")), limit: bundle.count - 1)
        }
    }
}
