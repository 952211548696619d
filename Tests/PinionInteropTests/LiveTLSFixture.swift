// Live TLS for lint --live and check-host tests: a small PKI made with openssl and a Python 3
// `ssl` server on 127.0.0.1 that completes handshakes and closes (PinionTestSupport's
// OpenSSLPKIBuilder and PythonServerProcess).

import Foundation
import PinionCore
import PinionTestSupport

/// EC P-256 certificates for `api.example.test`: a root CA and two leaves with different keys,
/// a leaf issued by a second CA (another issuer), and a leaf naming the host only in its
/// subject common name (`leafCN`). Made once per test process.
struct InteropPKI: Sendable {
    let directory: String

    static func shared() throws -> InteropPKI { try sharedResult.get() }

    private static let sharedResult: Result<InteropPKI, TestSetupError> = Result {
        () throws(TestSetupError) -> InteropPKI in try make()
    }

    func path(_ name: String) -> String { directory + "/" + name }

    /// The pin of a certificate, from `openssl` (independent of PinionCrypto).
    func pin(_ certificate: String) throws -> String {
        let script =
            "openssl x509 -in '\(path(certificate))' -pubkey -noout | openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary | base64"
        let result = try runProgram("/bin/sh", ["-c", script], mergeStandardError: true)
        guard result.status == 0 else { throw TestSetupError(description: result.out) }
        return "sha256/" + result.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func make() throws(TestSetupError) -> InteropPKI {
        // v3_ca: what openssl's default configuration gives a self-signed certificate.
        let pki = try OpenSSLPKIBuilder(
            directory: try makeTemporaryDirectory(prefix: "pinion-interop-pki"),
            sections: """
                [ v3_ca ]
                subjectKeyIdentifier = hash
                authorityKeyIdentifier = keyid:always, issuer
                basicConstraints = critical, CA:true

                [ v3_cn_only ]
                basicConstraints = critical, CA:false
                keyUsage = critical, digitalSignature
                extendedKeyUsage = serverAuth

                """ + OpenSSLPKIBuilder.serverSection("v3_leaf", subjectAltName: "DNS:api.example.test"))
        for ca in ["ca", "otherca"] {
            try pki.generateKey(ca)
            try pki.selfSign(ca, subject: "/CN=Interop \(ca)", extensions: "v3_ca")
        }
        for (leaf, ca) in [("leafA", "ca"), ("leafB", "ca"), ("leafC", "otherca")] {
            try pki.issueNew(leaf, subject: "/CN=api.example.test", by: ca, serial: 7, extensions: "v3_leaf")
        }
        // An RSA key next to the EC ones, for a server holding one key of each type.
        try pki.openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "leafRSA.key"])
        try pki.request("leafRSA", subject: "/CN=api.example.test")
        try pki.issue("leafRSA", by: "ca", serial: 9, extensions: "v3_leaf")
        // The host name only in the subject common name, with no subjectAltName.
        try pki.issueNew("leafCN", subject: "/CN=api.example.test", by: "ca", serial: 8, extensions: "v3_cn_only")
        return InteropPKI(directory: pki.directory)
    }
}

/// A TLS server on 127.0.0.1 presenting one certificate, or one per key type (OpenSSL picks
/// by the client's signature algorithms); it completes each handshake and closes. Killed
/// (SIGKILL) on `deinit`.
final class InteropTLSServer: @unchecked Sendable {
    var port: UInt16 { server.port }
    private let server: PythonServerProcess
    private let directory: String

    convenience init(certificate: String, key: String) throws {
        try self.init(certificates: [(certificate, key)])
    }

    /// - Parameter certificates: (certificate, key) file pairs, of different key types.
    init(certificates: [(certificate: String, key: String)]) throws {
        directory = try makeTemporaryDirectory(prefix: "pinion-interop-tls")
        let script = """
            import os, socket, ssl, sys, threading
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            for index in range(2, len(sys.argv), 2):
                context.load_cert_chain(sys.argv[index], sys.argv[index + 1])
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(("127.0.0.1", 0))
            listener.listen(16)
            with open(sys.argv[1] + ".tmp", "w") as f:
                f.write(str(listener.getsockname()[1]))
            os.rename(sys.argv[1] + ".tmp", sys.argv[1])
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
        server = try PythonServerProcess(
            script: script, arguments: [directory + "/port"] + certificates.flatMap { [$0.certificate, $0.key] },
            in: directory)
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// `api.example.test:PORT`, with `--resolve api.example.test=127.0.0.1` to reach it.
    var target: String { "api.example.test:\(port)" }
}
