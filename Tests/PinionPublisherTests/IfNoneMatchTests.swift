// If-None-Match against a file's entity tag (RFC 9110 §13.1.2, weak comparison): what matches and what does not.

import Testing

@testable import PinionPublisher

struct IfNoneMatchTests {
    static let etag = "\"4a5b\""

    @Test(arguments: [
        "\"4a5b\"", "W/\"4a5b\"", "*", "  *\t", "\"x\", \"4a5b\"", "\"x\",W/\"4a5b\"", " \"4a5b\" ", "\"x\",,\"4a5b\"",
        "\t\"4a5b\"\t, \"y\"",
    ])
    func matches(field: String) {
        #expect(ifNoneMatchMatches(field, etag: Self.etag), "\(field)")
    }

    @Test(arguments: [
        "", ",", " , ", "\"4a5c\"", "\"4A5B\"", "4a5b", "W/", "w/\"4a5b\"", "W/ \"4a5b\"", "\"4a5b\"x", "x\"4a5b\"",
        "* , \"x\"", "**", "\"4a5b", "\"\"", "W/W/\"4a5b\"",
    ])
    func doesNotMatch(field: String) {
        #expect(!ifNoneMatchMatches(field, etag: Self.etag), "\(field)")
    }
}
