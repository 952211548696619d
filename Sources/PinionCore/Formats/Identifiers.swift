// Validation of the names that appear in documents: pins, host names, scopes, key ids.

/// An SPKI SHA-256 pin (RFC 7469 §2.4), written `sha256/<canonical padded base64>`.
public struct Pin: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 32-byte SHA-256 digest of a DER SubjectPublicKeyInfo.
    public let digest: [UInt8]

    /// - Throws: `FormatRule.invalidPin` when `digest` is not 32 bytes.
    public init(digest: [UInt8]) throws(FormatRule) {
        guard digest.count == 32 else { throw .invalidPin("not 32 bytes (got \(digest.count))") }
        self.digest = digest
    }

    /// Parses the canonical spelling `sha256/` + 44 characters of padded base64.
    ///
    /// - Throws: `FormatRule.invalidPin` naming what is wrong.
    public init(_ text: String) throws(FormatRule) {
        // The spelling every valid pin has, checked on its bytes: "sha256/" and 44 characters
        // of canonical base64 of 32 bytes (ASCII only, so the String checks below agree).
        // Anything else takes the checks below, which name what is wrong.
        let utf8 = Array(text.utf8)
        if utf8.count == Pin.prefix.count + 44, utf8.starts(with: Pin.prefix),
            let digest = Base64.decodeCanonical(utf8: utf8, from: Pin.prefix.count), digest.count == 32
        {
            self.digest = digest
            return
        }
        guard text.hasPrefix("sha256/") else { throw .invalidPin("must start with sha256/") }
        let encoded = String(text.dropFirst("sha256/".count))
        guard let bytes = Base64.decodeCanonical(encoded) else {
            throw .invalidPin("not canonical padded base64")
        }
        guard bytes.count == 32 else {
            throw .invalidPin("not 32 bytes after base64 decoding (got \(bytes.count))")
        }
        self.digest = bytes
    }

    /// The bytes of `sha256/`.
    static let prefix = Array("sha256/".utf8)

    /// `sha256/<base64>`.
    public var description: String { "sha256/" + Base64.encode(digest) }

    public static func < (lhs: Pin, rhs: Pin) -> Bool {
        lhs.digest.lexicographicallyPrecedes(rhs.digest)
    }
}

/// Host names as manifests list them (docs/DESIGN.md §5).
public enum HostName {
    /// Longest host name, in characters (RFC 1035 §2.3.4 presentation form).
    public static let maxLength = 253

