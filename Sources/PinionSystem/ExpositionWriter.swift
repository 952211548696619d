// The Prometheus text exposition format (version 0.0.4), written by every metrics file and
// endpoint of the project: `pinion serve`'s /metrics, `pinion status --metrics` and the
// audit monitor's gauges.

/// Writes metric families in the Prometheus text format: each family's `# HELP` and `# TYPE`
/// lines, then its samples, one per line, ending with a newline. HELP text escapes `\` and
/// newlines; label values escape `\`, `"` and newlines, as the format requires.
public struct ExpositionWriter: Sendable {
    /// The metric type of a family.
    public enum Kind: String, Sendable {
        /// A value that only goes up (names end in `_total`).
        case counter
        /// A value that goes up and down.
        case gauge
    }

    /// The text written so far.
    public private(set) var text = ""

    /// An empty exposition.
    public init() {}

    /// Starts a family; every sample written until the next call belongs to it.
    ///
    /// - Parameters:
    ///   - name: the metric name (`[a-zA-Z_:][a-zA-Z0-9_:]*`, chosen by the caller).
    ///   - kind: counter or gauge.
    ///   - help: one line of help text.
    public mutating func family(_ name: String, _ kind: Kind, help: String) {
        let escapedHelp = help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
        text += "# HELP \(name) \(escapedHelp)\n# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample without labels.
    public mutating func sample(_ name: String, _ value: String) { sample(name, [], value) }

    /// One sample.
    ///
    /// - Parameters:
    ///   - name: the family's name (or the family's name with a suffix).
    ///   - labels: label names and values, in order; values are escaped here.
    ///   - value: the sample value as the format writes it (an integer, a float, `+Inf`).
    public mutating func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
        text += name + Self.labelSet(labels) + " \(value)\n"
    }

    /// `{name="value",...}` with every value escaped, or the empty string for no labels.
    public static func labelSet(_ labels: [(String, String)]) -> String {
        guard !labels.isEmpty else { return "" }
        return "{" + labels.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",") + "}"
    }

    /// A label value escaped as the format requires.
    public static func escape(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
