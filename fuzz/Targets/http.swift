// Fuzz target 4: the request-head parser of `pinion serve` (PinionSystem's HTTPRequestParser), the path
// rules (PublishedPath), If-None-Match matching and the access log's escaping, over a
// buffer of pipelined requests as a worker sees it.
//
// Properties: each complete head consumes bytes within the buffer; a refusal is final
// (a prefix of the buffer that is refused is not completed by more bytes, and a
// complete head is never refused or completed early when it arrives in pieces, as TCP
// may deliver it); an accepted path has only the tree's characters, no dot component,
// and is exactly the request path.

@testable import PinionCore
@testable import PinionPublisher
@testable import PinionSystem

/// The server's defaults, and tiny limits so that short inputs reach every limit check.
private let limitSets = [
    HTTPRequestLimits(),
    HTTPRequestLimits(maxRequestLineBytes: 24, maxHeaderBytes: 40, maxHeaderCount: 2),
]
private let etag = "\"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\""

private func outcome(_ buffer: ArraySlice<UInt8>, _ limits: HTTPRequestLimits) -> Result<
    HTTPParseResult, HTTPRequestError
> {
    do throws(HTTPRequestError) {
        return .success(try HTTPRequestParser.parse(buffer, limits: limits))
    } catch {
        return .failure(error)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    for limits in limitSets {
        var buffer = bytes[...]
        var requests = 0
        while !buffer.isEmpty, requests < 64 {
            let result = outcome(buffer, limits)
            checkFragments(buffer, result, limits)
            guard case .success(.complete(let head, let consumed)) = result else { break }
            expect(consumed > 0 && consumed <= buffer.count, "consumed \(consumed) of \(buffer.count) bytes")
            respond(to: head)
            buffer = buffer.dropFirst(consumed)
            requests += 1
        }
    }
    return 0
}

/// The same buffer delivered in pieces must give the same verdict.
private func checkFragments(
    _ buffer: ArraySlice<UInt8>, _ whole: Result<HTTPParseResult, HTTPRequestError>, _ limits: HTTPRequestLimits
) {
    let count = buffer.count
    var cuts = Set([count - 1, count / 2, 1])
    if case .success(.complete(_, let consumed)) = whole { cuts.formUnion([consumed - 1, consumed - 2]) }
    for cut in cuts where cut > 0 && cut < count {
        let prefix = buffer.prefix(cut)
        switch (outcome(prefix, limits), whole) {
        case (.failure(let early), .success(let late)):
            expect(false, "the first \(cut) bytes are refused (\(early)) but all \(count) give \(late)")
        case (.success(.complete(let head, let consumed)), .success(.complete(let fullHead, let fullConsumed))):
            expect(
                head == fullHead && consumed == fullConsumed,
                "the first \(cut) bytes complete a different head than all \(count)")
        case (.success(.complete), _):
            expect(false, "the first \(cut) bytes complete a head that all \(count) do not")
        default:
            break
        }
    }
}

/// What a worker does with a head before touching the file system.
private func respond(to head: HTTPRequestHead) {
    // Origin form, or absolute form (RFC 9112 §3.2.2) whose path follows the authority.
    let scheme = head.target.prefix(8).lowercased()
    let absolute = scheme.hasPrefix("http://") || scheme.hasPrefix("https://")
    expect(head.target.hasPrefix("/") || absolute, "target \(head.target) accepted")
    expect(head.path.hasPrefix("/"), "path \(head.path) does not start with /")
    if !absolute { expect(head.target.hasPrefix(head.path), "path is not a prefix of the target") }
    _ = TerminalText.escape(head.method.name)
    _ = TerminalText.escape(head.path)
    if let condition = head.header("if-none-match") {
        _ = ifNoneMatchMatches(condition, etag: etag)
    }
    guard let path = PublishedPath(head.path) else { return }
    expect(path.components.first == "v1", "path \(head.path) accepted outside v1/")
    expect("/" + path.components.joined(separator: "/") == head.path, "path \(head.path) rewritten")
    for component in path.components {
        expect(!component.isEmpty && !component.hasPrefix("."), "component \(component) accepted")
        expect(
            component.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }, "component \(component) has a byte outside the tree's alphabet")
    }
    _ = path.cacheControl
}
