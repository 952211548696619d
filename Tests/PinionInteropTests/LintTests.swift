// `pinion lint`: each rule on a payload built for it, the public suffix list, and live servers.

import Foundation
import PinionCore
import PinionInterop
import PinionTestSupport
import Testing

private let suffixFixture = """
    // a small list in the publicsuffix.org format
    com
    co.uk
    *.ck
    !www.ck
    github.io

    """

extension Workspace {
    /// A payload with the given domains: (name, pins, extra set-domain flags).
    func lintPayload(_ name: String, _ domains: [(String, [String], [String])], lifetime: String = "30d") {
        ok(["manifest", "init", "--scope", "com.example.app", "--expires-in", lifetime, "-o", "@" + name, "--force"])
        for (domain, pins, flags) in domains {
            ok(["manifest", "set-domain", "@" + name, domain] + pins.flatMap { ["--pin", $0] } + flags)
        }
    }

    func lint(_ arguments: [String]) throws -> CommandResult {
        try write("psl.dat", suffixFixture)
        return run(["lint"] + arguments + ["--public-suffix-list", "@psl.dat"])
    }
}

@Suite struct LintTests {
    @Test func cleanManifestHasNoFindings() throws {
        let workspace = try Workspace.interop()
        workspace.lintPayload("payload.json", [("api.example.com", [testPin(1), testPin(2)], [])])
        let result = try workspace.lint(["@payload.json"])
        #expect(result.status == 0, "\(result.out)\(result.err)")
        #expect(result.out.hasSuffix("1 domain(s): 0 error(s), 0 warning(s)\n"))
    }

    @Test func singlePinRevokedPinAndNoUsablePin() throws {
        let workspace = try Workspace.interop()
        workspace.lintPayload(
            "payload.json",
            [
                ("one.example.com", [testPin(1)], []), ("rev.example.com", [testPin(2), testPin(3)], []),
                ("dead.example.com", [testPin(4)], []), ("report.example.com", [testPin(5)], ["--report-only"]),
            ])
        workspace.ok(["manifest", "revoke-pin", "@payload.json", testPin(3)])
        workspace.ok(["manifest", "revoke-pin", "@payload.json", testPin(4)])
        let result = try workspace.lint(["@payload.json"])
        #expect(result.status == 1)
        #expect(result.out.contains("error    one.example.com  single-pin: enforced with 1 usable pin"))
        #expect(result.out.contains("error    rev.example.com  single-pin: enforced with 1 usable pin"))
        #expect(result.out.contains("warning  rev.example.com  revoked-pin-listed: \(testPin(3)) is in revokedPins"))
        #expect(result.out.contains("error    dead.example.com  no-usable-pin"))
        #expect(!result.out.contains("report.example.com  single-pin"))
        #expect(result.out.contains("\n         fix: add the pin of a backup key"))
        #expect(result.err.contains("3 error-level finding(s)"))
    }

