// `pinion status` against real nginx (deploy/nginx/pinion.conf) serving a tree written by
// `pinion publish`: each exit code (0, 1, 3, 4) and nginx's ETag and Cache-Control.

import Foundation
import PinionCore
import PinionTestSupport
import Testing

@Suite(.serialized) struct StatusNginxTests {
    @Test func nginxServingTheTreeGetsEachExitCode() throws {
        let pki = try HTTPSTestPKI.shared()
        let workspace = try Workspace(prefix: "pinion-status-nginx")
        workspace.standardRoot()
        _ = try workspace.makeDirectory("tree")
        try workspace.require(["publish", "--repo", "@tree", "@root.json"], at: t0)
        try workspace.require(
            ["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@m1.json"], at: t0)
        try workspace.require(
            [
                "manifest", "set-domain", "@m1.json", "www.example.com", "--pin",
                "sha256/" + Base64.encode(pin(7).digest), "--pin", "sha256/" + Base64.encode(pin(8).digest),
            ], at: t0)
        try workspace.require(["sign", "--key", "@pins.key", "@m1.json", "-o", "@m1.signed.json"], at: t0)
        try workspace.require(["publish", "--repo", "@tree", "@m1.signed.json"], at: t0)

        let nginx = try NginxServer(
            tree: workspace.path("tree"), chain: [pki.path(.ipLeaf), pki.path(.intermediate)],
            key: pki.keyPath(.ipLeaf))
        defer { nginx.stop() }
        let url = "https://127.0.0.1:\(nginx.port)/"
        func status(_ at: Timestamp, _ extra: [String] = []) -> CommandResult {
            workspace.run(
                ["status", "--root", "@root.json", url, "--cafile", pki.path(.root), "--at", at.description] + extra,
                at: at)
        }

        let healthy = status(t0.adding(seconds: day), ["--json"])
        #expect(healthy.status == 0, "\(healthy.err)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(healthy.out.utf8)) as? [String: Any], "\(healthy.out)")
        #expect(json["health"] as? String == "healthy")
        #expect((json["manifest"] as? [String: Any])?["version"] as? Int == 1)
        let publisher = try #require(json["publisher"] as? [String: Any])
        #expect(publisher["cacheControl"] as? String == "no-cache")
        // nginx's ETag: "<mtime in hex>-<size in hex>"; the size is the manifest's.
        let size = try workspace.readBytes("tree/v1/com.example.app/manifest.json").count
        let etag = try #require(publisher["etag"] as? String)
        #expect(etag.hasSuffix("-" + String(size, radix: 16) + "\""), "\(etag)")

        let text = status(t0.adding(seconds: day))
        #expect(text.out.contains("etag        \(etag)"), "\(text.out)")
        #expect(text.out.contains("cache       no-cache"), "\(text.out)")

        let warning = status(t0.adding(seconds: 25 * day))
        #expect(warning.status == 4, "\(warning.err)")
        #expect(warning.err.hasPrefix("pinion: warning: "))
        #expect(status(t0.adding(seconds: 31 * day)).status == 1)
        let lagging = status(t0.adding(seconds: day), ["--expect-version", "3"])
        #expect(lagging.status == 1)
        #expect(lagging.err.contains("serves version 1, but version 3 was published"), "\(lagging.err)")

        // Another scope's root: nginx answers 404 for all its files: unreachable, not broken.
        let other = try Workspace(prefix: "pinion-status-nginx-other")
        other.standardRoot(scope: "org.other.app")
        let otherScope = workspace.run(
            [
                "status", "--root", other.path("root.json"), url, "--cafile", pki.path(.root), "--at",
                t0.adding(seconds: day).description,
            ], at: t0.adding(seconds: day))
        #expect(otherScope.status == 3, "\(otherScope.err)")
        #expect(otherScope.err.contains("no tree of this scope at this location"), "\(otherScope.err)")

        nginx.stop()
        let down = status(t0.adding(seconds: day))
        #expect(down.status == 3, "\(down.err)")
        #expect(down.err.contains("unreachable"), "\(down.err)")
    }
}
