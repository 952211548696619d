// `pinion publish` looks before it removes a pin: the effective-policy changes it lists, and
// `--check-live` against real TLS servers on 127.0.0.1 (one key, or an RSA and an EC key).

import Foundation
import PinionTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A published tree (root, manifest version 1 pinning leafA and leafB for api.example.test)
/// and manifest version 2 signed in `v2.signed.json`, built by the caller's domains.
private struct RemovalWorld {
    let workspace: Workspace
    let pki: InteropPKI

    init(v1: [(String, [String], [String])], v2: [(String, [String], [String])]) throws {
        workspace = try Workspace.interop()
        pki = try InteropPKI.shared()
        workspace.standardRoot()
        workspace.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@v1.json"])
        for (name, pins, flags) in v1 {
            workspace.ok(["manifest", "set-domain", "@v1.json", name] + pins.flatMap { ["--pin", $0] } + flags)
        }
        workspace.sign("v1.json", to: "v1.signed.json")
        workspace.ok(["publish", "--repo", "@tree", "@root.json", "@v1.signed.json"])
        workspace.ok(["manifest", "init", "--previous", "@v1.signed.json", "--expires-in", "30d", "-o", "@v2.json"])
        if let first = v1.first, !v2.contains(where: { $0.0 == first.0 }) {
            workspace.ok(["manifest", "remove-domain", "@v2.json", first.0])
        }
        for (name, pins, flags) in v2 {
            workspace.ok(["manifest", "set-domain", "@v2.json", name] + pins.flatMap { ["--pin", $0] } + flags)
        }
        workspace.sign("v2.json", to: "v2.signed.json")
    }

    /// Every file of the tree with its bytes.
    func tree() throws -> [String: Data] {
        let root = workspace.path("tree")
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let path = root + "/" + relative
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            files[relative] = isDirectory.boolValue ? Data() : try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return files
    }

    func publish(_ extra: [String]) -> CommandResult {
        workspace.run(["publish", "--repo", "@tree", "@v2.signed.json"] + extra)
    }

    /// `--check-live` at `server` (api.example.test, reached at 127.0.0.1, the test CA).
    func live(_ server: InteropTLSServer) -> [String] {
        [
            "--check-live", "--live", server.target, "--resolve", "api.example.test=127.0.0.1", "--cafile",
            pki.path("ca.pem"),
        ]
    }

    /// The version manifest.json serves.
    func servedVersion() throws -> String {
        let text = try workspace.read("tree/v1/com.example.app/index.json")
        return text.contains("\"version\":2") || text.contains("\"version\": 2") ? "2" : "1"
    }
}

