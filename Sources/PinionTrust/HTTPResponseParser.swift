// Incremental HTTP/1.1 response parser with limits, and the chunked decoder (RFC 9112 §2-§7), pure.
//
// Written here rather than taken from a library: the SDK's transport needs one that
// refuses (obs-fold, bare CR, smuggling-prone framing) and bounds every size before
// allocating, with no networking or C underneath, and neither Foundation nor the Debian
// archive has an HTTP/1.1 response parser usable from Swift on bytes.

/// Reads one HTTP/1.1 response from bytes as they arrive: the final head (interim 1xx
/// heads skipped), then the body framed by chunked coding, Content-Length or the end of the
/// stream (RFC 9112 §6.3).
///
/// Feed received bytes with `append`, and `endOfStream(closeNotify:)` once the connection
/// has ended. `head()` and `body(for:)` return nil while more bytes are needed; after
/// `endOfStream` they never return nil (they throw instead), so a read loop always ends.
/// A refusal is final: after a call throws, the response is to be dropped. Line ends are CRLF or a lone LF (RFC 9112 §2.2); a CR anywhere
/// else is refused.
public struct HTTPResponseParser: Sendable {
    /// The sizes a response may reach.
    public struct Limits: Sendable, Equatable {
        /// Largest header block (status line, fields and the empty line), in bytes; also the
        /// limit of the chunked trailer section.
        public var maxHeaderBytes: Int
        /// Most header fields in one head (and, separately, in the trailer section).
        public var maxHeaderCount: Int
        /// Largest body in bytes (after removing chunked coding).
        public var maxBodyBytes: Int
        /// Interim (1xx) heads skipped at most before the final head.
        public var maxInterimResponses: Int
        /// Longest chunk size line (size, extensions), in bytes without its line end.
        public var maxChunkLineBytes: Int

        /// Creates limits; the defaults are those of the SDK's HTTPS client (8192-byte
        /// header block, 100 fields, 15 interim heads, 1024-byte chunk lines).
        ///
        /// - Parameter maxBodyBytes: body limit in bytes, at least 0.
        public init(
            maxBodyBytes: Int, maxHeaderBytes: Int = 8192, maxHeaderCount: Int = 100, maxInterimResponses: Int = 15,
            maxChunkLineBytes: Int = 1024
        ) {
            self.maxBodyBytes = maxBodyBytes
            self.maxHeaderBytes = maxHeaderBytes
            self.maxHeaderCount = maxHeaderCount
            self.maxInterimResponses = maxInterimResponses
            self.maxChunkLineBytes = maxChunkLineBytes
        }
    }

    /// Where the chunked decoder stands.
    private enum ChunkState: Sendable {
        case size
        case data(remaining: Int)
        case dataEnd
        case trailers(bytes: Int, count: Int)
    }

    /// The limits of this response.
    public let limits: Limits
    /// Received bytes; those before `start` are consumed.
    private var buffer: [UInt8] = []
    private var start = 0
    private var ended = false
    private var closeNotify = false
    private var interimHeads = 0
    private var chunkState = ChunkState.size
    private var chunkedBody: [UInt8] = []

    /// Creates a parser for one response.
    public init(limits: Limits) {
        self.limits = limits
    }

    /// Bytes received and not consumed yet.
    public var available: Int { buffer.count - start }

    /// Adds received bytes. Ignored after `endOfStream`.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        guard !ended else { return }
        if start > 65536, start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Marks the end of the stream; `closeNotify` says whether TLS ended with a
    /// close_notify alert (a plain end could be a truncation by an attacker). Only the
    /// first call counts.
    public mutating func endOfStream(closeNotify: Bool) {
        guard !ended else { return }
        ended = true
        self.closeNotify = closeNotify
    }

    // MARK: Head

    /// The final response head, skipping interim (1xx) heads; nil when more bytes are
    /// needed (never after `endOfStream`).
    ///
    /// - Throws: `.malformed` for a head `HTTPResponseHead(lines:maximumFields:)` refuses,
    ///   a header block over `maxHeaderBytes`, 101 Switching Protocols (never asked for),
    ///   more than `maxInterimResponses` interim heads, or a stream that ends inside a
    ///   head; `.closedBeforeResponse` when it ends before the first byte.
    public mutating func head() throws(HTTPResponseParseError) -> HTTPResponseHead? {
        while true {
            guard let end = headBlockEnd() else {
                guard available <= limits.maxHeaderBytes else {
                    throw .malformed("header block larger than \(limits.maxHeaderBytes) bytes")
                }
                guard ended else { return nil }
                throw available == 0 ? .closedBeforeResponse : .malformed("connection closed inside the header block")
            }
            guard end - start <= limits.maxHeaderBytes else {
                throw .malformed("header block larger than \(limits.maxHeaderBytes) bytes")
            }
            let lines = Self.lines(buffer[start..<end]).dropLast()
            let head = try HTTPResponseHead(lines: Array(lines), maximumFields: limits.maxHeaderCount)
            if head.status == 101 { throw .malformed("unexpected 101 Switching Protocols") }
            start = end
            if head.status >= 200 { return head }
            interimHeads += 1
            guard interimHeads <= limits.maxInterimResponses else {
                throw .malformed("too many interim (1xx) responses")
            }
        }
    }

    /// The index just past the empty line that ends the header block at `start`, if
    /// buffered: LF followed by (CR) LF, after at least one line.
    private func headBlockEnd() -> Int? {
        let scanLimit = min(buffer.count, start + limits.maxHeaderBytes + 2)
        var lineStart = start
        var index = start
        while index < scanLimit {
            if buffer[index] == 0x0a {
                let length = index - lineStart
                if lineStart > start, length == 0 || (length == 1 && buffer[lineStart] == 0x0d) {
                    return index + 1
                }
                lineStart = index + 1
            }
            index += 1
        }
        return nil
    }

