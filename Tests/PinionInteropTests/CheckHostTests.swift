// `pinion check-host` against a TLS server on 127.0.0.1: trusted, rejected, report-only, not
// pinned, baseline pins, X.509 failure, verification with --root, and bad input.

import Foundation
import PinionCore
import PinionTestSupport
import Testing

@Suite struct CheckHostTests {
    let pki: InteropPKI
    let server: InteropTLSServer
    let workspace: Workspace
    let pinA: String
    let pinB: String

    init() throws {
        pki = try InteropPKI.shared()
        server = try InteropTLSServer(certificate: pki.path("leafA.pem"), key: pki.path("leafA.key"))
        workspace = try Workspace.interop()
        pinA = try pki.pin("leafA.pem")
        pinB = try pki.pin("leafB.pem")
        workspace.standardRoot()
    }

    func manifest(_ domains: [(String, [String], [String])]) {
        workspace.ok([
            "manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@payload.json", "--force",
        ])
        for (name, pins, flags) in domains {
            workspace.ok(["manifest", "set-domain", "@payload.json", name] + pins.flatMap { ["--pin", $0] } + flags)
        }
        workspace.ok(["sign", "--key", "@pins.key", "@payload.json", "-o", "@manifest.json", "--force"])
    }

    func check(_ extra: [String] = []) -> CommandResult {
        workspace.run(
            [
                "check-host", "@manifest.json", server.target, "--root", "@root.json", "--connect-to", "127.0.0.1",
                "--cafile", pki.path("ca.pem"),
            ] + extra)
    }

    @Test func trustedNamesTheCertificateAndPin() {
        manifest([("api.example.test", [pinB, pinA], [])])
        let result = check()
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("* \(pinA)  CN=api.example.test"))
        #expect(
            result.out.contains(
                "trusted: api.example.test passes: \(pinA) is the key of CN=api.example.test (verified chain position 0, 0 = leaf), pinned by entry api.example.test (manifest version 1)"
            ), "\(result.out)")
    }

    @Test func parentEntryWithIncludeSubdomainsMatchesTheCAKey() throws {
        let caPin = try pki.pin("ca.pem")
        manifest([("example.test", [caPin, pinB], ["--include-subdomains"])])
        let result = check()
        #expect(result.status == 0, "\(result.err)")
        #expect(
            result.out.contains(
                "is the key of CN=Interop ca (verified chain position 1, 0 = leaf), pinned by entry example.test"))
    }

    @Test func rejectedSaysWhyAndListsThePins() {
        manifest([("api.example.test", [pinB, testPin(1)], [])])
        let result = check()
        #expect(result.status == 1)
        #expect(
            result.out.contains(
                "rejected (enforced): clients refuse the connection: no key in the verified chain matches a pin for entry api.example.test (manifest version 1)"
            ))
        #expect(result.out.contains("pins of api.example.test: \(pinB) \(testPin(1))"))
        #expect(result.err.contains("does not pass the pins of api.example.test"))
    }

    @Test func reportOnlyFailureIsNotAPass() {
        manifest([("api.example.test", [pinB, testPin(1)], ["--report-only"])])
        let result = check()
        #expect(result.status == 1)
        #expect(result.out.contains("report-only failure: clients report it and go on"))
    }

    @Test func notPinnedAndBaselinePins() throws {
        manifest([("other.example.test", [pinB, testPin(1)], [])])
        let notPinned = check()
        #expect(notPinned.status == 0)
        #expect(notPinned.out.contains("not pinned: no entry covers api.example.test"))
        try workspace.write(
            "baseline.json",
            """
            {"type": "pinion.baseline", "specVersion": 1, "domains": [
              {"name": "api.example.test", "pins": ["\(pinB)", "\(testPin(2))"]}]}
            """)
        let baseline = check(["--baseline", "@baseline.json"])
        #expect(baseline.status == 1)
        #expect(baseline.out.contains("for entry api.example.test (baseline)"))
    }

    @Test func revokedPinsDoNotCount() {
        manifest([("api.example.test", [pinA, pinB], [])])
        workspace.ok(["manifest", "revoke-pin", "@payload.json", pinA])
        workspace.ok([
            "sign", "--key", "@pins.key", "@payload.json", "-o", "@manifest.json", "--force", "--allow-single-pin",
        ])
        let result = check()
        #expect(result.status == 1)
        #expect(result.out.contains("pins of api.example.test: \(pinB)"))
    }

    @Test func x509FailureAndUnverifiedEnvelopes() throws {
        manifest([("api.example.test", [pinA, pinB], [])])
        let untrusted = workspace.run([
            "check-host", "@manifest.json", server.target, "--root", "@root.json", "--connect-to", "127.0.0.1",
        ])
        #expect(untrusted.status == 1)
        #expect(untrusted.err.contains("X.509 validation failed"))
        let unverified = workspace.run(
            ["check-host", "@payload.json", server.target, "--connect-to", "127.0.0.1", "--cafile", pki.path("ca.pem")])
        #expect(unverified.status == 0)
        #expect(unverified.err.contains("signatures not checked"))
        workspace.ok(["keygen", "--out", "@other", "--insecure-no-passphrase"])
        workspace.ok(["sign", "--key", "@other.key", "@payload.json", "-o", "@forged.json"])
        let forged = workspace.run(
            [
                "check-host", "@forged.json", server.target, "--root", "@root.json", "--connect-to", "127.0.0.1",
                "--cafile", pki.path("ca.pem"),
            ])
        #expect(forged.status == 1)
        #expect(!forged.out.contains("chain of"))
    }

    @Test func badInput() throws {
        manifest([("api.example.test", [pinA, pinB], [])])
        try workspace.write("bad-baseline.json", "{\"type\": \"pinion.baseline\"}")
        let cases: [([String], Int32, String)] = [
            (["check-host", "@manifest.json"], 2, "missing HOST:PORT"),
            (["check-host", "@manifest.json", "api.example.test"], 2, "HOST:PORT"),
            (["check-host", "@root.json", server.target], 2, "a manifest is needed"),
            (
                ["check-host", "@manifest.json", server.target, "--baseline", "@bad-baseline.json"], 1,
                "bad-baseline.json"
            ),
            (
                [
                    "check-host", "@manifest.json", "api.example.test:\(try freeLoopbackPort())", "--connect-to",
                    "127.0.0.1",
                ], 3,
                "connection refused"
            ),
            (["check-host", "@missing.json", server.target], 3, "missing.json"),
        ]
        for (arguments, status, message) in cases {
            let result = workspace.run(arguments)
            #expect(result.status == status, "\(arguments): \(result.err)")
            #expect(result.err.contains(message), "\(arguments): \(result.err)")
        }
    }
}
