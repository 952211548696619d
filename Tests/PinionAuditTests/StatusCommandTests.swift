// `pinion status` against a tree directory and against `pinion serve` serving it: each exit
// code (0, 1, 3, 4), JSON values, the Prometheus file parsed strictly, and bad inputs.

import Foundation
import PinionCore
import PinionTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A tree published by the CLI at t0: root 1 (expires t0 + 365 d) and manifest 1
/// (expires t0 + 30 d) of scope com.example.app, pinning one domain.
final class StatusTree: @unchecked Sendable {
    let workspace: Workspace
    var tree: String { workspace.path("tree") }
    var scopeDirectory: String { tree + "/v1/com.example.app" }
    let pinsKeyID: String

    init() throws {
        workspace = try Workspace(prefix: "pinion-status")
        workspace.standardRoot()
        pinsKeyID = workspace.ok(["key", "id", "@pins.pub"]).out.trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try workspace.makeDirectory("tree")
        try workspace.require(["publish", "--repo", "@tree", "@root.json"], at: t0)
        try publishManifest(version: 1)
    }

    /// Signs and publishes the next manifest (issued at t0, 30 days).
    func publishManifest(version: Int64) throws {
        let name = "m\(version)"
        if version == 1 {
            try workspace.require(
                ["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@\(name).json"], at: t0)
        } else {
            try workspace.require(
                [
                    "manifest", "init", "--previous", scopeDirectory + "/manifest.json", "--expires-in", "30d", "-o",
                    "@\(name).json",
                ], at: t0)
        }
        try workspace.require(
            [
                "manifest", "set-domain", "@\(name).json", "www.example.com", "--pin",
                "sha256/" + Base64.encode(pin(7).digest), "--pin", "sha256/" + Base64.encode(pin(8).digest),
            ], at: t0)
        try workspace.require(["sign", "--key", "@pins.key", "@\(name).json", "-o", "@\(name).signed.json"], at: t0)
        try workspace.require(["publish", "--repo", "@tree", "@\(name).signed.json"], at: t0)
    }

    /// `pinion status --root root.json TARGET --at TIME EXTRA...`, in-process.
    func status(_ target: String, at time: Timestamp, _ extra: [String] = []) -> CommandResult {
        workspace.run(["status", "--root", "@root.json", target, "--at", time.description] + extra, at: time)
    }
}

/// The JSON object of a `--json` run.
func statusCommandJSON(_ result: CommandResult) throws -> [String: Any] {
    let value = try JSONSerialization.jsonObject(with: Data(result.out.utf8))
    return try #require(value as? [String: Any], "not a JSON object: \(result.out)")
}

@Suite struct StatusCommandTests {
    @Test func aTreeDirectoryGetsEachExitCode() throws {
        let fixture = try StatusTree()
        let healthy = fixture.status(fixture.tree, at: t0.adding(seconds: day))
        #expect(healthy.status == 0, "\(healthy.err)")
        #expect(healthy.out.contains("manifest    version 1 (root 1)"), "\(healthy.out)")
        #expect(healthy.out.contains("expires 2026-12-30T09:00:00Z (29d left)"), "\(healthy.out)")
        #expect(healthy.out.contains("signers     \(fixture.pinsKeyID)"), "\(healthy.out)")
        #expect(healthy.out.contains("root        version 1, expires 2027-11-30T09:00:00Z (364d left)"))
        #expect(healthy.out.contains("result      HEALTHY (exit 0)"))
        #expect(healthy.err.isEmpty)

        let warning = fixture.status(fixture.tree, at: t0.adding(seconds: 25 * day))
        #expect(warning.status == 4, "\(warning.err)")
        #expect(warning.err.hasPrefix("pinion: warning: "), "\(warning.err)")
        #expect(warning.err.contains("manifest.json: version 1 expires at 2026-12-30T09:00:00Z"))

        let broken = fixture.status(fixture.tree, at: t0.adding(seconds: 31 * day))
        #expect(broken.status == 1, "\(broken.err)")
        #expect(broken.err.contains("expired at 2026-12-30T09:00:00Z"), "\(broken.err)")
        #expect(broken.out.contains("clients have been narrowing since 2026-12-30T09:00:00Z"), "\(broken.out)")

        let lagging = fixture.status(fixture.tree, at: t0.adding(seconds: day), ["--expect-version", "2"])
        #expect(lagging.status == 1)
        #expect(lagging.err.contains("serves version 1, but version 2 was published"), "\(lagging.err)")
        #expect(fixture.status(fixture.tree, at: t0.adding(seconds: day), ["--expect-version", "1"]).status == 0)

        let unreachable = fixture.status(fixture.workspace.path("no-such-tree"), at: t0.adding(seconds: day))
        #expect(unreachable.status == 3)
        #expect(unreachable.err.contains("no-such-tree: unreachable: cannot open"), "\(unreachable.err)")
    }

