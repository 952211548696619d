// TLSProbe against a local `openssl s_server` with a test PKI made by openssl at test time.

import Foundation
import PinionCrypto
import PinionSystem
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Fixtures

/// Root CA -> intermediate -> leaf (SAN localhost, 127.0.0.1, ::1), an unrelated
/// self-signed certificate the server appends to its chain, and an unrelated root for
/// the wrong-CA test; all EC P-256, valid from now for 2 days.
private struct TestPKI {
    let directory: String
    /// openssl's pins (base64) by name: root, int, leaf, extra.
    let pins: [String: String]

    func path(_ name: String) -> String { directory + "/" + name }

    static func make(in directory: String) throws -> TestPKI {
        let output = try SPKITestSupport.shell(
            """
            cat > ext.cnf <<'EOF'
            [ca]
            basicConstraints = critical, CA:TRUE
            keyUsage = critical, keyCertSign, cRLSign
            subjectKeyIdentifier = hash
            [int]
            basicConstraints = critical, CA:TRUE, pathlen:0
            keyUsage = critical, keyCertSign, cRLSign
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid
            [leaf]
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = serverAuth
            subjectAltName = DNS:localhost, IP:127.0.0.1, IP:::1
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid
            EOF
            request() {
              openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key"
              openssl req -new -key "$1.key" -subj "$2" -out "$1.csr"
            }
            selfsign() { openssl x509 -req -in "$1.csr" -signkey "$1.key" -days 2 -extfile ext.cnf -extensions ca -out "$1.pem" 2>/dev/null; }
            request root '/O=Pinion Test/CN=Pinion Test Root'; selfsign root
            request int '/O=Pinion Test/CN=Pinion Test Intermediate'
            openssl x509 -req -in int.csr -CA root.pem -CAkey root.key -CAcreateserial -days 2 \
              -extfile ext.cnf -extensions int -out int.pem 2>/dev/null
            request leaf '/CN=localhost'
            openssl x509 -req -in leaf.csr -CA int.pem -CAkey int.key -CAcreateserial -days 2 \
              -extfile ext.cnf -extensions leaf -out leaf.pem 2>/dev/null
            request extra '/CN=Pinion Unrelated'; selfsign extra
            request wrong '/CN=Pinion Wrong Root'; selfsign wrong
            cat int.pem extra.pem > chain.pem
            for name in root int leaf extra; do
              printf '%s %s\\n' "$name" "$(openssl x509 -in "$name.pem" -pubkey -noout | \(SPKITestSupport.pinPipeline))"
            done
            """, in: directory)
        var pins: [String: String] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            if parts.count == 2 { pins[parts[0]] = parts[1] }
        }
        return TestPKI(directory: directory, pins: pins)
    }
}

/// `openssl s_server -www` serving leaf + intermediate + the unrelated certificate.
private final class TestServer {
    let process: Process
    let port: UInt16

    struct StartFailed: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts the server on an ephemeral port of `address` (`127.0.0.1` or `[::1]`) and
    /// waits (up to 60 s) for it to report the port.
    init(pki: TestPKI, address: String = "127.0.0.1") throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: SPKITestSupport.openssl)
        process.arguments = [
            "s_server", "-accept", "\(address):0", "-www", "-cert", pki.path("leaf.pem"), "-key",
            pki.path("leaf.key"),
            "-cert_chain", pki.path("chain.pem"),
        ]
        process.currentDirectoryURL = URL(fileURLWithPath: pki.directory)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        do {
            self.port = try Self.readPort(output.fileHandleForReading)
        } catch {
            Self.stop(process)
            throw error
        }
    }

    /// Reads s_server's `ACCEPT <address>:<port>` line (it reports the port it bound).
    private static func readPort(_ handle: FileHandle) throws -> UInt16 {
        let deadline = Date().addingTimeInterval(60)
        var text = ""
        while Date() < deadline {
            var entry = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, 1000)
            if ready < 0, errno != EINTR { break }
            if ready <= 0 { continue }
            let data = handle.availableData
            if data.isEmpty { break }  // the server exited
            text += String(decoding: data, as: UTF8.self)
            for line in text.split(separator: "\n") where line.hasPrefix("ACCEPT ") {
                if let portText = line.split(separator: ":").last, let port = UInt16(portText) {
                    return port
                }
            }
        }
        throw StartFailed(description: "openssl s_server did not report its port; output: \(text)")
    }

    /// SIGKILL, not `terminate()`: a child started from a Swift Testing worker thread
    /// inherits that thread's signal mask, in which SIGTERM is blocked.
    private static func stop(_ process: Process) {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    func stop() { Self.stop(process) }
}

