// The Public Suffix List (publicsuffix.org; Debian's publicsuffix package) for lint's
// includeSubdomains rule.

/// Public suffix rules: normal (`co.uk`), wildcard (`*.ck`) and exception (`!www.ck`).
public struct PublicSuffixList: Sendable, Equatable {
    /// Where Debian's publicsuffix package installs the list.
    public static let debianPath = "/usr/share/publicsuffix/public_suffix_list.dat"

    private var rules: Set<String> = []
    private var wildcards: Set<String> = []
    private var exceptions: Set<String> = []
    /// Rules with non-ASCII labels, left out: manifest names are A-labels and the list
    /// writes internationalised suffixes in Unicode (their xn-- forms are not matched).
    public private(set) var skippedUnicodeRules = 0

    /// Parses the list's text format: one rule per line, the first whitespace-separated word;
    /// `//` comments and blank lines ignored; rules lowercased.
    ///
    /// - Parameter text: the file contents.
    public init(_ text: String) {
        for rawLine in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = rawLine.drop(while: { $0 == " " || $0 == "\t" })
            guard !line.isEmpty, !line.hasPrefix("//") else { continue }
            let word = String(line.prefix(while: { $0 != " " && $0 != "\t" })).lowercased()
            guard word.unicodeScalars.allSatisfy(\.isASCII) else {
                skippedUnicodeRules += 1
                continue
            }
            if word.hasPrefix("!") {
                exceptions.insert(String(word.dropFirst()))
            } else if word.hasPrefix("*.") {
                wildcards.insert(String(word.dropFirst(2)))
            } else {
                rules.insert(word)
            }
        }
    }

    /// Number of rules read.
    public var count: Int { rules.count + wildcards.count + exceptions.count }

    /// The public suffix of `name` by the list's algorithm (exception rules first, then the
    /// longest matching rule, `*` when none matches).
    ///
    /// - Parameter name: a lowercase host name.
    /// - Returns: the public suffix, a suffix of `name`.
    public func publicSuffix(of name: String) -> String {
        let labels = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for index in labels.indices {
            let candidate = labels[index...].joined(separator: ".")
            if exceptions.contains(candidate) { return labels[(index + 1)...].joined(separator: ".") }
            if rules.contains(candidate) { return candidate }
            if index + 1 < labels.count, wildcards.contains(labels[(index + 1)...].joined(separator: ".")) {
                return candidate
            }
        }
        return labels.last ?? name
    }

    /// Whether `name` is itself a public suffix.
    public func isPublicSuffix(_ name: String) -> Bool { publicSuffix(of: name) == name }

    /// Whether `name` is one label under a public suffix (a registrable domain, eTLD+1).
    public func isRegistrableDomain(_ name: String) -> Bool {
        guard let dot = name.firstIndex(of: ".") else { return false }
        return !isPublicSuffix(name) && publicSuffix(of: name) == String(name[name.index(after: dot)...])
    }
}
