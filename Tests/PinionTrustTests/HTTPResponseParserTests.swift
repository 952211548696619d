// The HTTP/1.1 response parser and chunked decoder (PinionTrust, RFC 9112): what it accepts, and every refusal.

import PinionTrust
import Testing

@Suite struct HTTPResponseParserTests {
    /// The outcome of parsing `bytes` delivered in pieces of `piece` bytes, then the end
    /// of the stream (with or without close_notify).
    func parse(
        _ bytes: [UInt8], piece: Int = .max, closeNotify: Bool = true,
        limits: HTTPResponseParser.Limits = .init(maxBodyBytes: 1 << 20)
    ) -> Result<(HTTPResponseHead, [UInt8]), HTTPResponseParseError> {
        var parser = HTTPResponseParser(limits: limits)
        var offset = 0
        var head: HTTPResponseHead?
        do throws(HTTPResponseParseError) {
            while true {
                if head == nil { head = try parser.head() }
                if let head, let body = try parser.body(for: head) { return .success((head, body)) }
                if offset < bytes.count {
                    let end = min(bytes.count, offset + min(piece, bytes.count - offset))
                    parser.append(bytes[offset..<end])
                    offset = end
                } else {
                    parser.endOfStream(closeNotify: closeNotify)
                }
            }
        } catch {
            return .failure(error)
        }
    }

    func parse(_ text: String, piece: Int = .max, closeNotify: Bool = true, maxBody: Int = 1 << 20) -> Result<
        (HTTPResponseHead, [UInt8]), HTTPResponseParseError
    > {
        parse(Array(text.utf8), piece: piece, closeNotify: closeNotify, limits: .init(maxBodyBytes: maxBody))
    }

    /// The refusal of `text`, or nil when it was accepted.
    func refusal(_ text: String, closeNotify: Bool = true, maxBody: Int = 1 << 20) -> HTTPResponseParseError? {
        guard case .failure(let error) = parse(text, closeNotify: closeNotify, maxBody: maxBody) else { return nil }
        return error
    }

    func isMalformed(_ error: HTTPResponseParseError?) -> Bool {
        if case .malformed = error { return true }
        return false
    }

    @Test func contentLengthBodyIsReadWhateverThePieceSize() throws {
        let text =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\nETag: \"x\"\r\n\r\nhellotrailing"
        for piece in [1, 2, 3, 7, 64, Int.max] {
            let (head, body) = try parse(text, piece: piece).get()
            #expect(head.status == 200)
            #expect(head.minorVersion == 1)
            #expect(head.fields.map(\.0) == ["content-type", "content-length", "etag"])
            #expect(head.value("etag") == "\"x\"")
            #expect(body == Array("hello".utf8))
        }
    }

    @Test func chunkedBodyIsDecodedWithExtensionsAndTrailers() throws {
        let text =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "4;name=value\r\nWiki\r\n5 ; x\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-Trailer: 1\r\n\r\n"
        for piece in [1, 5, Int.max] {
            let (_, body) = try parse(text, piece: piece).get()
            #expect(String(decoding: body, as: UTF8.self) == "Wikipedia in\r\n\r\nchunks.")
        }
    }

    @Test func loneLFLineEndsAreAccepted() throws {
        let (head, body) = try parse("HTTP/1.1 404 Not Found\nContent-Length: 2\n\nno").get()
        #expect(head.status == 404)
        #expect(body == Array("no".utf8))
    }

