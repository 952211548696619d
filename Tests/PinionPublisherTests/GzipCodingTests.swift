// The gzip content coding: zlib's encoder and capped decoder checked against the gzip tool and
// Python's gzip module, hostile gzip data refused, Accept-Encoding read as RFC 9110 says, and
// `pinion serve` sending entry bundles gzip-encoded with their own ETag and `Vary`.

import Foundation
import PinionCore
import PinionCrypto
import PinionSystem
import PinionTestSupport
import PinionTrust
import Testing

@testable import PinionPublisher

@Suite struct GzipCodingTests {
    /// Compressible bytes of a given length: JSON-like text, as entry bundles hold.
    private static func text(_ count: Int) -> [UInt8] {
        let line = Array("{\"version\":17,\"sha256\":\"0f3a9c\"}\n".utf8)
        return (0..<count).map { line[$0 % line.count] }
    }

    @Test(arguments: [0, 1, 255, 65_536, 1 << 20])
    func encodeThenDecodeGivesTheBytesBack(count: Int) throws {
        let bytes = Self.text(count)
        let encoded = Gzip.encode(bytes)
        #expect(Array(encoded.prefix(2)) == [0x1f, 0x8b], "a gzip member (RFC 1952 ID1 ID2)")
        #expect(try Gzip.decode(encoded, maxBytes: count) == bytes, "exactly at the limit is accepted")
        #expect(Gzip.encode(bytes) == encoded, "the encoding is a function of the bytes (MTIME 0)")
    }

