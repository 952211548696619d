// `--connect-to ADDRESS[:PORT]` spelled the same for check-host and lint (with --resolve
// as lint's alias): the address and port dialled, the host name still validated.

import Foundation
import PinionCore
import PinionTestSupport
import Testing

@Suite struct ConnectToFlagTests {
    let pki: InteropPKI
    let server: InteropTLSServer
    let workspace: Workspace

    init() throws {
        pki = try InteropPKI.shared()
        server = try InteropTLSServer(certificate: pki.path("leafA.pem"), key: pki.path("leafA.key"))
        workspace = try Workspace.interop()
        workspace.standardRoot()
        let pinA = try pki.pin("leafA.pem")
        let pinB = try pki.pin("leafB.pem")
        workspace.ok(["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@payload.json"])
        workspace.ok(["manifest", "set-domain", "@payload.json", "api.example.test", "--pin", pinA, "--pin", pinB])
        workspace.ok(["sign", "--key", "@pins.key", "@payload.json", "-o", "@manifest.json"])
    }

    /// The server's port, dialled through --connect-to while the target names port 1.
    var address: String { "127.0.0.1:\(server.port)" }

    @Test func checkHostDialsAddressAndPort() {
        let result = workspace.run([
            "check-host", "@manifest.json", "api.example.test:1", "--root", "@root.json", "--connect-to", address,
            "--cafile", pki.path("ca.pem"),
        ])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("trusted: api.example.test passes"))
    }

    @Test(arguments: ["--connect-to", "--resolve"])
    func lintDialsAddressAndPort(flag: String) throws {
        for value in [address, "api.example.test=" + address] {
            let result = try workspace.lint([
                "@manifest.json", "--live", "api.example.test:1", flag, value, "--cafile", pki.path("ca.pem"),
            ])
            #expect(result.status == 0, "\(flag) \(value): \(result.err)")
            #expect(result.out.contains("live api.example.test:1 at \(address) (ECDSA): verified"))
        }
    }

    @Test(arguments: ["", "127.0.0.1:0", "127.0.0.1:65536", "a:b", "[]", "x/y"])
    func badAddressesAreUsageErrors(value: String) {
        let result = workspace.run([
            "check-host", "@manifest.json", "api.example.test:1", "--connect-to", value,
        ])
        #expect(result.status == 2, "\(value): \(result.err)")
    }
}
