// The pieces of report intake on their own: POST bodies in the request parser, the rate
// limiter at explicit times, the client address rules, the report body rules, and
// pipelined POSTs on one kept-alive connection.

import Foundation
import PinionCore
import PinionSystem
import PinionTestSupport
import Testing

@testable import PinionPublisher

@Suite struct ReportRequestTests {
    private let bodies = HTTPRequestLimits(maxBodyBytes: 100)

    private func parse(_ text: String, _ limits: HTTPRequestLimits) throws(HTTPRequestError) -> HTTPRequestHead? {
        if case .complete(let head, _) = try HTTPRequestParser.parse(Array(text.utf8)[...], limits: limits) {
            return head
        }
        return nil
    }

    @Test func aPostBodyIsAcceptedOnlyWhenAllowedAndWithinTheLimit() throws {
        let post = "POST /v1/s/reports HTTP/1.1\r\nHost: a\r\nContent-Length: 42\r\n\r\n"
        #expect(try parse(post, bodies)?.contentLength == 42)
        #expect(throws: HTTPRequestError.malformed(reason: "a request body (Content-Length) is not accepted")) {
            try parse(post, HTTPRequestLimits())
        }
        #expect(throws: HTTPRequestError.bodyTooLarge) {
            try parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 101\r\n\r\n", bodies)
        }
        #expect(HTTPRequestError.bodyTooLarge.status == 413)
        #expect(throws: HTTPRequestError.self) {
            try parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n", bodies)
        }
        #expect(try parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", bodies)?.contentLength == 0)
    }

    @Test func refusesContentLengthsThatCouldSmuggleARequest() {
        for fields in [
            "Content-Length: 5\r\nContent-Length: 6", "Content-Length: +5", "Content-Length: 0x10",
            "Content-Length: 5, 5", "Content-Length: -1", "Content-Length: 5\r\nTransfer-Encoding: chunked",
            "Transfer-Encoding: chunked", "Content-Length: 99999999999999999999",
        ] {
            #expect(throws: HTTPRequestError.self, "\(fields)") {
                try parse("POST / HTTP/1.1\r\nHost: a\r\n\(fields)\r\n\r\n", bodies)
            }
        }
    }

    @Test func theRateLimitAllowsABurstThenRefillsPerMinute() {
        var limiter = ReportRateLimiter(burst: 3, perMinute: 6)
        for _ in 0..<3 { #expect(limiter.take("10.0.0.1", at: 100) == nil) }
        #expect(limiter.take("10.0.0.1", at: 100) == 10, "one token every 10 seconds")
        #expect(limiter.take("10.0.0.2", at: 100) == nil, "other addresses have their own bucket")
        #expect(limiter.take("10.0.0.1", at: 109) == 1)
        #expect(limiter.take("10.0.0.1", at: 110) == nil)
        #expect(limiter.take("10.0.0.1", at: 110) != nil)
        // A clock that steps back refills nothing and breaks nothing.
        #expect(limiter.take("10.0.0.1", at: 50) != nil)
    }

    @Test func theRateLimitRemembersABoundedNumberOfAddresses() {
        var limiter = ReportRateLimiter(burst: 1, perMinute: 60, maxAddresses: 2)
        #expect(limiter.take("a", at: 0) == nil)
        #expect(limiter.take("b", at: 0) == nil)
        #expect(limiter.take("c", at: 0) != nil, "full, and nobody has refilled: a new address waits")
        #expect(limiter.count == 2)
        #expect(limiter.take("c", at: 2) == nil, "refilled buckets are forgotten to make room")
        #expect(limiter.count <= 2)
    }

    @Test func theClientAddressIsThePeerUnlessTheTrustedProxySentIt() throws {
        #expect(
            try ReportClientAddress.resolve(peer: "127.0.0.1:5000", forwardedFor: ["1.2.3.4"], trustedProxies: [])
                == "127.0.0.1")
        #expect(try ReportClientAddress.resolve(peer: "[::1]:443", forwardedFor: [], trustedProxies: []) == "::1")
        #expect(
            try ReportClientAddress.resolve(
                peer: "10.1.1.1:80", forwardedFor: ["9.9.9.9, 8.8.8.8", "0:0::2"],
                trustedProxies: [try IPRange("10.1.1.1")]) == "::2")
        #expect(
            try ReportClientAddress.resolve(
                peer: "10.1.1.2:80", forwardedFor: ["8.8.8.8"], trustedProxies: [try IPRange("10.1.1.1")])
                == "10.1.1.2", "another peer's header is ignored")
        #expect(throws: ReportClientAddress.Refusal.self) {
            try ReportClientAddress.resolve(
                peer: "10.1.1.1:80", forwardedFor: ["8.8.8.8, unknown"], trustedProxies: [try IPRange("10.1.1.1")])
        }
        #expect(throws: ReportClientAddress.Refusal.self) {
            try ReportClientAddress.resolve(
                peer: "10.1.1.1:80", forwardedFor: [], trustedProxies: [try IPRange("10.1.1.1")])
        }
    }

    @Test func trustedProxyRangesAreParsedStrictly() throws {
        #expect(try IPRange("203.0.113.0/24").description == "203.0.113.0/24")
        #expect(try IPRange("2001:DB8::/32").description == "2001:db8::/32")
        #expect(try IPRange("192.0.2.1").prefixLength == 32)
        #expect(try IPRange("::1").prefixLength == 128)
        #expect(try IPRange("0.0.0.0/0").contains("8.8.8.8"))
        #expect(try IPRange.list(["10.0.0.0/8, 192.0.2.1", "2001:db8::/32"]).count == 3)
        for bad in [
            "", "10.0.0.1/8", "10.0.0.0/33", "10.0.0.0/08", "10.0.0.0/+8", "10.0.0.0/-1", "10.0.0.0/", "/8",
            "10.0.0.0/8/8", "10.0.0.0/ 8", "::/129", "2001:db8::1/32", "proxy.example.com", "10.0.0.0/1e1",
            "10.0.0.0/٨", "1.2.3", "10.0.0.0/0008",
        ] {
            #expect(throws: IPRange.ParseError.self, "\(bad)") { try IPRange(bad) }
        }
        #expect(throws: IPRange.ParseError.self) { try IPRange.list(["10.0.0.0/8,,192.0.2.1"]) }
        #expect(throws: IPRange.ParseError.self) { try IPRange.list(["10.0.0.0/8,"]) }
        let error = #expect(throws: IPRange.ParseError.self) { try IPRange("10.0.0.1/8") }
        #expect(error?.description.contains("did you mean 10.0.0.0/8?") == true)
    }

    @Test func aRangeHoldsItsAddressesAndTheirIPv4MappedForm() throws {
        let v4 = try IPRange("203.0.113.0/24")
        #expect(v4.contains("203.0.113.255"))
        #expect(v4.contains("::ffff:203.0.113.7"))
        #expect(!v4.contains("203.0.114.0"))
        #expect(!v4.contains("not an address"))
        let v6 = try IPRange("2001:db8:1::/48")
        #expect(v6.contains("2001:db8:1:ffff::1"))
        #expect(!v6.contains("2001:db8:2::1"))
        #expect(!v6.contains("203.0.113.7"))
        #expect(try IPRange("10.0.0.0/9").contains("10.127.255.255"))
        #expect(try !IPRange("10.0.0.0/9").contains("10.128.0.0"))
    }

    /// Behind a CDN edge and a load balancer, both trusted: the first untrusted entry from
    /// the right is the client; what the client wrote to the left of it is never read.
    @Test func theClientIsTheFirstUntrustedEntryFromTheRight() throws {
        let proxies = try IPRange.list(["10.0.0.0/8", "2001:db8:cd::/48"])
        #expect(
            try ReportClientAddress.resolve(
                peer: "10.1.1.1:443", forwardedFor: ["6.6.6.6, 198.51.100.7, 2001:db8:cd::9"],
                trustedProxies: proxies) == "198.51.100.7")
        #expect(
            try ReportClientAddress.resolve(
                peer: "[::ffff:10.2.2.2]:443", forwardedFor: ["198.51.100.8"], trustedProxies: proxies)
                == "198.51.100.8", "an IPv4 peer seen on a dual-stack socket")
        #expect(throws: ReportClientAddress.Refusal.self) {
            try ReportClientAddress.resolve(peer: "10.1.1.1:443", forwardedFor: ["10.9.9.9"], trustedProxies: proxies)
        }
        #expect(throws: ReportClientAddress.Refusal.self) {
            try ReportClientAddress.resolve(
                peer: "10.1.1.1:443", forwardedFor: ["198.51.100.7, , 10.3.3.3"], trustedProxies: proxies)
        }
        #expect(ReportClientAddress.sourcePrefix(of: "198.51.100.7") == "198.51.100.0/24")
        #expect(ReportClientAddress.sourcePrefix(of: "2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64")
    }

    @Test func theServedKeyIsTheValidatedLeafOrElseTheServedLeaf() throws {
        let chain = try reportCertificates()
        let credentials = try ServerCredentials.shared()
        let firstPin = try opensslPin(ofCertificateFile: credentials.certificate)
        let secondPin = try opensslPin(ofCertificateFile: credentials.secondCertificate)
        #expect(try ReceivedReport.parse(Array(reportBody(chain: [chain.first]).utf8)).servedPin == firstPin)
        let emptyValidated = try JSONRewrite.replacing(
            member: "validated-certificate-chain", with: "[]", in: reportBody(chain: [chain.second]))
        #expect(try ReceivedReport.parse(Array(emptyValidated.utf8)).servedPin == secondPin)
    }

    @Test func acceptsTrustKitMembersAndFractionalSecondsButNothingLoose() throws {
        let chain = try reportCertificates()
        let full = reportBody(
            chain: [chain.first],
            extra: #""app-bundle-id": "com.example.app", "app-platform": "IOS", "validation-result": 1"#
        ).replacingOccurrences(of: "2026-11-30T09:00:00Z", with: "2026-11-30T09:00:00.125Z")
        let report = try ReceivedReport.parse(Array(full.utf8))
        #expect(report.appBundleID == "com.example.app")
        #expect(report.appPlatform == "IOS")
        #expect(report.validationResult == 1)
        #expect(report.dateTime == t0)
        for (extra, member) in [
            (#""validation-result": 5000"#, "validation-result"), (#""validation-result": 1.5"#, "validation-result"),
            (#""app-platform": """#, "app-platform"), (#""app-bundle-id": 7"#, "app-bundle-id"),
        ] {
            #expect(throws: ReportBodyError.self, "\(member)") {
                try ReceivedReport.parse(Array(reportBody(chain: [chain.first], extra: extra).utf8))
            }
        }
        let offset = reportBody(chain: [chain.first]).replacingOccurrences(
            of: "2026-11-30T09:00:00Z", with: "2026-11-30T09:00:00+01:00")
        #expect(throws: ReportBodyError.self) { try ReceivedReport.parse(Array(offset.utf8)) }
    }

    @Test func pipelinedReportsOnOneConnectionAreAnsweredInOrder() throws {
        let tree = try EnvelopeTree(domains: reportDomains)
        let credentials = try ServerCredentials.shared()
        var configuration = PublisherConfiguration(
            repository: tree.directory, certificateChainFile: credentials.certificate, privateKeyFile: credentials.key,
            host: "127.0.0.1", port: 0)
        configuration.clock = fixedClock(t0.adding(seconds: day))
        configuration.reports = ReportSettings(
            databasePath: try makeTemporaryDirectory(prefix: "pinion-report-pipeline") + "/r.sqlite")
        let publisher = try HTTPSPublisher(configuration: configuration, accessLog: .disabled)
        publisher.start()
        defer { publisher.drain(timeout: 5) }
        let chain = try reportCertificates()
        var text = ""
        for host in ["a.api.example.com", "b.api.example.com"] {
            let body = reportBody(hostname: host, chain: [chain.first])
            text +=
                "POST /v1/\(tree.scope)/reports HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
        }
        text += get("/v1/\(tree.scope)/manifest.json")
        let client = try RawTLSClient(port: publisher.port)
        #expect(client.send(text))
        let (bytes, _) = client.receive(timeout: 20) { splitResponses($0, bodiless: [0, 1]).count >= 3 }
        #expect(splitResponses(bytes, bodiless: [0, 1]).map(\.status) == [204, 204, 200])
    }
}

