// Every TLS client in Pinion checks host names the same way: a certificate that names the host
// only in its subject common name (no subjectAltName) is refused by the pre-rollout checks
// exactly as the SDK refuses it, so `check-host` and `lint --live` never pass a server that
// every client would refuse.

import Foundation
import PinionCore
import PinionTestSupport
import Testing

@Suite struct CommonNameOnlyCertificateTests {
    let pki: InteropPKI
    let server: InteropTLSServer
    let workspace: Workspace
    let pinCN: String

    init() throws {
        pki = try InteropPKI.shared()
        server = try InteropTLSServer(certificate: pki.path("leafCN.pem"), key: pki.path("leafCN.key"))
        workspace = try Workspace.interop()
        pinCN = try pki.pin("leafCN.pem")
        workspace.standardRoot()
        workspace.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@payload.json"])
        workspace.ok([
            "manifest", "set-domain", "@payload.json", "api.example.test", "--pin", pinCN, "--pin", testPin(3),
        ])
        workspace.ok(["sign", "--key", "@pins.key", "@payload.json", "-o", "@manifest.json"])
    }

    @Test func checkHostRefusesACommonNameOnlyCertificate() {
        let result = workspace.run([
            "check-host", "@manifest.json", server.target, "--root", "@root.json", "--connect-to", "127.0.0.1",
            "--cafile", pki.path("ca.pem"),
        ])
        #expect(result.status == 1, "\(result.out)\(result.err)")
        #expect(result.err.contains("X.509 validation failed"), "\(result.err)")
        #expect(result.out.contains("hostname mismatch") || result.err.contains("hostname mismatch"))
        #expect(!result.out.contains("trusted:"))
    }

    @Test func lintLiveRefusesACommonNameOnlyCertificate() throws {
        let result = try workspace.lint([
            "@manifest.json", "--live", server.target, "--resolve", "api.example.test=127.0.0.1", "--cafile",
            pki.path("ca.pem"),
        ])
        #expect(result.status == 1, "\(result.out)\(result.err)")
        #expect(result.out.contains("live-x509-failed"), "\(result.out)")
        #expect(result.out.contains("hostname mismatch"), "\(result.out)")
    }

    @Test func clientConnectRefusesTheSameCertificate() throws {
        let state = try makeTemporaryDirectory(prefix: "pinion-cn-only-state")
        let result = workspace.run([
            "client", "connect", "--root", "@root.json", "--scope", "com.example.app", "--state", state,
            "--cafile", pki.path("ca.pem"), "--connect-to", "127.0.0.1", server.target,
        ])
        #expect(result.status == 1, "\(result.out)\(result.err)")
        #expect(result.err.contains("hostname mismatch"), "\(result.err)")
    }

    @Test func theSameKeyWithASubjectAltNamePasses() throws {
        // Control: the refusal above is about the name, not the CA or the pin.
        let good = try InteropTLSServer(certificate: pki.path("leafA.pem"), key: pki.path("leafA.key"))
        let pinA = try pki.pin("leafA.pem")
        workspace.ok(["manifest", "set-domain", "@payload.json", "api.example.test", "--pin", pinA, "--pin", pinCN])
        workspace.ok(["sign", "--key", "@pins.key", "@payload.json", "-o", "@manifest.json", "--force"])
        let result = workspace.run([
            "check-host", "@manifest.json", good.target, "--root", "@root.json", "--connect-to", "127.0.0.1",
            "--cafile", pki.path("ca.pem"),
        ])
        #expect(result.status == 0, "\(result.out)\(result.err)")
    }
}
