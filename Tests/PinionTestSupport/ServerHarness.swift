// Test helpers for `pinion serve`: certificates made with openssl at test time, a raw TLS
// client that sends exact bytes (including garbage), a plain TCP client, and a response
// splitter.

import COpenSSL
import CPinionShims
import Foundation
import PinionCrypto
import PinionPublisher
import PinionSystem
import Testing

/// The publisher tests' name for PinionTestSupport's set-up error.
public typealias SetupFailure = TestSetupError

/// Two self-signed certificates for 127.0.0.1 with their keys, plus an encrypted key and
/// a key that matches neither, made once per test process.
public struct ServerCredentials: Sendable {
    public let directory: String
    public var certificate: String { directory + "/cert1.pem" }
    public var key: String { directory + "/key1.pem" }
    public var secondCertificate: String { directory + "/cert2.pem" }
    public var secondKey: String { directory + "/key2.pem" }
    public var encryptedKey: String { directory + "/encrypted.pem" }

    public static func shared() throws -> ServerCredentials { try sharedResult.get() }

    private static let sharedResult = Result { () throws(SetupFailure) -> ServerCredentials in try make() }

    private static func make() throws(SetupFailure) -> ServerCredentials {
        let directory = try makeTemporaryDirectory(prefix: "pinion-serve-pki")
        for index in 1...2 {
            try openssl(
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                    "\(directory)/key\(index).pem", "-out", "\(directory)/cert\(index).pem", "-days", "3650", "-subj",
                    "/CN=publisher \(index)", "-addext", "subjectAltName=IP:127.0.0.1",
                ], in: directory)
        }
        try openssl(
            [
                "pkey", "-in", "\(directory)/key1.pem", "-aes256", "-passout", "pass:secret", "-out",
                "\(directory)/encrypted.pem",
            ], in: directory)
        return ServerCredentials(directory: directory)
    }

    /// Runs `openssl ARGUMENTS` (absolute paths) in the credentials' directory.
    private static func openssl(_ arguments: [String], in directory: String) throws(SetupFailure) {
        try runTool(["openssl"] + arguments, in: directory)
    }
}

/// A tree with a few files, made in a fresh temporary directory.
public final class TestTree: @unchecked Sendable {
    public let directory: String

    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pinion-serve-tree-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory + "/v1/s/history", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/v1/s/root", withIntermediateDirectories: true)
        try write("v1/s/manifest.json", "{\"version\":2}")
        try write("v1/s/index.json", "{\"entries\":[]}")
        try write("v1/s/history/1.json", "{\"version\":1}")
        try write("v1/s/root/1.json", "{\"root\":1}")
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
        for suffix in [".cert.pem", ".key.pem"] { try? FileManager.default.removeItem(atPath: directory + suffix) }
    }

    /// Copies of the first certificate and key beside the tree (removed with it), for tests
    /// that replace the files a server was started with.
    public func copyOfCredentials(_ credentials: ServerCredentials) throws -> (certificate: String, key: String) {
        let certificate = directory + ".cert.pem"
        let key = directory + ".key.pem"
        try FileManager.default.copyItem(atPath: credentials.certificate, toPath: certificate)
        try FileManager.default.copyItem(atPath: credentials.key, toPath: key)
        return (certificate, key)
    }

    public func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/" + name))
    }
}

/// A running in-process publisher, drained when the test ends.
public final class RunningPublisher: @unchecked Sendable {
    public let publisher: HTTPSPublisher
    public let tree: TestTree
    public let logPath: String

    public var port: UInt16 { publisher.port }

    public init(tree: TestTree? = nil, configure: (inout PublisherConfiguration) -> Void = { _ in }) throws {
        let credentials = try ServerCredentials.shared()
        self.tree = try tree ?? TestTree()
        var configuration = PublisherConfiguration(
            repository: self.tree.directory, certificateChainFile: credentials.certificate,
            privateKeyFile: credentials.key, host: "127.0.0.1", port: 0)
        configuration.workers = 2
        configure(&configuration)
        logPath = self.tree.directory + ".access.log"
        log = try AccessLog(path: logPath)
        publisher = try HTTPSPublisher(configuration: configuration, accessLog: log)
        publisher.start()
    }