    /// Checks a manifest domain name: lowercase ASCII A-labels (punycode) of letters,
    /// digits and hyphens, 1-63 characters per label, no leading or trailing hyphen, no
    /// trailing dot, no wildcard, not an IP address, at least two labels, at most 253
    /// characters.
    ///
    /// - Throws: `FormatRule.invalidHostName` with the reason.
    public static func validate(_ name: String) throws(FormatRule) {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else { throw .invalidHostName("empty") }
        guard bytes.count <= maxLength else {
            throw .invalidHostName("longer than \(maxLength) characters")
        }
        if bytes.contains(where: { $0 >= 0x80 }) {
            throw .invalidHostName("non-ASCII; write internationalised names as A-labels (xn--...)")
        }
        if bytes.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) {
            throw .invalidHostName("uppercase letters; host names are listed in lowercase")
        }
        if bytes.contains(UInt8(ascii: "*")) {
            throw .invalidHostName("wildcards are not allowed; use includeSubdomains")
        }
        if let mistake = urlOrPortMistake(name) { throw .invalidHostName(mistake) }
        if bytes.contains(UInt8(ascii: ":")) || bytes.first == UInt8(ascii: "[") {
            throw .invalidHostName("IP addresses cannot be pinned by name")
        }
        if bytes.last == UInt8(ascii: ".") { throw .invalidHostName("trailing dot") }
        let labels = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.count >= 2 else {
            throw .invalidHostName("a single label; at least two are required")
        }
        for label in labels {
            guard !label.isEmpty else { throw .invalidHostName("empty label") }
            guard label.count <= 63 else { throw .invalidHostName("a label longer than 63 characters") }
            for byte in label {
                let allowed =
                    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
                guard allowed else {
                    throw .invalidHostName(
                        "character \"\(Character(Unicode.Scalar(byte)))\" is not a letter, digit or hyphen")
                }
            }
            if label.first == UInt8(ascii: "-") || label.last == UInt8(ascii: "-") {
                throw .invalidHostName("a label starts or ends with a hyphen")
            }
        }
        // A name whose last label is all digits is an IPv4 address (or could be parsed as
        // one by some resolver); real top-level domains are never numeric.
        // Likewise a last label `0x...` is a hexadecimal IPv4 part to inet_aton and URL
        // parsers (WHATWG URL "ends in a number"), e.g. 0x7f.0x1.
        if let last = labels.last {
            let isDecimal = last.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            let isHex =
                last.count >= 2 && last.starts(with: Array("0x".utf8))
                && last.dropFirst(2).allSatisfy { byte in
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                        || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                }
            if isDecimal || isHex { throw .invalidHostName("IP addresses cannot be pinned by name") }
        }
    }

    /// A URL (`https://api.example.com/path`) or a `host:port` (`api.example.com:443`)
    /// given where a bare host name belongs: the reason, naming the host to use; nil when
    /// the text is neither. Pins are per host name, for every port.
    static func urlOrPortMistake(_ name: String) -> String? {
        if let schemeEnd = name.range(of: "://") {
            let scheme = name[..<schemeEnd.lowerBound]
            var rest = name[schemeEnd.upperBound...]
            if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
            if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
            let host = hostDroppingPort(rest) ?? rest
            return "a URL was given (scheme \(scheme)://); give the host name alone: \(host)"
        }
        let text = name[...]
        guard let host = hostDroppingPort(text) else { return nil }
        let port = text[text.index(after: host.endIndex)...]
        return "a port was given (:\(port)); pins apply to every port of a name, give the host alone: \(host)"
    }

    /// `host` of `host:port` when the text has exactly one colon followed by 1-5 digits
    /// and the host is not empty or bracketed; nil otherwise (so IPv6 literals stay IPv6).
    private static func hostDroppingPort(_ text: Substring) -> Substring? {
        guard let colon = text.firstIndex(of: ":"), text.lastIndex(of: ":") == colon else { return nil }
        let host = text[..<colon]
        let port = text[text.index(after: colon)...]
        guard !host.isEmpty, host.first != "[", (1...5).contains(port.count),
            port.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        return host
    }
}

/// The scope of a root and its manifests; it appears in URLs (`v1/{scope}/...`).
public enum Scope {
    /// Checks 1-128 characters of `[a-z0-9._-]`, not starting with a dot (`.`, `..`,
    /// `.app`): the scope is a path component of the tree, and servers refuse hidden ones.
    ///
    /// - Throws: `FormatRule.invalidScope` with the reason.
    public static func validate(_ scope: String) throws(FormatRule) {
        let bytes = Array(scope.utf8)
        guard !bytes.isEmpty, bytes.count <= 128 else {
            throw .invalidScope("must be 1 to 128 characters")
        }
        for byte in bytes {
            let allowed =
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            guard allowed else { throw .invalidScope("only a-z 0-9 . _ - are allowed") }
        }
        if scope == "." || scope == ".." { throw .invalidScope("\(scope) is not allowed") }
        if bytes[0] == UInt8(ascii: ".") {
            throw .invalidScope("must not start with a dot (a hidden path component is never served)")
        }
    }
}

/// Key ids: lowercase hex SHA-256 of the 32-byte raw Ed25519 public key (docs/DESIGN.md §2).
public enum KeyID {
    /// - Returns: the key id of `publicKey`.
    public static func of(publicKey: [UInt8], hasher: any SHA256Hasher) -> String {
        Hex.encode(hasher.sha256(publicKey))
    }

    /// Checks the shape: 64 lowercase hex characters.
    /// - Throws: `FormatRule.invalidKeyID`.
    public static func validate(_ id: String) throws(FormatRule) {
        guard id.utf8.count == 64, Hex.decodeLowercase(id) != nil else { throw .invalidKeyID(id) }
    }
}
