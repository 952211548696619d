// The one PEM reader (RFC 7468): blocks, labels and strict base64, for SPKI and key files alike.

import COpenSSL
import CPinionShims
import PinionCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - PEM

/// One PEM block located in the input: label, BEGIN line, RFC 1421 headers and the byte
/// range of its base64 body.
struct PEMBlock {
    let label: String
    let line: Int
    let headers: [String]
    let body: Range<Int>
}

/// Finds PEM blocks (RFC 7468) and decodes their bodies into guarded memory.
enum PEMScanner {
    private static let begin = Array("-----BEGIN ".utf8)
    private static let end = Array("-----END ".utf8)
    private static let dashes = Array("-----".utf8)

    private enum Phase { case start, headers, body }

    private struct Open {
        let label: String
        let line: Int
        var phase: Phase = .start
        var headers: [String] = []
        var bodyStart: Int
    }

    static func blocks(in raw: UnsafeRawBufferPointer, source: String) throws -> [PEMBlock] {
        var blocks: [PEMBlock] = []
        var open: Open?
        // A UTF-8 byte order mark, as some Windows editors write, is not part of the text.
        var position = raw.starts(with: [0xef, 0xbb, 0xbf]) ? 3 : 0
        var lineNumber = 0
        while position < raw.count {
            let lineStart = position
            var lineEnd = lineStart
            while lineEnd < raw.count, raw[lineEnd] != 0x0a { lineEnd += 1 }
            position = min(lineEnd + 1, raw.count)
            lineNumber += 1
            var trimmedEnd = lineEnd
            while trimmedEnd > lineStart, SPKIReader.isSpace(raw[trimmedEnd - 1]) { trimmedEnd -= 1 }
            let line = UnsafeRawBufferPointer(rebasing: raw[lineStart..<trimmedEnd])

            guard var current = open else {
                if hasPrefix(line, begin) {
                    guard let label = label(of: line, prefix: begin) else {
                        throw SPKIError.malformedPEM(
                            file: source, label: printable(line), line: lineNumber, problem: .malformedBeginLine)
                    }
                    open = Open(label: label, line: lineNumber, bodyStart: position)
                }
                continue
            }
            if hasPrefix(line, end) {
                guard label(of: line, prefix: end) == current.label else {
                    throw SPKIError.malformedPEM(
                        file: source, label: current.label, line: current.line,
                        problem: .mismatchedEnd(found: printable(line)))
                }
                if current.phase == .headers {
                    throw SPKIError.malformedPEM(
                        file: source, label: current.label, line: current.line, problem: .unexpectedHeaders)
                }
                blocks.append(
                    PEMBlock(
                        label: current.label, line: current.line, headers: current.headers,
                        body: current.bodyStart..<lineStart))
                open = nil
                continue
            }
            if hasPrefix(line, begin) {
                throw SPKIError.malformedPEM(
                    file: source, label: current.label, line: current.line, problem: .beginInsideBlock)
            }
            switch current.phase {
            case .start:
                if line.contains(0x3a) {  // ':' never occurs in base64: an RFC 1421 header
                    current.phase = .headers
                    current.headers.append(printable(line))
                    current.bodyStart = position
                } else if !line.isEmpty {
                    current.phase = .body
                }
            case .headers:
                if line.isEmpty {
                    current.phase = .body
                } else if line[0] == 0x20 || line[0] == 0x09, let last = current.headers.popLast() {
                    current.headers.append(last + printable(line))
                } else if line.contains(0x3a) {
                    current.headers.append(printable(line))
                } else {
                    throw SPKIError.malformedPEM(
                        file: source, label: current.label, line: current.line, problem: .unexpectedHeaders)
                }
                current.bodyStart = position
            case .body:
                break
            }
            open = current
        }
        if let current = open {
            throw SPKIError.truncatedPEM(file: source, label: current.label, line: current.line)
        }
        return blocks
    }

    /// Decodes the base64 body of `block` into guarded memory (strict RFC 4648 §4:
    /// padded, alphabet only, white space between characters ignored).
    static func decodeBody(_ raw: UnsafeRawBufferPointer, block: PEMBlock, source: String) throws
        -> SecureBytes
    {
        let body = UnsafeRawBufferPointer(rebasing: raw[block.body])
        let output = try SecureBytes(capacity: body.count / 4 * 3 + 3)
        let written: Int? = output.withUnsafeMutableBytes { out in
            var accumulator: UInt32 = 0
            var digits = 0
            var padding = 0
            var finished = false
            var count = 0
            defer { accumulator = 0 }
            for byte in body {
                if SPKIReader.isSpace(byte) { continue }
                if finished { return nil }
                let value: UInt32
                if byte == 0x3d {  // '='
                    guard digits >= 2 else { return nil }
                    padding += 1
                    value = 0
                } else {
                    guard padding == 0, let decoded = SPKIEncoding.base64Value(byte) else { return nil }
                    value = decoded
                }
                accumulator = accumulator << 6 | value
                digits += 1
                if digits == 4 {
                    let bytes = 3 - padding
                    for index in 0..<bytes {
                        out[count + index] = UInt8(truncatingIfNeeded: accumulator >> (16 - 8 * index))
                    }
                    count += bytes
                    accumulator = 0
                    digits = 0
                    if padding > 0 { finished = true }
                }
            }
            return digits == 0 ? count : nil
        }
        guard let written else {
            throw SPKIError.invalidBase64(file: source, label: block.label, line: block.line)
        }
        guard written > 0 else {
            throw SPKIError.malformedPEM(
                file: source, label: block.label, line: block.line, problem: .emptyBody)
        }
        output.truncate(to: written)
        return output
    }

    static func hasPrefix(_ line: UnsafeRawBufferPointer, _ prefix: [UInt8]) -> Bool {
        line.count >= prefix.count && zip(line, prefix).allSatisfy { $0 == $1 }
    }

    /// The label of `-----BEGIN LABEL-----` / `-----END LABEL-----`: printable ASCII,
    /// non-empty, without leading or trailing '-' or space.
    static func label(of line: UnsafeRawBufferPointer, prefix: [UInt8]) -> String? {
        guard line.count >= prefix.count + dashes.count + 1 else { return nil }
        let tail = UnsafeRawBufferPointer(rebasing: line[(line.count - dashes.count)...])
        guard tail.elementsEqual(dashes) else { return nil }
        let label = UnsafeRawBufferPointer(rebasing: line[prefix.count..<(line.count - dashes.count)])
        guard let first = label.first, let last = label.last,
            first != 0x2d, first != 0x20, last != 0x2d, last != 0x20,
            label.allSatisfy({ $0 >= 0x20 && $0 < 0x7f })
        else { return nil }
        return String(decoding: label, as: UTF8.self)
    }

    /// A line as text for error messages and headers: non-printable bytes become '?'.
    static func printable(_ line: UnsafeRawBufferPointer) -> String {
        String(decoding: line.prefix(200).map { $0 >= 0x20 && $0 < 0x7f ? $0 : 0x3f }, as: UTF8.self)
    }
}
