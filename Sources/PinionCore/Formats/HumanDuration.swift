// Durations written for people in messages (`200d`, `1d12h`), in the units the CLI reads.

/// Formats a number of seconds as days, hours, minutes and seconds, largest first, each
/// only when non-zero: `17280000` is `200d`, `129600` is `1d12h`, `90` is `1m30s`. These
/// are the units `--expires-in` and the other duration flags accept, so a message can be
/// pasted back into a command.
public enum HumanDuration {
    /// - Parameter seconds: the duration in seconds; zero or negative values are written
    ///   as `0s` and `-…` respectively.
    /// - Returns: the text, e.g. `90d`.
    public static func text(_ seconds: Int64) -> String {
        if seconds == 0 { return "0s" }
        if seconds < 0 { return "-" + text(seconds == Int64.min ? Int64.max : -seconds) }
        var rest = seconds
        var output = ""
        for (unit, size) in [("d", Int64(86_400)), ("h", 3600), ("m", 60), ("s", 1)] where rest >= size {
            output += "\(rest / size)\(unit)"
            rest %= size
        }
        return output
    }
}
