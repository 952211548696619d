// Real nginx (Debian package nginx-light) on 127.0.0.1 for tests: the shipped
// deploy/nginx/pinion.conf, or server blocks a test writes (a caching proxy in front of it).

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// nginx on 127.0.0.1 running deploy/nginx/pinion.conf (or any server blocks a test
/// renders), in its own temporary directory (prefix, pid file, logs and temp paths all there), in the foreground. nginx
/// cannot bind port 0: the port is one the kernel just gave out, and a start that fails
/// because someone else bound it meanwhile is retried on another port.
/// Stop it with `stop()`, which SIGKILLs its whole process group (master and workers).
public final class NginxServer: @unchecked Sendable {
    public static let defaultBinary = "/usr/sbin/nginx"
    /// The package's root directory, found from this source file.
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    /// The shipped configuration.
    public static let shippedConfiguration = packageRoot + "/deploy/nginx/pinion.conf"
    /// The access log format of the test (one line per request).
    public static let logFormat = "$status $request_method $request_uri"

    /// The first port nginx listens on (127.0.0.1).
    public var port: UInt16 { ports[0] }
    /// Every port nginx listens on (127.0.0.1), in the order given to the configuration.
    public let ports: [UInt16]
    /// Holds nginx.conf, the rendered pinion.conf, logs, pid file and temp paths.
    public let directory: String
    /// Ports tried first whose bind failed (another process had them).
    public let conflicts: [UInt16]
    /// The master's process group, which its workers share.
    public let processGroup: pid_t
    private let process: Process
    private let lock = NSLock()
    private var stopped = false

    /// Starts nginx with the shipped configuration serving `tree` and waits (up to 60 s per
    /// attempt) until it listens.
    ///
    /// - Parameters:
    ///   - tree: the directory given to `pinion publish --repo`.
    ///   - chain: certificate files, leaf first.
    ///   - key: the leaf's private key file.
    ///   - firstPort: the port tried first (default: one the kernel picks).
    ///   - binary: the nginx executable.
    ///   - edit: applied to the shipped configuration's text before its placeholders are filled.
    /// - Throws: `TestSetupError` when nginx is missing, a value cannot go into the
    ///   configuration, or nginx does not start.
    public convenience init(
        tree: String, chain: [String], key: String, firstPort: UInt16? = nil, binary: String = defaultBinary,
        edit: (String) -> String = { $0 }
    ) throws {
        try self.init(firstPort: firstPort, binary: binary) { ports, directory in
            try Self.shippedServer(
                listen: "127.0.0.1:\(ports[0])", chain: chain, key: key, tree: tree, in: directory, edit: edit)
        }
    }

    /// Starts nginx with the server blocks `render` returns and waits (up to 60 s per
    /// attempt) until it listens on every port.
    ///
    /// - Parameters:
    ///   - ports: how many ports of 127.0.0.1 the configuration listens on.
    ///   - firstPort: the first port tried for `ports[0]` (default: one the kernel picks).
    ///   - binary: the nginx executable.
    ///   - render: given the ports (`ports` of them, each free when chosen) and nginx's
    ///     directory, returns what goes inside `http {}` (server blocks, `proxy_cache_path`);
    ///     called again with other ports when a bind fails.
    /// - Throws: `TestSetupError` when nginx is missing or does not start; what `render` throws.
    public init(
        ports count: Int = 1, firstPort: UInt16? = nil, binary: String = defaultBinary,
        render: ([UInt16], String) throws -> String
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw TestSetupError(
                description: "\(binary) not found: nginx is not installed. Run scripts/install-deps "
                    + "(it installs the Debian package nginx-light).")
        }
        let directory = try makeTemporaryDirectory(prefix: "pinion-nginx")
        self.directory = directory
        var conflicts: [UInt16] = []
        var next = firstPort
        for _ in 0..<20 {
            var ports: [UInt16] = []
            if let next { ports.append(next) }
            next = nil
            while ports.count < max(count, 1) {
                let port = try freeLoopbackPort()
                if !ports.contains(port) { ports.append(port) }
            }
            try render(ports, directory).write(toFile: directory + "/pinion.conf", atomically: true, encoding: .utf8)
            try Self.mainConfiguration(directory).write(
                toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
            switch try Self.launch(binary, in: directory) {
            case .listening(let process):
                self.process = process
                self.ports = ports
                self.conflicts = conflicts
                processGroup = process.processIdentifier
                return
            case .addressInUse:
                conflicts.append(contentsOf: ports)
            }
        }
        throw TestSetupError(description: "nginx found no free port after 20 attempts: \(conflicts)")
    }

    /// The shipped server block (deploy/nginx/pinion.conf) with its placeholders filled: it
    /// listens on `listen` for 127.0.0.1 and serves `tree` with the certificates of `chain`
    /// (copied, concatenated, to `directory/chain.pem`).
    ///
    /// - Throws: `TestSetupError` when a value holds whitespace or nginx syntax, or the
    ///   shipped file has a placeholder this function does not know.
    public static func shippedServer(
        listen: String, chain: [String], key: String, tree: String, in directory: String,
        edit: (String) -> String = { $0 }
    ) throws -> String {
        var chainText = ""
        for path in chain { chainText += try String(contentsOfFile: path, encoding: .utf8) }
        try chainText.write(toFile: directory + "/chain.pem", atomically: true, encoding: .utf8)
        let values = [
            "@PINION_LISTEN@": listen, "@PINION_SERVER_NAME@": "127.0.0.1", "@PINION_CERT@": directory + "/chain.pem",
            "@PINION_KEY@": key, "@PINION_TREE@": tree,
        ]
        var rendered = edit(try String(contentsOfFile: shippedConfiguration, encoding: .utf8))
        for (placeholder, value) in values {
            guard !value.contains(where: { $0.isWhitespace || $0 == ";" || $0 == "{" || $0 == "}" }) else {
                throw TestSetupError(description: "cannot put \(value) into an nginx configuration")
            }
            rendered = rendered.replacingOccurrences(of: placeholder, with: value)
        }
        guard !rendered.contains("@PINION_") else {
            throw TestSetupError(description: "\(shippedConfiguration) has a placeholder the test does not know")
        }
        return rendered
    }

