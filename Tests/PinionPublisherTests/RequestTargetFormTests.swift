// Request targets in absolute form (RFC 9112 §3.2.2) parsed to the same path as origin form.

import PinionPublisher
import PinionSystem
import Testing

@Suite struct RequestTargetFormTests {
    @Test(arguments: [
        ("https://pins.example.com/v1/s/manifest.json", "/v1/s/manifest.json"),
        ("http://a/v1/s/index.json?x=1", "/v1/s/index.json"),
        ("HTTPS://a:8443/v1/s/root/1.json", "/v1/s/root/1.json"),
        ("https://a", "/"),
        ("https://a?q", "/"),
        ("/v1/s/manifest.json", "/v1/s/manifest.json"),
    ])
    func absoluteFormGivesTheOriginPath(target: String, path: String) throws {
        let text = "GET \(target) HTTP/1.1\r\nHost: a\r\n\r\n"
        guard case .complete(let head, _) = try HTTPRequestParser.parse(Array(text.utf8)[...], limits: .init())
        else {
            Issue.record("incomplete")
            return
        }
        #expect(head.path == path)
        #expect(head.target == target)
    }
}