    @Test func backupPinEqualToThePrimaryIsReportedNotRefused() throws {
        let workspace = try Workspace.interop()
        workspace.lintPayload("payload.json", [("api.example.com", [testPin(1), testPin(2)], [])])
        let text = try workspace.read("payload.json").replacingOccurrences(of: testPin(2), with: testPin(1))
        try workspace.write("payload.json", text)
        #expect(workspace.run(["manifest", "show", "@payload.json"]).status == 1)
        let result = try workspace.lint(["@payload.json"])
        #expect(result.status == 1)
        #expect(
            result.out.contains(
                "error    api.example.com  backup-equals-primary: \(testPin(1)) is listed twice: the backup pin equals the primary"
            ))
        #expect(result.out.contains("api.example.com  single-pin"))
    }

    @Test func includeSubdomainsOnAPublicSuffixOrJustUnderOne() throws {
        let workspace = try Workspace.interop()
        workspace.lintPayload(
            "payload.json",
            [
                ("co.uk", [testPin(1), testPin(2)], ["--include-subdomains"]),
                ("example.co.uk", [testPin(1), testPin(2)], ["--include-subdomains"]),
                ("api.example.co.uk", [testPin(1), testPin(2)], ["--include-subdomains"]),
                ("bar.ck", [testPin(1), testPin(2)], ["--include-subdomains"]),
                ("foo.bar.ck", [testPin(1), testPin(2)], ["--include-subdomains"]),
                ("me.github.io", [testPin(1), testPin(2)], ["--include-subdomains"]),
                ("example.com", [testPin(1), testPin(2)], []),
            ])
        let result = try workspace.lint(["@payload.json"])
        #expect(result.status == 1)
        #expect(result.out.contains("error    co.uk  public-suffix"))
        #expect(result.out.contains("error    bar.ck  public-suffix"))
        #expect(result.out.contains("warning  foo.bar.ck  registrable-domain"))
        #expect(result.out.contains("warning  example.co.uk  registrable-domain"))
        #expect(result.out.contains("warning  me.github.io  registrable-domain"))
        #expect(!result.out.contains("api.example.co.uk  registrable-domain"))
        #expect(!result.out.contains("example.com  registrable-domain"))
    }

    @Test func publicSuffixAlgorithm() {
        let list = PublicSuffixList(suffixFixture)
        #expect(list.publicSuffix(of: "a.b.example.co.uk") == "co.uk")
        #expect(list.publicSuffix(of: "x.y.ck") == "y.ck")
        #expect(list.publicSuffix(of: "www.ck") == "ck")
        #expect(list.publicSuffix(of: "a.www.ck") == "ck")
        #expect(list.publicSuffix(of: "example.unknowntld") == "unknowntld")
        #expect(list.isRegistrableDomain("www.ck") && !list.isRegistrableDomain("y.ck"))
        #expect(list.count == 5)
    }

    @Test func debianListWhenInstalled() throws {
        guard FileManager.default.fileExists(atPath: PublicSuffixList.debianPath) else { return }
        let list = PublicSuffixList(try String(contentsOfFile: PublicSuffixList.debianPath, encoding: .utf8))
        #expect(list.isPublicSuffix("co.uk") && list.isPublicSuffix("github.io"))
        #expect(list.isRegistrableDomain("example.co.uk") && !list.isRegistrableDomain("api.example.co.uk"))
    }

    @Test func lifetimeRules() throws {
        let workspace = try Workspace.interop()
        workspace.lintPayload("short.json", [("api.example.com", [testPin(1), testPin(2)], [])], lifetime: "90m")
        let short = try workspace.lint(["@short.json"])
        #expect(short.status == 1)
        #expect(
            short.out.contains("lifetime-too-short: lifetime 1h30m is shorter than two polling intervals (2h)"))
        #expect(try workspace.lint(["@short.json", "--poll-interval", "30m"]).status == 0)

        workspace.lintPayload("long.json", [("api.example.com", [testPin(1), testPin(2)], [])], lifetime: "120d")
        let long = try workspace.lint(["@long.json"])
        #expect(long.status == 1)
        #expect(long.out.contains("lifetime-too-long: lifetime 120d exceeds the policy maximum of 90d"))
        #expect(try workspace.lint(["@long.json", "--max-lifetime", "180d"]).status == 0)

        let soon = try workspace.lint(["@long.json", "--max-lifetime", "180d", "--at", "2027-03-30T08:30:00Z"])
        #expect(soon.status == 0)
        #expect(soon.out.contains("warning  manifest  expires-soon"))
        let expired = try workspace.lint(["@long.json", "--max-lifetime", "180d", "--at", "2027-04-30T00:00:00Z"])
        #expect(expired.status == 1)
        #expect(expired.out.contains("error    manifest  expired"))
    }

    @Test func againstThePreviousVersion() throws {
        let workspace = try Workspace.interop()
        workspace.standardRoot()
        workspace.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@v1.json"])
        workspace.ok([
            "manifest", "set-domain", "@v1.json", "api.example.com", "--pin", testPin(1), "--pin", testPin(2),
        ])
        workspace.ok([
            "manifest", "set-domain", "@v1.json", "old.example.com", "--pin", testPin(3), "--pin", testPin(4),
        ])
        workspace.ok(["manifest", "revoke-pin", "@v1.json", testPin(9)])
        workspace.sign("v1.json", to: "m1.json")
        workspace.ok(["manifest", "init", "--previous", "@m1.json", "--expires-in", "30d", "-o", "@v2.json"])
        workspace.ok([
            "manifest", "set-domain", "@v2.json", "api.example.com", "--pin", testPin(2), "--pin", testPin(5),
        ])
        workspace.ok(["manifest", "remove-domain", "@v2.json", "old.example.com"])
        let text = try workspace.read("v2.json").replacingOccurrences(
            of: "\"revokedPins\": [\n    \"\(testPin(9))\"\n  ]", with: "\"revokedPins\": []")
        try workspace.write("v2.json", text)
        #expect(try workspace.payload("v2.json").revokedPins.isEmpty)
        let result = try workspace.lint(["@v2.json", "--previous", "@m1.json"])
        #expect(result.status == 1)
        #expect(result.out.contains("warning  api.example.com  pin-removed: \(testPin(1)) was in version 1"))
        #expect(result.out.contains("warning  old.example.com  domain-dropped"))
        #expect(result.out.contains("error    manifest  revocation-lifted: \(testPin(9)) was revoked in version 1"))
    }

    @Test func oneKeyTypeAndOneIssuerFromCertificateFiles() throws {
        let pki = try InteropPKI.shared()
        let workspace = try Workspace.interop()
        let (pinA, pinB, pinC) = (try pki.pin("leafA.pem"), try pki.pin("leafB.pem"), try pki.pin("leafC.pem"))
        workspace.lintPayload(
            "payload.json", [("api.example.com", [pinA, pinB], []), ("www.example.com", [pinA, pinC], [])])
        let certs = [
            "--certs", pki.path("leafA.pem"), "--certs", pki.path("leafB.pem"), "--certs", pki.path("leafC.pem"),
        ]
        let result = try workspace.lint(["@payload.json"] + certs)
        #expect(result.status == 0)
        #expect(result.out.contains("warning  api.example.com  one-key-type: every pin is a EC P-256 key"))
        #expect(
            result.out.contains(
                "warning  api.example.com  one-issuer: every pinned certificate is issued by CN=Interop ca"))
        #expect(result.out.contains("warning  www.example.com  one-key-type"))
        #expect(!result.out.contains("www.example.com  one-issuer"))
    }

    @Test func liveServerStillPresentingARemovedPinIsAnOutage() throws {
        let pki = try InteropPKI.shared()
        let server = try InteropTLSServer(certificate: pki.path("leafA.pem"), key: pki.path("leafA.key"))
        let workspace = try Workspace.interop()
        let (pinA, pinB) = (try pki.pin("leafA.pem"), try pki.pin("leafB.pem"))
        workspace.standardRoot()
        workspace.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@v1.json"])
        workspace.ok(["manifest", "set-domain", "@v1.json", "api.example.test", "--pin", pinA, "--pin", pinB])
        workspace.sign("v1.json", to: "m1.json")
        workspace.ok(["manifest", "init", "--previous", "@m1.json", "--expires-in", "30d", "-o", "@v2.json"])
        workspace.ok(["manifest", "set-domain", "@v2.json", "api.example.test", "--pin", pinB, "--pin", testPin(7)])
        let live = [
            "--live", server.target, "--resolve", "api.example.test=127.0.0.1", "--cafile", pki.path("ca.pem"),
        ]

        let before = try workspace.lint(["@m1.json"] + live)
        #expect(before.status == 0, "\(before.out)\(before.err)")
        #expect(before.out.contains("live \(server.target) at 127.0.0.1:\(server.port) (ECDSA): verified"))
        // The EC-only server has no certificate for a client offering RSA signatures only.
        #expect(before.out.contains("live \(server.target) at 127.0.0.1:\(server.port) (RSA): no handshake"))
        #expect(before.out.contains("* \(pinA)  CN=api.example.test"))

        let after = try workspace.lint(["@v2.json", "--previous", "@m1.json"] + live)
        #expect(after.status == 1)
        #expect(
            after.out.contains(
                "error    api.example.test  removed-pin-live: \(server.target) at 127.0.0.1:\(server.port) (ECDSA) still presents \(pinA), removed from api.example.test; clients taking this manifest refuse it (an outage)"
            ), "\(after.out)")

        workspace.lintPayload("other.json", [("api.example.test", [testPin(1), testPin(2)], [])])
        let unmatched = try workspace.lint(["@other.json"] + live)
        #expect(unmatched.status == 1)
        #expect(unmatched.out.contains("error    api.example.test  live-no-match"))

        let untrusted = try workspace.lint([
            "@m1.json", "--live", server.target, "--resolve", "api.example.test=127.0.0.1",
        ])
        #expect(untrusted.status == 1)
        #expect(untrusted.out.contains("live-x509-failed"))
    }

    @Test func badInputs() throws {
        let workspace = try Workspace.interop()
        workspace.lintPayload("payload.json", [("api.example.com", [testPin(1), testPin(2)], [])])
        workspace.standardRoot()
        try workspace.write("empty.dat", "// nothing\n")
        let cases: [([String], Int32, String)] = [
            (["@missing.json"], 3, "missing.json"),
            (["@root.json"], 2, "a manifest is needed"),
            (["@root-payload.json"], 1, "root-payload.json"),
            (["@payload.json", "--poll-interval", "soon"], 2, "--poll-interval"),
            (["@payload.json", "--resolve", "=127.0.0.1"], 2, "must be ADDRESS[:PORT] or HOST=ADDRESS[:PORT]"),
            (["@payload.json", "--connect-to", "127.0.0.1:0"], 2, "HOST:PORT with a port in 1...65535"),
            (["@payload.json", "--connect-to", "a", "--resolve", "b"], 2, "given twice"),
            (["@payload.json", "--live", "api.example.com"], 2, "HOST:PORT"),
            (
                [
                    "@payload.json", "--live", "api.example.test:\(try freeLoopbackPort())", "--resolve",
                    "api.example.test=127.0.0.1",
                ], 3, "connection refused"
            ),
        ]
        for (arguments, status, message) in cases {
            let result = try workspace.lint(arguments)
            #expect(result.status == status, "\(arguments): \(result.err)")
            #expect(result.err.contains(message), "\(arguments): \(result.err)")
        }
        let emptyList = workspace.run(["lint", "@payload.json", "--public-suffix-list", "@empty.dat"])
        #expect(emptyList.status == 1)
        #expect(emptyList.err.contains("no public suffix rule"))
    }
}
