// A case's publisher over HTTPS for the conformance runs (conformance/README.md, "Publisher modes"):
// Python 3's `ssl` server answering what the case serves, on connections it closes or drops.

import Foundation
import PinionTestSupport
import PinionTrust

/// One file as the case's publisher serves it: a document (200, with its ETag) or a bare status.
struct PublishedFile: Sendable {
    /// The status when there is no body (404, 410, 500, 3xx, ...).
    var status: Int
    /// The document, for status 200.
    var body: [UInt8]?
    /// The document's ETag: a request whose If-None-Match equals it is answered 304.
    var etag: String?
}

/// An HTTPS publisher on 127.0.0.1 (Python 3 `ssl`, one thread per connection) whose answers the
/// runner replaces before every refresh. The server's certificate is for `host`, issued by the
/// CA at `caFile`. It never sends `Connection: close` and answers 304 with no Content-Length, as
/// nginx does; a served 3xx status carries no Location, so it is the final status for any
/// client (conformance/README.md, `serve`). How connections end is its `Mode`. Stop it with
/// `stop()`.
final class HTTPSPublisher: @unchecked Sendable {
    /// How the publisher ends connections.
    enum Mode: String, CaseIterable, Sendable {
        /// After each response, a TLS close_notify and a TCP close, without saying so in the
        /// response (an HTTP/1.0-style server).
        case closeSilently = "close"
        /// After each response, a TCP close without close_notify (a dropped keep-alive, a
        /// process or load balancer that just closes the socket).
        case closeAbruptly = "abrupt"
        /// Connections stay open after each response, even when the request said
        /// `Connection: close`; before answering a `root/N.json` request (the first request of
        /// every refresh) the server closes every other connection waiting for its next
        /// request, as an idle timeout firing between refreshes does.
        case keepAliveDroppingIdle = "keepalive"
        /// Every request below `/v1/` is answered 307 with a relative Location under `/moved/`
        /// on the same host, which serves the answer; each connection is closed after one
        /// response, without saying so. An update channel that follows https redirects on the
        /// publisher's host (docs/ARCHITECTURE.md, "The update-channel seam") passes every case.
        case redirectingOnTheSameHost = "redirect"
    }

    /// The name in the server's certificate, dialled at 127.0.0.1.
    static let host = "publisher.conformance.test"

    /// The PEM file of the CA that issued the server's certificate.
    let caFile: String
    /// The port the server listens on (127.0.0.1).
    var port: UInt16 { server.port }
    /// How connections end.
    let mode: Mode
    private let directory: String
    private let server: PythonServerProcess

    /// Makes a CA and a server certificate with the openssl command and starts the server (up
    /// to 60 s until it listens).
    ///
    /// - Parameter mode: how connections end.
    /// - Throws: `TestSetupError` when the certificates cannot be made or the server does not start.
    init(mode: Mode) throws {
        self.mode = mode
        let directory = try makeTemporaryDirectory(prefix: "pinion-conformance-publisher")
        self.directory = directory
        let pki = try OpenSSLPKIBuilder(
            directory: directory,
            sections: """
                [ v3_ca ]
                basicConstraints = critical, CA:TRUE
                keyUsage = critical, keyCertSign, cRLSign

                """ + OpenSSLPKIBuilder.serverSection("v3_server", subjectAltName: "DNS:\(Self.host)"))
        try pki.generateKey("ca")
        try pki.selfSign("ca", subject: "/CN=Pinion Conformance Publisher CA", extensions: "v3_ca")
        try pki.generateKey("server")
        try pki.request("server", subject: "/CN=\(Self.host)")
        try pki.issue("server", by: "ca", serial: 2, extensions: "v3_server")
        caFile = directory + "/ca.pem"
        try Self.write(answers: [:], query: nil, in: directory)
        server = try PythonServerProcess(
            script: Self.script,
            arguments: [mode.rawValue, "server.pem", "server.key", "answers.json", "requests.log"],
            in: directory)
    }

    deinit { stop() }

