// The gzip content coding (RFC 9110 §8.4.1.3, RFC 1952) through zlib, and the one check of a
// response body's Content-Encoding that every HTTPS reader of a tree or a witness applies.
// zlib is the library here, not our own inflater: decoding attacker-sent bytes is what a
// well-kept library is for. Pinion adds only the limit, enforced while inflating.

import CZlib
import Foundation
import PinionTrust

/// Why gzip data was refused.
public enum GzipError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The decoded data would exceed the reader's limit (bytes); inflating stopped there.
    case tooLarge(limit: Int)
    /// Not one well-formed gzip member: a bad header, a corrupt stream, a CRC-32 or length
    /// mismatch in the trailer, data cut short, or bytes after the member.
    case malformed(detail: String)

    public var description: String {
        switch self {
        case .tooLarge(let limit): "the gzip data decodes to more than \(limit) bytes"
        case .malformed(let detail): "malformed gzip data: \(detail)"
        }
    }
}

/// gzip encoding and capped decoding of one member (RFC 1952), as HTTP's `gzip` content
/// coding uses it.
public enum Gzip {
    /// The bytes inflated per step when decoding.
    private static let step = 64 * 1024

    /// Encodes `bytes` as one gzip member at the highest compression level. The output is a
    /// function of the input (the header's MTIME is 0), so an ETag over it is stable.
    ///
    /// - Parameter bytes: the data, any length.
    /// - Returns: the gzip member.
    public static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip wrapper rather than zlib's.
        let started = deflateInit2_(
            &stream, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size))
        precondition(started == Z_OK, "deflateInit2 failed (\(started)): out of memory")
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let status = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        // deflateBound is an upper bound, so one call with Z_FINISH always completes.
        precondition(status == Z_STREAM_END, "deflate did not finish within deflateBound (\(status))")
        output.removeLast(bound - Int(stream.total_out))
        return output
    }

    /// Decodes one gzip member, stopping as soon as the output would exceed `maxBytes`.
    ///
    /// - Parameters:
    ///   - bytes: the encoded data: exactly one gzip member, nothing after it.
    ///   - maxBytes: the largest decoded size accepted, in bytes (at least 0).
    /// - Returns: the decoded bytes, at most `maxBytes` of them.
    /// - Throws: `GzipError.tooLarge` past the limit, `.malformed` for anything but one
    ///   complete, valid member (the CRC-32 and length in the trailer are checked by zlib).
    public static func decode(_ bytes: [UInt8], maxBytes: Int) throws(GzipError) -> [UInt8] {
        guard bytes.count <= Int(UInt32.max) else { throw .malformed(detail: "more than 4 GiB of input") }
        let ceiling = maxBytes >= Int.max - 1 ? Int.max : max(maxBytes, 0) + 1
        var stream = z_stream()
        // windowBits 15 + 16: gzip only; a zlib or raw deflate stream is refused.
        let started = inflateInit2_(&stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard started == Z_OK else { throw .malformed(detail: "inflateInit2 failed (\(started))") }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(step, ceiling))
        let result: Result<Void, GzipError> = bytes.withUnsafeBufferPointer { input in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                let room = min(chunk.count, ceiling - output.count)
                let status = chunk.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(room)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                output.append(contentsOf: chunk[0..<(room - Int(stream.avail_out))])
                if output.count >= ceiling { return .failure(.tooLarge(limit: maxBytes)) }
                switch status {
                case Z_STREAM_END:
                    if stream.avail_in != 0 {
                        return .failure(.malformed(detail: "\(stream.avail_in) bytes after the gzip member"))
                    }
                    return .success(())
                case Z_OK:
                    continue
                case Z_BUF_ERROR where stream.avail_in == 0:
                    return .failure(.malformed(detail: "the data ends before the gzip member does"))
                default:
                    let message = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                    return .failure(.malformed(detail: message))
                }
            }
        }
        try result.get()
        return output
    }
}

/// Why a response body was refused for its content coding.
public enum ContentCodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A coding the reader did not ask for, or a list of codings (`gzip, gzip`).
    case unsupported(coding: String)
    /// A gzip body that failed to decode or decoded past the limit.
    case gzip(GzipError)

    public var description: String {
        switch self {
        case .unsupported(let coding): "unsupported Content-Encoding \"\(coding)\""
        case .gzip(let error): error.description
        }
    }
}

/// The body of an HTTPS response as a document: the one place that reads Content-Encoding
/// (RFC 9110 §8.4) for the auditor's tree reads, the witness client and the witness monitor.
public enum ResponseBody {
    /// The request field of a reader that accepts gzip (RFC 9110 §12.5.3).
    public static let acceptGzip = ("Accept-Encoding", "gzip")

    /// The decoded body of `response`.
    ///
    /// - Parameters:
    ///   - response: the answer; every Content-Encoding field counts (a list field, RFC 9110 §5.3).
    ///   - gzipAccepted: whether the request carried `acceptGzip`; without it only the identity
    ///     coding (or none) is accepted.
    ///   - maxBytes: the largest decoded body, in bytes.
    /// - Returns: the body as sent, or gunzipped (at most `maxBytes` bytes).
    /// - Throws: `ContentCodingError`.
    public static func decode(_ response: HTTPSResponse, gzipAccepted: Bool, maxBytes: Int) throws(ContentCodingError)
        -> [UInt8]
    {
        let codings = response.headers.filter { $0.0 == "content-encoding" }.flatMap {
            $0.1.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        }.filter { !$0.isEmpty && $0 != "identity" }
        guard let coding = codings.first else { return response.body }
        guard codings.count == 1, gzipAccepted, coding == "gzip" || coding == "x-gzip" else {
            throw .unsupported(coding: codings.joined(separator: ", "))
        }
        do {
            return try Gzip.decode(response.body, maxBytes: maxBytes)
        } catch {
            throw .gzip(error)
        }
    }
}