/// Replaces one top-level member's value in a one-line JSON object written by `reportBody`.
enum JSONRewrite {
    struct Missing: Error {}

    static func replacing(member: String, with value: String, in text: String) throws -> String {
        guard let start = text.range(of: "\"\(member)\": ") else { throw Missing() }
        var depth = 0
        var index = start.upperBound
        var inString = false
        var escaped = false
        while index < text.endIndex {
            let character = text[index]
            if inString {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inString = false
                }
            } else if character == "\"" {
                inString = true
            } else if character == "[" || character == "{" {
                depth += 1
            } else if character == "]" || character == "}" {
                depth -= 1
                if depth == 0 {
                    return String(text[..<start.upperBound]) + value + String(text[text.index(after: index)...])
                }
            }
            index = text.index(after: index)
        }
        throw Missing()
    }
}

/// TrustKit's own report shape (TSKPinFailureReport's JSON: no served chain, a date-only
/// expiry, the vendor id and versions), which the collector accepts as well.
@Suite struct TrustKitReportTests {
    /// A report as TrustKit writes it, its PEM lines ending in CRLF as NSData's 64-character
    /// base64 does.
    private func trustKitBody(chain: String, extra: String = "") -> String {
        let pem = chain.replacingOccurrences(of: "\n", with: "\r\n").replacingOccurrences(of: "\r\n", with: "\\r\\n")
        return """
            {"app-bundle-id": "com.example.app", "app-version": "3.2", "app-platform": "IOS",
             "app-platform-version": "17.1", "app-vendor-id": "0F2B6F61-1D1B-4B7C-8F0A-2C9E4C1D2E3F",
             "trustkit-version": "3.0.3", "date-time": "2026-11-30T09:00:00Z", "hostname": "api.example.com",
             "port": 443, "noted-hostname": "api.example.com", "include-subdomains": false, "enforce-pinning": false,
             "validated-certificate-chain": ["\(pem)"], "known-pins": ["pin-sha256=\\"\(String(repeating: "A", count: 43))=\\""],
             "validation-result": 1, "known-pins-expiration-date": "2027-01-31"\(extra)}
            """
    }

