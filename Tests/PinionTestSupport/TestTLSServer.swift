// Test helpers for real TLS on 127.0.0.1: a PKI made with the openssl command at test time,
// and a Python 3 `ssl` server that serves scripted responses and records what it received.

import Foundation
import PinionCrypto

// MARK: - PKI

/// Certificates made once per test process with the openssl command, all EC P-256:
/// root CA -> intermediate -> leaves. Validity windows are relative to now (30 days),
/// except the expired leaf (January 2020).
public struct HTTPSTestPKI: Sendable {
    /// One certificate (with its key `<name>.key` beside it).
    public enum Certificate: String, CaseIterable, Sendable {
        /// Self-signed root CA: the trust anchor tests pass as `caFile`.
        case root
        /// CA signed by `root`; signs every leaf below.
        case intermediate
        /// SAN `DNS:api.example.test`.
        case leaf
        /// SAN `DNS:api.example.test`, another key than `leaf`.
        case secondLeaf
        /// SAN `DNS:api.example.test`, expired (2020-01-01 to 2020-02-01).
        case expiredLeaf
        /// SAN `DNS:other.example.test` only.
        case otherNameLeaf
        /// SAN `IP:127.0.0.1` only.
        case ipLeaf
        /// A self-signed certificate with its own key, related to nothing above.
        case unrelated
        /// Another self-signed root CA that signed nothing used here (the wrong CA).
        case otherRoot
    }

    /// The directory holding `<name>.pem` and `<name>.key`.
    public let directory: String

    /// The PKI of this process (made on first use).
    public static func shared() throws -> HTTPSTestPKI {
        try sharedResult.get()
    }

    private static let sharedResult: Result<HTTPSTestPKI, TestSetupError> = Result {
        () throws(TestSetupError) -> HTTPSTestPKI in
        try make()
    }

    public func path(_ certificate: Certificate) -> String { directory + "/\(certificate.rawValue).pem" }
    public func keyPath(_ certificate: Certificate) -> String { directory + "/\(certificate.rawValue).key" }

    /// The RFC 7469 SPKI SHA-256 pin of a certificate, computed by PinionCrypto.
    public func spkiSHA256(_ certificate: Certificate) throws -> [UInt8] {
        let objects = try SPKIReader.objects(inFile: path(certificate), passphrase: { nil })
        guard let first = objects.first else { throw TestSetupError(description: "no certificate") }
        return first.spkiSHA256
    }

    /// The DER bytes of a certificate (its PEM body decoded).
    public func der(_ certificate: Certificate) throws -> [UInt8] {
        let text = try String(contentsOfFile: path(certificate), encoding: .utf8)
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let data = Data(base64Encoded: body) else {
            throw TestSetupError(description: "\(certificate): PEM body is not base64")
        }
        return [UInt8](data)
    }

    private static let config = """
        [ v3_root ]
        basicConstraints = critical, CA:TRUE
        keyUsage = critical, keyCertSign, cRLSign
        subjectKeyIdentifier = hash
        [ v3_intermediate ]
        basicConstraints = critical, CA:TRUE, pathlen:0
        keyUsage = critical, keyCertSign, cRLSign
        subjectKeyIdentifier = hash
        authorityKeyIdentifier = keyid:always
        [ v3_api ]
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature
        extendedKeyUsage = serverAuth
        subjectKeyIdentifier = hash
        authorityKeyIdentifier = keyid:always
        subjectAltName = DNS:api.example.test

        """
        + OpenSSLPKIBuilder.serverSection("v3_other", subjectAltName: "DNS:other.example.test")
        + OpenSSLPKIBuilder.serverSection("v3_ip", subjectAltName: "IP:127.0.0.1")
            + """
            [ ca ]
            default_ca = testca
            [ testca ]
            database = index.txt
            new_certs_dir = issued
            serial = serial
            default_md = sha256
            policy = policy_any
            unique_subject = no
            email_in_dn = no
            [ policy_any ]
            commonName = supplied

            """

