// The request-head parser of `pinion serve`: what it accepts, and every malformed or
// oversized form it refuses with the right status (RFC 9112).

import PinionPublisher
import PinionSystem
import Testing

struct HTTPRequestParserTests {
    private func parse(_ text: String, limits: HTTPRequestLimits = HTTPRequestLimits()) throws(HTTPRequestError)
        -> HTTPParseResult
    {
        try HTTPRequestParser.parse(Array(text.utf8)[...], limits: limits)
    }

    private func refusal(_ text: String, limits: HTTPRequestLimits = HTTPRequestLimits()) -> HTTPRequestError? {
        do {
            _ = try parse(text, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    @Test func parsesGetWithQueryAndHeaders() throws {
        let text = "GET /v1/s/manifest.json?x=1 HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"ab\"\r\n\r\nGET"
        guard case .complete(let head, let consumed) = try parse(text) else {
            Issue.record("incomplete")
            return
        }
        #expect(head.method == .get)
        #expect(head.path == "/v1/s/manifest.json")
        #expect(head.target == "/v1/s/manifest.json?x=1")
        #expect(head.header("if-none-match") == "\"ab\"")
        #expect(head.minorVersion == 1)
        #expect(!head.wantsClose)
        #expect(consumed == text.utf8.count - 3)
    }

    @Test func incompleteHeadWaitsForMore() throws {
        #expect(try parse("GET / HTTP/1.1\r\nHost: a\r\n") == .incomplete)
        #expect(try parse("GET / HTTP/1.1\r") == .incomplete)
        #expect(try parse("GE") == .incomplete)
    }

    @Test func connectionSemanticsPerVersion() throws {
        guard case .complete(let old, _) = try parse("HEAD / HTTP/1.0\r\n\r\n"),
            case .complete(let oldKeep, _) = try parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"),
            case .complete(let closing, _) = try parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: te, close\r\n\r\n")
        else {
            Issue.record("incomplete")
            return
        }
        #expect(old.method == .head && old.wantsClose)
        #expect(!oldKeep.wantsClose)
        #expect(closing.wantsClose)
    }

    @Test func ignoresLeadingEmptyLines() throws {
        guard case .complete(let head, _) = try parse("\r\n\r\nGET /healthz HTTP/1.1\r\nHost: a\r\n\r\n") else {
            Issue.record("incomplete")
            return
        }
        #expect(head.path == "/healthz")
    }

    @Test func otherMethodsAreParsedForA405() throws {
        guard case .complete(let head, _) = try parse("DELETE /x HTTP/1.1\r\nHost: a\r\n\r\n") else {
            Issue.record("incomplete")
            return
        }
        #expect(head.method == .other("DELETE"))
    }

    @Test func requestLineLongerThanLimitIs414() {
        let long = "GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: a\r\n\r\n"
        #expect(refusal(long) == .requestLineTooLong)
        // Refused before the line ends: a dribbling client cannot make the server buffer more.
        #expect(refusal("GET /" + String(repeating: "a", count: 8200)) == .requestLineTooLong)
        #expect(HTTPRequestError.requestLineTooLong.status == 414)
    }

    @Test func headerSectionLargerThanLimitIs431() {
        let big = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + String(repeating: "b", count: 9000) + "\r\n\r\n"
        #expect(refusal(big) == .headersTooLarge)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "b", count: 8300)) == .headersTooLarge)
        #expect(HTTPRequestError.headersTooLarge.status == 431)
    }

    @Test func moreThanTheHeaderCountIs431() throws {
        var text = "GET / HTTP/1.1\r\nHost: a\r\n"
        for index in 0..<99 { text += "X-\(index): v\r\n" }
        guard case .complete = try parse(text + "\r\n") else {
            Issue.record("100 fields must be accepted")
            return
        }
        #expect(refusal(text + "X-Last: v\r\n\r\n") == .headersTooLarge)
    }

    @Test func unsupportedVersionsAre505() {
        #expect(refusal("GET / HTTP/2.0\r\n\r\n") == .unsupportedVersion)
        #expect(refusal("GET / HTTP/0.9\r\n\r\n") == .unsupportedVersion)
        #expect(HTTPRequestError.unsupportedVersion.status == 505)
    }

    @Test(arguments: [
        "GET / HTTP/1.1\r\n\r\n",  // no Host
        "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",  // two Hosts
        "GET / HTTP/1.1\nHost: a\n\n",  // bare LF
        "GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n",  // bare CR
        "GET /\0 HTTP/1.1\r\nHost: a\r\n\r\n",  // NUL in the target
        "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n",  // space in the target
        "GET  / HTTP/1.1\r\nHost: a\r\n\r\n",  // two spaces
        "GET ftp://a/ HTTP/1.1\r\nHost: a\r\n\r\n",  // absolute form of another scheme
        "GET https:///v1/x HTTP/1.1\r\nHost: a\r\n\r\n",  // absolute form without a host
        "GET https://user@a/ HTTP/1.1\r\nHost: a\r\n\r\n",  // userinfo
        "GET a:443 HTTP/1.1\r\nHost: a\r\n\r\n",  // authority form
        "GET * HTTP/1.1\r\nHost: a\r\n\r\n",  // asterisk form
        "G(T / HTTP/1.1\r\nHost: a\r\n\r\n",  // method not a token
        "GET / HTTP/1.1\r\nHost : a\r\n\r\n",  // space before the colon
        "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",  // obsolete line folding
        "GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nX: a\u{1}b\r\n\r\n",  // control in a value
        "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",  // a body
        "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",  // smuggling vector
        "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 1\r\n\r\n",
        "GET / FTP/1.1\r\nHost: a\r\n\r\n",
        "GET / HTTP/1.1 extra\r\nHost: a\r\n\r\n",
        "\u{16}\u{3}\u{1}\0\u{5}garbage\r\n\r\n",  // TLS bytes where a request should be
    ])
    func malformedHeadsAre400(_ text: String) {
        let error = refusal(text)
        #expect(error?.status == 400, "\(text.debugDescription) gave \(String(describing: error))")
    }

    @Test func zeroContentLengthIsNotABody() throws {
        guard case .complete(let head, _) = try parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")
        else {
            Issue.record("incomplete")
            return
        }
        #expect(head.header("content-length") == "0")
    }
}
