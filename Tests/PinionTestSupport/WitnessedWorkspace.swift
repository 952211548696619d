// A workspace with two real `pinion witness` processes on 127.0.0.1 (port 0, TLS from an openssl-made CA) and a root whose log lists them, for end-to-end publish tests.

import Foundation
import PinionCore
import PinionLog
import PinionTrust
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A `pinion witness` child process; its URL is read from its "listening on" line.
public final class PublishingWitnessProcess: @unchecked Sendable {
    public let process = Process()
    public let url: String
    public let verifierKey: String

    public init(arguments: [String], directory: String) throws {
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

    public func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// Keys root, pins, log, w1, w2; pki/ca.pem and pki/leaf.{pem,key} for 127.0.0.1; two
/// running witnesses; root.json (version 1) listing them with quorum 2.
public final class WitnessedWorkspace: @unchecked Sendable {
    public static let origin = "example.com/pinion/com.example.app"
    public let workspace: Workspace
    public let pki: OpenSSLPKIBuilder
    public private(set) var witnesses: [PublishingWitnessProcess] = []
    /// The log flags of publish and log refresh.
    public let log: [String]
    /// Added to the environment of every child `pinion` (publish).
    public let environment: [String: String]

    /// - Parameters:
    ///   - prefix: the workspace's name prefix.
    ///   - makeLogKey: writes log.pub into the workspace (for example from a token) and
    ///     returns the `--log-key ...` flags; nil makes an unencrypted log.key file.
    ///   - environment: added to the environment of child `pinion` processes.
    public init(
        prefix: String = "pinion-publog-e2e", makeLogKey: ((Workspace) throws -> [String])? = nil,
        environment: [String: String] = [:]
    ) throws {
        // The witnesses date cosignatures with the machine's clock, so this workspace signs at
        // the same clock: manifests signed at a fixed past time would expire while the
        // cosignatures stay current.
        workspace = try Workspace(prefix: prefix, now: Timestamp(Date()))
        self.environment = environment
        for name in ["root", "pins", "w1", "w2"] { workspace.quickKey(name) }
        if let makeLogKey {
            log = try makeLogKey(workspace) + ["--witness-ca", "@pki/ca.pem"]
        } else {
            workspace.quickKey("log")
            log = ["--log-key", "@log.key", "--witness-ca", "@pki/ca.pem"]
        }
        pki = try OpenSSLPKIBuilder(
            directory: workspace.path("pki"),
            sections: """
                [ ca ]
                basicConstraints = critical, CA:TRUE
                keyUsage = critical, keyCertSign, cRLSign

                """ + OpenSSLPKIBuilder.serverSection("leaf", subjectAltName: "IP:127.0.0.1"))
        try pki.generateKey("ca")
        try pki.selfSign("ca", subject: "/CN=Pinion Test Witness CA", extensions: "ca")
        try pki.issueNew("leaf", subject: "/CN=127.0.0.1", by: "ca", serial: 2, extensions: "leaf")
        let logVkey = workspace.ok(["key", "note-vkey", "@log.pub", "--name", Self.origin, "--type", "log"]).out
            .trimmingCharacters(in: .whitespacesAndNewlines)
        for name in ["w1", "w2"] {
            try workspace.write(
                name + ".json",
                #"{"name": "\#(name).example", "logs": [{"origin": "\#(Self.origin)", "key": "\#(logVkey)"}]}"#)
            witnesses.append(
                try PublishingWitnessProcess(
                    arguments: [
                        "witness", "--config", workspace.path(name + ".json"), "--key", workspace.path(name + ".key"),
                        "--state-dir", workspace.path(name + "-state"), "--cert", workspace.path("pki/leaf.pem"),
                        "--tls-key", workspace.path("pki/leaf.key"), "--listen", "127.0.0.1:0", "--path-prefix",
                        "/" + name, "--access-log", "off", "--workers", "1",
                    ], directory: workspace.directory.path))
        }
        var rootArguments = [
            "root", "init", "--scope", "com.example.app", "--root-key", "@root.pub", "--root-threshold", "1",
            "--pins-key", "@pins.pub", "--pins-threshold", "1", "-o", "@root-payload.json", "--log-origin",
            Self.origin, "--log-key", "@log.pub", "--witness-quorum", "2", "--max-checkpoint-age", "24h",
        ]
        for (name, witness) in zip(["w1", "w2"], witnesses) {
            rootArguments += ["--witness", "\(name).example=\(workspace.path(name + ".pub"))@\(witness.url)"]
        }
        try workspace.require(rootArguments, at: workspace.now)
        try workspace.require(
            ["sign", "--key", "@root.key", "@root-payload.json", "-o", "@root.json"], at: workspace.now)
    }

    deinit { for witness in witnesses { witness.stop() } }

    /// `pinion publish --repo tree FILES --log-key ... --at NOW` as arguments for the real binary.
    public func publishArguments(_ files: [String]) -> [String] {
        workspace.resolve(["publish", "--repo", "@tree"] + files + log + ["--at", workspace.now.description])
    }

    /// Runs the real binary's publish as a child process.
    public func publish(_ files: [String]) throws -> CommandResult {
        try workspace.pinion(
            ["publish", "--repo", "@tree"] + files + log + ["--at", workspace.now.description], environment: environment
        )
    }

    /// Signs manifest version `version` as m{version}.json (version 1 with two pins, later ones after the previous).
    public func signManifest(_ version: Int) throws {
        if version == 1 {
            try workspace.require(
                ["manifest", "init", "--root", "@root.json", "--expires-in", "30d", "-o", "@payload.json", "--force"],
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
                    "manifest", "init", "--previous", "@m\(version - 1).json", "--expires-in", "30d", "-o",
                    "@payload.json", "--force",
                ], at: workspace.now)
        }
        try workspace.require(
            ["sign", "--key", "@pins.key", "@payload.json", "-o", "@m\(version).json"], at: workspace.now)
    }

    /// A client's check (PinionTrust's LogVerification) of the served manifest.json and manifest.proof.
    public func verifyServed(now: Int64) throws -> VerifiedLogProof {
        let scope = "tree/v1/com.example.app/"
        let manifest = try Envelope.parse(try workspace.readBytes(scope + "manifest.json"))
        let payload = try ManifestPayload.parse(manifest.payload)
        let root = try Envelope.parse(try workspace.readBytes("root.json"))
        let rootPayload = try RootPayload.parse(root.payload, crypto: sodium)
        guard let policy = rootPayload.log else { throw TestSetupError(description: "root.json lists no log") }
        return try LogVerification.verify(
            proofBytes: try workspace.readBytes(scope + "manifest.proof"), policy: policy,
            manifest: ManifestIdentity(
                scope: payload.scope, rootVersion: payload.rootVersion, version: payload.version,
                payloadSHA256: sodium.hasher.sha256(manifest.payload)),
            newestRoot: RootIdentity(version: 1, payloadSHA256: sodium.hasher.sha256(root.payload)), stored: nil,
            now: now, crypto: sodium)
    }
}
