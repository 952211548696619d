// Real TLS on 127.0.0.1 for the tests: certificates made with the openssl command at test
// time, test servers written in Python 3 (`ssl`), and free ports.

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Certificates

/// Makes keys and certificates with the openssl command in one directory, which holds
/// `openssl.cnf` and, for a name N, `N.key`, `N.csr` and `N.pem`. Every key is EC P-256;
/// certificates are valid from now for `days` days. The configuration is a `[ req ]`
/// section (subjects come from `-subj`) followed by the given sections.
public struct OpenSSLPKIBuilder: Sendable {
    /// The directory of the files.
    public let directory: String

    /// Creates `directory` and writes `openssl.cnf` there: the `[ req ]` section, then
    /// `sections` (extension sections and any other the caller's commands need).
    public init(directory: String, sections: String) throws(TestSetupError) {
        self.directory = directory
        let config = """
            [ req ]
            distinguished_name = dn
            prompt = no
            [ dn ]
            CN = placeholder

            """ + sections
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try config.write(toFile: directory + "/openssl.cnf", atomically: true, encoding: .utf8)
        } catch {
            throw TestSetupError(description: "cannot write the PKI files in \(directory): \(error)")
        }
    }

    /// An extension section `[ name ]` for a TLS server certificate (not a CA, digital
    /// signature, serverAuth) with the given subjectAltName (`DNS:...`, `IP:...`).
    public static func serverSection(_ name: String, subjectAltName: String) -> String {
        """
        [ \(name) ]
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature
        extendedKeyUsage = serverAuth
        subjectAltName = \(subjectAltName)

        """
    }

    /// Runs `openssl ARGUMENTS` in the directory.
    public func openssl(_ arguments: [String]) throws(TestSetupError) {
        try runTool(["openssl"] + arguments, in: directory)
    }

    /// A new EC P-256 private key `name.key`.
    public func generateKey(_ name: String) throws(TestSetupError) {
        try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "\(name).key"])
    }

    /// A self-signed certificate `name.pem` for the key `name.key`, with the extensions
    /// of the configuration's section `extensions`.
    public func selfSign(_ name: String, subject: String, extensions: String, days: Int = 30) throws(TestSetupError) {
        try openssl([
            "req", "-x509", "-new", "-key", "\(name).key", "-subj", subject, "-days", String(days), "-sha256",
            "-config", "openssl.cnf", "-extensions", extensions, "-out", "\(name).pem",
        ])
    }

    /// A certificate signing request `name.csr` for the key `name.key`.
    public func request(_ name: String, subject: String) throws(TestSetupError) {
        try openssl([
            "req", "-new", "-key", "\(name).key", "-subj", subject, "-config", "openssl.cnf", "-out", "\(name).csr",
        ])
    }

    /// The certificate `name.pem` for the request `name.csr`, issued by `issuer`
    /// (`issuer.pem`, `issuer.key`) with the configuration's section `extensions`.
    public func issue(
        _ name: String, by issuer: String, serial: Int, extensions: String, days: Int = 30
    ) throws(TestSetupError) {
        try openssl([
            "x509", "-req", "-in", "\(name).csr", "-CA", "\(issuer).pem", "-CAkey", "\(issuer).key", "-set_serial",
            String(serial), "-days", String(days), "-sha256", "-extfile", "openssl.cnf", "-extensions", extensions,
            "-out", "\(name).pem",
        ])
    }

    /// A new key, its request and the certificate `issuer` issued for it.
    public func issueNew(
        _ name: String, subject: String, by issuer: String, serial: Int, extensions: String, days: Int = 30
    ) throws(TestSetupError) {
        try generateKey(name)
        try request(name, subject: subject)
        try issue(name, by: issuer, serial: serial, extensions: extensions, days: days)
    }
}

// MARK: - Servers

/// A test server written in Python 3, run as a child process until `stop()` (or release):
/// the script is written to `server.py` in `directory`, runs there as `python3 server.py
/// ARGUMENTS`, binds a port of 127.0.0.1 and writes its number to `directory/port`
/// (atomically: written to `port.tmp`, then renamed). Its standard error goes to
/// `directory/stderr`. Stopped with SIGKILL: a child started from a Swift Testing worker
/// thread inherits that thread's signal mask, in which SIGTERM is blocked.
public final class PythonServerProcess: @unchecked Sendable {
    /// The port the server listens on (127.0.0.1).
    public let port: UInt16
    /// The directory of the script, its port file and its standard error.
    public let directory: String
    private let process: Process
    private let lock = NSLock()
    private var stopped = false

    /// Starts the script and waits (up to 60 s) until it wrote its port.
    ///
    /// - Parameters:
    ///   - script: the Python program.
    ///   - arguments: its arguments.
    ///   - directory: an existing directory for its files.
    public init(script: String, arguments: [String], in directory: String) throws {
        self.directory = directory
        try script.write(toFile: directory + "/server.py", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", directory + "/server.py"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: directory + "/stderr", contents: nil)
        process.standardError = FileHandle(forWritingAtPath: directory + "/stderr")
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
            Self.kill(process)
            let stderr = (try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? ""
            throw TestSetupError(description: "test server did not start: \(stderr)")
        }
        self.port = port
    }

    deinit { stop() }

    /// Kills the server and waits for it to exit; safe to call twice.
    public func stop() {
        let alreadyStopped = lock.withLock {
            defer { stopped = true }
            return stopped
        }
        guard !alreadyStopped else { return }
        Self.kill(process)
    }

    private static func kill(_ process: Process) {
        if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

// MARK: - Ports

/// A TCP port of 127.0.0.1 that the kernel considers free right now (bound to port 0,
/// then closed): nothing listens on it.
public func freeLoopbackPort() throws(TestSetupError) -> UInt16 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw TestSetupError(description: "socket: \(String(cString: strerror(errno)))") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
            bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
        }
    }
    guard bound else { throw TestSetupError(description: "bind: \(String(cString: strerror(errno)))") }
    return UInt16(bigEndian: address.sin_port)
}
