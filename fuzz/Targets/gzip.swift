// Fuzz target 10: the gzip reader (PinionSystem's Gzip.decode over zlib), over a response
// body as a server or a CDN edge might send it.
//
// Properties: decoding never gives more bytes than the limit; the limit is exact (an
// accepted body decodes again under a limit of its own length, and is refused under one
// byte less); what decodes re-encodes and decodes to the same bytes; our own encoding of
// any input decodes back to it.

import PinionSystem

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGzip(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    // A tiny limit reaches the limit check from short inputs; a large one every other check.
    for limit in [0, 1, 16, 1 << 20] {
        guard let decoded = try? Gzip.decode(bytes, maxBytes: limit) else { continue }
        expect(decoded.count <= limit, "\(decoded.count) bytes decoded under a limit of \(limit)")
        expect((try? Gzip.decode(bytes, maxBytes: decoded.count)) == decoded, "refused under its own length")
        if !decoded.isEmpty {
            expect((try? Gzip.decode(bytes, maxBytes: decoded.count - 1)) == nil, "accepted over the limit")
        }
        expect(
            (try? Gzip.decode(Gzip.encode(decoded), maxBytes: decoded.count)) == decoded,
            "a decoded body does not survive re-encoding")
    }
    expect((try? Gzip.decode(Gzip.encode(bytes), maxBytes: bytes.count)) == bytes, "own encoding lost bytes")
    return 0
}
