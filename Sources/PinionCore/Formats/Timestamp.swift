// RFC 3339 UTC times with whole seconds, as every Pinion document writes them.

import Foundation

/// A point in time with whole-second precision, written `2026-11-30T09:00:00Z`
/// (RFC 3339 §5.6, UTC `Z` only, no fraction).
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Seconds since 1970-01-01T00:00:00Z.
    public let secondsSince1970: Int64

    public init(secondsSince1970: Int64) {
        self.secondsSince1970 = secondsSince1970
    }

    /// The given date, truncated to whole seconds (toward the past).
    public init(_ date: Date) {
        self.secondsSince1970 = Int64(date.timeIntervalSince1970.rounded(.down))
    }

    /// Parses `YYYY-MM-DDTHH:MM:SSZ` exactly (uppercase `T` and `Z`, no fraction, no offset).
    ///
    /// - Throws: `FormatRule.invalidTime` with the reason.
    public init(rfc3339 text: String) throws(FormatRule) {
        let bytes = Array(text.utf8)
        let digitPositions = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
        guard bytes.count == 20 else {
            throw .invalidTime(bytes.count > 20 ? "fractions and offsets are not allowed" : "too short")
        }
        for position in digitPositions
        where !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            throw .invalidTime("digit expected at position \(position + 1)")
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":")
        else { throw .invalidTime("separators must be - T :") }
        guard bytes[19] == UInt8(ascii: "Z") else { throw .invalidTime("must end with Z (UTC)") }
        // Foundation switches to the Julian calendar before 1582; no Pinion document has a
        // reason to name a time before the Unix epoch, so those years are refused outright.
        guard text.prefix(4) >= "1970" else { throw .invalidTime("years before 1970 are not allowed") }
        guard let date = try? Date(text, strategy: Timestamp.style) else {
            throw .invalidTime("no such date or time")
        }
        let parsed = Timestamp(date)
        // Round trip rejects what the formatter would silently normalise (Feb 30, 24:00, :60).
        guard parsed.description == text else { throw .invalidTime("no such date or time") }
        self = parsed
    }

    private static let style = Date.ISO8601FormatStyle(timeZone: TimeZone(secondsFromGMT: 0) ?? .gmt)

    /// The date as Foundation sees it.
    public var date: Date { Date(timeIntervalSince1970: TimeInterval(secondsSince1970)) }

    /// RFC 3339 text, e.g. `2026-11-30T09:00:00Z`.
    public var description: String { date.formatted(Timestamp.style) }

    /// This time plus `seconds` (saturating).
    public func adding(seconds: Int64) -> Timestamp {
        let (sum, overflow) = secondsSince1970.addingReportingOverflow(seconds)
        return Timestamp(secondsSince1970: overflow ? (seconds > 0 ? Int64.max : Int64.min) : sum)
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.secondsSince1970 < rhs.secondsSince1970
    }
}
