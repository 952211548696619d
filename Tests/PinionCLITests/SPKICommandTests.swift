// `pinion spki` from the command line: formats, line shape, refusals and exit codes.

import Foundation
import PinionCore
import PinionTestSupport
import Testing

@Suite struct SPKICommandTests {
    @Test func printsPinThenTwoSpacesThenSubjectInEveryFormat() throws {
        let w = try Workspace()
        let made = try w.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "@leaf.key",
            "-out",
            "@leaf.pem", "-days", "2", "-subj", "/CN=api.example.com",
        ])
        #expect(made.status == 0, "\(made.err)")
        let pipeline = try w.exec(
            "/bin/sh",
            [
                "-c",
                "openssl x509 -in leaf.pem -pubkey -noout | openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary | base64",
            ])
        let expected = pipeline.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(expected.count == 44)
        #expect(w.ok(["spki", "@leaf.pem"]).out == "sha256/\(expected)  CN=api.example.com\n")
        #expect(w.ok(["spki", "--format", "base64", "@leaf.pem"]).out == "\(expected)  CN=api.example.com\n")
        #expect(
            w.ok(["spki", "--format", "hpkp", "@leaf.pem"]).out == "pin-sha256=\"\(expected)\"  CN=api.example.com\n")
        let hex = Hex.encode(Base64.decodeCanonical(expected) ?? [])
        #expect(w.ok(["spki", "--format", "hex", "@leaf.pem"]).out == "\(hex)  CN=api.example.com\n")
        // The private key gives the same pin, labelled by kind.
        let keyLine = w.ok(["spki", "@leaf.key"]).out
        #expect(keyLine.hasPrefix("sha256/\(expected)  "))
        #expect(keyLine.contains("private key"))
    }

    @Test func refusesGarbageAndMissingFiles() throws {
        let w = try Workspace()
        try w.write("junk.pem", "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n")
        let junk = w.run(["spki", "@junk.pem"])
        #expect(junk.status == 1)
        #expect(junk.err.contains("junk.pem"))
        #expect(w.run(["spki", "@absent.pem"]).status == 3)
        #expect(w.run(["spki"]).status == 2)
        #expect(w.run(["spki", "--cafile", "x", "@junk.pem"]).status == 2)
    }

    @Test func connectToClosedPortIsANetworkError() throws {
        let w = try Workspace()
        // Port 1 on loopback: nothing listens there in a test sandbox.
        let result = w.run(["spki", "--connect", "127.0.0.1:1", "--timeout", "5"])
        #expect(result.status == 3, "\(result.err)")
        #expect(w.run(["spki", "--connect", "127.0.0.1:99999"]).status == 2)
        #expect(w.run(["spki", "--connect", "127.0.0.1:443", "--timeout", "0"]).status == 2)
    }
}