    /// Splits at LF and strips one CR before each LF.
    private static func lines(_ block: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var result: [ArraySlice<UInt8>] = []
        var lineStart = block.startIndex
        for index in block.indices where block[index] == 0x0a {
            var end = index
            if end > lineStart, block[end - 1] == 0x0d { end -= 1 }
            result.append(block[lineStart..<end])
            lineStart = index + 1
        }
        return result
    }

    // MARK: Body

    /// The body of the response whose head `head()` returned, framed as the head says
    /// (none for 204 and 304); nil when more bytes are needed (never after `endOfStream`).
    /// Bytes after a Content-Length or chunked body are left unread.
    ///
    /// - Throws: `.bodyTooLarge` as soon as the body is known to exceed `maxBodyBytes`
    ///   (a declared Content-Length before any body byte); `.malformed` for the framing
    ///   `HTTPResponseHead.framing()` refuses, a bad chunk or trailer, or a stream that
    ///   ends inside the body; `.closedWithoutCloseNotify` for a body delimited by the end
    ///   of the stream that ended without close_notify.
    public mutating func body(for head: HTTPResponseHead) throws(HTTPResponseParseError) -> [UInt8]? {
        if head.status == 204 || head.status == 304 { return [] }
        let limit = limits.maxBodyBytes
        switch try head.framing() {
        case .chunked:
            return try chunked()
        case .length(let length):
            guard length <= limit else { throw .bodyTooLarge(limit: limit) }
            if available >= length {
                defer { start += length }
                return Array(buffer[start..<(start + length)])
            }
            guard ended else { return nil }
            throw .malformed("connection closed after \(available) of \(length) body bytes")
        case .untilClose:
            guard available <= limit else { throw .bodyTooLarge(limit: limit) }
            guard ended else { return nil }
            guard closeNotify else { throw .closedWithoutCloseNotify }
            defer { start = buffer.count }
            return Array(buffer[start...])
        }
    }

    /// RFC 9112 §7.1 chunked coding: chunk extensions checked and ignored, trailer fields
    /// checked like header fields and discarded.
    private mutating func chunked() throws(HTTPResponseParseError) -> [UInt8]? {
        let limit = limits.maxBodyBytes
        while true {
            switch chunkState {
            case .size:
                guard let line = try line(maximum: limits.maxChunkLineBytes, tooLong: "chunk size line too long") else {
                    return nil
                }
                let size = try Self.chunkSize(line)
                if size == 0 {
                    chunkState = .trailers(bytes: 0, count: 0)
                    continue
                }
                guard size <= limit - chunkedBody.count else { throw .bodyTooLarge(limit: limit) }
                chunkState = .data(remaining: size)
            case .data(let remaining):
                let take = min(remaining, available)
                chunkedBody.append(contentsOf: buffer[start..<(start + take)])
                start += take
                if take == remaining {
                    chunkState = .dataEnd
                    continue
                }
                chunkState = .data(remaining: remaining - take)
                guard ended else { return nil }
                throw .malformed("connection closed inside a chunk")
            case .dataEnd:
                guard let line = try line(maximum: 0, tooLong: "chunk data longer than its size") else { return nil }
                guard line.isEmpty else { throw .malformed("chunk data longer than its size") }
                chunkState = .size
            case .trailers(let bytes, let count):
                guard let line = try line(maximum: limits.maxHeaderBytes, tooLong: "trailer field too long") else {
                    return nil
                }
                if line.isEmpty {
                    defer { chunkedBody = [] }
                    return chunkedBody
                }
                let total = bytes + line.count + 2
                guard total <= limits.maxHeaderBytes, count + 1 <= limits.maxHeaderCount else {
                    throw .malformed("trailer section too large")
                }
                _ = try HTTPResponseHead.field(line)
                chunkState = .trailers(bytes: total, count: count + 1)
            }
        }
    }

    /// chunk-size [ BWS ";" chunk-ext ]: 1 to 15 hex digits, then optional white space and
    /// extensions without control characters other than tab.
    private static func chunkSize(_ line: ArraySlice<UInt8>) throws(HTTPResponseParseError) -> Int {
        let digits = line.prefix(while: HTTPResponseHead.isHexDigit)
        var rest = line[digits.endIndex...]
        while let first = rest.first, first == 0x20 || first == 0x09 { rest.removeFirst() }
        guard !digits.isEmpty, digits.count <= 15, rest.isEmpty || rest.first == 0x3b,
            rest.allSatisfy(HTTPSyntax.isFieldValueByte),
            let size = Int(String(decoding: digits, as: UTF8.self), radix: 16)
        else {
            throw .malformed("invalid chunk size line \"\(HTTPResponseHead.printable(line.prefix(64)))\"")
        }
        return size
    }

    /// The next line without its line end (LF, or CRLF), consumed; nil when no line end is
    /// buffered yet (never after `endOfStream`). At most `maximum` bytes before the line end.
    private mutating func line(maximum: Int, tooLong: String) throws(HTTPResponseParseError) -> ArraySlice<UInt8>? {
        let searchEnd = min(buffer.count, start + maximum + 2)
        guard let newline = buffer[start..<searchEnd].firstIndex(of: 0x0a) else {
            guard available <= maximum + 1 else { throw .malformed(tooLong) }
            guard ended else { return nil }
            throw .malformed("connection closed inside the chunked body")
        }
        var end = newline
        if end > start, buffer[end - 1] == 0x0d { end -= 1 }
        guard end - start <= maximum else { throw .malformed(tooLong) }
        let line = buffer[start..<end]
        start = newline + 1
        return line
    }
}
