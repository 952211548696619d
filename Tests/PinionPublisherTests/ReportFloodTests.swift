// A flood of junk reports through `pinion serve --reports` behind a trusted proxy: many
// addresses of one IPv6 /64 share one quota, many IPv4 /24s fill the store to its cap, and a
// genuine report afterwards is still accepted and shown by `pinion reports`.

import Foundation
import PinionCore
import PinionSystem
import PinionTestSupport
import Testing

@testable import PinionPublisher

@Suite(.serialized) struct ReportFloodTests {
    /// One POST with the proxy's X-Forwarded-For, on a kept-alive connection.
    private func post(_ client: RawTLSClient, scope: String, body: String, forwardedFor: String) -> Int {
        let request =
            "POST /v1/\(scope)/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "X-Forwarded-For: \(forwardedFor)\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        return client.request(request, timeout: 30)?.status ?? -1
    }

    @Test func aFloodFromManyAddressesDoesNotShutOutAGenuineReport() throws {
        let cap: Int64 = 1 << 20
        let collector = try ReportCollectionTests.Collector {
            $0.trustedProxies = try IPRange.list(["127.0.0.0/8,::1"])
            $0.rateBurst = 4
            $0.ratePerMinute = 1
            $0.storeLimits.maxBytes = cap
        }
        let chain = try reportCertificates()
        let scope = collector.tree.scope
        let client = try RawTLSClient(port: collector.publisher.port)

        // 200 addresses of one /64: one quota between them.
        var fromOneNetwork: [Int] = []
        for index in 0..<200 {
            let body = reportBody(chain: [chain.first], appVersion: "v6-\(index)")
            fromOneNetwork.append(
                post(client, scope: scope, body: body, forwardedFor: "2001:db8:bad:1::\(String(index + 1, radix: 16))"))
        }
        #expect(fromOneNetwork.prefix(4).allSatisfy { $0 == 204 })
        #expect(fromOneNetwork.dropFirst(4).allSatisfy { $0 == 429 }, "\(Set(fromOneNetwork))")

        // 150 /24s, four distinct junk reports each (their whole quota): several times the cap.
        var junk = 0
        for network in 0..<150 {
            for host in 1...4 {
                let body = reportBody(chain: [chain.first], appVersion: "junk-\(network)-\(host)")
                let status = post(
                    client, scope: scope, body: body, forwardedFor: "198.18.\(network).\(host)")
                #expect(status == 204, "198.18.\(network).\(host): \(status)")
                junk += 1
            }
        }
        let metrics = try #require(collector.publisher.metrics)
        #expect(metrics.reportsEvicted.value > 0, "the flood reached the cap")

        // The genuine report, another key from another network.
        let genuine = post(
            client, scope: scope, body: reportBody(chain: [chain.second], appVersion: "7.0"),
            forwardedFor: "203.0.113.7")
        #expect(genuine == 204)
        #expect(try sqlite3(collector.database, "PRAGMA integrity_check") == ["ok"])
        #expect(
            try sqlite3(collector.database, "SELECT source FROM reports WHERE app_version = '7.0'")
                == ["203.0.113.0/24"])
        let files = [collector.database, collector.database + "-wal"].map { file in
            (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        }
        #expect(Int64(files.reduce(0, +)) <= cap)

        let secondPin = try opensslPin(ofCertificateFile: try ServerCredentials.shared().secondCertificate)
        let firstPin = try opensslPin(ofCertificateFile: try ServerCredentials.shared().certificate)
        let text = runPinion(["reports", collector.database, "--at", t0.adding(seconds: day).description])
        #expect(text.status == 0, "\(text.err)")
        #expect(text.out.contains("warning: reports are unauthenticated"), "\(text.out)")
        #expect(
            text.out.contains(
                "  1  \(scope)  api.example.com  pin-sha256=\"\(secondPin)\"  app 7.0  first \(t0.adding(seconds: day))  "
                    + "last \(t0.adding(seconds: day))  from 1 source network(s)"), "\(text.out)")
        // The flood's key: every report still counted, from 151 networks.
        #expect(
            text.out.contains("  \(junk + 4)  \(scope)  api.example.com  pin-sha256=\"\(firstPin)\""), "\(text.out)")
        #expect(text.out.contains("from 151 source network(s)"), "\(text.out)")
        #expect(text.out.contains("evicted (count kept)"), "\(text.out)")
        let json = runPinion(["reports", collector.database, "--at", t0.adding(seconds: day).description, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        let keys = try #require(object["refusedKeys"] as? [[String: Any]])
        #expect(keys.map { $0["sourcePrefixes"] as? Int } == [151, 1])
        #expect((object["warning"] as? String)?.contains("unauthenticated") == true)
    }
}