    deinit { stop() }

    /// The main configuration around the shipped server block: everything nginx writes
    /// stays in `directory`. As root, workers run as nobody, as a packaged nginx's run as
    /// an unprivileged user.
    private static func mainConfiguration(_ directory: String) throws -> String {
        var user = ""
        if geteuid() == 0 {
            guard let entry = getpwnam("nobody"), let group = getgrgid(entry.pointee.pw_gid) else {
                throw TestSetupError(description: "running as root, but there is no user nobody for nginx's workers")
            }
            user = "user nobody \(String(cString: group.pointee.gr_name));"
        }
        return """
            daemon off;
            master_process on;
            worker_processes 1;
            pid \(directory)/nginx.pid;
            lock_file \(directory)/nginx.lock;
            error_log \(directory)/error.log info;
            \(user)
            events {
                worker_connections 64;
            }
            http {
                client_body_temp_path \(directory)/temp/body;
                proxy_temp_path \(directory)/temp/proxy;
                fastcgi_temp_path \(directory)/temp/fastcgi;
                uwsgi_temp_path \(directory)/temp/uwsgi;
                scgi_temp_path \(directory)/temp/scgi;
                log_format pinion_test '\(logFormat)';
                access_log \(directory)/access.log pinion_test;
                include \(directory)/pinion.conf;
            }

            """
    }

    private enum Launch {
        case listening(Process)
        case addressInUse
    }

    /// Runs nginx and waits until its pid file names it: nginx writes the pid file after
    /// it bound and listens on every socket.
    private static func launch(_ binary: String, in directory: String) throws -> Launch {
        for name in ["nginx.pid", "error.log", "stderr"] {
            try? FileManager.default.removeItem(atPath: directory + "/" + name)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "-p", directory + "/", "-c", directory + "/nginx.conf", "-e", directory + "/error.log",
        ]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: directory + "/stderr", contents: nil)
        process.standardError = FileHandle(forWritingAtPath: directory + "/stderr")
        try FileManager.default.createDirectory(atPath: directory + "/temp", withIntermediateDirectories: true)
        try process.run()
        // Foundation starts a child in its own process group; stop() relies on it.
        guard getpgid(process.processIdentifier) == process.processIdentifier else {
            kill(process: process)
            throw TestSetupError(description: "nginx was not started in its own process group")
        }

        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: directory + "/nginx.pid", encoding: .utf8),
                pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) == process.processIdentifier
            {
                return .listening(process)
            }
            if !process.isRunning {
                let log = Self.logs(directory)
                // nginx gives up after five bind attempts half a second apart and exits 1.
                if log.contains("Address already in use") { return .addressInUse }
                throw TestSetupError(
                    description: "nginx exited with status \(process.terminationStatus) before listening:\n\(log)")
            }
            usleep(20_000)
        }
        kill(process: process)
        throw TestSetupError(description: "nginx did not start within 60 s:\n\(Self.logs(directory))")
    }

    private static func logs(_ directory: String) -> String {
        ["stderr", "error.log"].map { (try? String(contentsOfFile: directory + "/" + $0, encoding: .utf8)) ?? "" }
            .joined(separator: "\n")
    }

    private static func kill(process: Process) {
        let group = process.processIdentifier
        _ = Glibc.kill(-group, SIGKILL)
        if process.isRunning { _ = Glibc.kill(group, SIGKILL) }
        process.waitUntilExit()
    }

    /// Live processes (zombies excluded) of a process group, from /proc.
    public static func processes(inGroup group: pid_t) -> [pid_t] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap { name -> pid_t? in
            guard let pid = pid_t(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                let end = stat.lastIndex(of: ")")
            else { return nil }
            // After "pid (comm)": state, ppid, pgrp, ...
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            guard fields.count > 2, fields[0] != "Z", pid_t(fields[2]) == group else { return nil }
            return pid
        }
    }

    /// SIGKILLs the master and every worker (the whole process group, so workers left
    /// behind by a master that died are killed too), waits until none is left (up to
    /// 30 s) and removes the directory; safe to call twice.
    public func stop() {
        let alreadyStopped = lock.withLock {
            defer { stopped = true }
            return stopped
        }
        guard !alreadyStopped else { return }
        Self.kill(process: process)
        let deadline = Date().addingTimeInterval(30)
        while !Self.processes(inGroup: processGroup).isEmpty, Date() < deadline {
            for pid in Self.processes(inGroup: processGroup) { _ = Glibc.kill(pid, SIGKILL) }
            usleep(20_000)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The access log (`logFormat`), waiting (up to `timeout` seconds) until it has at
    /// least `count` lines: nginx logs a request after it sent the response.
    public func accessLog(atLeast count: Int, timeout: Double = 30) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let text = (try? String(contentsOfFile: directory + "/access.log", encoding: .utf8)) ?? ""
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            lines.removeLast()  // only complete lines
            if lines.count >= count { return lines }
            guard Date() < deadline else {
                throw TestSetupError(description: "nginx logged \(lines.count) requests, expected \(count): \(lines)")
            }
            usleep(20_000)
        }
    }

    /// nginx's error log so far.
    public var errorLog: String { (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? "" }
}
