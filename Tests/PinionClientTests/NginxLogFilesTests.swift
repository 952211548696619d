// nginx with the shipped deploy/nginx/pinion.conf serving a scope's transparency log files (manifest.proof, log/checkpoint, tiles) with the headers `pinion serve` sends.

import Foundation
import PinionTestSupport
import Testing

extension NginxPublisherTests {
    /// Found by the hostile review: the shipped configuration did not serve the transparency
    /// log. manifest.proof and log/checkpoint as text notes that must be revalidated, and the
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
}