    /// gzip(1) decodes what Pinion encodes, and Pinion decodes what gzip(1) encodes.
    @Test func interoperatesWithTheGzipTool() throws {
        let work = try makeTemporaryDirectory(prefix: "pinion-gzip")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let bytes = Self.text(100_000) + (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) }
        try Data(Gzip.encode(bytes)).write(to: URL(fileURLWithPath: work + "/ours.gz"))
        let decoded = try runProgram("/bin/gzip", ["-d", work + "/ours.gz"])
        #expect(decoded.status == 0, "\(decoded.err)")
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: work + "/ours"))) == bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: work + "/plain"))
        let theirs = try runProgram("/bin/gzip", ["-9n", work + "/plain"])
        #expect(theirs.status == 0, "\(theirs.err)")
        let encoded = [UInt8](try Data(contentsOf: URL(fileURLWithPath: work + "/plain.gz")))
        #expect(try Gzip.decode(encoded, maxBytes: bytes.count) == bytes)
    }

    /// A small body that inflates past the reader's limit stops at the limit.
    @Test func aGzipBombStopsAtTheLimit() throws {
        let bomb = Gzip.encode([UInt8](repeating: 0, count: 8 << 20))
        #expect(bomb.count < 16 * 1024)
        #expect(throws: GzipError.tooLarge(limit: 65_536)) { try Gzip.decode(bomb, maxBytes: 65_536) }
        #expect(throws: GzipError.tooLarge(limit: 0)) { try Gzip.decode(Gzip.encode([1]), maxBytes: 0) }
        #expect(try Gzip.decode(Gzip.encode([]), maxBytes: 0) == [])
    }

    @Test func malformedGzipIsRefused() throws {
        let bytes = Self.text(5000)
        let good = Gzip.encode(bytes)
        var badCRC = good
        badCRC[badCRC.count - 6] ^= 0x01
        var badLength = good
        badLength[badLength.count - 1] ^= 0x01
        var badMagic = good
        badMagic[0] = 0x1e
        var badBody = good
        badBody[20] ^= 0xff
        let cases: [(String, [UInt8])] = [
            ("empty", []),
            ("cut in the header", Array(good.prefix(5))),
            ("cut in the stream", Array(good.prefix(good.count / 2))),
            ("cut in the trailer", Array(good.dropLast(3))),
            ("CRC-32 flipped", badCRC),
            ("ISIZE flipped", badLength),
            ("not gzip magic", badMagic),
            ("corrupt deflate data", badBody),
            ("bytes after the member", good + [0]),
            ("a second member", good + Gzip.encode([1, 2, 3])),
            ("a zlib stream, not gzip", [0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]),
            ("random bytes", (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }),
        ]
        for (name, data) in cases {
            #expect(
                "\(name)", performing: { try Gzip.decode(data, maxBytes: 1 << 20) },
                throws: { error in
                    guard case .malformed = error as? GzipError else { return false }
                    return true
                })
        }
    }

    @Test func acceptEncodingIsReadAsRFC9110Says() {
        let cases: [([String], Bool)] = [
            ([], false),
            (["gzip"], true),
            (["GZip"], true),
            (["x-gzip"], true),
            (["br, gzip;q=0.5"], true),
            (["gzip ; q=1.000"], true),
            (["gzip;Q=0.001"], true),
            (["*"], true),
            (["br", "gzip"], true),
            (["identity"], false),
            (["br, deflate"], false),
            (["gzip;q=0"], false),
            (["gzip;q=0.000"], false),
            (["*;q=0"], false),
            (["gzip;q=0, *"], false),
            (["gzip;q=1.5"], false),
            (["gzip;q=1.0001"], false),
            (["gzip;q="], false),
            (["gzip;q=abc"], false),
            (["gzip;level=9"], false),
            ([""], false),
            ([",,,"], false),
        ]
        for (values, expected) in cases {
            let headers = values.map { (name: "accept-encoding", value: $0) }
            #expect(acceptsGzip(headers) == expected, "\(values)")
        }
        #expect(!acceptsGzip([(name: "te", value: "gzip")]), "another field")
    }

    @Test func aResponseBodyIsDecodedOnlyAsAsked() throws {
        let url = try #require(URL(string: "https://127.0.0.1/v1/s/log/tile/entries/000"))
        let bytes = Self.text(3000)
        func response(_ codings: [String], _ body: [UInt8]) -> HTTPSResponse {
            HTTPSResponse(url: url, status: 200, headers: codings.map { ("content-encoding", $0) }, body: body)
        }
        let gzipped = Gzip.encode(bytes)
        #expect(try ResponseBody.decode(response(["gzip"], gzipped), gzipAccepted: true, maxBytes: 3000) == bytes)
        #expect(try ResponseBody.decode(response(["X-GZIP"], gzipped), gzipAccepted: true, maxBytes: 3000) == bytes)
        #expect(try ResponseBody.decode(response([], bytes), gzipAccepted: true, maxBytes: 3000) == bytes)
        #expect(try ResponseBody.decode(response(["identity"], bytes), gzipAccepted: false, maxBytes: 3000) == bytes)
        #expect(throws: ContentCodingError.unsupported(coding: "gzip")) {
            try ResponseBody.decode(response(["gzip"], gzipped), gzipAccepted: false, maxBytes: 3000)
        }
        #expect(throws: ContentCodingError.unsupported(coding: "br")) {
            try ResponseBody.decode(response(["br"], gzipped), gzipAccepted: true, maxBytes: 3000)
        }
        #expect(throws: ContentCodingError.unsupported(coding: "gzip, gzip")) {
            try ResponseBody.decode(response(["gzip, gzip"], gzipped), gzipAccepted: true, maxBytes: 3000)
        }
        #expect(throws: ContentCodingError.unsupported(coding: "gzip, gzip")) {
            try ResponseBody.decode(response(["gzip", "gzip"], gzipped), gzipAccepted: true, maxBytes: 3000)
        }
        #expect(throws: ContentCodingError.gzip(.tooLarge(limit: 2999))) {
            try ResponseBody.decode(response(["gzip"], gzipped), gzipAccepted: true, maxBytes: 2999)
        }
        #expect(throws: ContentCodingError.gzip(.malformed(detail: "the data ends before the gzip member does"))) {
            try ResponseBody.decode(response(["gzip"], Array(gzipped.dropLast(4))), gzipAccepted: true, maxBytes: 3000)
        }
    }

    // MARK: pinion serve

    /// Entry bundles go gzip-encoded to a client that accepts gzip, with an ETag of their own
    /// (a strong validator per representation) and `Vary: Accept-Encoding`; hash tiles, which
    /// do not shrink, and every other file go as they are.
    @Test func serveSendsEntryBundlesGzipEncodedWhenAccepted() throws {
        let tree = try TestTree()
        for directory in ["v1/s/log/tile/0", "v1/s/log/tile/entries"] {
            try FileManager.default.createDirectory(
                atPath: tree.directory + "/" + directory, withIntermediateDirectories: true)
        }
        let bundle = Self.text(60_000)
        try Data(bundle).write(to: URL(fileURLWithPath: tree.directory + "/v1/s/log/tile/entries/000"))
        let hashes = try (0..<256).flatMap { try #require(OpenSSLSupport.sha256(Array("\($0)".utf8))) }
        try Data(hashes).write(to: URL(fileURLWithPath: tree.directory + "/v1/s/log/tile/0/000"))
        try tree.write("v1/s/manifest.json", String(repeating: "{\"pins\": []}", count: 200))
        let server = try RunningPublisher(tree: tree)
        let client = try RawTLSClient(port: server.port)
        let accept = "Accept-Encoding: br, gzip\r\n"

        let plain = try #require(client.request(get("/v1/s/log/tile/entries/000")))
        #expect(plain.status == 200)
        #expect(plain.body == bundle)
        #expect(plain.header("content-encoding") == nil)
        #expect(plain.header("vary") == "Accept-Encoding")

        let encoded = try #require(client.request(get("/v1/s/log/tile/entries/000", accept)))
        #expect(encoded.status == 200)
        #expect(encoded.header("content-encoding") == "gzip")
        #expect(encoded.header("vary") == "Accept-Encoding")
        #expect(encoded.header("content-type") == "application/octet-stream")
        #expect(encoded.body.count < bundle.count / 10)
        #expect(try Gzip.decode(encoded.body, maxBytes: bundle.count) == bundle)
        let plainETag = try #require(plain.header("etag"))
        let encodedETag = try #require(encoded.header("etag"))
        #expect(plainETag != encodedETag)
        #expect(encodedETag == "\"" + Hex.encode(try #require(OpenSSLSupport.sha256(encoded.body))) + "\"")

        // Each representation revalidates against its own ETag only.
        let revalidated = try #require(
            client.request(get("/v1/s/log/tile/entries/000", accept + "If-None-Match: \(encodedETag)\r\n")))
        #expect(revalidated.status == 304)
        #expect(revalidated.header("vary") == "Accept-Encoding")
        #expect(revalidated.header("etag") == encodedETag)
        let crossed = try #require(
            client.request(get("/v1/s/log/tile/entries/000", accept + "If-None-Match: \(plainETag)\r\n")))
        #expect(crossed.status == 200)
        #expect(crossed.header("content-encoding") == "gzip")
        let refused = try #require(client.request(get("/v1/s/log/tile/entries/000", "Accept-Encoding: gzip;q=0\r\n")))
        #expect(refused.header("content-encoding") == nil)
        #expect(refused.body == bundle)
        let head = try #require(
            client.request("HEAD /v1/s/log/tile/entries/000 HTTP/1.1\r\nHost: x\r\n\(accept)\r\n", bodiless: true))
        #expect(head.header("content-encoding") == "gzip")
        #expect(head.header("content-length") == String(encoded.body.count))

        let tile = try #require(client.request(get("/v1/s/log/tile/0/000", accept)))
        #expect(tile.header("content-encoding") == nil, "random hashes do not shrink")
        #expect(tile.header("vary") == "Accept-Encoding")
        let sameBytes = tile.body == hashes
        #expect(sameBytes)
        let manifest = try #require(client.request(get("/v1/s/manifest.json", accept)))
        #expect(manifest.header("content-encoding") == nil, "the SDKs refuse a coded document")
        #expect(manifest.header("vary") == nil)
    }

    /// curl, decoding with its own zlib, gets the bundle's bytes from `pinion serve`.
    @Test func curlDecodesWhatServeSends() throws {
        let tree = try TestTree()
        try FileManager.default.createDirectory(
            atPath: tree.directory + "/v1/s/log/tile/entries", withIntermediateDirectories: true)
        let bundle = Self.text(20_000)
        try Data(bundle).write(to: URL(fileURLWithPath: tree.directory + "/v1/s/log/tile/entries/000"))
        let server = try RunningPublisher(tree: tree)
        let result = try runProgram(
            "/usr/bin/curl",
            [
                "-sS", "--compressed", "-k", "-D", tree.directory + "/headers", "-o", tree.directory + "/body",
                "https://127.0.0.1:\(server.port)/v1/s/log/tile/entries/000",
            ])
        #expect(result.status == 0, "\(result.err)")
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: tree.directory + "/body"))) == bundle)
        let headers = try String(contentsOfFile: tree.directory + "/headers", encoding: .utf8).lowercased()
        #expect(headers.contains("content-encoding: gzip"))
    }
}
