// The poll token of the manifest request (`manifest.json?have=V&base=B`, docs/DESIGN.md §6): its
// exact bytes, checked against sha256sum, and what each request of a refresh carries.

import Foundation
import PinionCore
import PinionTrust
import PinionTrustTestSupport
import Testing

@Suite struct PollTokenTests {
    @Test func theQueryIsHaveThenTheBaselinesDigestPrefix() throws {
        let none = PollToken(have: 0, baselineDocument: nil, hasher: PortableCrypto.provider.hasher)
        #expect(none.query == "have=0&base=0000000000000000")
        let document = Array("{\"type\": \"pinion.baseline\", \"specVersion\": 1, \"domains\": []}\n".utf8)
        // sha256sum, an implementation nobody on the team wrote, gives the expected prefix.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("baseline-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(document).write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [file.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let expected = String(output.prefix(16))
        #expect(expected.count == 16 && expected.allSatisfy(\.isHexDigit))
        let held = PollToken(have: 17, baselineDocument: document, hasher: PortableCrypto.provider.hasher)
        #expect(held.query == "have=17&base=\(expected)")
        #expect(held.base == expected.lowercased())
        #expect(
            UpdateRequest(file: .manifest, pollToken: held).pathAndQuery == "manifest.json?have=17&base=\(expected)")
        #expect(UpdateRequest(file: .root(2)).pathAndQuery == "root/2.json")
        // The parsed baseline keeps its exact bytes; one built in code has none.
        #expect(try Baseline.parse(document).document == document)
        #expect(try Baseline(domains: []).document == nil)
    }

    /// Every manifest request of a refresh carries the version held when it started and the
    /// baseline's digest; root and proof requests carry no token.
    @Test func eachManifestRequestNamesTheHeldVersionAndBaseline() throws {
        let publisher = try Publisher()
        let core = try TrustCore(
            scope: scope, embeddedRoot: try publisher.embeddedRoot(), crypto: PortableCrypto.provider)
        let pin = try junkPin(7)
        let domains = [ManifestPayload.Domain(name: "api.example.test", pins: [pin])]
        let manifests = [
            try publisher.manifest(version: 3, domains: domains), try publisher.manifest(version: 4, domains: domains),
        ]
        let document = Array("{\"type\": \"pinion.baseline\", \"specVersion\": 1, \"domains\": []}".utf8)
        let base = PollToken(have: 0, baselineDocument: document, hasher: PortableCrypto.provider.hasher).base
        #expect(base != PollToken.noBaseline)

        var served = manifests[0]
        let fetcher = ScriptedFetcher(root: { _ in .notFound }, manifest: { _ in .found(served, etag: "\"a\"") })
        let first = core.refresh(core.initialState(), startTime: t0, fetcher: fetcher, baselineDocument: document)
        guard case .updated = first.outcome else {
            Issue.record("\(first.outcome)")
            return
        }
        served = manifests[1]
        let second = core.refresh(first.state, startTime: t0.adding(seconds: 60), fetcher: fetcher)
        guard case .updated = second.outcome else {
            Issue.record("\(second.outcome)")
            return
        }
        let manifestRequests = fetcher.requests.filter { $0.file == .manifest }.map(\.pathAndQuery)
        #expect(
            manifestRequests == [
                "manifest.json?have=0&base=\(base)", "manifest.json?have=3&base=\(PollToken.noBaseline)",
            ])
        #expect(fetcher.requests.filter { $0.file != .manifest }.allSatisfy { $0.pollToken == nil })
        #expect(fetcher.requests.contains { $0.file == .root(2) })
    }
}