    @Test func acceptsTrustKitsOwnReportAndDropsTheVendorID() throws {
        let chain = try reportCertificates()
        let report = try ReceivedReport.parse(Array(trustKitBody(chain: chain.first).utf8))
        #expect(report.servedPin == (try opensslPin(ofCertificateFile: try ServerCredentials.shared().certificate)))
        #expect(report.servedChain.isEmpty)
        #expect(report.appVersion == "3.2")
        #expect(report.appPlatform == "IOS")
        #expect(report.effectiveExpirationDate == (try Timestamp(rfc3339: "2027-01-31T00:00:00Z")))
        #expect(!"\(report)".contains("0F2B6F61"), "the vendor id is not kept")
    }

    @Test func refusesTrustKitReportsThatBreakItsShape() throws {
        let chain = try reportCertificates()
        let good = trustKitBody(chain: chain.first)
        for bad in [
            trustKitBody(chain: chain.first, extra: #", "served-certificate-chain": []"#),
            good.replacingOccurrences(of: "\"2027-01-31\"", with: "\"2027-01-31T00:00:00Z\""),
            good.replacingOccurrences(of: "\"enforce-pinning\": false", with: "\"enforce-pinning\": \"no\""),
            good.replacingOccurrences(of: "\"trustkit-version\": \"3.0.3\"", with: "\"trustkit-version\": 3"),
            good.replacingOccurrences(of: "\"known-pins\": [", with: "\"known-pins\": [1, "),
        ] {
            #expect(throws: ReportBodyError.self, "\(bad.suffix(120))") { try ReceivedReport.parse(Array(bad.utf8)) }
        }
        let noChain = try JSONRewrite.replacing(member: "validated-certificate-chain", with: "[]", in: good)
        #expect(throws: ReportBodyError.malformed("\"validated-certificate-chain\" is empty")) {
            try ReceivedReport.parse(Array(noChain.utf8))
        }
    }
}
