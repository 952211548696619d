// The log key in a PKCS#11 token (SoftHSM2): `pinion publish --log-key pkcs11:...` signs checkpoints in the token, two real witnesses cosign, and a client's check verifies them; the refusals a token adds.

import Foundation
import PinionCore
import PinionTestSupport
import PinionTrust
import Testing

private let softHSMModule = "/usr/lib/softhsm/libsofthsm2.so"
private let softHSMPresent =
    FileManager.default.fileExists(atPath: softHSMModule) || ProcessInfo.processInfo.environment["CI"] == "true"

@Suite(.serialized, .enabled(if: softHSMPresent, "SoftHSM2 (Debian softhsm2) is not installed"))
struct PublishLogTokenKeyTests {
    /// A SoftHSM2 token "pinion" in `workspace`, its user PIN in user.pin, and the log key
    /// made inside it (`keygen --pkcs11`, which writes log.pub); returns the environment
    /// child processes need and the log key's URI.
    static func tokenLogKey(_ workspace: Workspace) throws -> (environment: [String: String], uri: String) {
        try FileManager.default.createDirectory(atPath: workspace.path("tokens"), withIntermediateDirectories: true)
        try workspace.write(
            "softhsm2.conf", "directories.tokendir = \(workspace.path("tokens"))\nobjectstore.backend = file\n")
        try workspace.write("user.pin", "token PIN 4711")
        let environment = ["SOFTHSM2_CONF": workspace.path("softhsm2.conf")]
        let initToken = try workspace.exec(
            "/usr/bin/softhsm2-util",
            ["--init-token", "--free", "--label", "pinion", "--so-pin", "so PIN 0815", "--pin", "token PIN 4711"],
            environment: environment)
        try #require(initToken.status == 0, "softhsm2-util: \(initToken.err)")
        let pinSource = "pin-source=file:\(workspace.path("user.pin"))"
        let keygen = try workspace.pinion(
            [
                "keygen", "--pkcs11", "pkcs11:token=pinion?\(pinSource)", "--label", "log-key", "--out", "@log",
                "--pkcs11-module", softHSMModule,
            ], environment: environment)
        try #require(keygen.status == 0, "keygen --pkcs11: \(keygen.err)")
        try #require(!workspace.exists("log.key"), "the secret stays in the token")
        return (environment, "pkcs11:token=pinion;object=log-key?\(pinSource)")
    }

    @Test func aLogKeyInATokenSignsCheckpointsTheWitnessesCosign() throws {
        var token: (environment: [String: String], uri: String)?
        let world = try WitnessedWorkspace(
            prefix: "pinion-publog-token",
            makeLogKey: { workspace in
                let made = try Self.tokenLogKey(workspace)
                token = made
                return ["--log-key", made.uri, "--pkcs11-module", softHSMModule]
            })
        let environment = try #require(token).environment
        let workspace = world.workspace
        func publish(_ files: [String]) throws -> CommandResult {
            try workspace.pinion(
                ["publish", "--repo", "@tree"] + files + world.log + ["--at", workspace.now.description],
                environment: environment)
        }
        var result = try publish(["@root.json"])
        try #require(result.status == 0, "\(result.err)")
        try world.signManifest(1)
        result = try publish(["@m1.json"])
        try #require(result.status == 0, "\(result.err)")
        #expect(result.out.contains("appended 1 head(s), size 1, cosigned by w1.example, w2.example"), "\(result.out)")
        // The checkpoint verifies under the root's log key (the token's public key) and the quorum.
        let verified = try world.verifyServed(now: Int64(Date().timeIntervalSince1970))
        #expect(verified.head.manifestVersion == 1)
        #expect(Set(verified.witnesses) == ["w1.example", "w2.example"])
        // log refresh signs with the token too.
        let refresh = try workspace.pinion(["log", "refresh", "--repo", "@tree"] + world.log, environment: environment)
        #expect(refresh.status == 0, "\(refresh.err)")
        #expect(refresh.out.contains("re-cosigned, size 1"), "\(refresh.out)")
    }

    @Test func tokenRefusalsLeaveTheTreeUnchanged() throws {
        var token: (environment: [String: String], uri: String)?
        let world = try WitnessedWorkspace(
            prefix: "pinion-publog-token-refusals",
            makeLogKey: { workspace in
                let made = try Self.tokenLogKey(workspace)
                token = made
                return ["--log-key", made.uri, "--pkcs11-module", softHSMModule]
            })
        let (environment, uri) = try #require(token)
        let workspace = world.workspace
        let ca = ["--witness-ca", "@pki/ca.pem"]
        try #require(
            try workspace.pinion(
                ["publish", "--repo", "@tree", "@root.json"] + world.log + ["--at", workspace.now.description],
                environment: environment
            ).status == 0)
        try world.signManifest(1)
        let scope = "tree/v1/com.example.app/"
        let before = try FileManager.default.contentsOfDirectory(atPath: workspace.path(scope)).sorted()
        func refused(
            _ flags: [String], status: Int32, message: String, sourceLocation: SourceLocation = #_sourceLocation
        )
            throws
        {
            let result = try workspace.pinion(
                ["publish", "--repo", "@tree", "@m1.json"] + flags + ["--at", workspace.now.description],
                environment: environment)
            #expect(result.status == status, "\(result.err)", sourceLocation: sourceLocation)
            #expect(result.err.contains(message), "\(result.err)", sourceLocation: sourceLocation)
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: workspace.path(scope)).sorted() == before,
                "the tree changed", sourceLocation: sourceLocation)
            #expect(!workspace.exists(scope + "history/1.json"), sourceLocation: sourceLocation)
        }
        // A key the token does not hold; a wrong PIN; a passphrase file with a URI; a module without a URI.
        try refused(
            [
                "--log-key", uri.replacingOccurrences(of: "object=log-key", with: "object=nothing"), "--pkcs11-module",
                softHSMModule,
            ] + ca, status: 2, message: "nothing")
        try workspace.write("wrong.pin", "not the PIN")
        try refused(
            [
                "--log-key", uri.replacingOccurrences(of: "user.pin", with: "wrong.pin"), "--pkcs11-module",
                softHSMModule,
            ]
                + ca, status: 1, message: "PIN")
        try workspace.write("pass", "a passphrase of some length")
        try refused(
            ["--log-key", uri, "--pkcs11-module", softHSMModule, "--passphrase-file", "@pass"] + ca, status: 2,
            message: "--passphrase-file binds to key files")
        workspace.quickKey("filelog")
        try refused(
            ["--log-key", "@filelog.key", "--pkcs11-module", softHSMModule] + ca, status: 2,
            message: "--pkcs11-module goes with a PKCS#11 URI")
        // Another token key than the root's log key: refused before any write.
        let other = try workspace.pinion(
            [
                "keygen", "--pkcs11", "pkcs11:token=pinion?pin-source=file:\(workspace.path("user.pin"))", "--label",
                "other-log", "--out", "@other", "--pkcs11-module", softHSMModule,
            ], environment: environment)
        try #require(other.status == 0, "\(other.err)")
        try refused(
            [
                "--log-key", uri.replacingOccurrences(of: "object=log-key", with: "object=other-log"),
                "--pkcs11-module",
                softHSMModule,
            ] + ca, status: 2, message: "--log-key is not the log key root version 1 lists")
    }
}