    @Test func interimHeadsAreSkippedUpToTheLimit() throws {
        let interim = String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 15)
        let (head, body) = try parse(interim + "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx").get()
        #expect(head.status == 200)
        #expect(body == [0x78])
        let tooMany = String(repeating: "HTTP/1.1 103 Early Hints\r\n\r\n", count: 16) + "HTTP/1.1 200 OK\r\n\r\n"
        #expect(refusal(tooMany) == .malformed("too many interim (1xx) responses"))
        #expect(refusal("HTTP/1.1 101 Switching Protocols\r\n\r\n") == .malformed("unexpected 101 Switching Protocols"))
    }

    @Test func bodylessStatusesAndCloseDelimitedBodies() throws {
        #expect(try parse("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n").get().1 == [])
        #expect(try parse("HTTP/1.1 204 No Content\r\n\r\n", closeNotify: false).get().1 == [])
        #expect(try parse("HTTP/1.0 200 OK\r\n\r\nuntil close", piece: 3).get().1 == Array("until close".utf8))
        #expect(refusal("HTTP/1.1 200 OK\r\n\r\ncut", closeNotify: false) == .closedWithoutCloseNotify)
    }

    @Test func statusLinesOutsideRFC9112AreRefused() {
        for line in [
            "HTTP/1.2 200 OK", "HTTP/2 200 OK", "http/1.1 200 OK", "HTTP/1.1  200 OK", "HTTP/1.1 20 OK",
            "HTTP/1.1 2000 OK", "HTTP/1.1 099 Low", "HTTP/1.1 600 High", "HTTP/1.1 200\tOK", "HTTP/1.1 200 O\rK",
            "HTTP/1.1 200 OK\r", "HTTP/1.1 200 O\u{0}K", "HTTP/1.1 200 O\u{7f}K", " HTTP/1.1 200 OK", "ICY 200 OK",
        ] {
            #expect(isMalformed(refusal(line + "\r\nContent-Length: 0\r\n\r\n")), "\(line.debugDescription)")
        }
        // A missing reason phrase is tolerated.
        #expect(refusal("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n") == nil)
    }

    @Test func obsFoldBareCRAndBadFieldLinesAreRefused() throws {
        for field in [
            "X: a\r\n folded", "X: a\r\n\tfolded", "X : a", "X\t: a", "No colon here", ": empty name", "X(y): z",
            "X: a\rb", "X: a\u{0}b", "X: a\u{7f}", "X: a\u{1b}[31m", "Bad\u{80}Name: x",
        ] {
            #expect(
                isMalformed(refusal("HTTP/1.1 200 OK\r\n\(field)\r\nContent-Length: 0\r\n\r\n")),
                "\(field.debugDescription)")
        }
        // White space after the status line, before the first field, is a fold too.
        #expect(isMalformed(refusal("HTTP/1.1 200 OK\r\n X: a\r\n\r\n")))
        // A leading empty line is not a status line.
        #expect(isMalformed(refusal("\r\nHTTP/1.1 200 OK\r\n\r\n")))
    }

    @Test func obsTextValuesAreKeptAsLatin1() throws {
        let bytes = Array("HTTP/1.1 200 OK\r\nX: caf".utf8) + [0xe9] + Array("\r\nContent-Length: 0\r\n\r\n".utf8)
        let (head, _) = try parse(bytes).get()
        #expect(head.value("x") == "caf\u{e9}")
    }

    @Test func headLimitsAreEnforced() throws {
        let limits = HTTPResponseParser.Limits(maxBodyBytes: 100, maxHeaderBytes: 64, maxHeaderCount: 2)
        let fits = "HTTP/1.1 200 OK\r\nA: 1\r\nContent-Length: 0\r\n\r\n"
        #expect(throws: Never.self) { try parse(Array(fits.utf8), limits: limits).get() }
        let threeFields = "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nContent-Length: 0\r\n\r\n"
        #expect(parse(Array(threeFields.utf8), limits: limits).failure == .malformed("more than 2 header fields"))
        let long = "HTTP/1.1 200 OK\r\nA: \(String(repeating: "x", count: 60))\r\n\r\n"
        #expect(parse(Array(long.utf8), limits: limits).failure == .malformed("header block larger than 64 bytes"))
        // An endless head is refused once it passes the limit, without waiting for its end.
        var parser = HTTPResponseParser(limits: limits)
        parser.append(Array("HTTP/1.1 200 OK\r\nA: ".utf8) + [UInt8](repeating: 0x78, count: 100))
        #expect(throws: HTTPResponseParseError.malformed("header block larger than 64 bytes")) { try parser.head() }
    }

    @Test func framingThatInvitesSmugglingIsRefused() throws {
        for fields in [
            "Transfer-Encoding: chunked\r\nContent-Length: 3", "Transfer-Encoding: gzip, chunked",
            "Transfer-Encoding: chunked, chunked", "Transfer-Encoding: identity", "Content-Length: 3, 4",
            "Content-Length: 3\r\nContent-Length: 4", "Content-Length: -1", "Content-Length: +3",
            "Content-Length: 0x3", "Content-Length: 1234567890123456789", "Content-Length:", "Content-Length: 3 4",
        ] {
            #expect(isMalformed(refusal("HTTP/1.1 200 OK\r\n\(fields)\r\n\r\n0\r\n\r\n")), "\(fields.debugDescription)")
        }
        #expect(
            refusal("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
                == .malformed("Transfer-Encoding in an HTTP/1.0 response"))
        // Agreeing duplicates are one length.
        #expect(try parse("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nok").get().1.count == 2)
    }

    @Test func badChunksAreRefused() throws {
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        for chunks in [
            "g\r\n", "\r\n", "-1\r\n", " 3\r\nabc\r\n0\r\n\r\n", "3x\r\nabc\r\n0\r\n\r\n", "1000000000000000\r\nx",
            "3;\u{0}\r\nabc\r\n0\r\n\r\n", "3\rx\r\nabc\r\n0\r\n\r\n", "3\r\nabcd\r\n0\r\n\r\n",
            "3\r\nabc\r\r\n0\r\n\r\n",
            "3\r\nabc\r\n0\r\n folded\r\n\r\n", "3\r\nabc\r\n0\r\nNo colon\r\n\r\n",
        ] {
            #expect(isMalformed(refusal(head + chunks)), "\(chunks.debugDescription)")
        }
        let tooLong = head + String(repeating: "0", count: 1025) + "1\r\nx\r\n0\r\n\r\n"
        #expect(refusal(tooLong) == .malformed("chunk size line too long"))
    }

    @Test func streamsThatEndEarlyAreRefused() throws {
        #expect(refusal("") == .closedBeforeResponse)
        #expect(refusal("HTTP/1.1 200 OK\r\nContent-") == .malformed("connection closed inside the header block"))
        #expect(
            refusal("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort")
                == .malformed("connection closed after 5 of 10 body bytes"))
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(refusal(head + "a\r\nshort") == .malformed("connection closed inside a chunk"))
        #expect(refusal(head + "3\r\nabc\r\n") == .malformed("connection closed inside the chunked body"))
        #expect(refusal(head + "0\r\nX: 1\r\n") == .malformed("connection closed inside the chunked body"))
    }

    @Test func bodyLimitHoldsForEveryFraming() throws {
        #expect(refusal("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n", maxBody: 10) == .bodyTooLarge(limit: 10))
        #expect(refusal("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", maxBody: 10) == nil)
        let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n012345\r\n5\r\n67890\r\n0\r\n\r\n"
        #expect(refusal(chunked, maxBody: 10) == .bodyTooLarge(limit: 10))
        #expect(refusal(chunked, maxBody: 11) == nil)
        // A close-delimited body is refused as soon as it passes the limit, before the end.
        var parser = HTTPResponseParser(limits: .init(maxBodyBytes: 4))
        parser.append(Array("HTTP/1.0 200 OK\r\n\r\n12345".utf8))
        #expect(throws: HTTPResponseParseError.bodyTooLarge(limit: 4)) {
            let head = try #require(try parser.head())
            _ = try parser.body(for: head)
        }
    }

    @Test func trailerSectionIsLimited() throws {
        let limits = HTTPResponseParser.Limits(maxBodyBytes: 100, maxHeaderBytes: 100, maxHeaderCount: 2)
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
        let three = head + "A: 1\r\nB: 2\r\nC: 3\r\n\r\n"
        #expect(parse(Array(three.utf8), limits: limits).failure == .malformed("trailer section too large"))
        let two = head + "A: 1\r\nB: 2\r\n\r\n"
        #expect(throws: Never.self) { try parse(Array(two.utf8), limits: limits).get() }
    }

    @Test func theParserNeverWaitsAfterTheEndOfTheStream() throws {
        // Every prefix of a valid response, ended there, gives a verdict (no nil, no loop).
        let text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nT: 1\r\n\r\n"
        let bytes = Array(text.utf8)
        for cut in 0..<bytes.count {
            var parser = HTTPResponseParser(limits: .init(maxBodyBytes: 100))
            parser.append(bytes[0..<cut])
            parser.endOfStream(closeNotify: true)
            #expect(throws: HTTPResponseParseError.self) {
                let head = try parser.head()
                if let head { _ = try parser.body(for: head) }
            }
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
