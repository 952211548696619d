// Durations and times as the CLI reads them: `30d`, `12h`, `1y`, RFC 3339 instants.

import PinionCore

/// Parses CLI durations: a positive integer and one unit of s (seconds), m (minutes),
/// h (hours), d (days) or y (365 days), e.g. `90d`; several may be joined (`1d12h`); a
/// plain positive integer is seconds (`3600`).
enum DurationText {
    /// - Returns: the duration in seconds.
    /// - Throws: `CLIError.usage` naming the option.
    static func seconds(_ text: String, option: String) throws(CLIError) -> Int64 {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "y": 31_536_000]
        var total: Int64 = 0
        var digits = ""
        guard !text.isEmpty else { throw usage(text, option) }
        for character in text {
            if character.isASCII, character.isNumber {
                digits.append(character)
                continue
            }
            guard let unit = units[character], let number = Int64(digits), number > 0 else {
                throw usage(text, option)
            }
            let (product, overflow) = number.multipliedReportingOverflow(by: unit)
            let (sum, overflow2) = total.addingReportingOverflow(product)
            guard !overflow, !overflow2, sum <= Limits.maxInteger else { throw usage(text, option) }
            total = sum
            digits = ""
        }
        if !digits.isEmpty, total == 0, let seconds = Int64(digits), seconds > 0, seconds <= Limits.maxInteger {
            return seconds  // plain seconds
        }
        guard digits.isEmpty, total > 0 else { throw usage(text, option) }
        return total
    }

    private static func usage(_ text: String, _ option: String) -> CLIError {
        .usage("--\(option): \"\(text)\" is not a duration like 30d, 12h, 90m, 3600s, 1y or 3600 (seconds)")
    }

    /// Parses an RFC 3339 UTC time option.
    static func time(_ text: String, option: String) throws(CLIError) -> Timestamp {
        do { return try Timestamp(rfc3339: text) } catch {
            throw .usage("--\(option): \"\(text)\" is \(error)")
        }
    }
}