    private static func make() throws(TestSetupError) -> HTTPSTestPKI {
        let pki = try OpenSSLPKIBuilder(
            directory: try makeTemporaryDirectory(prefix: "pinion-https-pki"), sections: config)
        let directory = pki.directory
        do {
            try "".write(toFile: directory + "/index.txt", atomically: true, encoding: .utf8)
            try "1000\n".write(toFile: directory + "/serial", atomically: true, encoding: .utf8)
            try FileManager.default.createDirectory(atPath: directory + "/issued", withIntermediateDirectories: true)
        } catch {
            throw TestSetupError(description: "cannot write PKI files: \(error)")
        }
        for certificate in Certificate.allCases { try pki.generateKey(certificate.rawValue) }
        func selfSigned(_ name: Certificate, subject: String) throws(TestSetupError) {
            try pki.selfSign(name.rawValue, subject: subject, extensions: "v3_root")
        }
        func issued(
            _ name: Certificate, subject: String, by issuer: Certificate, extensions: String, serial: Int
        ) throws(TestSetupError) {
            try pki.request(name.rawValue, subject: subject)
            try pki.issue(name.rawValue, by: issuer.rawValue, serial: serial, extensions: extensions)
        }
        try selfSigned(.root, subject: "/O=Pinion Test/CN=Pinion Test Root")
        try issued(
            .intermediate, subject: "/O=Pinion Test/CN=Pinion Test Intermediate", by: .root,
            extensions: "v3_intermediate", serial: 2)
        try issued(.leaf, subject: "/CN=api.example.test", by: .intermediate, extensions: "v3_api", serial: 3)
        try issued(.secondLeaf, subject: "/CN=api.example.test", by: .intermediate, extensions: "v3_api", serial: 4)
        try issued(
            .otherNameLeaf, subject: "/CN=other.example.test", by: .intermediate, extensions: "v3_other", serial: 5)
        try issued(.ipLeaf, subject: "/CN=127.0.0.1", by: .intermediate, extensions: "v3_ip", serial: 6)
        try selfSigned(.unrelated, subject: "/CN=Pinion Unrelated")
        try selfSigned(.otherRoot, subject: "/O=Pinion Test/CN=Pinion Other Root")
        // `openssl x509` cannot back-date; `openssl ca` takes explicit dates.
        try pki.request("expiredLeaf", subject: "/CN=api.example.test")
        try pki.openssl([
            "ca", "-batch", "-config", "openssl.cnf", "-name", "testca", "-cert", "intermediate.pem", "-keyfile",
            "intermediate.key", "-in", "expiredLeaf.csr", "-out", "expiredLeaf.pem", "-startdate",
            "20200101000000Z", "-enddate", "20200201000000Z", "-extfile", "openssl.cnf", "-extensions", "v3_api",
            "-notext",
        ])
        return HTTPSTestPKI(directory: directory)
    }
}

// MARK: - Server

/// A TLS server on 127.0.0.1 (Python 3 `ssl`, one thread per connection) that serves
/// scripted routes and logs, per connection, whether the handshake completed, how many
/// bytes it received before answering, how many it sent, and whether it finished sending.
/// Stop it with `stop()` (SIGKILL: a child started from a Swift Testing worker thread
/// inherits that thread's signal mask, in which SIGTERM is blocked).
public final class TestTLSServer: @unchecked Sendable {
    /// One scripted response.
    public struct Route {
        /// How the body is delimited.
        public enum Framing: String {
            /// `Content-Length` (the body's length unless `declaredLength` is set).
            case length
            /// `Transfer-Encoding: chunked`, chunks of `chunkSize` bytes.
            case chunked
            /// No length: the server closes after the body.
            case close
        }

        public var status = 200
        public var headers: [(String, String)] = []
        public var body = ""
        /// When set, the body is this many `x` bytes instead of `body`.
        public var bodySize: Int?
        public var framing = Framing.length
        public var declaredLength: Int?
        public var chunkSize = 7
        /// Seconds between body bytes, sent one at a time.
        public var trickle: Double?
        /// After the head, send `x` bytes in 16 KiB blocks until `endlessLimit` bytes were
        /// sent in total or the client goes away.
        public var endless = false
        public var endlessLimit = 256 * 1024 * 1024
        /// Send a TLS close_notify at the end (false: just close the socket).
        public var closeNotify = true