    private let log: AccessLog

    /// The access log so far (lines are written by a thread of their own: flushed first).
    public var accessLog: String {
        log.flush()
        return (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    deinit {
        publisher.drain(timeout: 5)
        try? FileManager.default.removeItem(atPath: logPath)
    }
}

/// One parsed response.
public struct TestResponse {
    public let status: Int
    public let headers: [String: String]
    public let body: [UInt8]

    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Splits `bytes` into responses; `bodiless` tells which (by position) carry no body
/// (HEAD, 304).
public func splitResponses(_ bytes: [UInt8], bodiless: Set<Int> = []) -> [TestResponse] {
    var responses: [TestResponse] = []
    var rest = bytes[...]
    let separator: [UInt8] = Array("\r\n\r\n".utf8)
    while !rest.isEmpty {
        guard let end = rest.indices.first(where: { rest[$0...].starts(with: separator) }) else { break }
        let headText = String(decoding: rest[rest.startIndex..<end], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { break }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let bodyStart = end + 4
        let length =
            bodiless.contains(responses.count) || status == 304 ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        let bodyEnd = min(rest.endIndex, bodyStart + length)
        responses.append(TestResponse(status: status, headers: headers, body: Array(rest[bodyStart..<bodyEnd])))
        rest = rest[bodyEnd...]
    }
    return responses
}

/// A TLS client that writes exact bytes and reads until the server closes or a timeout.
/// It does not verify the server (the tests check the server, not its certificate).
public final class RawTLSClient: @unchecked Sendable {  // used by one thread at a time
    public let descriptor: Int32
    private let context: OpaquePointer
    private let ssl: OpaquePointer

    /// Connects and completes the TLS handshake.
    public init(port: UInt16, timeout: Double = 20, maxVersion: Int32? = nil) throws {
        descriptor = try SocketSupport.connectTCP(
            address: "127.0.0.1", port: port, attemptTimeout: timeout, deadline: nil)
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            close(descriptor)
            throw SetupFailure(description: "SSL_CTX_new")
        }
        self.context = context
        if let maxVersion { SSL_CTX_ctrl(context, SSL_CTRL_SET_MAX_PROTO_VERSION, Int(maxVersion), nil) }
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            close(descriptor)
            throw SetupFailure(description: "SSL_new")
        }
        self.ssl = ssl
        _ = pinion_https_set_socket(ssl, descriptor)
        SSL_set_connect_state(ssl)
        let deadline = IODeadline(seconds: timeout)
        while true {
            let result = SSL_do_handshake(ssl)
            if result == 1 { break }
            let error = SSL_get_error(ssl, result)
            if error == SSL_ERROR_WANT_READ, SocketSupport.waitReady(descriptor, for: Int16(POLLIN), until: deadline) {
                continue
            }
            if error == SSL_ERROR_WANT_WRITE, SocketSupport.waitReady(descriptor, for: Int16(POLLOUT), until: deadline)
            {
                continue
            }
            throw SetupFailure(description: "TLS handshake failed: \(OpenSSLSupport.errorText())")
        }
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
        close(descriptor)
    }

    /// The SHA-256 of the server certificate's SPKI (to tell certificates apart).
    public var peerSPKISHA256: [UInt8]? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        guard let key = X509_get_X509_PUBKEY(certificate), let der = OpenSSLSupport.spkiDER(of: key) else { return nil }
        return OpenSSLSupport.sha256(der)
    }

    /// Whether the server issued a session ticket (after a response has been read, since
    /// TLS 1.3 tickets arrive after the handshake).
    public var hasSessionTicket: Bool {
        guard let session = SSL_get_session(ssl) else { return false }
        return SSL_SESSION_has_ticket(session) == 1
    }

    /// Negotiated protocol version text, e.g. `TLSv1.3`.
    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// Writes all of `text`; false if the connection failed.
    @discardableResult
    public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        let deadline = IODeadline(seconds: 20)
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                SSL_write(ssl, $0.baseAddress! + offset, Int32(bytes.count - offset))
            }
            if written > 0 {
                offset += Int(written)
                continue
            }
            let error = SSL_get_error(ssl, written)
            if error == SSL_ERROR_WANT_WRITE, SocketSupport.waitReady(descriptor, for: Int16(POLLOUT), until: deadline)
            {
                continue
            }
            if error == SSL_ERROR_WANT_READ, SocketSupport.waitReady(descriptor, for: Int16(POLLIN), until: deadline) {
                continue
            }
            ERR_clear_error()
            return false
        }
        return true
    }

    /// Writes each of `texts` as its own TLS record, all in one TCP segment (TCP_CORK held
    /// over the writes), so the server's first read takes in every record at once.
    @discardableResult
    public func sendAsSeparateRecordsInOneSegment(_ texts: [String]) -> Bool {
        var on: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_CORK, &on, socklen_t(MemoryLayout<Int32>.size))
        let sent = texts.allSatisfy { send($0) }
        var off: Int32 = 0
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_CORK, &off, socklen_t(MemoryLayout<Int32>.size))
        return sent
    }

    /// Reads until the server closes (returns closed = true) or `timeout` seconds pass, or
    /// (with `until`) the bytes read so far satisfy it.
    public func receive(timeout: Double = 20, until: (([UInt8]) -> Bool)? = nil) -> (bytes: [UInt8], closed: Bool) {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let deadline = IODeadline(seconds: timeout)
        while true {
            if let until, until(bytes) { return (bytes, false) }
            let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if count > 0 {
                bytes += buffer[0..<Int(count)]
                continue
            }
            let error = SSL_get_error(ssl, count)
            if error == SSL_ERROR_WANT_READ {
                if SocketSupport.waitReady(descriptor, for: Int16(POLLIN), until: deadline) { continue }
                return (bytes, false)
            }
            ERR_clear_error()
            return (bytes, true)
        }
    }

    /// Sends one request and reads exactly one response (by Content-Length).
    public func request(_ text: String, bodiless: Bool = false, timeout: Double = 20) -> TestResponse? {
        guard send(text) else { return nil }
        let (bytes, _) = receive(timeout: timeout) { bytes in
            let responses = splitResponses(bytes, bodiless: bodiless ? [0] : [])
            guard let first = responses.first else { return false }
            let length = bodiless || first.status == 304 ? 0 : Int(first.header("content-length") ?? "0") ?? 0
            return first.body.count == length
        }
        return splitResponses(bytes, bodiless: bodiless ? [0] : []).first
    }
}

