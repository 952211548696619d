// `pinion publish --plan` and `pinion plan`: the phases a mirror uploads, their files' serving
// fields, the CDN invalidations and the refusal window (docs/PUBLISHING.md "Upload plans").

import Foundation
import PinionCore
import PinionCrypto
import PinionPublisher
import PinionTestSupport
import Testing

@Suite struct UploadPlanTests {
    let scopeDir = "tree/v1/com.example.app"

    /// root.json and m1.json (under root 1) published, as sequence numbers 1 and 2.
    func world() throws -> Workspace {
        let w = try Workspace()
        w.standardRoot()
        w.ok(["publish", "--repo", "@tree", "@root.json"])
        w.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@p1.json"])
        w.ok(["manifest", "set-domain", "@p1.json", "api.example.com", "--pin", pinA, "--pin", pinB])
        w.ok(["sign", "--key", "@pins.key", "@p1.json", "-o", "@m1.json"])
        w.ok(["publish", "--repo", "@tree", "@m1.json"])
        return w
    }

    /// m2.json, the next manifest under `root` signed with `key`.
    func manifest2(_ w: Workspace, root: String = "root.json", key: String = "pins") {
        w.ok([
            "manifest", "init", "--previous", "@m1.json", "--root", "@" + root, "--expires-in", "30d", "-o", "@p2.json",
        ])
        w.ok(["sign", "--key", "@\(key).key", "--root", "@" + root, "@p2.json", "-o", "@m2.json"])
    }

    /// The plan's JSON object.
    func parse(_ bytes: [UInt8]) throws -> JSONObject {
        guard case .object(let plan) = try StrictJSONParser.parse(bytes, limits: Limits.standard.json) else {
            throw TestSetupError(description: "the plan is not a JSON object")
        }
        return plan
    }

    func phases(_ plan: JSONObject) -> [JSONObject] {
        guard case .array(let items) = plan["phases"] else { return [] }
        return items.compactMap { if case .object(let phase) = $0 { return phase } else { return nil } }
    }

    func strings(_ value: JSONValue?) -> [String] {
        guard case .array(let items) = value else { return [] }
        return items.compactMap { if case .string(let text) = $0 { return text } else { return nil } }
    }

    func files(_ phase: JSONObject) -> [JSONObject] {
        guard case .array(let items) = phase["files"] else { return [] }
        return items.compactMap { if case .object(let file) = $0 { return file } else { return nil } }
    }

    func text(_ value: JSONValue?) -> String? { if case .string(let text) = value { return text } else { return nil } }

