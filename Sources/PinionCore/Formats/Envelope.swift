// DSSE v1 envelopes (secure-systems-lab/dsse, protocol.md) and their PAE signing input.

/// The kinds of payload Pinion signs, by DSSE `payloadType`.
public enum PayloadKind: String, Sendable, CaseIterable {
    /// A root document (docs/DESIGN.md §4).
    case root = "application/vnd.pinion.root+json"
    /// A pin manifest (docs/DESIGN.md §5).
    case pins = "application/vnd.pinion.pins+json"
}

/// A DSSE envelope: `{"payloadType", "payload" (base64), "signatures": [{"keyid", "sig"}]}`.
///
/// The payload bytes are kept exactly as received; identity of a document is the
/// SHA-256 of these bytes, and co-signing adds signatures without touching them.
public struct Envelope: Sendable, Equatable {
    /// One signature: the signer's key id (64 lowercase hex) and the signature bytes
    /// (64 for Ed25519; other lengths simply fail verification).
    public struct Signature: Sendable, Equatable {
        public var keyID: String
        public var signature: [UInt8]

        public init(keyID: String, signature: [UInt8]) {
            self.keyID = keyID
            self.signature = signature
        }
    }

    public var kind: PayloadKind
    /// The exact payload bytes.
    public var payload: [UInt8]
    public var signatures: [Signature]

    public init(kind: PayloadKind, payload: [UInt8], signatures: [Signature] = []) {
        self.kind = kind
        self.payload = payload
        self.signatures = signatures
    }

    /// Parses an envelope strictly (docs/DESIGN.md §3, §5 limits).
    ///
    /// - Parameters:
    ///   - bytes: the envelope file, at most `limits.maxEnvelopeBytes` bytes.
    ///   - limits: size, depth and signature-count limits.
    /// - Throws: `FormatError` naming the member and rule.
    public static func parse(_ bytes: [UInt8], limits: Limits = .standard) throws(FormatError)
        -> Envelope
    {
        let value = try StrictJSONParser.parse(bytes, limits: limits.json)
        var reader = try SchemaReader(value, path: "")
        let typeText = try reader.string("payloadType")
        guard let kind = PayloadKind(rawValue: typeText) else {
            throw reader.error(
                "payloadType",
                .wrongPayloadType(
                    expected: PayloadKind.allCases.map(\.rawValue).joined(separator: " or "), found: typeText)
            )
        }
        guard let payload = Base64.decodeCanonical(try reader.string("payload")) else {
            throw reader.error("payload", .invalidBase64)
        }
        let signatureValues = try reader.array("signatures", maxCount: limits.maxSignatures)
        var signatures: [Signature] = []
        for (index, element) in signatureValues.enumerated() {
            var entry = try SchemaReader(element, path: reader.elementPath("signatures", index))
            let keyID = try entry.string("keyid")
            do { try KeyID.validate(keyID) } catch let rule { throw entry.error("keyid", rule) }
            guard let signature = Base64.decodeCanonical(try entry.string("sig")) else {
                throw entry.error("sig", .invalidBase64)
            }
            try entry.finish()
            signatures.append(Signature(keyID: keyID, signature: signature))
        }
        try reader.finish()
        return Envelope(kind: kind, payload: payload, signatures: signatures)
    }

    /// The envelope as JSON bytes (two-space indented, final newline).
    public func serialized() -> [UInt8] {
        let signatureValues: [JSONValue] = signatures.map {
            .object(
                JSONObject([
                    .init("keyid", .string($0.keyID)), .init("sig", .string(Base64.encode($0.signature))),
                ]))
        }
        return JSONWriter.write(
            .object(
                JSONObject([
                    .init("payloadType", .string(kind.rawValue)),
                    .init("payload", .string(Base64.encode(payload))),
                    .init("signatures", .array(signatureValues)),
                ])))
    }

    /// The bytes every signature covers: `PAE(payloadType, payload)`.
    public var signingInput: [UInt8] { Envelope.pae(type: kind.rawValue, body: payload) }

    /// DSSE v1 Pre-Authentication Encoding:
    /// `"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, LEN in ASCII decimal bytes.
    public static func pae(type: String, body: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        var output = Array("DSSEv1 \(typeBytes.count) ".utf8)
        output += typeBytes
        output += Array(" \(body.count) ".utf8)
        output += body
        return output
    }
}
