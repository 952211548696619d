// DSSE envelope encoding: the PAE example of the DSSE protocol text and strict decoding.

import PinionCore
import PinionCrypto
import PinionTestSupport
import Testing

@Suite struct EnvelopeTests {
    @Test func paeMatchesTheDSSEProtocolExample() {
        // secure-systems-lab/dsse protocol.md, "Test vectors".
        let pae = Envelope.pae(type: "http://example.com/HelloWorld", body: Array("hello world".utf8))
        #expect(pae == Array("DSSEv1 29 http://example.com/HelloWorld 11 hello world".utf8))
    }

    @Test func paeCountsBytesNotCharacters() {
        let pae = Envelope.pae(type: "t", body: Array("é".utf8))
        #expect(pae == Array("DSSEv1 1 t 2 é".utf8))
    }

    @Test func envelopeRoundTripKeepsPayloadBytesExactly() throws {
        let setup = try Setup()
        let bytes = setup.rootEnvelope.serialized()
        let parsed = try Envelope.parse(bytes)
        #expect(parsed == setup.rootEnvelope)
        #expect(parsed.payload == setup.root.serialized())
    }

    @Test(arguments: [
        (#"{"payloadType":"text/plain","payload":"","signatures":[]}"#, "payloadType"),
        (
            #"{"payloadType":"application/vnd.pinion.pins+json","payload":"YQ","signatures":[]}"#,
            "payload"
        ),
        (
            #"{"payloadType":"application/vnd.pinion.pins+json","payload":"","signatures":[{"keyid":"AB","sig":""}]}"#,
            "signatures[0].keyid"
        ),
        (
            #"{"payloadType":"application/vnd.pinion.pins+json","payload":"","signatures":[],"extra":1}"#,
            ""
        ),
        (#"{"payloadType":"application/vnd.pinion.pins+json","payload":""}"#, ""),
    ])
    func rejectsMalformedEnvelopes(json: String, path: String) {
        #expect(throws: FormatError.self) { try Envelope.parse(Array(json.utf8)) }
        do {
            _ = try Envelope.parse(Array(json.utf8))
        } catch {
            #expect(error.path == path)
        }
    }

    @Test func rejectsMoreSignaturesThanTheLimit() throws {
        let signature = #"{"keyid":"\#(String(repeating: "a", count: 64))","sig":""}"#
        let json =
            #"{"payloadType":"application/vnd.pinion.pins+json","payload":"","signatures":["#
            + Array(repeating: signature, count: 33).joined(separator: ",") + "]}"
        var limits = Limits.standard
        limits.maxSignatures = 32
        #expect(throws: FormatError(path: "signatures", rule: .tooManyElements(limit: 32))) {
            try Envelope.parse(Array(json.utf8), limits: limits)
        }
    }

    @Test func rejectsOversizeEnvelopeBeforeParsing() {
        var limits = Limits.standard
        limits.maxEnvelopeBytes = 100
        let bytes = [UInt8](repeating: UInt8(ascii: " "), count: 101)
        #expect(throws: FormatError(path: "", rule: .tooLarge(bytes: 101, limit: 100))) {
            try Envelope.parse(bytes, limits: limits)
        }
    }

    @Test func ignoresExtensionMembers() throws {
        let json =
            #"{"payloadType":"application/vnd.pinion.pins+json","payload":"","signatures":[],"x-note":{"a":[1]}}"#
        #expect(try Envelope.parse(Array(json.utf8)).signatures.isEmpty)
    }
}
