// HTTP-dates (IMF-fixdate, RFC 9110 §5.6.7) and the access log's RFC 3339 times, through the C library's gmtime_r and timegm.

#if canImport(Glibc)
    import Glibc
#endif

/// Formats the current instant as IMF-fixdate and RFC 3339, re-formatting at most once per
/// second (wall clock, `time(2)`). Not thread-safe: one per worker.
package struct HTTPDateClock {
    private var second: time_t = -1
    /// The Date header value of the current second, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    package private(set) var httpDate = ""
    /// The access log time of the current second, e.g. `1994-11-06T08:49:37Z`.
    package private(set) var logTime = ""

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    package init() {}

    /// Brings the strings up to the current second.
    package mutating func update() {
        let now = time(nil)
        guard now != second else { return }
        second = now
        var parts = tm()
        var value = now
        gmtime_r(&value, &parts)
        httpDate = Self.format(parts)
        logTime = Self.rfc3339(parts)
    }

    /// IMF-fixdate of `parts`, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func format(_ parts: tm) -> String {
        let day = days[Int(parts.tm_wday) % 7]
        let month = months[Int(parts.tm_mon) % 12]
        return "\(day), \(two(parts.tm_mday)) \(month) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    static func rfc3339(_ parts: tm) -> String {
        "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
}

/// IMF-fixdate conversions of explicit instants (Last-Modified, If-Modified-Since).
package enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]

    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) of `seconds` since 1970.
    package static func format(_ seconds: Int64) -> String {
        var value = time_t(seconds)
        var parts = tm()
        gmtime_r(&value, &parts)
        return HTTPDateClock.format(parts)
    }

    /// Parses an IMF-fixdate, the form every HTTP/1.1 sender generates (RFC 9110 §5.6.7).
    /// The obsolete RFC 850 and asctime forms are not accepted: the field is then ignored,
    /// which only costs a full response.
    ///
    /// - Returns: seconds since 1970, or nil when `text` is not an IMF-fixdate.
    package static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        // "Sun, 06 Nov 1994 08:49:37 GMT" is 29 bytes.
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20,
            bytes[11] == 0x20, bytes[16] == 0x20, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"),
            bytes[25] == 0x20, String(decoding: bytes[26...], as: UTF8.self) == "GMT",
            days.contains(String(decoding: bytes[0..<3], as: UTF8.self)),
            let month = months.firstIndex(of: String(decoding: bytes[8..<11], as: UTF8.self)),
            let day = number(bytes[5..<7]), let year = number(bytes[12..<16]), let hour = number(bytes[17..<19]),
            let minute = number(bytes[20..<22]), let second = number(bytes[23..<25]),
            (1...31).contains(day), hour < 24, minute < 60, second < 61, year >= 1970
        else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(min(second, 59))
        let seconds = timegm(&parts)
        // timegm normalises 31 Feb into March: refuse dates that do not exist.
        guard seconds >= 0, parts.tm_mday == Int32(day), parts.tm_mon == Int32(month) else { return nil }
        return Int64(seconds)
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }
}
