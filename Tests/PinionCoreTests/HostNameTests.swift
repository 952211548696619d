// Manifest host names (docs/DESIGN.md §5): which names `HostName.validate` accepts and what it says of the rest.

import PinionCore
import Testing

@Suite struct HostNameTests {
    @Test(arguments: [
        "api.example.com", "a.b", "xn--bcher-kva.example", "a-b.example.com", "0.example.com",
        String(repeating: "a", count: 63) + ".example",
        [String](repeating: String(repeating: "a", count: 61), count: 4).joined(separator: ".") + ".ab",
    ])
    func acceptsLowercaseALabelNames(_ name: String) throws {
        #expect(name.utf8.count <= HostName.maxLength)
        try HostName.validate(name)
    }

    @Test(arguments: [
        ("", "empty"), ("example", "a single label; at least two are required"),
        ("API.example.com", "uppercase letters; host names are listed in lowercase"),
        ("*.example.com", "wildcards are not allowed; use includeSubdomains"),
        ("example.com.", "trailing dot"), ("a..example.com", "empty label"),
        ("-a.example.com", "a label starts or ends with a hyphen"),
        ("a-.example.com", "a label starts or ends with a hyphen"),
        ("a_b.example.com", "character \"_\" is not a letter, digit or hyphen"),
        ("bücher.example", "non-ASCII; write internationalised names as A-labels (xn--...)"),
        ("127.0.0.1", "IP addresses cannot be pinned by name"), ("[::1]", "IP addresses cannot be pinned by name"),
        ("::1", "IP addresses cannot be pinned by name"), ("0x7f.0x1", "IP addresses cannot be pinned by name"),
        ("example.123", "IP addresses cannot be pinned by name"),
        (String(repeating: "a", count: 64) + ".example", "a label longer than 63 characters"),
        (
            "api.example.com:443",
            "a port was given (:443); pins apply to every port of a name, give the host alone: api.example.com"
        ),
        ("https://api.example.com", "a URL was given (scheme https://); give the host name alone: api.example.com"),
        (
            "https://user@api.example.com:8443/v1?x=1",
            "a URL was given (scheme https://); give the host name alone: api.example.com"
        ),
    ])
    func refusesWithTheReason(_ name: String, _ reason: String) {
        #expect(throws: FormatRule.invalidHostName(reason)) { try HostName.validate(name) }
    }

    @Test func refusesAName254CharactersLong() {
        let name = [String](repeating: String(repeating: "a", count: 62), count: 4).joined(separator: ".") + ".ab"
        #expect(name.utf8.count == 254)
        #expect(throws: FormatRule.invalidHostName("longer than 253 characters")) { try HostName.validate(name) }
    }

    @Test func aHexLookingLastLabelThatIsNotHexIsAName() throws {
        try HostName.validate("example.0xg1")
        // "0x" alone is the number 0 to WHATWG URL parsers: refused like any IPv4 part.
        #expect(throws: FormatRule.invalidHostName("IP addresses cannot be pinned by name")) {
            try HostName.validate("example.0x")
        }
    }
}
