// Live TLS for lint --live and check-host tests: a small PKI made with openssl and a Python 3
// `ssl` server on 127.0.0.1 that completes handshakes and closes (the pattern of
// PinionClientTests/TestTLSServer.swift, reduced to what these tests need).

import Foundation
import PinionCore
import PinionTestSupport

#if canImport(Glibc)
    import Glibc
#endif

struct InteropSetupError: Error, CustomStringConvertible {
    let description: String
}

/// EC P-256 certificates for `api.example.test`: a root CA and two leaves with different keys,
/// plus a leaf issued by a second CA (another issuer). Made once per test process.
struct InteropPKI: Sendable {
    let directory: String

    static func shared() throws -> InteropPKI { try sharedResult.get() }

    private static let sharedResult: Result<InteropPKI, InteropSetupError> = Result {
        () throws(InteropSetupError) -> InteropPKI in try make()
    }

    func path(_ name: String) -> String { directory + "/" + name }

    /// The pin of a certificate, from `openssl` (independent of PinionCrypto).
    func pin(_ certificate: String) throws -> String {
        let script =
            "openssl x509 -in '\(path(certificate))' -pubkey -noout | openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary | base64"
        let result = try runProgram("/bin/sh", ["-c", script], mergeStandardError: true)
        guard result.status == 0 else { throw InteropSetupError(description: result.out) }
        return "sha256/" + result.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func make() throws(InteropSetupError) -> InteropPKI {
        let directory = FileManager.default.temporaryDirectory.path + "/pinion-interop-pki-\(UUID().uuidString)"
        let config = """
            [ req ]
            distinguished_name = dn
            prompt = no
            [ dn ]
            CN = placeholder
            [ v3_leaf ]
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = serverAuth
            subjectAltName = DNS:api.example.test

            """
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try config.write(toFile: directory + "/openssl.cnf", atomically: true, encoding: .utf8)
        } catch {
            throw InteropSetupError(description: "cannot write \(directory): \(error)")
        }
        func openssl(_ arguments: [String]) throws(InteropSetupError) {
            let result: CommandResult
            do {
                result = try runProgram(
                    "/bin/sh", ["-c", "cd '\(directory)' && openssl " + arguments.joined(separator: " ")],
                    mergeStandardError: true)
            } catch {
                throw InteropSetupError(description: "openssl: \(error)")
            }
            guard result.status == 0 else {
                throw InteropSetupError(description: "openssl \(arguments): \(result.out)")
            }
        }
        for ca in ["ca", "otherca"] {
            try openssl([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                "\(ca).key",
                "-out", "\(ca).pem", "-subj", "'/CN=Interop \(ca)'", "-days", "30",
            ])
        }
        for (leaf, ca) in [("leafA", "ca"), ("leafB", "ca"), ("leafC", "otherca")] {
            try openssl([
                "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                "\(leaf).key",
                "-out", "\(leaf).csr", "-subj", "/CN=api.example.test", "-config", "openssl.cnf",
            ])
            try openssl([
                "x509", "-req", "-in", "\(leaf).csr", "-CA", "\(ca).pem", "-CAkey", "\(ca).key", "-set_serial", "7",
                "-days", "30", "-extfile", "openssl.cnf", "-extensions", "v3_leaf", "-out", "\(leaf).pem",
            ])
        }
        return InteropPKI(directory: directory)
    }
}

/// A TLS server on 127.0.0.1 presenting one certificate; it completes each handshake and
/// closes. Killed (SIGKILL) on `deinit`.
final class InteropTLSServer: @unchecked Sendable {
    let port: UInt16
    private let process: Process
    private let directory: String

    init(certificate: String, key: String) throws {
        directory = FileManager.default.temporaryDirectory.path + "/pinion-interop-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let script = """
            import os, socket, ssl, sys, threading
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[1], sys.argv[2])
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(("127.0.0.1", 0))
            listener.listen(16)
            with open(sys.argv[3] + ".tmp", "w") as f:
                f.write(str(listener.getsockname()[1]))
            os.rename(sys.argv[3] + ".tmp", sys.argv[3])
            def handle(raw):
                try:
                    raw.settimeout(30)
                    conn = context.wrap_socket(raw, server_side=True)
                    conn.close()
                except Exception:
                    raw.close()
            while True:
                raw, _ = listener.accept()
                threading.Thread(target=handle, args=(raw,), daemon=True).start()

            """
        try script.write(toFile: directory + "/server.py", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", directory + "/server.py", certificate, key, directory + "/port"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(60)
        var port: UInt16?
        while Date() < deadline, process.isRunning {
            if let text = try? String(contentsOfFile: directory + "/port", encoding: .utf8), let value = UInt16(text) {
                port = value
                break
            }
            usleep(20_000)
        }
        guard let port else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            throw InteropSetupError(description: "test TLS server did not start")
        }
        self.port = port
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// `api.example.test:PORT`, with `--resolve api.example.test=127.0.0.1` to reach it.
    var target: String { "api.example.test:\(port)" }
}

/// A closed TCP port on 127.0.0.1 (bound, then released).
func closedPort() -> UInt16 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    return UInt16(bigEndian: address.sin_port)
}
