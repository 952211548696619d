// `--connect-to ADDRESS[:PORT]`: dial another address while validating and pinning the
// named host (like curl's --connect-to), spelled the same by every command that connects.

/// Parses the connect-elsewhere flags of `client refresh`, `client connect`, `check-host`
/// and `lint`.
enum ConnectTo {
    /// `ADDRESS`, `ADDRESS:PORT`, `[IPv6]:PORT`, `[IPv6]` or a bare IPv6 literal (several
    /// colons, no port).
    ///
    /// - Parameters:
    ///   - text: the flag's value.
    ///   - option: the flag, named in errors.
    ///   - defaultPort: the port when `text` gives none (the target's).
    /// - Returns: the address to dial and its port.
    /// - Throws: `CLIError.usage` for an empty address or a bad port.
    static func parse(_ text: String, option: String, defaultPort: UInt16) throws(CLIError) -> (
        host: String, port: UInt16
    ) {
        let bareIPv6 = text.filter { $0 == ":" }.count > 1 && !text.hasPrefix("[")
        if bareIPv6 { return (text, defaultPort) }
        if text.hasPrefix("["), text.hasSuffix("]") {
            let inner = String(text.dropFirst().dropLast())
            guard !inner.isEmpty else { throw usage(text, option) }
            return (inner, defaultPort)
        }
        if text.contains(":") { return try SPKICommand.splitHostPort(text, option: option) }
        guard !text.isEmpty, !text.contains("/"), !text.contains("=") else { throw usage(text, option) }
        return (text, defaultPort)
    }

    /// The values of `lint --connect-to` and its alias `--resolve`: `ADDRESS[:PORT]` for
    /// every `--live` target, or `HOST=ADDRESS[:PORT]` for the target named HOST.
    ///
    /// - Returns: the address for every target (at most one may be given) and the
    ///   per-host addresses, keyed by lowercase HOST.
    static func liveMap(_ values: [String], option: String) throws(CLIError) -> (all: String?, byHost: [String: String])
    {
        var all: String?
        var byHost: [String: String] = [:]
        for value in values {
            if let equals = value.firstIndex(of: "=") {
                let host = value[..<equals].lowercased()
                let address = String(value[value.index(after: equals)...])
                guard !host.isEmpty, !address.isEmpty else {
                    throw .usage("\(option) must be ADDRESS[:PORT] or HOST=ADDRESS[:PORT], got \"\(value)\"")
                }
                _ = try parse(address, option: option, defaultPort: 443)
                byHost[host] = address
            } else {
                guard all == nil else {
                    throw .usage("\(option) ADDRESS[:PORT] given twice; use HOST=ADDRESS[:PORT] for several targets")
                }
                _ = try parse(value, option: option, defaultPort: 443)
                all = value
            }
        }
        return (all, byHost)
    }

    private static func usage(_ text: String, _ option: String) -> CLIError {
        .usage("\(option): \"\(text)\" is not ADDRESS or ADDRESS:PORT (IPv6 in brackets: [::1]:PORT)")
    }
}
