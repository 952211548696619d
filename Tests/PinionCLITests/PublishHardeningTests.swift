// `pinion publish` against a damaged or hostile tree: symbolic links where directories or
// files should be, abandoned temporary files, a future issuedAt, and validators that
// mtime-based servers (nginx) derive.

import Foundation
import PinionCore
import PinionTestSupport
import Testing

@Suite struct PublishHardeningTests {
    let scopeDir = "tree/v1/com.example.app"

    func world() throws -> Workspace {
        let w = try Workspace()
        w.standardRoot()
        w.ok(["publish", "--repo", "@tree", "@root.json"])
        w.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@p1.json"])
        w.ok(["manifest", "set-domain", "@p1.json", "api.example.com", "--pin", pinA, "--pin", pinB])
        w.ok(["sign", "--key", "@pins.key", "@p1.json", "-o", "@m1.json"])
        w.ok(["manifest", "init", "--previous", "@m1.json", "--expires-in", "30d", "-o", "@p2.json"])
        w.ok(["sign", "--key", "@pins.key", "@p2.json", "-o", "@m2.json"])
        return w
    }

    @Test func refusesAHistoryDirectoryThatIsASymbolicLink() throws {
        let w = try world()
        w.ok(["publish", "--repo", "@tree", "@m1.json"])
        let history = w.path("\(scopeDir)/history")
        try FileManager.default.moveItem(atPath: history, toPath: w.path("elsewhere"))
        try FileManager.default.createSymbolicLink(atPath: history, withDestinationPath: w.path("elsewhere"))
        let result = w.run(["publish", "--repo", "@tree", "@m2.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("history: not a directory"))
        #expect(!w.exists("elsewhere/2.json"), "nothing is written through the link")
        #expect(try w.readBytes("\(scopeDir)/manifest.json") == (try w.readBytes("m1.json")))
    }

    @Test func refusesAHistoryFileThatIsASymbolicLink() throws {
        let w = try world()
        w.ok(["publish", "--repo", "@tree", "@m1.json"])
        let latest = w.path("\(scopeDir)/history/1.json")
        try FileManager.default.moveItem(atPath: latest, toPath: w.path("copy-of-1.json"))
        try FileManager.default.createSymbolicLink(atPath: latest, withDestinationPath: w.path("copy-of-1.json"))
        let result = w.run(["publish", "--repo", "@tree", "@m2.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("history/1.json: not a regular file"))
        #expect(!w.exists("\(scopeDir)/history/2.json"))
    }

    @Test func removesTemporaryFilesAnAbandonedPublishLeft() throws {
        let w = try world()
        w.ok(["publish", "--repo", "@tree", "@m1.json"])
        try w.write("\(scopeDir)/.manifest.json.tmp-999-1", "{\"half")
        try w.write("\(scopeDir)/history/.2.json.tmp-999-2", "{\"half")
        try w.write("\(scopeDir)/.keep-me", "operator's file")
        w.ok(["publish", "--repo", "@tree", "@m2.json"])
        #expect(!w.exists("\(scopeDir)/.manifest.json.tmp-999-1"))
        #expect(!w.exists("\(scopeDir)/history/.2.json.tmp-999-2"))
        #expect(w.exists("\(scopeDir)/.keep-me"))
        #expect(try w.readBytes("\(scopeDir)/manifest.json") == (try w.readBytes("m2.json")))
    }

    @Test func refusesAnIssuedAtMoreThanAnHourAfterThePublishTime() throws {
        let w = try world()
        w.ok(["publish", "--repo", "@tree", "@m1.json"])
        let late = w.now.adding(seconds: 2 * 3600).description
        w.ok([
            "manifest", "init", "--previous", "@m1.json", "--issued-at", late, "--expires-in", "30d", "-o", "@f2.json",
        ])
        w.ok(["sign", "--key", "@pins.key", "@f2.json", "-o", "@future2.json"])
        let result = w.run(["publish", "--repo", "@tree", "@future2.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("more than an hour after the publish time"))
        #expect(!w.exists("\(scopeDir)/history/2.json"))
        // Within the tolerance (signers' clocks drift) it is accepted.
        let soon = w.now.adding(seconds: 600).description
        w.ok([
            "manifest", "init", "--previous", "@m1.json", "--issued-at", soon, "--expires-in", "30d", "-o", "@s2.json",
        ])
        w.ok(["sign", "--key", "@pins.key", "@s2.json", "-o", "@soon2.json"])
        w.ok(["publish", "--repo", "@tree", "@soon2.json"])
    }

    @Test func eachNewManifestGetsALaterModificationTime() throws {
        let w = try world()
        w.ok(["publish", "--repo", "@tree", "@m1.json"])
        func mtime() -> Int {
            var info = stat()
            _ = lstat(w.path("\(scopeDir)/manifest.json"), &info)
            return info.st_mtim.tv_sec
        }
        let first = mtime()
        w.ok(["publish", "--repo", "@tree", "@m2.json"])
        // Same second, maybe the same size: nginx's ETag ("mtime-size") must still change.
        #expect(mtime() > first)
    }
}
