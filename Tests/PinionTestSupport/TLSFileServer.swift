// A file server over TLS on 127.0.0.1 (a Python 3 `ssl` program, one thread per connection) for
// the tests that read a published tree over HTTPS: the auditor, `pinion status` and the witness
// fetch. It can also misbehave: change a file between reads, send a Content-Encoding nobody
// asked for, fail paths with a status, or add raw header lines.

import Foundation

/// Serves the files under `root` over TLS (HTTP/1.1, one request per connection, `Connection:
/// close`; 404 "not found" for a missing file or a path with `..`).
///
/// Each request's path and Accept-Encoding values are appended to `work/accept.log` as
/// "path value" ("-" for none).
public final class TLSFileServer: @unchecked Sendable {
    /// The port it listens on.
    public var port: UInt16 { server.port }
    private let server: PythonServerProcess

    /// Kills the server (also done on release).
    public func stop() { server.stop() }

    /// Starts the server with its files (config, script, port, accept log) in `work`.
    ///
    /// - Parameters:
    ///   - root: the directory served.
    ///   - certificate: the server's PEM certificate chain file.
    ///   - key: its PEM private key file.
    ///   - changes: a path served from the given file from its second request on (a tree that
    ///     changes while it is read).
    ///   - codings: a path served from a file with this Content-Encoding field, whatever the
    ///     request asked for (a hostile or misconfigured server).
    ///   - headers: raw header lines (without CRLF) added to every `.../manifest.json` answer.
    ///   - statuses: a path answered with this HTTP status and no body.
    ///   - work: an existing directory for the server's files.
    /// - Throws: when the configuration cannot be written or the server does not start.
    public init(
        root: String, certificate: String, key: String, changes: [String: String] = [:],
        codings: [String: (coding: String, file: String)] = [:], headers: [String] = [],
        statuses: [String: Int] = [:], work: String
    ) throws {
        let config: [String: Any] = [
            "root": root, "cert": certificate, "key": key, "changes": changes, "portFile": work + "/port",
            "codings": codings.mapValues { [$0.coding, $0.file] }, "acceptLog": work + "/accept.log",
            "headers": headers, "statuses": statuses,
        ]
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: work + "/server.json"))
        server = try PythonServerProcess(script: Self.script, arguments: [work + "/server.json"], in: work)
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
                lines = data.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1]
                accept = [l.split(":", 1)[1].strip() for l in lines[1:] if l.lower().startswith("accept-encoding:")]
                with lock:
                    counts[path] = counts.get(path, 0) + 1
                    count = counts[path]
                    with open(config["acceptLog"], "a") as log:
                        log.write("%s %s\n" % (path, ",".join(accept) or "-"))
                extra = ""
                if path in config["statuses"]:
                    body, status = b"", "%d Failing" % config["statuses"][path]
                elif path in config["codings"]:
                    coding, source = config["codings"][path]
                    body = open(source, "rb").read()
                    conn.sendall(("HTTP/1.1 200 OK\r\nContent-Encoding: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % (coding, len(body))).encode() + body)
                    conn.unwrap()
                    return
                else:
                    target = os.path.join(config["root"], path.lstrip("/"))
                    if count > 1 and path in config["changes"]:
                        target = config["changes"][path]
                    if ".." in path or not os.path.isfile(target):
                        body, status = b"not found", "404 Not Found"
                    else:
                        body, status = open(target, "rb").read(), "200 OK"
                        if path.endswith("/manifest.json"):
                            extra = "".join(line + "\r\n" for line in config["headers"])
                head = "HTTP/1.1 %s\r\nContent-Length: %d\r\nConnection: close\r\n%s\r\n" % (status, len(body), extra)
                conn.sendall(head.encode("latin-1") + body)
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