    @Test func aManifestPublishPlansContentThenIndexThenManifest() throws {
        let w = try world()
        manifest2(w)
        let published = w.ok(["publish", "--repo", "@tree", "@m2.json", "--plan", "@plan.json"])
        #expect(published.out.contains("wrote upload plan"))
        let plan = try parse(try w.readBytes("plan.json"))
        #expect(plan["type"] == .string("pinion.upload-plan"))
        #expect(plan["since"] == .number("3"))
        #expect(plan["manifestVersion"] == .number("2"))
        #expect(plan["refusalWindow"] == .null)
        guard case .object(let tree) = plan["tree"] else {
            Issue.record("no tree object")
            return
        }
        let root1 = try w.readBytes("\(scopeDir)/root/1.json")
        #expect(tree["root1SHA256"] == .string(Hex.encode(sodium.hasher.sha256(root1))))
        let all = phases(plan)
        #expect(all.map { text($0["name"]) } == ["content", "index-and-log", "manifest"])
        #expect(
            all.map { files($0).compactMap { text($0["path"]) } } == [
                ["v1/com.example.app/history/2.json"], ["v1/com.example.app/index.json"],
                ["v1/com.example.app/manifest.json"],
            ])
        #expect(
            all.map { strings($0["invalidate"]) } == [
                [], ["v1/com.example.app/index.json"], ["v1/com.example.app/manifest.json"],
            ])
        // Every file: its bytes' SHA-256 and the fields pinion serve sends for its path.
        for file in all.flatMap(files) {
            let path = text(file["path"]) ?? ""
            let bytes = try w.readBytes("tree/" + path)
            let served = try #require(PublishedPath("/" + path))
            #expect(file["sha256"] == .string(Hex.encode(sodium.hasher.sha256(bytes))), "\(path)")
            #expect(file["size"] == .number(String(bytes.count)))
            #expect(file["contentType"] == .string(served.contentType))
            #expect(file["cacheControl"] == .string(served.cacheControl))
            #expect(file["immutable"] == .bool(served.cacheControl.contains("immutable")))
        }
    }

    @Test func aRotationThatChangesThePinsRolePlansTheRootsLastAndNamesTheWindow() throws {
        let w = try world()
        w.quickKey("pins-2")
        w.ok([
            "root", "rotate", "--previous", "@root.json", "--add-pins-key", "@pins-2.pub", "--remove-pins-key",
            "@pins.pub", "-o", "@r2.json",
        ])
        w.ok(["sign", "--key", "@root.key", "@r2.json", "-o", "@root2.json"])
        manifest2(w, root: "root2.json", key: "pins-2")
        w.ok(["publish", "--repo", "@tree", "@root2.json", "@m2.json", "--plan", "@plan.json"])
        let plan = try parse(try w.readBytes("plan.json"))
        let all = phases(plan)
        #expect(all.map { text($0["name"]) } == ["content", "index-and-log", "manifest", "roots"])
        #expect(all.last.map { files($0).compactMap { text($0["path"]) } } == ["v1/com.example.app/root/2.json"])
        // The cached 404 of root/2.json, from before it existed, must go.
        #expect(all.last.map { strings($0["invalidate"]) } == ["v1/com.example.app/root/2.json"])
        #expect(plan["rootVersion"] == .number("2"))
        guard case .object(let window) = plan["refusalWindow"] else {
            Issue.record("no refusal window for a manifest signed under a new root")
            return
        }
        #expect(window["firstPhase"] == .string("manifest"))
        #expect(window["lastPhase"] == .string("roots"))
    }

    /// A mirror half-way through the rotation's plan (manifest.json uploaded, root/2.json not
    /// yet) is a publish in progress; a manifest naming any other root version stays broken.
    @Test func statusNamesOnlyTheNextRootsManifestAPublishInProgress() throws {
        let w = try world()
        w.quickKey("pins-2")
        w.ok([
            "root", "rotate", "--previous", "@root.json", "--add-pins-key", "@pins-2.pub", "--remove-pins-key",
            "@pins.pub", "-o", "@r2.json",
        ])
        w.ok(["sign", "--key", "@root.key", "@r2.json", "-o", "@root2.json"])
        manifest2(w, root: "root2.json", key: "pins-2")
        w.ok(["publish", "--repo", "@tree", "@root2.json", "@m2.json"])
        try w.copy("tree", to: "mirror")
        try FileManager.default.removeItem(atPath: w.path("mirror/v1/com.example.app/root/2.json"))
        let window = w.run(["status", "--root", "@root.json", "@mirror"])
        #expect(window.status == 4, "\(window.out)")
        #expect(window.out.contains("publish in progress"), "\(window.out)")
        #expect(window.out.contains("root/2.json is not served yet"))

        // rootVersion 3 is not the next root: clients refuse it as they would any bad manifest.
        let payload = try w.read("p2.json").replacingOccurrences(of: "\"rootVersion\": 2", with: "\"rootVersion\": 3")
        try w.write("p3.json", payload)
        _ = w.run(["sign", "--key", "@pins-2.key", "@p3.json", "-o", "@m3.json"])
        try w.copy("m3.json", to: "mirror/v1/com.example.app/manifest.json.new")
        try FileManager.default.removeItem(atPath: w.path("mirror/v1/com.example.app/manifest.json"))
        try FileManager.default.moveItem(
            atPath: w.path("mirror/v1/com.example.app/manifest.json.new"),
            toPath: w.path("mirror/v1/com.example.app/manifest.json"))
        let skipped = w.run(["status", "--root", "@root.json", "@mirror"])
        #expect(skipped.status == 1, "\(skipped.out)")
        #expect(!skipped.out.contains("publish in progress"))
    }

    @Test func planSinceCoversEveryStepFromThatSequenceNumber() throws {
        let w = try world()
        manifest2(w)
        w.ok(["publish", "--repo", "@tree", "@m2.json"])
        let all = w.ok(["plan", "@tree", "--since", "1"])
        let plan = try parse(Array(all.out.utf8))
        let names = phases(plan).map { files($0).compactMap { text($0["path"]) } }
        #expect(names.first == ["v1/com.example.app/history/1.json", "v1/com.example.app/history/2.json"])
        #expect(names.last == ["v1/com.example.app/root/1.json"])
        #expect(plan["through"] == .number("3"))
        // The same plan as publish --plan would have written for the last step.
        w.ok(["plan", "@tree", "--since", "3", "--out", "@since3.json"])
        let last = try parse(try w.readBytes("since3.json"))
        #expect(phases(last).map { text($0["name"]) } == ["content", "index-and-log", "manifest"])
    }

    @Test func plansNeverListHiddenFilesOrPending() throws {
        let w = try world()
        try w.write("\(scopeDir)/history/.3.json.tmp-1-2", "{}")
        try FileManager.default.createDirectory(
            atPath: w.path("tree/pending/com.example.app"), withIntermediateDirectories: true)
        try w.write("tree/pending/com.example.app/checkpoint", "x")
        let out = w.ok(["plan", "@tree", "--since", "1"]).out
        #expect(!out.contains(".3.json"))
        #expect(!out.contains("pending"))
    }

    @Test func refusesAPlanInsideTheServedTreeBeforePublishing() throws {
        let w = try world()
        manifest2(w)
        let index = try w.readBytes("\(scopeDir)/index.json")
        let refused = w.run(["publish", "--repo", "@tree", "@m2.json", "--plan", "@\(scopeDir)/plan.json"])
        #expect(refused.status == 2)
        #expect(refused.err.contains("inside the served tree"))
        #expect(try w.readBytes("\(scopeDir)/index.json") == index)
        #expect(!w.exists("\(scopeDir)/history/2.json"))
        #expect(!w.exists("\(scopeDir)/plan.json"))
        let noDirectory = w.run(["publish", "--repo", "@tree", "@m2.json", "--plan", "@nowhere/plan.json"])
        #expect(noDirectory.status == 2)
        #expect(noDirectory.err.contains("does not exist"))
        #expect(!w.exists("\(scopeDir)/history/2.json"))
    }

    @Test func refusesBadPlanArguments() throws {
        let w = try world()
        let missing = w.run(["plan", "@tree"])
        #expect(missing.status == 2)
        #expect(missing.err.contains("--since"))
        let beyond = w.run(["plan", "@tree", "--since", "9"])
        #expect(beyond.status == 1)
        #expect(beyond.err.contains("no publish step has sequence number 9 or later (the last is 2)"))
        let zero = w.run(["plan", "@tree", "--since", "0"])
        #expect(zero.status == 2)
        let noTree = w.run(["plan", "@absent", "--since", "1"])
        #expect(noTree.status == 3)
        #expect(noTree.err.contains("no such directory"))
        let badScope = w.run(["plan", "@tree", "--since", "1", "--scope", "../x"])
        #expect(badScope.status == 2)
        let otherScope = w.run(["plan", "@tree", "--since", "1", "--scope", "org.example.other"])
        #expect(otherScope.status == 1)
        #expect(otherScope.err.contains("no root is published for scope org.example.other"))
        #expect(!w.exists("tree/v1/org.example.other"))
    }

    @Test func aPublishThatListsNothingNewPlansOnlyTheMutableFiles() throws {
        let w = try world()
        w.ok(["publish", "--repo", "@tree", "@m1.json", "--plan", "@plan.json"])
        let plan = try parse(try w.readBytes("plan.json"))
        #expect(plan["since"] == .null)
        #expect(phases(plan).map { text($0["name"]) } == ["index-and-log"])
    }
}