/// A TCP socket on 127.0.0.1 with a free port. Not listening: connects are refused.
/// Listening: connects complete in the kernel but nobody ever answers.
/// (The only pointer casts of the tests: the sockaddr API needs them.)
private final class LocalSocket {
    let descriptor: Int32
    let port: UInt16

    init(listening: Bool) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let socket = descriptor
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(socket, generic, length) == 0 && getsockname(socket, generic, &length) == 0
            }
        }
        guard bound, !listening || listen(descriptor, 16) == 0 else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }
}

private func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

private func probeError(_ body: () throws -> TLSProbeResult) -> TLSProbeError? {
    do {
        _ = try body()
        return nil
    } catch let error as TLSProbeError {
        return error
    } catch {
        return nil
    }
}

private let hasIPv6Loopback: Bool = {
    let table = (try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8)) ?? ""
    return table.contains("00000000000000000000000000000001")
}()

/// Generous: the tests must pass on a loaded two-core machine.
private let timeout = 60.0

// MARK: - Tests

@Suite("TLS probe")
struct TLSProbeTests {
    @Test func reportsPresentedChainAndVerifiedPath() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let pki = try TestPKI.make(in: directory)
        let server = try TestServer(pki: pki)
        defer { server.stop() }

        let result = try TLSProbe.chain(
            host: "127.0.0.1", port: server.port, serverName: "localhost", caFile: pki.path("root.pem"),
            timeout: timeout)

