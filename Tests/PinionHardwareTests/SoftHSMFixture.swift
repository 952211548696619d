// A fresh SoftHSM2 token per test in its own folder (SOFTHSM2_CONF), the fault-injecting
// test module, and `pinion` run as a child process with that environment.

import Foundation
import PinionCore
import PinionTestSupport
import Testing

/// Where Debian's softhsm2 package puts the module.
let softHSMModule = "/usr/lib/softhsm/libsofthsm2.so"

/// Whether the SoftHSM tests run: softhsm2 installed, or CI=true (then a missing softhsm2
/// FAILS the tests instead of leaving them out).
let softHSMTestsEnabled: Bool =
    FileManager.default.fileExists(atPath: softHSMModule) || ProcessInfo.processInfo.environment["CI"] == "true"

/// One SoftHSM2 configuration in a fresh workspace: its own token directory, so tests never
/// see each other's tokens. `pinion` runs as a child process whose environment carries
/// SOFTHSM2_CONF (the process-wide environment of the test runner is never changed).
final class SoftHSM: @unchecked Sendable {
    let workspace: Workspace
    let conf: String
    /// The user PIN of tokens made by `makeToken` unless told otherwise.
    let pin = "1234"

    init(prefix: String) throws {
        try #require(
            FileManager.default.fileExists(atPath: softHSMModule),
            "softhsm2 is not installed (\(softHSMModule)); scripts/install-deps installs it")
        workspace = try Workspace(prefix: prefix)
        let tokens = try workspace.makeDirectory("tokens")
        conf = workspace.path("softhsm2.conf")
        try workspace.write("softhsm2.conf", "directories.tokendir = \(tokens)\nobjectstore.backend = file\n")
        try workspace.write("user.pin", pin)
    }

    /// The environment of child processes: this process's, without any PINION_* variable,
    /// with this SoftHSM configuration.
    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PINION_") }
        env["SOFTHSM2_CONF"] = conf
        return env
    }

    /// Initialises a new token with `label` and `pin`; returns its serial number.
    @discardableResult
    func makeToken(_ label: String = "pinion", pin: String? = nil) throws -> String {
        let result = try tool(
            "/usr/bin/softhsm2-util",
            ["--init-token", "--free", "--label", label, "--so-pin", "0000", "--pin", pin ?? self.pin])
        try #require(result.status == 0, "softhsm2-util: \(result.out)\(result.err)")
        // The serial is in --show-slots: "Serial number: S" comes just before "Label: L".
        let slots = try tool("/usr/bin/softhsm2-util", ["--show-slots"])
        var serial = ""
        for line in slots.out.split(separator: "\n") {
            let field = line.trimmingCharacters(in: .whitespaces)
            if field.hasPrefix("Serial number:") {
                serial = field.dropFirst("Serial number:".count).trimmingCharacters(in: .whitespaces)
            } else if field.hasPrefix("Label:"),
                field.dropFirst("Label:".count).trimmingCharacters(in: .whitespaces) == label
            {
                return serial
            }
        }
        return ""
    }

    /// Runs a tool with this SoftHSM configuration.
    func tool(_ program: String, _ arguments: [String], environment extra: [String: String] = [:]) throws
        -> CommandResult
    {
        var env = environment
        for (key, value) in extra { env[key] = value }
        return try runProgram(
            program, workspace.resolve(arguments), in: workspace.directory.path, environment: env, stdin: [])
    }

    /// `pkcs11-tool` (OpenSC) on the SoftHSM module, logged in to token `label`.
    func pkcs11Tool(_ arguments: [String], token: String = "pinion") throws -> CommandResult {
        try tool(
            "/usr/bin/pkcs11-tool",
            ["--module", softHSMModule, "--token-label", token, "--login", "--pin", pin] + arguments)
    }

    /// Runs the built `pinion` with this configuration (plus `environment`).
    func pinion(_ arguments: [String], environment extra: [String: String] = [:]) throws -> CommandResult {
        try tool(pinionExecutable, arguments, environment: extra)
    }

    /// Runs `pinion` and requires exit status 0.
    @discardableResult
    func ok(
        _ arguments: [String], environment extra: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    )
        throws -> CommandResult
    {
        let result = try pinion(arguments, environment: extra)
        try #require(
            result.status == 0, "pinion \(arguments.joined(separator: " ")) exited \(result.status): \(result.err)",
            sourceLocation: sourceLocation)
        return result
    }

    /// A key URI on token `token` with the PIN from the workspace's user.pin file.
    func uri(_ object: String, token: String = "pinion") -> String {
        "pkcs11:token=\(token);object=\(object)?pin-source=file:\(workspace.path("user.pin"))"
    }

    /// `pinion keygen --pkcs11` of `label` on token `token`, writing NAME.pub; returns the key id.
    @discardableResult
    func hardwareKey(_ label: String, token: String = "pinion", module: String = softHSMModule) throws -> String {
        let result = try ok([
            "keygen", "--pkcs11", "pkcs11:token=\(token)?pin-source=file:\(workspace.path("user.pin"))", "--label",
            label, "--out", "@" + label, "--pkcs11-module", module,
        ])
        return result.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// An encrypted key file NAME.key (passphrase in NAME.passphrase); returns the key id.
    @discardableResult
    func fileKey(_ name: String, passphrase: String) throws -> String {
        try workspace.write(name + ".passphrase", passphrase + "\n")
        return try ok([
            "keygen", "--out", "@" + name, "--passphrase-file", "@\(name).passphrase", "--kdf-iterations", "1000",
        ]).out.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// The test-only PKCS#11 module (Fixtures/fault-module.c) compiled with cc into a workspace,
/// forwarding to SoftHSM2; `faults` lines go into MODULE.faults, read at C_Initialize.
struct FaultModule {
    let path: String

    init(in workspace: Workspace, name: String = "fault-module.so") throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/fault-module.c").path
        path = workspace.path(name)
        let result = try runProgram(
            "/usr/bin/cc",
            ["-shared", "-fPIC", "-Wall", "-Werror", "-I/usr/include/p11-kit-1", "-o", path, source])
        try #require(result.status == 0, "cc fault-module.c: \(result.out)\(result.err)")
    }

    /// Replaces the faults (one per line; see fault-module.c) and clears the call log.
    func inject(_ faults: [String]) throws {
        try Data((faults.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path + ".faults"))
        try? FileManager.default.removeItem(atPath: path + ".log")
    }

    /// How many times the module saw `function` since the last `inject`.
    func calls(_ function: String) -> Int {
        guard let text = try? String(contentsOfFile: path + ".log", encoding: .utf8) else { return 0 }
        return text.split(separator: "\n").filter { $0 == function }.count
    }
}

/// CKF_USER_PIN_* flags (PKCS#11 v2.40 CK_TOKEN_INFO), as decimal for the fault file.
enum PINFlag {
    static let countLow = 1 << 16
    static let finalTry = 1 << 17
    static let locked = 1 << 18
}
