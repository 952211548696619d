// HTTPSWitnessClient against a hostile test server (Python ssl): the request it sends, an oversized answer, a redirect, an untrusted certificate, 409 size bodies.

import Foundation
import PinionSystem
import PinionTestSupport
import Testing

@Suite(.serialized) struct HTTPSWitnessClientTests {
    /// A TLS server for 127.0.0.1 answering by path: /big (1 MiB 200), /redirect (307),
    /// /conflict (409 "7\n"), anything else 200 echoing the request's method, path,
    /// content type and body.
    final class HostileWitness: @unchecked Sendable {
        let server: PythonServerProcess
        let pki: OpenSSLPKIBuilder
        let directory: String

        init() throws {
            directory = try makeTemporaryDirectory(prefix: "pinion-witness-client")
            pki = try OpenSSLPKIBuilder(
                directory: directory + "/pki",
                sections: """
                    [ ca ]
                    basicConstraints = critical, CA:TRUE
                    keyUsage = critical, keyCertSign, cRLSign

                    """ + OpenSSLPKIBuilder.serverSection("leaf", subjectAltName: "IP:127.0.0.1"))
            try pki.generateKey("ca")
            try pki.selfSign("ca", subject: "/CN=Witness Client Test CA", extensions: "ca")
            try pki.issueNew("leaf", subject: "/CN=127.0.0.1", by: "ca", serial: 2, extensions: "leaf")
            try pki.generateKey("other")
            try pki.selfSign("other", subject: "/CN=Other CA", extensions: "ca")
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
                def answer(conn, status, body, extra=b""):
                    conn.sendall(b"HTTP/1.1 " + status + b"\\r\\nContent-Length: " + str(len(body)).encode()
                                 + b"\\r\\nConnection: close\\r\\n" + extra + b"\\r\\n" + body)
                def handle(raw):
                    try:
                        raw.settimeout(30)
                        conn = context.wrap_socket(raw, server_side=True)
                        data = b""
                        while b"\\r\\n\\r\\n" not in data:
                            data += conn.recv(65536)
                        head, body = data.split(b"\\r\\n\\r\\n", 1)
                        lines = head.split(b"\\r\\n")
                        length = 0
                        ctype = b""
                        for line in lines[1:]:
                            name, value = line.split(b":", 1)
                            if name.lower() == b"content-length": length = int(value)
                            if name.lower() == b"content-type": ctype = value.strip()
                        while len(body) < length:
                            body += conn.recv(65536)
                        path = lines[0].split(b" ")[1]
                        if path.endswith(b"/big/add-checkpoint"):
                            answer(conn, b"200 OK", b"x" * (1 << 20))
                        elif path.endswith(b"/redirect/add-checkpoint"):
                            answer(conn, b"307 Temporary Redirect", b"", b"Location: https://127.0.0.1:1/\\r\\n")
                        elif path.endswith(b"/conflict/add-checkpoint"):
                            answer(conn, b"409 Conflict", b"7\\n")
                        else:
                            answer(conn, b"200 OK", lines[0].split(b" ")[0] + b" " + path + b" " + ctype + b"\\n" + body)
                        conn.close()
                    except Exception:
                        raw.close()
                while True:
                    raw, _ = listener.accept()
                    threading.Thread(target=handle, args=(raw,), daemon=True).start()

                """
            server = try PythonServerProcess(
                script: script,
                arguments: [pki.directory + "/leaf.pem", pki.directory + "/leaf.key", directory + "/port"],
                in: directory)
        }

        var base: String { "https://127.0.0.1:\(server.port)" }

        deinit {
            server.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    @Test func postsTheBodyAsTextPlainToAddCheckpointAndReadsTheAnswer() throws {
        let witness = try HostileWitness()
        let client = HTTPSWitnessClient(caFile: witness.pki.directory + "/ca.pem")
        let answer = try client.addCheckpoint(url: witness.base + "/w1", body: Array("old 0\n\nnote\n".utf8))
        #expect(answer.status == 200)
        #expect(String(decoding: answer.body, as: UTF8.self) == "POST /w1/add-checkpoint text/plain\nold 0\n\nnote\n")
        let conflict = try client.addCheckpoint(url: witness.base + "/conflict/", body: [])
        #expect(conflict.status == 409)
        #expect(conflict.conflictSize == 7)
    }

    @Test func refusesAnOversizedAnswerARedirectAndAnUntrustedCertificate() throws {
        let witness = try HostileWitness()
        let client = HTTPSWitnessClient(caFile: witness.pki.directory + "/ca.pem")
        #expect(throws: WitnessClientError.self) { try client.addCheckpoint(url: witness.base + "/big", body: []) }
        let redirect = try client.addCheckpoint(url: witness.base + "/redirect", body: [])
        #expect(redirect.status == 307, "a redirect is not followed: the body is never re-sent elsewhere")
        let untrusting = HTTPSWitnessClient(caFile: witness.pki.directory + "/other.pem")
        #expect(throws: WitnessClientError.self) { try untrusting.addCheckpoint(url: witness.base + "/w1", body: []) }
        #expect(throws: WitnessClientError.self) { try client.addCheckpoint(url: "http://127.0.0.1:1/w", body: []) }
    }

    @Test(arguments: [
        ("7\n", UInt64?(7)), ("0\n", 0), ("12", 12), ("", nil), ("07\n", nil), ("-1\n", nil), ("7\n\n", nil),
        ("18446744073709551616\n", nil), ("7 \n", nil),
    ])
    func conflictSizeIsReadStrictly(body: String, expected: UInt64?) {
        #expect(WitnessAnswer(status: 409, body: Array(body.utf8)).conflictSize == expected)
        #expect(WitnessAnswer(status: 200, body: Array(body.utf8)).conflictSize == nil)
    }
}
