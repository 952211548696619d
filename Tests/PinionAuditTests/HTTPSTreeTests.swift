// The auditor reading a tree over real TLS on 127.0.0.1 (a CA and server certificate made
// with openssl at test time, a Python 3 `ssl` file server), modelled on
// Tests/PinionClientTests/TestTLSServer.swift.

import Foundation
import PinionAudit
import PinionClient
import PinionCore
import PinionTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

struct SetupFailure: Error, CustomStringConvertible {
    let description: String
}

/// Runs a tool from PATH in `directory`; throws with its exit status when it fails.
func runTool(_ arguments: [String], in directory: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw SetupFailure(description: "\(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
    }
}

/// A CA (`ca.pem`) and a server certificate for IP 127.0.0.1 (`server.pem`, `server.key`).
func makeServerPKI(in directory: String) throws {
    try """
    [ req ]
    distinguished_name = dn
    prompt = no
    [ dn ]
    CN = placeholder
    [ v3_ca ]
    basicConstraints = critical, CA:TRUE
    keyUsage = critical, keyCertSign
    [ v3_server ]
    basicConstraints = critical, CA:FALSE
    keyUsage = critical, digitalSignature
    extendedKeyUsage = serverAuth
    subjectAltName = IP:127.0.0.1

    """.write(toFile: directory + "/openssl.cnf", atomically: true, encoding: .utf8)
    for name in ["ca", "server"] {
        try runTool(
            ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "\(name).key"],
            in: directory)
    }
    try runTool(
        [
            "openssl", "req", "-x509", "-new", "-key", "ca.key", "-subj", "/CN=Pinion Audit Test CA", "-days", "30",
            "-config", "openssl.cnf", "-extensions", "v3_ca", "-out", "ca.pem",
        ], in: directory)
    try runTool(
        [
            "openssl", "req", "-new", "-key", "server.key", "-subj", "/CN=127.0.0.1", "-config", "openssl.cnf",
            "-out", "server.csr",
        ], in: directory)
    try runTool(
        [
            "openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "2",
            "-days", "30", "-extfile", "openssl.cnf", "-extensions", "v3_server", "-out", "server.pem",
        ], in: directory)
}

/// Serves the files under `root` over TLS; a path listed in `changes` is served from the
/// given file from its second request on (a tree that changes while it is read).
final class TreeHTTPSServer: @unchecked Sendable {
    let port: UInt16
    private let process: Process

    init(root: String, certificate: String, key: String, changes: [String: String] = [:], work: String) throws {
        let config: [String: Any] = [
            "root": root, "cert": certificate, "key": key, "changes": changes, "portFile": work + "/port",
        ]
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: work + "/server.json"))
        try Self.script.write(toFile: work + "/server.py", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", work + "/server.py", work + "/server.json"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(60)
        var port: UInt16?
        while Date() < deadline, process.isRunning {
            if let text = try? String(contentsOfFile: work + "/port", encoding: .utf8), let value = UInt16(text) {
                port = value
                break
            }
            usleep(20_000)
        }
        guard let port else {
            Self.kill(process)
            throw SetupFailure(description: "the test HTTPS server did not start")
        }
        self.port = port
    }

    deinit { Self.kill(process) }

    /// SIGKILL: a child started from a test worker thread inherits a mask that blocks SIGTERM.
    private static func kill(_ process: Process) {
        if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    private static let script = #"""
        import json, os, socket, ssl, sys, threading
        config = json.load(open(sys.argv[1]))
        counts = {}
        lock = threading.Lock()

        def handle(raw):
            try:
                conn = context.wrap_socket(raw, server_side=True)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                path = data.split(b"\r\n")[0].decode("latin-1").split(" ")[1]
                with lock:
                    counts[path] = counts.get(path, 0) + 1
                    count = counts[path]
                target = os.path.join(config["root"], path.lstrip("/"))
                if count > 1 and path in config["changes"]:
                    target = config["changes"][path]
                if ".." in path or not os.path.isfile(target):
                    body, status = b"not found", "404 Not Found"
                else:
                    body, status = open(target, "rb").read(), "200 OK"
                conn.sendall(("HTTP/1.1 %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % (status, len(body))).encode() + body)
                conn.unwrap()
            except Exception:
                pass
            finally:
                raw.close()

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(config["cert"], config["key"])
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        with open(config["portFile"] + ".tmp", "w") as f:
            f.write(str(listener.getsockname()[1]))
        os.rename(config["portFile"] + ".tmp", config["portFile"])
        while True:
            raw, _ = listener.accept()
            threading.Thread(target=handle, args=(raw,), daemon=True).start()
        """#
}

@Suite(.serialized) struct HTTPSTreeTests {
    @Test func auditsATreeOverHTTPSAndNamesOneThatChangesBetweenTwoReads() throws {
        let world = try AuditWorld(try simpleHistory(5))
        let work = world.directory.path
        try makeServerPKI(in: work)
        // From its second request on, the server hands out another manifest.json: the
        // latest is now version 4 (as if a rollback were being served).
        let changed = work + "/changed-manifest.json"
        try Data(try world.tree.read(.history(4))).write(to: URL(fileURLWithPath: changed))
        let server = try TreeHTTPSServer(
            root: work + "/tree", certificate: work + "/server.pem", key: work + "/server.key",
            changes: ["/v1/com.example.app/manifest.json": changed], work: work)
        let url = "https://127.0.0.1:\(server.port)/"
        let result = runPinion([
            "audit", "--root", world.rootFile, url, "--cafile", work + "/ca.pem", "--at",
            world.fixture.auditTime.description,
        ])
        #expect(result.status == 1, "\(result.err)")
        #expect(result.out.contains("tree        \(url)v1/com.example.app/"))
        #expect(result.out.contains("manifests (5, versions 1...5; manifest.json holds version 5)"))
        #expect(result.out.contains("manifest.json: [tree-changed] changed between two reads during the audit"))
        #expect(result.out.contains("violations (1)"))

        // On later audits the server consistently serves version 4: no longer a change
        // between reads, but a manifest.json that is not the latest.
        let source = HTTPSTreeSource(
            baseURL: try #require(URL(string: url)), scope: "com.example.app",
            configuration: .init(caFile: work + "/ca.pem"))
        let counted = InstrumentedSource(source)
        let again = try audit(world.fixture, repo: "", source: counted)
        #expect(rulesAndVersions(again.violations) == ["manifest-not-latest@4"])
        // HTTPS cannot list history/: the file after the index's latest is probed once.
        #expect(counted.reads(.history(6)) == 1)
        #expect(counted.reads(.history(5)) == 1)
    }

    @Test func aStableTreeOverHTTPSPassesAndAnUntrustedServerIsAnIOError() throws {
        let world = try AuditWorld(try simpleHistory(3))
        let work = world.directory.path
        try makeServerPKI(in: work)
        let server = try TreeHTTPSServer(
            root: work + "/tree", certificate: work + "/server.pem", key: work + "/server.key", work: work)
        let url = "https://127.0.0.1:\(server.port)"
        let at = world.fixture.auditTime.description
        let result = runPinion(["audit", "--root", world.rootFile, url, "--cafile", work + "/ca.pem", "--at", at])
        #expect(result.status == 0, "\(result.out)\(result.err)")
        #expect(result.out.contains("PASS"))
        let untrusted = runPinion(["audit", "--root", world.rootFile, url, "--at", at])
        #expect(untrusted.status == 3)
        #expect(untrusted.err.contains("certificate verification failed"))
    }
}
