// Canonical base64 (RFC 4648 §4, padded): a one-pass strict decoder, Foundation's encoder.
//
// The decoder is written here because no library decodes *canonical* base64 only: Foundation
// decodes, but refusing a second spelling of the same bytes then needs a re-encode and a
// comparison, which made the envelope's 4.3 MB payload cost a decode, an encode and a copy
// (bench/RESULTS.md, client refresh). The rules below accept exactly the strings that
// `Data(bytes).base64EncodedString()` produces.

import Foundation

/// Canonical padded base64: exactly the alphabet of RFC 4648 §4, a length that is a multiple
/// of 4, `=` only as the final one or two characters, and zero bits under the padding. This
/// refuses missing padding, non-zero trailing bits, whitespace and the URL alphabet (so one
/// value has exactly one spelling).
public enum Base64 {
    /// The RFC 4648 §4 alphabet.
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// 6-bit value of each byte, 0xFF for a byte outside the alphabet (`=` included).
    static let sextets: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()

    /// - Returns: the decoded bytes, or nil if `text` is not canonical padded base64.
    public static func decodeCanonical(_ text: String) -> [UInt8]? {
        decodeCanonical(utf8: Array(text.utf8))
    }

    /// Decodes canonical padded base64 given as its UTF-8 (ASCII) bytes, in one pass.
    ///
    /// - Parameter bytes: the encoded text's bytes.
    /// - Returns: `bytes.count / 4 * 3` bytes minus one per `=`, or nil if `bytes` is not
    ///   canonical padded base64 (RFC 4648 §4; see the type's rules).
    public static func decodeCanonical(utf8 bytes: [UInt8]) -> [UInt8]? {
        decodeCanonical(utf8: bytes, from: 0)
    }

    /// `decodeCanonical(utf8:)` of `bytes[start...]`, without copying the slice.
    static func decodeCanonical(utf8 bytes: [UInt8], from start: Int) -> [UInt8]? {
        let end = bytes.count
        guard start >= 0, start <= end else { return nil }
        let count = end - start
        guard count % 4 == 0 else { return nil }
        if count == 0 { return [] }
        let equals = UInt8(ascii: "=")
        var padding = 0
        if bytes[end - 1] == equals { padding = bytes[end - 2] == equals ? 2 : 1 }
        let table = sextets
        var output = [UInt8]()
        output.reserveCapacity(count / 4 * 3 - padding)
        var index = start
        let lastQuad = end - 4
        while index < lastQuad {
            let a = table[Int(bytes[index])]
            let b = table[Int(bytes[index + 1])]
            let c = table[Int(bytes[index + 2])]
            let d = table[Int(bytes[index + 3])]
            guard (a | b | c | d) & 0x80 == 0 else { return nil }
            let group = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
            output.append(UInt8(truncatingIfNeeded: group >> 16))
            output.append(UInt8(truncatingIfNeeded: group >> 8))
            output.append(UInt8(truncatingIfNeeded: group))
            index += 4
        }
        let a = table[Int(bytes[index])]
        let b = table[Int(bytes[index + 1])]
        guard (a | b) & 0x80 == 0 else { return nil }
        switch padding {
        case 0:
            let c = table[Int(bytes[index + 2])]
            let d = table[Int(bytes[index + 3])]
            guard (c | d) & 0x80 == 0 else { return nil }
            let group = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
            output.append(UInt8(truncatingIfNeeded: group >> 16))
            output.append(UInt8(truncatingIfNeeded: group >> 8))
            output.append(UInt8(truncatingIfNeeded: group))
        case 1:
            // xxx=: 16 bits in 18, the last 2 must be zero.
            let c = table[Int(bytes[index + 2])]
            guard c & 0x80 == 0, c & 0x03 == 0 else { return nil }
            output.append(a << 2 | b >> 4)
            output.append((b & 0x0F) << 4 | c >> 2)
        default:
            // xx==: 8 bits in 12, the last 4 must be zero.
            guard b & 0x0F == 0 else { return nil }
            output.append(a << 2 | b >> 4)
        }
        return output
    }

    /// - Returns: padded base64 of `bytes`.
    public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }
}

/// Lowercase hexadecimal.
public enum Hex {
    /// - Returns: two lowercase hex digits per byte.
    public static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var output = [UInt8]()
        output.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// - Returns: the bytes of lowercase hex `text`, or nil if it is not lowercase hex of even length.
    public static func decodeLowercase(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var output = [UInt8]()
        output.reserveCapacity(characters.count / 2)
        var index = 0
        while index < characters.count {
            guard let high = nibble(characters[index]), let low = nibble(characters[index + 1]) else {
                return nil
            }
            output.append(high << 4 | low)
            index += 2
        }
        return output
    }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}
