// Canonical base64 (RFC 4648 §4, padded) on top of Foundation's codec.

import Foundation

/// Canonical padded base64: Foundation decodes, and re-encoding must give back the exact
/// input, which refuses missing padding, non-zero trailing bits, whitespace and the URL
/// alphabet (so one value has exactly one spelling).
public enum Base64 {
    /// - Returns: the decoded bytes, or nil if `text` is not canonical padded base64.
    public static func decodeCanonical(_ text: String) -> [UInt8]? {
        guard let data = Data(base64Encoded: text) else { return nil }
        guard data.base64EncodedString() == text else { return nil }
        return [UInt8](data)
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
