// `pinion serve` as HTTP clients and CDNs expect it: ALPN refusal for h2-only clients,
// absolute-form targets, Last-Modified and If-Modified-Since, 304s without Content-Type,
// the JSON error bodies shared with nginx, and --cors.

import Foundation
import PinionCore
import PinionPublisher
import PinionTestSupport
import Testing

@Suite struct ServeHTTPFeaturesTests {
    /// The tree's manifest.json modification time, in whole seconds.
    func modified(_ tree: TestTree, _ name: String) throws -> Int64 {
        let date = try FileManager.default.attributesOfItem(atPath: tree.directory + "/" + name)[.modificationDate]
        return Int64((date as? Date)?.timeIntervalSince1970.rounded(.down) ?? -1)
    }

    @Test func filesCarryLastModifiedAndIfModifiedSinceGives304WithoutContentType() throws {
        let server = try RunningPublisher()
        let path = "/v1/s/manifest.json"
        let first = try #require(try RawTLSClient(port: server.port).request(get(path)))
        #expect(first.status == 200)
        let lastModified = try #require(first.header("last-modified"))
        #expect(lastModified == HTTPDateText.format(try modified(server.tree, "v1/s/manifest.json")))
        #expect(first.header("content-type") == "application/json")

        let same = try #require(
            try RawTLSClient(port: server.port).request(get(path, "If-Modified-Since: \(lastModified)\r\n")))
        #expect(same.status == 304)
        #expect(same.body.isEmpty)
        #expect(same.header("content-type") == nil)
        #expect(same.header("etag") == first.header("etag"))
        #expect(same.header("last-modified") == lastModified)
        #expect(same.header("cache-control") == "no-cache")