/// A plain TCP connection, for bytes that are not TLS.
public final class RawTCPClient {
    public let descriptor: Int32

    public init(port: UInt16) throws {
        descriptor = try SocketSupport.connectTCP(address: "127.0.0.1", port: port, attemptTimeout: 20, deadline: nil)
    }

    deinit { close(descriptor) }

    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Reads until end of stream or error (true) or the timeout (false), discarding data.
    public func waitClosed(timeout: Double) -> Bool {
        let deadline = IODeadline(seconds: timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while SocketSupport.waitReady(descriptor, for: Int16(POLLIN), until: deadline) {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return count == 0 || errno != EAGAIN }
        }
        return false
    }
}

/// A GET request for `path`.
public func get(_ path: String, _ extra: String = "") -> String {
    "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(extra)\r\n"
}

extension RawTCPClient {
    /// Waits for the server to close this connection, passing deadlines instead of sleeping:
    /// whenever the close has not come within 0.25 s, advances `clock` by `step` seconds and
    /// has `server` check its deadlines (at most 60 times, since the server may accept the
    /// connection only after an advance).
    package func waitClosed(advancing clock: ManualMonotonicClock, by step: Double, on server: RunningPublisher) -> Bool
    {
        for _ in 0..<60 {
            if waitClosed(timeout: 0.25) { return true }
            clock.advance(seconds: step)
            server.publisher.checkDeadlinesNow()
        }
        return false
    }
}
