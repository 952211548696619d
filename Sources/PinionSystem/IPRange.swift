// Address ranges in CIDR notation (RFC 4632 §3.1, RFC 4291 §2.3) for the proxies whose
// forwarded addresses `pinion serve` believes: parsed strictly, matched byte-wise.

/// A range of IPv4 or IPv6 addresses: `203.0.113.0/24`, `2001:db8::/32`, or a single
/// address (`/32` or `/128` implied).
///
/// Parsing is strict so a typo cannot widen trust: the length is decimal without sign or
/// leading zero and within 0-32 (IPv4) or 0-128 (IPv6), and no bit beyond the prefix may be
/// set (`10.0.0.1/8` is refused rather than read as `10.0.0.0/8`). An IPv4 range also holds
/// the IPv4-mapped IPv6 form of its addresses (`::ffff:203.0.113.7`), which a dual-stack
/// listener reports for IPv4 peers.
public struct IPRange: Sendable, Equatable, CustomStringConvertible {
    /// The network's bytes (4 or 16), bits beyond `prefixLength` zero.
    public let network: [UInt8]
    /// Leading bits that must match: 0-32 for IPv4, 0-128 for IPv6.
    public let prefixLength: Int

    /// Why a range was refused; `description` names the text and the rule.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Parses `ADDRESS` or `ADDRESS/LENGTH`.
    ///
    /// - Parameter text: the range, without spaces.
    /// - Returns: the range.
    /// - Throws: `ParseError` for a text that is not an IP literal, a length that is not a
    ///   plain decimal within the family's bits, or bits set beyond the prefix.
    public init(_ text: String) throws(ParseError) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let shown = String(text.prefix(80))
        guard let bytes = IPLiteral.bytes(String(parts[0])) else {
            throw ParseError(description: "\(shown): not an IPv4 or IPv6 address or ADDRESS/LENGTH range")
        }
        let bits = bytes.count * 8
        var length = bits
        if parts.count == 2 {
            let digits = parts[1]
            guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                digits == "0" || digits.first != "0", let value = Int(digits), value <= bits
            else {
                throw ParseError(description: "\(shown): the prefix length must be a number from 0 to \(bits)")
            }
            length = value
        }
        for index in bytes.indices where bytes[index] & ~Self.mask(byte: index, length: length) != 0 {
            let network = Self.masked(bytes, length)
            let suggestion = IPLiteral.text(network).map { " (did you mean \($0)/\(length)?)" } ?? ""
            throw ParseError(description: "\(shown): address bits are set beyond the /\(length) prefix\(suggestion)")
        }
        network = bytes
        prefixLength = length
    }

    /// Parses a list of ranges: each text may hold several, separated by commas.
    ///
    /// - Parameter texts: the option values, e.g. `["10.0.0.0/8,192.0.2.1", "2001:db8::/32"]`.
    /// - Returns: the ranges in order.
    /// - Throws: `ParseError` for the first bad or empty entry.
    public static func list(_ texts: [String]) throws(ParseError) -> [IPRange] {
        var ranges: [IPRange] = []
        for text in texts {
            for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
                let trimmed = String(entry.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
                guard !trimmed.isEmpty else { throw ParseError(description: "\"\(text.prefix(80))\": an empty entry") }
                ranges.append(try IPRange(trimmed))
            }
        }
        return ranges
    }

    /// Whether `address` (an IP literal) lies in the range.
    ///
    /// - Parameter address: an IPv4 or IPv6 literal; anything else is outside.
    public func contains(_ address: String) -> Bool {
        guard var bytes = IPLiteral.bytes(address) else { return false }
        if network.count == 4, bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF,
            bytes[11] == 0xFF
        {
            bytes = Array(bytes[12..<16])
        }
        guard bytes.count == network.count else { return false }
        return Self.masked(bytes, prefixLength) == network
    }

    public var description: String { (IPLiteral.text(network) ?? "?") + "/\(prefixLength)" }

    private static func mask(byte index: Int, length: Int) -> UInt8 {
        let bits = min(max(length - index * 8, 0), 8)
        return bits == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
    }

    private static func masked(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        bytes.indices.map { bytes[$0] & mask(byte: $0, length: length) }
    }
}