        /// A route answering with each value given (the defaults: 200, no headers, an empty body
        /// with Content-Length, ended with close_notify).
        public init(
            status: Int = 200, headers: [(String, String)] = [], body: String = "", bodySize: Int? = nil,
            framing: Framing = .length, declaredLength: Int? = nil, chunkSize: Int = 7, trickle: Double? = nil,
            endless: Bool = false, endlessLimit: Int = 256 * 1024 * 1024, closeNotify: Bool = true
        ) {
            self.status = status
            self.headers = headers
            self.body = body
            self.bodySize = bodySize
            self.framing = framing
            self.declaredLength = declaredLength
            self.chunkSize = chunkSize
            self.trickle = trickle
            self.endless = endless
            self.endlessLimit = endlessLimit
            self.closeNotify = closeNotify
        }

        public var json: [String: Any] {
            var result: [String: Any] = [
                "status": status, "headers": headers.map { [$0.0, $0.1] }, "body": body,
                "framing": framing.rawValue, "chunkSize": chunkSize, "endless": endless,
                "endlessLimit": endlessLimit, "closeNotify": closeNotify,
            ]
            if let bodySize { result["bodySize"] = bodySize }
            if let declaredLength { result["declaredLength"] = declaredLength }
            if let trickle { result["trickle"] = trickle }
            return result
        }
    }

    /// What one connection did, from the server's log.
    public struct ConnectionRecord {
        public let number: Int
        /// The TLS handshake completed (false when the client aborted it).
        public let handshake: Bool
        /// Application bytes received before the server answered (0 when the client sent
        /// no request).
        public let received: Int
        /// The request text received (ISO 8859-1 decoded).
        public let request: String
        /// Bytes sent, head included.
        public let sent: Int
        /// The route ran to its end.
        public let completed: Bool
        /// An endless route sent all of `endlessLimit`.
        public let finishedSending: Bool
    }

    /// The port the server listens on (127.0.0.1).
    public var port: UInt16 { server.port }
    /// The server's own directory (config, log, chain file).
    public let directory: String
    private let server: PythonServerProcess