    @Test func theRootsExpiryWarnsAndBreaksToo() throws {
        let fixture = try StatusTree()
        // Root 1 expires at t0 + 365 d; a 400-day window warns about both documents.
        let both = fixture.status(fixture.tree, at: t0.adding(seconds: day), ["--warn-before", "400d", "--json"])
        #expect(both.status == 4)
        let json = try statusCommandJSON(both)
        let codes = (json["problems"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
        #expect(codes == ["root-expires-soon", "manifest-expires-soon"])

        // A manifest re-signed past the root's expiry does not help once the root expired.
        let expiredRoot = fixture.status(fixture.tree, at: t0.adding(seconds: 366 * day), ["--json"])
        #expect(expiredRoot.status == 1)
        let expired = try statusCommandJSON(expiredRoot)
        let expiredCodes = (expired["problems"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
        #expect(expiredCodes == ["root-expired", "manifest-expired"])
    }

    @Test func jsonHoldsValuesNotProse() throws {
        let fixture = try StatusTree()
        let result = fixture.status(fixture.tree, at: t0.adding(seconds: 25 * day), ["--json"])
        #expect(result.status == 4)
        let json = try statusCommandJSON(result)
        #expect(json["health"] as? String == "warning")
        #expect(json["exitCode"] as? Int == 4)
        #expect(json["scope"] as? String == "com.example.app")
        #expect(json["at"] as? String == "2026-12-25T09:00:00Z")
        #expect(json["warnBefore"] as? Int == 7 * 86_400)
        #expect(json["publisher"] is NSNull, "a directory has no HTTP headers")
        let manifest = try #require(json["manifest"] as? [String: Any])
        #expect(manifest["version"] as? Int == 1)
        #expect(manifest["expiresAt"] as? String == "2026-12-30T09:00:00Z")
        #expect(manifest["issuedAt"] as? String == "2026-11-30T09:00:00Z")
        #expect(manifest["secondsLeft"] as? Int == 5 * 86_400)
        #expect(manifest["signers"] as? [String] == [fixture.pinsKeyID])
        let root = try #require(json["root"] as? [String: Any])
        #expect(root["version"] as? Int == 1)
        #expect(root["expiresAt"] as? String == "2027-11-30T09:00:00Z")
        #expect(json["narrowsAt"] as? String == "2026-12-30T09:00:00Z")
        #expect(json["secondsUntilNarrowing"] as? Int == 5 * 86_400)
        let problems = try #require(json["problems"] as? [[String: Any]])
        #expect(problems.count == 1)
        #expect(problems.first?["code"] as? String == "manifest-expires-soon")
        #expect(problems.first?["file"] as? String == "manifest.json")
    }

    @Test func thePrometheusFileIsStrictAndKeepsTheLastSuccess() throws {
        let fixture = try StatusTree()
        let file = fixture.workspace.path("pinion_status.prom")
        let first = t0.adding(seconds: day)
        #expect(fixture.status(fixture.tree, at: first, ["--prometheus", file]).status == 0)
        let scope = ["scope": "com.example.app"]
        var samples = try PrometheusText.parse(try String(contentsOfFile: file, encoding: .utf8))
        #expect(samples.value("pinion_status_healthy", scope) == 1)
        #expect(samples.value("pinion_status_up", scope) == 1)
        #expect(samples.value("pinion_status_exit_code", scope) == 0)
        #expect(samples.value("pinion_status_manifest_version", scope) == 1)
        #expect(samples.value("pinion_status_root_version", scope) == 1)
        #expect(
            samples.value("pinion_status_manifest_expires_at_seconds", scope)
                == Double(t0.adding(seconds: 30 * day).secondsSince1970))
        #expect(
            samples.value("pinion_status_root_expires_at_seconds", scope)
                == Double(t0.adding(seconds: 365 * day).secondsSince1970))
        #expect(
            samples.value("pinion_status_last_success_timestamp_seconds", scope) == Double(first.secondsSince1970))

        // Unreachable a day later: the last success stays, the run time moves.
        let second = t0.adding(seconds: 2 * day)
        let unreachable = fixture.status(fixture.workspace.path("gone"), at: second, ["--prometheus", file])
        #expect(unreachable.status == 3)
        samples = try PrometheusText.parse(try String(contentsOfFile: file, encoding: .utf8))
        #expect(samples.value("pinion_status_healthy", scope) == 0)
        #expect(samples.value("pinion_status_up", scope) == 0)
        #expect(samples.value("pinion_status_exit_code", scope) == 3)
        #expect(
            samples.value("pinion_status_last_success_timestamp_seconds", scope) == Double(first.secondsSince1970))
        #expect(samples.value("pinion_status_last_run_timestamp_seconds", scope) == Double(second.secondsSince1970))

        // Broken (expired): still reachable, unhealthy, the last success unchanged.
        let third = t0.adding(seconds: 31 * day)
        #expect(fixture.status(fixture.tree, at: third, ["--prometheus", file]).status == 1)
        samples = try PrometheusText.parse(try String(contentsOfFile: file, encoding: .utf8))
        #expect(samples.value("pinion_status_healthy", scope) == 0)
        #expect(samples.value("pinion_status_up", scope) == 1)
        #expect(
            samples.value("pinion_status_last_success_timestamp_seconds", scope) == Double(first.secondsSince1970))

