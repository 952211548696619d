// End to end: `pinion publish --log-key` against two real `pinion witness` processes on 127.0.0.1 (port 0), TLS trusted through --witness-ca with certificates made by openssl here.

import Foundation
import PinionCore
import PinionTestSupport
import PinionTrust
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A `pinion witness` child process; its URL is read from its "listening on" line.
final class PublishingWitnessProcess: @unchecked Sendable {
    let process = Process()
    let url: String
    let verifierKey: String

    init(arguments: [String], directory: String) throws {
        process.executableURL = URL(fileURLWithPath: pinionExecutable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var environment = ProcessInfo.processInfo.environment
        environment["PINION_PASSPHRASE"] = nil
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var text = ""
        let deadline = Date().addingTimeInterval(60)  // a start-up bound, not a timing assertion
        while !text.contains("listening on "), Date() < deadline, process.isRunning {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { usleep(20_000) } else { text += String(decoding: data, as: UTF8.self) }
        }
        let lines = text.split(separator: "\n").map(String.init)
        guard let listening = lines.first(where: { $0.hasPrefix("listening on ") }),
            let key = lines.first(where: { $0.hasPrefix("witness key ") })
        else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            throw TestSetupError(description: "pinion witness did not start: \(text)")
        }
        url = String(listening.dropFirst("listening on ".count))
        verifierKey = String(key.dropFirst("witness key ".count))
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}

@Suite(.serialized) struct PublishWitnessEndToEndTests {
    @Test func publishIsCosignedByTwoRealWitnessesOverHTTPS() throws {
        let workspace = try Workspace(prefix: "pinion-publog-e2e")
        let origin = "example.com/pinion/com.example.app"
        for name in ["root", "pins", "log", "w1", "w2"] { workspace.quickKey(name) }
        let pki = try OpenSSLPKIBuilder(
            directory: workspace.path("pki"),
            sections: """
                [ ca ]
                basicConstraints = critical, CA:TRUE
                keyUsage = critical, keyCertSign, cRLSign

                """ + OpenSSLPKIBuilder.serverSection("leaf", subjectAltName: "IP:127.0.0.1"))
        try pki.generateKey("ca")
        try pki.selfSign("ca", subject: "/CN=Pinion Test Witness CA", extensions: "ca")
        try pki.issueNew("leaf", subject: "/CN=127.0.0.1", by: "ca", serial: 2, extensions: "leaf")
        let logVkey = workspace.ok(["key", "note-vkey", "@log.pub", "--name", origin, "--type", "log"]).out
            .trimmingCharacters(in: .whitespacesAndNewlines)
        var witnesses: [PublishingWitnessProcess] = []
        defer { for witness in witnesses { witness.stop() } }
        for name in ["w1", "w2"] {
            try workspace.write(
                name + ".json",
                #"{"name": "\#(name).example", "logs": [{"origin": "\#(origin)", "key": "\#(logVkey)"}]}"#)
            witnesses.append(
                try PublishingWitnessProcess(
                    arguments: [
                        "witness", "--config", workspace.path(name + ".json"), "--key", workspace.path(name + ".key"),
                        "--state-dir", workspace.path(name + "-state"), "--cert", workspace.path("pki/leaf.pem"),
                        "--tls-key", workspace.path("pki/leaf.key"), "--listen", "127.0.0.1:0", "--path-prefix",
                        "/" + name, "--access-log", "off", "--workers", "1",
                    ], directory: workspace.directory.path))
        }
        for (name, witness) in zip(["w1", "w2"], witnesses) {
            #expect(
                witness.verifierKey
                    == workspace.ok([
                        "key", "note-vkey", "@\(name).pub", "--name", "\(name).example", "--type", "witness",
                    ])
                    .out.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        try workspace.require(
            [
                "root", "init", "--scope", "com.example.app", "--root-key", "@root.pub", "--root-threshold", "1",
                "--pins-key", "@pins.pub", "--pins-threshold", "1", "-o", "@root-payload.json", "--log-origin", origin,
                "--log-key", "@log.pub",
            ]
                + zip(["w1", "w2"], witnesses).flatMap { name, witness in
                    ["--witness", "\(name).example=\(workspace.path(name + ".pub"))@\(witness.url)"]
                } + ["--witness-quorum", "2", "--max-checkpoint-age", "24h"], at: workspace.now)
        try workspace.require(
            ["sign", "--key", "@root.key", "@root-payload.json", "-o", "@root.json"], at: workspace.now)
        let log = ["--log-key", "@log.key", "--witness-ca", "@pki/ca.pem"]
        // The publish runs as a child process (the real binary), at the workspace's time.
        func publish(_ files: [String]) throws -> CommandResult {
            try workspace.pinion(["publish", "--repo", "@tree"] + files + log + ["--at", workspace.now.description])
        }
        var result = try publish(["@root.json"])
        try #require(result.status == 0, "\(result.err)")
        for version in 1...2 {
            if version == 1 {
                try workspace.require(
                    ["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@payload.json"],
                    at: workspace.now)
                try workspace.require(
                    [
                        "manifest", "set-domain", "@payload.json", "api.example.com", "--pin",
                        "sha256/" + Data(repeating: 0xA1, count: 32).base64EncodedString(), "--pin",
                        "sha256/" + Data(repeating: 0xB2, count: 32).base64EncodedString(),
                    ], at: workspace.now)
            } else {
                try workspace.require(
                    [
                        "manifest", "init", "--previous", "@m1.json", "--expires-in", "30d", "-o", "@payload.json",
                        "--force",
                    ],
                    at: workspace.now)
            }
            try workspace.require(
                ["sign", "--key", "@pins.key", "@payload.json", "-o", "@m\(version).json"], at: workspace.now)
            result = try publish(["@m\(version).json"])
            try #require(result.status == 0, "publish m\(version): \(result.err)")
            #expect(result.out.contains("cosigned by w1.example, w2.example"), "\(result.out)")
        }
        // A client's check of what was published (PinionTrust's LogVerification).
        let scope = "tree/v1/com.example.app/"
        let manifest = try Envelope.parse(try workspace.readBytes(scope + "manifest.json"))
        let payload = try ManifestPayload.parse(manifest.payload)
        let root = try Envelope.parse(try workspace.readBytes("root.json"))
        let rootPayload = try RootPayload.parse(root.payload, crypto: sodium)
        let verified = try LogVerification.verify(
            proofBytes: try workspace.readBytes(scope + "manifest.proof"), policy: try #require(rootPayload.log),
            manifest: ManifestIdentity(
                scope: payload.scope, rootVersion: payload.rootVersion, version: payload.version,
                payloadSHA256: sodium.hasher.sha256(manifest.payload)),
            newestRoot: RootIdentity(version: 1, payloadSHA256: sodium.hasher.sha256(root.payload)), stored: nil,
            now: Int64(Date().timeIntervalSince1970), crypto: sodium)
        #expect(verified.head.manifestVersion == 2)
        #expect(Set(verified.witnesses) == ["w1.example", "w2.example"])
        // The refresh re-cosigns over HTTPS too.
        let refresh = try workspace.pinion(["log", "refresh", "--repo", "@tree"] + log)
        #expect(refresh.status == 0, "\(refresh.err)")
        // A CA that did not issue the witnesses' certificates: no witness counts, exit 1, nothing served changes.
        try pki.generateKey("other")
        try pki.selfSign("other", subject: "/CN=Other CA", extensions: "ca")
        let before = try workspace.readBytes(scope + "manifest.proof")
        let untrusted = try workspace.pinion([
            "log", "refresh", "--repo", "@tree", "--log-key", "@log.key", "--witness-ca", "@pki/other.pem",
        ])
        #expect(untrusted.status == 1, "\(untrusted.err)")
        #expect(try workspace.readBytes(scope + "manifest.proof") == before)
    }
}