    /// Starts a server and waits (up to 60 s) until it listens.
    ///
    /// - Parameters:
    ///   - chain: certificate files sent in this order (leaf first, then anything else).
    ///   - key: the leaf's private key file.
    ///   - routes: responses by request path; `*` matches any other path; unmatched paths get 404.
    ///   - silent: accept TCP connections and never answer (no TLS at all).
    public init(chain: [String], key: String, routes: [String: Route] = [:], silent: Bool = false) throws {
        let directory = try makeTemporaryDirectory(prefix: "pinion-https-server")
        self.directory = directory
        var chainText = ""
        for path in chain {
            chainText += try String(contentsOfFile: path, encoding: .utf8)
        }
        try chainText.write(toFile: directory + "/chain.pem", atomically: true, encoding: .utf8)
        var config: [String: Any] = [
            "log": directory + "/connections.log", "portFile": directory + "/port",
            "certChain": directory + "/chain.pem", "key": key, "routes": routes.mapValues(\.json),
        ]
        if silent { config["plain"] = "silent" }
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: directory + "/config.json"))
        server = try PythonServerProcess(script: Self.script, arguments: [directory + "/config.json"], in: directory)
    }

    deinit { stop() }

    /// Kills the server, waits for it to exit and removes its directory (read
    /// `connections(atLeast:)` before); safe to call twice.
    public func stop() {
        server.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The connections logged so far, waiting (up to `timeout` seconds) until there are at
    /// least `count`. A connection is logged when it ends.
    public func connections(atLeast count: Int, timeout: Double = 60) throws -> [ConnectionRecord] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let records = try loggedConnections()
            if records.count >= count { return records.sorted { $0.number < $1.number } }
            guard Date() < deadline else {
                throw TestSetupError(description: "server logged \(records.count) connections, expected \(count)")
            }
            usleep(20_000)
        }
    }

    private func loggedConnections() throws -> [ConnectionRecord] {
        guard let text = try? String(contentsOfFile: directory + "/connections.log", encoding: .utf8) else {
            return []
        }
        // Only complete lines: the server may be writing the last one.
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        return try lines.map { line -> ConnectionRecord in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let number = object["connection"] as? Int
            else {
                throw TestSetupError(description: "bad log line \(line)")
            }
            return ConnectionRecord(
                number: number, handshake: object["handshake"] as? Bool ?? false,
                received: object["received"] as? Int ?? -1, request: object["request"] as? String ?? "",
                sent: object["sent"] as? Int ?? -1, completed: object["completed"] as? Bool ?? false,
                finishedSending: object["finishedSending"] as? Bool ?? false)
        }
    }

    private static let script = #"""
        # Test TLS server for PinionClientTests (written by TestTLSServer.swift).
        import json, os, socket, ssl, sys, threading, time

        config = json.load(open(sys.argv[1]))
        log_lock = threading.Lock()


        def log(entry):
            with log_lock:
                with open(config["log"], "a") as f:
                    f.write(json.dumps(entry) + "\n")


        def send_all(conn, data, entry):
            conn.sendall(data)
            entry["sent"] += len(data)


        def serve(conn, route, entry):
            body = route["body"].encode("utf-8")
            if "bodySize" in route:
                body = b"x" * route["bodySize"]
            framing = route["framing"]
            head = "HTTP/1.1 %d Test\r\n" % route["status"]
            for name, value in route["headers"]:
                head += "%s: %s\r\n" % (name, value)
            if framing == "length":
                head += "Content-Length: %d\r\n" % route.get("declaredLength", len(body))
            elif framing == "chunked":
                head += "Transfer-Encoding: chunked\r\n"
            head += "\r\n"
            send_all(conn, head.encode("latin-1"), entry)
            if route["endless"]:
                block = b"x" * 16384
                while entry["sent"] < route["endlessLimit"]:
                    send_all(conn, block, entry)
                entry["finishedSending"] = True
                return
            if "trickle" in route:
                for byte in body:
                    send_all(conn, bytes([byte]), entry)
                    time.sleep(route["trickle"])
                return
            if framing == "chunked":
                size = route["chunkSize"]
                for start in range(0, len(body), size):
                    piece = body[start:start + size]
                    send_all(conn, b"%x\r\n" % len(piece) + piece + b"\r\n", entry)
                send_all(conn, b"0\r\n\r\n", entry)
            else:
                send_all(conn, body, entry)


        def handle(raw, number):
            entry = {"connection": number, "handshake": False, "received": 0, "sent": 0,
                     "completed": False, "request": ""}
            conn = None
            try:
                raw.settimeout(120)
                if config.get("plain") == "silent":
                    while raw.recv(65536):
                        pass
                    return
                conn = context.wrap_socket(raw, server_side=True)
                entry["handshake"] = True
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                    entry["received"] = len(data)
                    entry["request"] = data.decode("latin-1")
                if b"\r\n\r\n" not in data:
                    return
                path = data.split(b"\r\n")[0].decode("latin-1").split(" ")[1]
                routes = config["routes"]
                # A route names a path; like a static publisher, the query is ignored unless a
                # route names the path with that query.
                route = routes.get(path) or routes.get(path.split("?")[0]) or routes.get("*")
                if route is None:
                    route = {"status": 404, "headers": [], "body": "no route", "framing": "length",
                             "endless": False, "closeNotify": True}
                serve(conn, route, entry)
                entry["completed"] = True
                if route["closeNotify"]:
                    try:
                        conn.unwrap()
                    except Exception:
                        pass
            except Exception as error:
                entry["error"] = repr(error)
            finally:
                log(entry)
                try:
                    (conn or raw).close()
                except Exception:
                    pass


        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(config["certChain"], config["key"])
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        port_file = config["portFile"]
        with open(port_file + ".tmp", "w") as f:
            f.write(str(listener.getsockname()[1]))
        os.rename(port_file + ".tmp", port_file)
        number = 0
        while True:
            raw, _ = listener.accept()
            number += 1
            threading.Thread(target=handle, args=(raw, number), daemon=True).start()
        """#
}