        // A warning is a success: clients are not narrowing yet.
        let fourth = t0.adding(seconds: 25 * day)
        #expect(fixture.status(fixture.tree, at: fourth, ["--prometheus", file]).status == 4)
        samples = try PrometheusText.parse(try String(contentsOfFile: file, encoding: .utf8))
        #expect(samples.value("pinion_status_warning", scope) == 1)
        #expect(samples.value("pinion_status_healthy", scope) == 1)
        #expect(
            samples.value("pinion_status_last_success_timestamp_seconds", scope) == Double(fourth.secondsSince1970))
        // Written atomically: no temporary file is left next to it.
        let names = try FileManager.default.contentsOfDirectory(atPath: fixture.workspace.directory.path)
        #expect(names.filter { $0.hasPrefix(".pinion_status.prom") || $0.contains(".tmp") }.isEmpty, "\(names)")

        // A file that is not ours carries no last success (and is replaced).
        try fixture.workspace.write("pinion_status.prom", "garbage\n")
        #expect(fixture.status(fixture.workspace.path("gone"), at: second, ["--prometheus", file]).status == 3)
        samples = try PrometheusText.parse(try String(contentsOfFile: file, encoding: .utf8))
        #expect(samples.value("pinion_status_last_success_timestamp_seconds", scope) == nil)
    }

    @Test func badInputsGetUsageOrIOExitsAndClearMessages() throws {
        let fixture = try StatusTree()
        let at = t0.adding(seconds: day)
        let workspace = fixture.workspace
        func run(_ arguments: [String]) -> CommandResult {
            workspace.run(["status"] + arguments + ["--at", at.description], at: at)
        }

        let missing = run(["--root", "@no-root.json", fixture.tree])
        #expect(missing.status == 3)
        #expect(missing.err.contains("no-root.json: cannot open"), "\(missing.err)")

        try workspace.write("garbage.json", "this is not a root\n")
        let garbage = run(["--root", "@garbage.json", fixture.tree])
        #expect(garbage.status == 2, "\(garbage.err)")
        #expect(garbage.err.contains("--root \(workspace.path("garbage.json")): not a root envelope"), "\(garbage.err)")

        let manifestAsRoot = run(["--root", "@m1.signed.json", fixture.tree])
        #expect(manifestAsRoot.status == 2, "\(manifestAsRoot.err)")

        let fifo = workspace.path("root.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let fifoRoot = run(["--root", fifo, fixture.tree])
        #expect(fifoRoot.status == 2, "\(fifoRoot.err)")
        #expect(fifoRoot.err.contains("root.fifo"), "\(fifoRoot.err)")

        // A root of another scope: the tree has nothing for it.
        let other = try Workspace(prefix: "pinion-status-other")
        other.standardRoot(scope: "org.other.app")
        let otherScope = workspace.run(
            ["status", "--root", other.path("root.json"), fixture.tree, "--at", at.description], at: at)
        #expect(otherScope.status == 3, "\(otherScope.err)")
        #expect(otherScope.err.contains("no tree published for scope org.other.app"), "\(otherScope.err)")

        // --prometheus naming a FIFO is refused before anything is read; the FIFO stays.
        let fifoMetrics = run(["--root", "@root.json", fixture.tree, "--prometheus", fifo])
        #expect(fifoMetrics.status == 2, "\(fifoMetrics.err)")
        var info = stat()
        #expect(lstat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
        let noDirectory = run(["--root", "@root.json", fixture.tree, "--prometheus", workspace.path("none/x.prom")])
        #expect(noDirectory.status == 3, "\(noDirectory.err)")
        #expect(noDirectory.err.contains("none/x.prom"), "\(noDirectory.err)")
        #expect(noDirectory.out.contains("result      HEALTHY"), "the findings are printed before the write fails")

        for (flags, expected) in [
            (["--warn-before", "soon"], "--warn-before"), (["--expect-version", "0"], "--expect-version"),
            (["--expect-version", "x"], "--expect-version"), (["--cafile", "@root.json"], "--cafile"),
        ] {
            let result = run(["--root", "@root.json", fixture.tree] + flags)
            #expect(result.status == 2, "\(flags): \(result.err)")
            #expect(result.err.contains(expected), "\(flags): \(result.err)")
        }
        let plainHTTP = run(["--root", "@root.json", "http://127.0.0.1:1/"])
        #expect(plainHTTP.status == 2)
        #expect(plainHTTP.err.contains("https://"), "\(plainHTTP.err)")
        #expect(run(["--root", "@root.json"]).status == 2)
        #expect(run([fixture.tree]).status == 2)
    }

    @Test func aBadlyPublishedTreeIsBroken() throws {
        let fixture = try StatusTree()
        let at = t0.adding(seconds: day)
        let manifestPath = fixture.scopeDirectory + "/manifest.json"
        let original = try fixture.workspace.readBytes("tree/v1/com.example.app/manifest.json")

        try Data("{\"payloadType\": 1}".utf8).write(to: URL(fileURLWithPath: manifestPath))
        let garbage = fixture.status(fixture.tree, at: at, ["--json"])
        #expect(garbage.status == 1)
        #expect(try statusCommandJSON(garbage)["manifest"] is NSNull)
        #expect(garbage.err.contains("manifest.json: refused by clients"), "\(garbage.err)")

        // One flipped bit in the payload: the signature no longer verifies.
        var flipped = original
        if let index = flipped.firstIndex(of: UInt8(ascii: "Q")) { flipped[index] = UInt8(ascii: "R") }
        try Data(flipped).write(to: URL(fileURLWithPath: manifestPath))
        #expect(fixture.status(fixture.tree, at: at).status == 1)

        try FileManager.default.removeItem(atPath: manifestPath)
        let absent = fixture.status(fixture.tree, at: at)
        #expect(absent.status == 1)
        #expect(absent.err.contains("manifest.json: not published"), "\(absent.err)")

        // A FIFO where the manifest belongs is refused, never read (no hang).
        #expect(mkfifo(manifestPath, 0o644) == 0)
        let fifo = fixture.status(fixture.tree, at: at)
        #expect(fifo.status == 1)
        #expect(fifo.err.contains("is a FIFO"), "\(fifo.err)")
        try FileManager.default.removeItem(atPath: manifestPath)

        // A garbage root/2.json: the rotation fails, as it would for a client.
        try Data(original).write(to: URL(fileURLWithPath: manifestPath))
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: fixture.scopeDirectory + "/root/2.json"))
        let badRoot = fixture.status(fixture.tree, at: at, ["--json"])
        #expect(badRoot.status == 1)
        let codes = (try statusCommandJSON(badRoot)["problems"] as? [[String: Any]])?.compactMap {
            $0["code"] as? String
        }
        #expect(codes == ["root-invalid"])
    }

    @Test func pinionServeGetsEachExitCodeAndShowsItsCachingHeaders() throws {
        let fixture = try StatusTree()
        let credentials = try ServerCredentials.shared()
        let server = try AnnouncedServer(
            [
                "serve", "--repo", fixture.tree, "--cert", credentials.certificate, "--key", credentials.key,
                "--listen", "127.0.0.1:0", "--access-log", "off",
            ], expectMetrics: false)
        let url = server.url + "/"
        let tls = ["--cafile", credentials.certificate]
        let file = fixture.workspace.path("serve.prom")

        let healthy = fixture.status(url, at: t0.adding(seconds: day), tls + ["--prometheus", file])
        #expect(healthy.status == 0, "\(healthy.err)")
        #expect(healthy.out.contains("manifest    version 1 (root 1)"), "\(healthy.out)")
        #expect(healthy.out.contains("cache       no-cache"), "\(healthy.out)")
        let json = try statusCommandJSON(fixture.status(url, at: t0.adding(seconds: day), tls + ["--json"]))
        let publisher = try #require(json["publisher"] as? [String: Any])
        let etag = try #require(publisher["etag"] as? String)
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count > 2, "\(etag)")
        #expect(healthy.out.contains("etag        \(etag)"))
        #expect(publisher["cacheControl"] as? String == "no-cache")

        // A root of another scope: pinion serve has nothing of it (404 for every file).
        let other = try Workspace(prefix: "pinion-status-serve-other")
        other.standardRoot(scope: "org.other.app")
        let otherScope = fixture.workspace.run(
            ["status", "--root", other.path("root.json"), url, "--at", t0.adding(seconds: day).description] + tls,
            at: t0.adding(seconds: day))
        #expect(otherScope.status == 3, "\(otherScope.err)")
        #expect(otherScope.err.contains("no tree of this scope at this location"), "\(otherScope.err)")

        #expect(fixture.status(url, at: t0.adding(seconds: 25 * day), tls).status == 4)
        #expect(fixture.status(url, at: t0.adding(seconds: 31 * day), tls).status == 1)
        #expect(fixture.status(url, at: t0.adding(seconds: day), tls + ["--expect-version", "2"]).status == 1)

        // The publisher catches up: manifest 2 is served and --expect-version 2 passes.
        try fixture.publishManifest(version: 2)
        let caughtUp = fixture.status(url, at: t0.adding(seconds: day), tls + ["--expect-version", "2", "--json"])
        #expect(caughtUp.status == 0, "\(caughtUp.err)")
        #expect((try statusCommandJSON(caughtUp)["manifest"] as? [String: Any])?["version"] as? Int == 2)

        // Without the CA file the certificate is refused: unreachable, as for a client.
        let untrusted = fixture.status(url, at: t0.adding(seconds: day))
        #expect(untrusted.status == 3, "\(untrusted.err)")

        #expect(server.stop() == 0)
        let down = fixture.status(url, at: t0.adding(seconds: 2 * day), tls + ["--prometheus", file])
        #expect(down.status == 3, "\(down.err)")
        #expect(down.err.contains("unreachable"), "\(down.err)")
        let samples = try PrometheusText.parse(try String(contentsOfFile: file, encoding: .utf8))
        #expect(samples.value("pinion_status_up", ["scope": "com.example.app"]) == 0)
        #expect(
            samples.value("pinion_status_last_success_timestamp_seconds", ["scope": "com.example.app"])
                == Double(t0.adding(seconds: day).secondsSince1970))
    }
}