        let later = HTTPDateText.format(try modified(server.tree, "v1/s/manifest.json") + 3600)
        let newer = try #require(
            try RawTLSClient(port: server.port).request(get(path, "If-Modified-Since: \(later)\r\n")))
        #expect(newer.status == 304)

        let earlier = HTTPDateText.format(try modified(server.tree, "v1/s/manifest.json") - 1)
        let older = try #require(
            try RawTLSClient(port: server.port).request(get(path, "If-Modified-Since: \(earlier)\r\n")))
        #expect(older.status == 200)
        #expect(!older.body.isEmpty)

        // If-None-Match wins over the date (RFC 9110 §13.1.3): a non-matching tag is a 200.
        let both = try #require(
            try RawTLSClient(port: server.port).request(
                get(path, "If-None-Match: \"other\"\r\nIf-Modified-Since: \(lastModified)\r\n")))
        #expect(both.status == 200)

        // The ETag 304 carries no Content-Type either.
        let etag = try #require(first.header("etag"))
        let tagged = try #require(try RawTLSClient(port: server.port).request(get(path, "If-None-Match: \(etag)\r\n")))
        #expect(tagged.status == 304)
        #expect(tagged.header("content-type") == nil)
    }

    @Test(arguments: [
        "yesterday", "Sun, 06 Nov 1994 08:49:37 UTC", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
        "Mon, 31 Feb 2099 00:00:00 GMT", "Sun, 06 Nov 1994 25:49:37 GMT",
    ])
    func invalidDatesAreIgnored(date: String) throws {
        let server = try RunningPublisher()
        let response = try #require(
            try RawTLSClient(port: server.port).request(get("/v1/s/manifest.json", "If-Modified-Since: \(date)\r\n")))
        #expect(response.status == 200, "\(date)")
    }

    @Test func twoIfModifiedSinceFieldsAreIgnored() throws {
        let server = try RunningPublisher()
        let future = HTTPDateText.format(4_102_444_800)  // 2100
        let response = try #require(
            try RawTLSClient(port: server.port).request(
                get("/v1/s/manifest.json", "If-Modified-Since: \(future)\r\nIf-Modified-Since: \(future)\r\n")))
        #expect(response.status == 200)
    }

    @Test func absoluteFormTargetsAreServed() throws {
        let server = try RunningPublisher()
        for target in ["https://pins.example.com/v1/s/manifest.json", "HTTP://127.0.0.1:443/v1/s/manifest.json?x=1"] {
            let response = try #require(
                try RawTLSClient(port: server.port).request("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
            #expect(response.status == 200, "\(target)")
            #expect(String(decoding: response.body, as: UTF8.self) == "{\"version\":2}")
        }
        let missing = try #require(
            try RawTLSClient(port: server.port).request("GET https://a/v1/s/.hidden HTTP/1.1\r\nHost: a\r\n\r\n"))
        #expect(missing.status == 404)
    }

    @Test func errorsAreTheDocumentedJSONShape() throws {
        let server = try RunningPublisher()
        let notFound = try #require(try RawTLSClient(port: server.port).request(get("/v1/s/root/9.json")))
        #expect(notFound.status == 404)
        #expect(String(decoding: notFound.body, as: UTF8.self) == "{\"error\": \"not found\"}\n")
        #expect(notFound.header("content-type") == "application/json")
        #expect(notFound.header("cache-control") == "no-store")
        let posted = try #require(
            try RawTLSClient(port: server.port).request(
                "POST /v1/s/manifest.json HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"))
        #expect(posted.status == 405)
        #expect(String(decoding: posted.body, as: UTF8.self) == "{\"error\": \"method not allowed\"}\n")
        #expect(posted.header("allow") == "GET, HEAD")
        #expect(posted.header("content-type") == "application/json")
        let bad = try #require(try RawTLSClient(port: server.port).request("GET / HTTP/1.1\r\n\r\n"))
        #expect(bad.status == 400)
        #expect(String(decoding: bad.body, as: UTF8.self) == "{\"error\": \"bad request\"}\n")
        // The same bytes as deploy/nginx/pinion.conf's (NginxPublisherTests compares them there).
        #expect(PublisherErrorBody.text(404) == "{\"error\": \"not found\"}\n")
        #expect(PublisherErrorBody.text(405) == "{\"error\": \"method not allowed\"}\n")
        // No CORS header unless asked for.
        #expect(notFound.header("access-control-allow-origin") == nil)
    }

    @Test func corsAddsAllowOriginToGetHeadAnd404() throws {
        let server = try RunningPublisher(configure: { $0.cors = true })
        let file = try #require(try RawTLSClient(port: server.port).request(get("/v1/s/root/1.json")))
        #expect(file.status == 200)
        #expect(file.header("access-control-allow-origin") == "*")
        let missing = try #require(try RawTLSClient(port: server.port).request(get("/v1/s/root/2.json")))
        #expect(missing.status == 404)
        #expect(missing.header("access-control-allow-origin") == "*")
        let etag = try #require(file.header("etag"))
        let revalidated = try #require(
            try RawTLSClient(port: server.port).request(get("/v1/s/root/1.json", "If-None-Match: \(etag)\r\n")))
        #expect(revalidated.status == 304)
        #expect(revalidated.header("access-control-allow-origin") == "*")
        let head = try #require(
            try RawTLSClient(port: server.port).request(
                "HEAD /v1/s/root/1.json HTTP/1.1\r\nHost: a\r\n\r\n", bodiless: true))
        #expect(head.header("access-control-allow-origin") == "*")
    }

    @Test func anH2OnlyClientGetsNoApplicationProtocol() throws {
        let server = try RunningPublisher()
        let refused = try runProgram(
            "/usr/bin/openssl",
            ["s_client", "-connect", "127.0.0.1:\(server.port)", "-alpn", "h2", "-brief"], stdin: [],
            mergeStandardError: true)
        #expect(refused.status != 0)
        #expect(refused.out.contains("no application protocol"), "\(refused.out)")
        // http/1.1 (alone, or after h2) is selected.
        for offer in ["http/1.1", "h2,http/1.1"] {
            let accepted = try runProgram(
                "/usr/bin/openssl",
                ["s_client", "-connect", "127.0.0.1:\(server.port)", "-alpn", offer], stdin: [],
                mergeStandardError: true)
            #expect(accepted.out.contains("ALPN protocol: http/1.1"), "\(offer): \(accepted.out)")
        }
        // No ALPN at all still works (curl --no-alpn, older clients).
        let plain = try #require(try RawTLSClient(port: server.port).request(get("/healthz")))
        #expect(plain.status == 200)
    }
}

/// IMF-fixdate of seconds since 1970, computed independently of the server's formatter.
enum HTTPDateText {
    static func format(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}