        #expect(result.verified)
        #expect(result.verifyError == nil)
        #expect(["TLSv1.2", "TLSv1.3"].contains(result.protocolVersion))
        let expected: [(pin: String?, label: String, presented: Bool, onPath: Bool)] = [
            (pki.pins["leaf"], "CN=localhost", true, true),
            (pki.pins["int"], "CN=Pinion Test Intermediate,O=Pinion Test", true, true),
            (pki.pins["extra"], "CN=Pinion Unrelated", true, false),
            (pki.pins["root"], "CN=Pinion Test Root,O=Pinion Test", false, true),
        ]
        try #require(result.entries.count == expected.count)
        for (entry, want) in zip(result.entries, expected) {
            #expect(base64(entry.object.spkiSHA256) == want.pin, "\(want.label)")
            #expect(entry.object.label == want.label)
            #expect(entry.object.kind == .certificate)
            #expect(entry.object.keyType == "EC P-256")
            #expect(entry.presented == want.presented, "\(want.label)")
            #expect(entry.onVerifiedPath == want.onPath, "\(want.label)")
        }
    }

    @Test func ipAddressHostIsCheckedAgainstIPSubjectAltName() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let pki = try TestPKI.make(in: directory)
        let server = try TestServer(pki: pki)
        defer { server.stop() }

        let result = try TLSProbe.chain(
            host: "127.0.0.1", port: server.port, serverName: nil, caFile: pki.path("root.pem"),
            timeout: timeout)
        #expect(result.verified)
        #expect(result.entries.filter(\.onVerifiedPath).count == 3)
    }

    @Test(.enabled(if: hasIPv6Loopback))
    func ipv6LiteralHostConnectsAndVerifies() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let pki = try TestPKI.make(in: directory)
        let server = try TestServer(pki: pki, address: "[::1]")
        defer { server.stop() }

        let result = try TLSProbe.chain(
            host: "[::1]", port: server.port, serverName: nil, caFile: pki.path("root.pem"),
            timeout: timeout)
        #expect(result.verified)
        #expect(result.entries.first.map { base64($0.object.spkiSHA256) } == pki.pins["leaf"])
    }

    @Test func wrongCAFileFailsVerificationButReturnsThePresentedChain() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let pki = try TestPKI.make(in: directory)
        let server = try TestServer(pki: pki)
        defer { server.stop() }

        let result = try TLSProbe.chain(
            host: "127.0.0.1", port: server.port, serverName: "localhost", caFile: pki.path("wrong.pem"),
            timeout: timeout)
        #expect(!result.verified)
        #expect(result.verifyError == "unable to get local issuer certificate")
        #expect(
            result.entries.map { base64($0.object.spkiSHA256) } == [
                pki.pins["leaf"], pki.pins["int"], pki.pins["extra"],
            ])
        #expect(result.entries.allSatisfy { $0.presented && !$0.onVerifiedPath })
    }

    @Test func serverNameNotInCertificateFailsVerification() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let pki = try TestPKI.make(in: directory)
        let server = try TestServer(pki: pki)
        defer { server.stop() }

        let result = try TLSProbe.chain(
            host: "127.0.0.1", port: server.port, serverName: "not-in-cert.example",
            caFile: pki.path("root.pem"),
            timeout: timeout)
        #expect(!result.verified)
        #expect(result.verifyError == "hostname mismatch")
        #expect(result.entries.count == 3)
        #expect(result.entries.allSatisfy { $0.presented && !$0.onVerifiedPath })
    }

    @Test func offeringOneSignatureFamilyAsksForThatKeyType() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let pki = try TestPKI.make(in: directory)
        let server = try TestServer(pki: pki)
        defer { server.stop() }

        let ecdsa = try TLSProbe.chain(
            host: "127.0.0.1", port: server.port, serverName: "localhost", caFile: pki.path("root.pem"),
            timeout: timeout, offering: .ecdsa)
        #expect(ecdsa.verified)
        #expect(ecdsa.entries.first.map { base64($0.object.spkiSHA256) } == pki.pins["leaf"])
        // The server holds an EC key only: a client offering RSA signatures only gets no certificate.
        let rsa = probeError {
            try TLSProbe.chain(
                host: "127.0.0.1", port: server.port, serverName: "localhost", caFile: pki.path("root.pem"),
                timeout: timeout, offering: .rsa)
        }
        guard case .handshakeFailed(let host, let port, _) = rsa else {
            Issue.record("offering RSA only: \(String(describing: rsa))")
            return
        }
        #expect(host == "127.0.0.1" && port == server.port)
    }

    @Test func addressesOfANameOrLiteral() throws {
        #expect(try TLSProbe.addresses(of: "127.0.0.1", port: 443) == ["127.0.0.1"])
        #expect(try TLSProbe.addresses(of: "[::1]", port: 443) == ["::1"])
        #expect(try TLSProbe.addresses(of: "localhost", port: 443).contains { ["127.0.0.1", "::1"].contains($0) })
        #expect(throws: TLSProbeError.invalidHost("")) { try TLSProbe.addresses(of: "", port: 443) }
    }

    @Test func closedPortIsConnectionRefused() throws {
        let closed = try LocalSocket(listening: false)
        let error = probeError {
            try TLSProbe.chain(
                host: "127.0.0.1", port: closed.port, serverName: nil, caFile: nil, timeout: timeout)
        }
        // Refused, not timed out: the probe did not wait for the 60 s timeout.
        #expect(error == .connectionRefused(host: "127.0.0.1", port: closed.port))
        #expect(error?.isIOError == true)
    }

    @Test func silentServerTimesOutInTheHandshake() throws {
        let silent = try LocalSocket(listening: true)
        let error = probeError {
            try TLSProbe.chain(
                host: "127.0.0.1", port: silent.port, serverName: nil, caFile: nil, timeout: 1)
        }
        #expect(error == .timedOut(host: "127.0.0.1", port: silent.port, phase: .handshake))
        #expect(error?.isIOError == true)
    }

    @Test func missingCAFileIsReportedBeforeConnecting() throws {
        let directory = try SPKITestSupport.makeDirectory()
        defer { SPKITestSupport.removeDirectory(directory) }
        let missing = directory + "/absent.pem"
        let error = probeError {
            try TLSProbe.chain(
                host: "127.0.0.1", port: 1, serverName: nil, caFile: missing, timeout: timeout)
        }
        #expect(error == .caFileUnreadable(path: missing, detail: String(cString: strerror(ENOENT))))
        #expect(error?.isIOError == true)
    }

    @Test func invalidArgumentsAreUsageErrors() {
        for bad in [0.0, -1, .nan, .infinity, 86401] {
            let error = probeError {
                try TLSProbe.chain(host: "127.0.0.1", port: 1, serverName: nil, caFile: nil, timeout: bad)
            }
            guard case .invalidTimeout = error else {
                Issue.record("timeout \(bad): \(String(describing: error))")
                continue
            }
            #expect(error?.isIOError == false)
        }
        #expect(
            probeError { try TLSProbe.chain(host: "", port: 1, serverName: nil, caFile: nil, timeout: 5) }
                == .invalidHost(""))
        #expect(
            probeError {
                try TLSProbe.chain(host: "127.0.0.1", port: 1, serverName: "", caFile: nil, timeout: 5)
            }
                == .invalidServerName(""))
    }
}