@Suite struct PublishCheckLiveTests {
    @Test func refusesRemovingAPinALiveServerStillPresentsAndWritesNothing() throws {
        let pki = try InteropPKI.shared()
        let (pinA, pinB) = (try pki.pin("leafA.pem"), try pki.pin("leafB.pem"))
        let world = try RemovalWorld(
            v1: [("api.example.test", [pinA, pinB], [])], v2: [("api.example.test", [pinB, testPin(7)], [])])
        let server = try InteropTLSServer(certificate: pki.path("leafA.pem"), key: pki.path("leafA.key"))
        let before = try world.tree()

        let result = world.publish(world.live(server))
        #expect(result.status == 1, "\(result.out)\(result.err)")
        #expect(
            result.out.contains(
                "manifest version 2 changes the effective policy against version 1, the manifest being replaced:"))
        #expect(
            result.out.contains("api.example.test: removes \(pinA); accepts \(pinB), \(testPin(7)); adds \(testPin(7))")
        )
        #expect(result.out.contains("live \(server.target) at 127.0.0.1:\(server.port) (ECDSA): verified"))
        #expect(
            result.err.contains(
                "removed-pin-live: api.example.test: 127.0.0.1:\(server.port) (ECDSA) still presents \(pinA), removed from api.example.test"
            ), "\(result.err)")
        #expect(result.err.contains("nothing written"))
        #expect(try world.tree() == before)
        #expect(try world.servedVersion() == "1")
    }

    @Test func publishesOnceNoServerPresentsTheRemovedPin() throws {
        let pki = try InteropPKI.shared()
        let (pinA, pinB) = (try pki.pin("leafA.pem"), try pki.pin("leafB.pem"))
        let world = try RemovalWorld(
            v1: [("api.example.test", [pinA, pinB], [])], v2: [("api.example.test", [pinB, testPin(7)], [])])
        let server = try InteropTLSServer(certificate: pki.path("leafB.pem"), key: pki.path("leafB.key"))
        let result = world.publish(world.live(server))
        #expect(result.status == 0, "\(result.out)\(result.err)")
        #expect(result.out.contains("checked \(server.target) at 127.0.0.1:\(server.port)"))
        #expect(result.out.contains("published manifest version 2"))
        #expect(try world.servedVersion() == "2")
    }

    @Test func aServerHoldingAnRSAAndAnECKeyIsProbedForBoth() throws {
        let pki = try InteropPKI.shared()
        let (pinRSA, pinB) = (try pki.pin("leafRSA.pem"), try pki.pin("leafB.pem"))
        let world = try RemovalWorld(
            v1: [("api.example.test", [pinRSA, pinB], [])], v2: [("api.example.test", [pinB, testPin(7)], [])])
        let server = try InteropTLSServer(certificates: [
            (pki.path("leafB.pem"), pki.path("leafB.key")), (pki.path("leafRSA.pem"), pki.path("leafRSA.key")),
        ])
        let result = world.publish(world.live(server))
        #expect(result.status == 1, "\(result.out)\(result.err)")
        #expect(result.out.contains("* \(pinB)  CN=api.example.test"))
        #expect(
            result.err.contains(
                "removed-pin-live: api.example.test: 127.0.0.1:\(server.port) (RSA) still presents \(pinRSA)"),
            "\(result.out)\(result.err)")
    }

    @Test func withoutCheckLiveItWarnsAndNamesTheLintCommand() throws {
        let pki = try InteropPKI.shared()
        let (pinA, pinB) = (try pki.pin("leafA.pem"), try pki.pin("leafB.pem"))
        let world = try RemovalWorld(
            v1: [("api.example.test", [pinA, pinB], [])], v2: [("api.example.test", [pinB, testPin(7)], [])])
        let result = world.publish([])
        #expect(result.status == 0, "\(result.out)\(result.err)")
        #expect(result.out.contains("api.example.test: removes \(pinA)"))
        #expect(
            result.err.contains(
                "Check first: pinion lint \(world.workspace.path("v2.signed.json")) --previous \(world.workspace.path("tree"))/v1/com.example.app/history/1.json --live api.example.test:443"
            ), "\(result.err)")
        #expect(try world.servedVersion() == "2")
    }

    @Test func allowRemovingLivePinPublishesWithALoudWarning() throws {
        let pki = try InteropPKI.shared()
        let (pinA, pinB) = (try pki.pin("leafA.pem"), try pki.pin("leafB.pem"))
        let world = try RemovalWorld(
            v1: [("api.example.test", [pinA, pinB], [])], v2: [("api.example.test", [pinB, testPin(7)], [])])
        let server = try InteropTLSServer(certificate: pki.path("leafA.pem"), key: pki.path("leafA.key"))
        let result = world.publish(world.live(server) + ["--allow-removing-live-pin"])
        #expect(result.status == 0, "\(result.out)\(result.err)")
        #expect(result.err.contains("--allow-removing-live-pin: PUBLISHING A MANIFEST THAT CUTS OFF LIVE SERVERS"))
        #expect(
            result.err.contains(
                "removed-pin-live: api.example.test: 127.0.0.1:\(server.port) (ECDSA) still presents \(pinA)"))
        #expect(try world.servedVersion() == "2")
    }

    @Test func unsignedInputNeverMakesThePublisherConnect() throws {
        let pki = try InteropPKI.shared()
        let (pinA, pinB) = (try pki.pin("leafA.pem"), try pki.pin("leafB.pem"))
        let world = try RemovalWorld(
            v1: [("api.example.test", [pinA, pinB], [])], v2: [("api.example.test", [pinB, testPin(7)], [])])
        // The same payload signed by a key the root does not list.
        world.workspace.quickKey("stranger")
        world.workspace.ok(["sign", "--key", "@stranger.key", "@v2.json", "-o", "@v2.signed.json", "--force"])
        let listener = try LoopbackListener()
        let before = try world.tree()
        let result = world.publish([
            "--check-live", "--live", "api.example.test:\(listener.port)", "--resolve", "api.example.test=127.0.0.1",
            "--cafile", pki.path("ca.pem"),
        ])
        #expect(result.status == 1, "\(result.out)\(result.err)")
        #expect(!result.out.contains("changes the effective policy"))
        #expect(!listener.hasPendingConnection(), "the publisher connected before the envelope verified")
        #expect(try world.tree() == before)
    }

    @Test func anUnreachableHostRefusesUnlessAllowed() throws {
        let pki = try InteropPKI.shared()
        let (pinA, pinB) = (try pki.pin("leafA.pem"), try pki.pin("leafB.pem"))
        let world = try RemovalWorld(
            v1: [("api.example.test", [pinA, pinB], [])], v2: [("api.example.test", [pinB, testPin(7)], [])])
        let port = try freeLoopbackPort()
        let options = [
            "--check-live", "--live", "api.example.test:\(port)", "--resolve", "api.example.test=127.0.0.1",
        ]
        let before = try world.tree()
        let refused = world.publish(options)
        #expect(refused.status == 3, "\(refused.out)\(refused.err)")
        #expect(refused.err.contains("127.0.0.1:\(port): connection refused"), "\(refused.err)")
        #expect(refused.err.contains("--allow-unreachable HOST"))
        #expect(try world.tree() == before)

        let allowed = world.publish(options + ["--allow-unreachable", "api.example.test"])
        #expect(allowed.status == 0, "\(allowed.out)\(allowed.err)")
        #expect(allowed.err.contains("not checked (--allow-unreachable api.example.test)"))
        #expect(try world.servedVersion() == "2")
    }

    @Test func anIncludeSubdomainsEntryNeedsTargetsForItsSubdomains() throws {
        let pki = try InteropPKI.shared()
        let (pinA, pinB) = (try pki.pin("leafA.pem"), try pki.pin("leafB.pem"))
        let world = try RemovalWorld(
            v1: [("example.test", [pinA, pinB], ["--include-subdomains"])],
            v2: [("example.test", [pinB, testPin(7)], ["--include-subdomains"])])
        let server = try InteropTLSServer(certificate: pki.path("leafA.pem"), key: pki.path("leafA.key"))
        let gone = try freeLoopbackPort()
        let own = [
            "--check-live", "--live", "example.test:\(gone)", "--resolve", "example.test=127.0.0.1",
            "--allow-unreachable", "example.test", "--cafile", pki.path("ca.pem"),
        ]
        let before = try world.tree()
        let alone = world.publish(own)
        #expect(alone.status == 1, "\(alone.out)\(alone.err)")
        #expect(
            alone.err.contains(
                "example.test covers its subdomains (includeSubdomains): probing example.test proves nothing about their servers; give --live SUBDOMAIN.example.test:PORT"
            ), "\(alone.err)")
        #expect(try world.tree() == before)

        let withSubdomain = world.publish(own + ["--live", server.target, "--resolve", "api.example.test=127.0.0.1"])
        #expect(withSubdomain.status == 1, "\(withSubdomain.out)\(withSubdomain.err)")
        #expect(
            withSubdomain.err.contains(
                "removed-pin-live: api.example.test: 127.0.0.1:\(server.port) (ECDSA) still presents \(pinA), removed from example.test"
            ), "\(withSubdomain.err)")
        #expect(try world.tree() == before)
    }

    @Test func aDroppedDomainFallsBackToTheBaseline() throws {
        let pki = try InteropPKI.shared()
        let (pinA, pinB) = (try pki.pin("leafA.pem"), try pki.pin("leafB.pem"))
        let world = try RemovalWorld(
            v1: [("api.example.test", [pinA, pinB], [])], v2: [("other.example.test", [testPin(1), testPin(2)], [])])
        try world.workspace.write(
            "baseline.json",
            """
            {"type": "pinion.baseline", "specVersion": 1, "domains": [
              {"name": "api.example.test", "pins": ["\(pinB)", "\(testPin(8))"]}]}
            """)
        let server = try InteropTLSServer(certificate: pki.path("leafA.pem"), key: pki.path("leafA.key"))

        let baseline = world.workspace.path("baseline.json")
        let result = world.publish(world.live(server) + ["--baseline", baseline])
        #expect(result.status == 1, "\(result.out)\(result.err)")
        #expect(
            result.out.contains(
                "api.example.test (baseline \(baseline)): removes \(pinA); accepts \(pinB), \(testPin(8)); adds \(testPin(8)); dropped from the manifest: falls back to the baseline entry"
            ), "\(result.out)")
        #expect(
            result.err.contains(
                "removed-pin-live: api.example.test (baseline \(baseline)): 127.0.0.1:\(server.port) (ECDSA) still presents \(pinA)"
            ), "\(result.err)")

        let unknown = world.publish(world.live(server) + ["--allow-unreachable", "gone.example.test"])
        #expect(unknown.status == 2, "\(unknown.out)\(unknown.err)")
        #expect(unknown.err.contains("--allow-unreachable gone.example.test: no such host in manifest version 2"))

        // Without a baseline the domain counts as no longer pinned: nothing removed, published.
        let unpinned = world.publish(world.live(server))
        #expect(unpinned.status == 0, "\(unpinned.out)\(unpinned.err)")
        #expect(unpinned.out.contains("api.example.test: no longer pinned"))
        #expect(unpinned.err.contains("no --baseline given: a dropped domain falls back to each app's baseline pins"))
    }

    @Test func aFirstManifestIsComparedWithTheBaselineItReplaces() throws {
        let pki = try InteropPKI.shared()
        let (pinA, pinB) = (try pki.pin("leafA.pem"), try pki.pin("leafB.pem"))
        let workspace = try Workspace.interop()
        workspace.standardRoot()
        workspace.ok(["publish", "--repo", "@tree", "@root.json"])
        workspace.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@v1.json"])
        workspace.ok(["manifest", "set-domain", "@v1.json", "api.example.test", "--pin", pinB, "--pin", testPin(7)])
        workspace.sign("v1.json", to: "v1.signed.json")
        // The app shipped with the server's current key: the manifest's pins replace it.
        try workspace.write(
            "baseline.json",
            """
            {"type": "pinion.baseline", "specVersion": 1, "domains": [
              {"name": "api.example.test", "pins": ["\(pinA)", "\(pinB)"]}]}
            """)
        let server = try InteropTLSServer(certificate: pki.path("leafA.pem"), key: pki.path("leafA.key"))
        let result = workspace.run([
            "publish", "--repo", "@tree", "@v1.signed.json", "--baseline", "@baseline.json", "--check-live", "--live",
            server.target, "--resolve", "api.example.test=127.0.0.1", "--cafile", pki.path("ca.pem"),
        ])
        #expect(result.status == 1, "\(result.out)\(result.err)")
        #expect(result.out.contains("manifest version 1 changes the effective policy against the baseline alone:"))
        #expect(
            result.err.contains(
                "removed-pin-live: api.example.test (baseline \(workspace.path("baseline.json"))): 127.0.0.1:\(server.port) (ECDSA) still presents \(pinA)"
            ), "\(result.err)")
        #expect(!workspace.exists("tree/v1/com.example.app/manifest.json"))
    }

    @Test func badFlagValuesAreRefusedWithNothingWritten() throws {
        let pki = try InteropPKI.shared()
        let (pinA, pinB) = (try pki.pin("leafA.pem"), try pki.pin("leafB.pem"))
        let world = try RemovalWorld(
            v1: [("api.example.test", [pinA, pinB], [])], v2: [("api.example.test", [pinB, testPin(7)], [])])
        try world.workspace.write("bad-baseline.json", "{\"type\": \"pinion.baseline\"}")
        let server = try InteropTLSServer(certificate: pki.path("leafB.pem"), key: pki.path("leafB.key"))
        let live = world.live(server)
        let cases: [([String], Int32, String)] = [
            (["--check-live", "--live", "api.example.test"], 2, "--live: \"api.example.test\" is not HOST:PORT"),
            (["--check-live", "--live", "api.example.test:99999"], 2, "with a port in 1...65535"),
            (["--live", server.target], 2, "--live needs --check-live"),
            (["--allow-removing-live-pin"], 2, "--allow-removing-live-pin needs --check-live"),
            (["--check-live", "--connect-to", "=127.0.0.1"], 2, "must be ADDRESS[:PORT] or HOST=ADDRESS[:PORT]"),
            (["--check-live", "--allow-unreachable", "api.example.test:443"], 2, "is not a host name"),
            (
                live + ["--allow-unreachable", "www.example.test"], 2,
                "--allow-unreachable www.example.test: no such host in manifest version 2, the manifest it replaces, a --baseline or a --live target"
            ),
            (
                ["--check-live", "--live", server.target, "--cafile", world.workspace.path("missing.pem")], 3,
                "missing.pem"
            ),
            (["--baseline", world.workspace.path("bad-baseline.json")], 1, "bad-baseline.json"),
        ]
        let before = try world.tree()
        for (arguments, status, message) in cases {
            let result = world.publish(arguments)
            #expect(result.status == status, "\(arguments): \(result.out)\(result.err)")
            #expect(result.err.contains(message), "\(arguments): \(result.err)")
            #expect(try world.tree() == before, "\(arguments)")
        }
    }
}

/// A TCP listener on 127.0.0.1 that never accepts: a connection attempt stays queued, so
/// `hasPendingConnection()` tells whether anything connected.
private final class LoopbackListener {
    let port: UInt16
    private let descriptor: Int32

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw TestSetupError(description: "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 8) == 0 else {
            close(listener)
            throw TestSetupError(description: "bind/listen: \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        _ = fcntl(listener, F_SETFL, O_NONBLOCK)
        port = UInt16(bigEndian: address.sin_port)
        descriptor = listener
    }

    deinit { close(descriptor) }

    /// Whether a connection is queued (accepted here, then closed).
    func hasPendingConnection() -> Bool {
        let connection = accept(descriptor, nil, nil)
        guard connection >= 0 else { return false }
        close(connection)
        return true
    }
}