    /// Kills the server and removes its directory; safe to call twice.
    func stop() {
        server.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Replaces what the publisher serves below `v1/{scope}/`. Paths not listed are 404.
    ///
    /// - Parameters:
    ///   - answers: files by path (`root/2.json`, `manifest.json`, `manifest.proof`).
    ///   - query: the only query a manifest request may carry (the poll token of the state
    ///     held); any other is answered 400, which fails the step.
    func serve(_ answers: [String: PublishedFile], manifestQuery query: String) throws {
        try Self.write(answers: answers, query: query, in: directory)
    }

    private static func write(answers: [String: PublishedFile], query: String?, in directory: String) throws {
        var files: [String: Any] = [:]
        for (path, file) in answers {
            var entry: [String: Any] = ["status": file.status]
            if let body = file.body { entry["body"] = Data(body).base64EncodedString() }
            if let etag = file.etag { entry["etag"] = etag }
            files[path] = entry
        }
        let document: [String: Any] = ["query": query ?? NSNull(), "files": files]
        // Written beside, then renamed: the server reads either the old answers or the new.
        let data = try JSONSerialization.data(withJSONObject: document)
        try data.write(to: URL(fileURLWithPath: directory + "/answers.json.tmp"))
        guard rename(directory + "/answers.json.tmp", directory + "/answers.json") == 0 else {
            throw TestSetupError(description: "cannot replace answers.json")
        }
    }

    /// The requests answered so far and the TCP connections accepted, from the server's log.
    func counts() -> (requests: Int, connections: Int) {
        let text = (try? String(contentsOfFile: directory + "/requests.log", encoding: .utf8)) ?? ""
        let lines = text.split(separator: "\n")
        return (lines.filter { $0.hasPrefix("request") }.count, lines.filter { $0.hasPrefix("connection") }.count)
    }

    /// The server's standard error (Python tracebacks), for failure messages.
    var serverErrors: String { (try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? "" }

    private static let script = #"""
        # The conformance publisher of PinionConformanceTests (written by HTTPSPublisher.swift).
        # Usage: server.py MODE CERT KEY ANSWERS LOG
        import base64, json, os, socket, ssl, sys, threading

        mode, cert, key, answers_path, log_path = sys.argv[1:6]
        lock = threading.Lock()
        idle = set()
        reasons = {200: "OK", 304: "Not Modified", 400: "Bad Request", 404: "Not Found", 410: "Gone"}


        def log(line):
            with lock:
                with open(log_path, "a") as f:
                    f.write(line + "\n")


        def answer(target, headers):
            with open(answers_path) as f:
                answers = json.load(f)
            path, _, query = target.partition("?")
            parts = path.split("/", 3)
            if len(parts) < 4 or parts[1] != "v1":
                return 404, [], b""
            name = parts[3]
            if name == "manifest.json" and query != answers["query"]:
                return 400, [], b"poll token"
            if query and name != "manifest.json":
                return 400, [], b"query"
            entry = answers["files"].get(name)
            if entry is None:
                return 404, [], b""
            if "body" not in entry:
                return entry["status"], [], b""
            etag = entry.get("etag")
            fields = [("ETag", etag)] if etag is not None else []
            if etag is not None and headers.get("if-none-match") == etag:
                return 304, fields, None
            return 200, fields, base64.b64decode(entry["body"])


        def drop_idle(current):
            with lock:
                others = [s for s in idle if s is not current]
            for s in others:
                try:
                    # Shut down through a duplicate descriptor: the owning thread is blocked in recv.
                    dup = socket.socket(fileno=os.dup(s.fileno()))
                    dup.shutdown(socket.SHUT_RDWR)
                    dup.close()
                except OSError:
                    pass


        def handle(raw):
            data = b""
            conn = raw
            try:
                raw.settimeout(120)
                # As nginx does: a response is not held back waiting for the ACK of the one before.
                raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conn = context.wrap_socket(raw, server_side=True)
                while True:
                    with lock:
                        idle.add(conn)
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(65536)
                        if not chunk:
                            return
                        data += chunk
                    with lock:
                        idle.discard(conn)
                    head, _, data = data.partition(b"\r\n\r\n")
                    lines = head.decode("latin-1").split("\r\n")
                    target = lines[0].split(" ")[1]
                    headers = {}
                    for line in lines[1:]:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                    if mode == "keepalive" and "/root/" in target:
                        drop_idle(conn)
                    if mode == "redirect" and target.startswith("/v1/"):
                        status, fields, body = 307, [("Location", "/moved" + target)], b""
                    elif mode == "redirect" and target.startswith("/moved/v1/"):
                        status, fields, body = answer(target[len("/moved"):], headers)
                    elif mode == "redirect":
                        status, fields, body = 404, [], b""
                    else:
                        status, fields, body = answer(target, headers)
                    log("request " + target)
                    response = "HTTP/1.1 %d %s\r\n" % (status, reasons.get(status, "Status"))
                    for name, value in fields:
                        response += "%s: %s\r\n" % (name, value)
                    if body is not None:
                        response += "Content-Length: %d\r\n" % len(body)
                    conn.sendall(response.encode("latin-1") + b"\r\n" + (body or b""))
                    if mode in ("close", "redirect"):
                        conn.unwrap()
                        return
                    if mode == "abrupt":
                        return
            except (OSError, ssl.SSLError):
                return
            finally:
                with lock:
                    idle.discard(conn)
                try:
                    conn.close()
                except OSError:
                    pass


        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        with open("port.tmp", "w") as f:
            f.write(str(listener.getsockname()[1]))
        os.rename("port.tmp", "port")
        while True:
            raw, _ = listener.accept()
            log("connection")
            threading.Thread(target=handle, args=(raw,), daemon=True).start()
        """#
}
