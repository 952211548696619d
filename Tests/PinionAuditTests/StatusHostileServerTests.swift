// `pinion status` against a hostile or failing HTTPS publisher (a Python 3 `ssl` server):
// terminal escapes in ETag and Cache-Control never reach the terminal, and HTTP errors are
// "unreachable" (exit 3), not "broken".

import Foundation
import PinionTestSupport
import Testing

@Suite(.serialized) struct StatusHostileServerTests {
    /// A tree published by the CLI at t0 (root 1, manifest 1 for 30 days) and the PKI.
    static func world() throws -> Workspace {
        let workspace = try Workspace(prefix: "pinion-status-hostile")
        workspace.standardRoot()
        _ = try workspace.makeDirectory("tree")
        try workspace.require(["publish", "--repo", "@tree", "@root.json"], at: t0)
        try workspace.require(
            ["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@m1.json"], at: t0)
        try workspace.require(
            [
                "manifest", "set-domain", "@m1.json", "www.example.com", "--pin", "sha256/" + StatusPinText.pin(7),
                "--pin", "sha256/" + StatusPinText.pin(8),
            ], at: t0)
        try workspace.require(["sign", "--key", "@pins.key", "@m1.json", "-o", "@m1.signed.json"], at: t0)
        try workspace.require(["publish", "--repo", "@tree", "@m1.signed.json"], at: t0)
        try makeServerPKI(in: workspace.directory.path)
        return workspace
    }

    func status(_ workspace: Workspace, port: UInt16, _ extra: [String] = []) -> CommandResult {
        let at = t0.adding(seconds: day)
        return workspace.run(
            [
                "status", "--root", "@root.json", "https://127.0.0.1:\(port)/", "--cafile", "@ca.pem", "--at",
                at.description,
            ] + extra, at: at)
    }

    @Test func escapesInCachingHeadersNeverReachTheTerminal() throws {
        let workspace = try Self.world()
        // C0 controls (ESC, BEL) in a header: the client refuses the response (unreachable).
        let c0 = try TLSFileServer(
            root: workspace.path("tree"), certificate: workspace.path("server.pem"),
            key: workspace.path("server.key"),
            headers: ["ETag: \"\u{1b}[2J\u{1b}]0;owned\u{07}\"", "Cache-Control: max-age=60"], statuses: [:],
            work: workspace.directory.path)
        let refused = status(workspace, port: c0.port)
        c0.stop()
        try? FileManager.default.removeItem(atPath: workspace.path("port"))
        #expect(refused.status == 3, "\(refused.err)")
        #expect(refused.err.contains("control character in header field \"ETag\""), "\(refused.err)")

        // A C1 CSI (byte 0x9B, read as U+009B) and other Latin-1 bytes.
        let c1 = try TLSFileServer(
            root: workspace.path("tree"), certificate: workspace.path("server.pem"),
            key: workspace.path("server.key"),
            headers: ["ETag: \"\u{9b}2Jowned\u{e9}\"", "Cache-Control: no-cache\u{9b}31m"], statuses: [:],
            work: workspace.directory.path)
        let text = status(workspace, port: c1.port)
        let json = status(workspace, port: c1.port, ["--json"])
        c1.stop()
        for result in [refused, text, json] {
            for output in [result.out, result.err] {
                let raw = output.unicodeScalars.filter {
                    ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value)
                }
                #expect(raw.isEmpty, "\(output)")
            }
        }
        #expect(text.status == 0, "\(text.out)\(text.err)")
        // Shown escaped (TerminalText), and in JSON as \u escapes of the value received.
        #expect(text.out.contains(#"etag        "\u{9B}2Jownedé""#), "\(text.out)")
        #expect(text.out.contains(#"cache       no-cache\u{9B}31m"#), "\(text.out)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any], "\(json.out)")
        let publisher = try #require(object["publisher"] as? [String: Any])
        #expect(publisher["etag"] as? String == "\"\u{9b}2Jowned\u{e9}\"")
        #expect(publisher["cacheControl"] as? String == "no-cache\u{9b}31m")
    }

    @Test func httpErrorsAreUnreachableNotBroken() throws {
        let workspace = try Self.world()
        let scope = "/v1/com.example.app/"
        for (path, code) in [("root/2.json", 500), ("manifest.json", 503), ("manifest.json", 403)] {
            let server = try TLSFileServer(
                root: workspace.path("tree"), certificate: workspace.path("server.pem"),
                key: workspace.path("server.key"), headers: [], statuses: [scope + path: code],
                work: workspace.directory.path)
            let result = status(workspace, port: server.port, ["--json"])
            server.stop()
            #expect(result.status == 3, "\(path) \(code): \(result.err)")
            #expect(result.err.contains("HTTP status \(code)"), "\(result.err)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any], "\(result.out)")
            #expect(object["health"] as? String == "unreachable")
            try? FileManager.default.removeItem(atPath: workspace.path("port"))
        }
    }
}

/// Base64 of a repeated-byte pin digest, for `--pin sha256/...`.
enum StatusPinText {
    static func pin(_ byte: UInt8) -> String { Data(repeating: byte, count: 32).base64EncodedString() }
}
