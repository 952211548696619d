// Fuzz target 8: the SDK's HTTP/1.1 response parser and chunked decoder (PinionTrust's
// HTTPResponseParser), over a response as a server might send it.
//
// Properties: after the end of the stream the parser always gives a verdict (never asks
// for more); delivery in pieces gives the same verdict and the same body as delivery in
// one piece, as TCP and TLS records may split it; an accepted body is within the limit, a
// Content-Length body has exactly that length, and a chunked body is never longer than the
// chunk data sent; a refusal with close_notify stays a refusal without it.

import PinionTrust

/// The SDK's defaults (with a 64 KiB body), and tiny limits so short inputs reach every check.
private let limitSets = [
    HTTPResponseParser.Limits(maxBodyBytes: 65536),
    HTTPResponseParser.Limits(
        maxBodyBytes: 8, maxHeaderBytes: 40, maxHeaderCount: 2, maxInterimResponses: 1, maxChunkLineBytes: 4),
]

/// A verdict: the status, field names and body, or the refusal.
private struct Verdict: Equatable {
    var status = 0
    var fieldNames: [String] = []
    var body: [UInt8] = []
    var error: HTTPResponseParseError?
}

/// Parses `bytes` delivered in pieces of `piece` bytes, then ends the stream.
private func parse(_ bytes: [UInt8], piece: Int, closeNotify: Bool, limits: HTTPResponseParser.Limits) -> (
    Verdict, HTTPResponseHead?
) {
    var parser = HTTPResponseParser(limits: limits)
    var offset = 0
    var head: HTTPResponseHead?
    var ended = false
    do throws(HTTPResponseParseError) {
        while true {
            if head == nil { head = try parser.head() }
            if let head, let body = try parser.body(for: head) {
                return (Verdict(status: head.status, fieldNames: head.fields.map(\.0), body: body), head)
            }
            expect(!ended, "the parser asked for more bytes after the end of the stream")
            if offset < bytes.count {
                let end = min(bytes.count, offset + piece)
                parser.append(bytes[offset..<end])
                offset = end
            } else {
                parser.endOfStream(closeNotify: closeNotify)
                ended = true
            }
        }
    } catch {
        return (Verdict(error: error), head)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPResponse(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    // The first byte picks the piece size of the split delivery (1 to 16 bytes).
    let piece = Int((bytes.first ?? 0) % 16) + 1
    for limits in limitSets {
        let (whole, head) = parse(bytes, piece: Int.max, closeNotify: true, limits: limits)
        let (pieces, _) = parse(bytes, piece: piece, closeNotify: true, limits: limits)
        expect(whole == pieces, "verdict differs in \(piece)-byte pieces: \(whole) vs \(pieces)")
        let (unconfirmed, _) = parse(bytes, piece: Int.max, closeNotify: false, limits: limits)
        if whole.error != nil { expect(unconfirmed.error != nil, "accepted only without close_notify") }
        guard whole.error == nil, let head else { continue }
        expect(whole.body.count <= limits.maxBodyBytes, "body of \(whole.body.count) bytes over the limit")
        expect(whole.body.count <= bytes.count, "body longer than the input")
        expect((100...599).contains(head.status) && head.status >= 200, "final status \(head.status)")
        if head.status != 204, head.status != 304, case .length(let length)? = try? head.framing() {
            expect(whole.body.count == length, "Content-Length \(length) but \(whole.body.count) body bytes")
        }
        for (name, value) in head.fields {
            expect(!name.isEmpty && name.utf8.allSatisfy(HTTPSyntax.isTokenByte), "field name \(name)")
            expect(name == name.lowercased(), "field name \(name) not lowercased")
            expect(
                value.unicodeScalars.allSatisfy {
                    $0.value < 0x100 && HTTPSyntax.isFieldValueByte(UInt8($0.value))
                },
                "field value with a control character")
        }
    }
    return 0
}
