// A root or manifest loaded for review (`manifest show`, `diff`, `sign`): the payload and
// envelope as parsed documents and as JSON trees, so every member can be listed.

import PinionAudit
import PinionCore
import PinionCrypto

/// A document file loaded for review: a bare payload or an envelope, root or manifest.
struct ReviewedDocument {
    let file: String
    let kind: PayloadKind
    /// The exact payload bytes.
    let payload: [UInt8]
    let payloadJSON: JSONValue
    /// The envelope, nil for a bare payload.
    let envelope: Envelope?
    /// The envelope file as JSON (for its `x-` members), nil for a bare payload.
    let envelopeJSON: JSONValue?
    var manifest: ManifestPayload?
    var root: RootPayload?

    /// Reads and strictly parses `path` (envelope or payload; the payload inside an envelope
    /// is parsed too).
    ///
    /// - Throws: `CLIError` naming the file and the member that is wrong.
    static func load(_ path: String) throws(CLIError) -> ReviewedDocument {
        let kind: PayloadKind
        let payload: [UInt8]
        var envelope: Envelope?
        var envelopeJSON: JSONValue?
        switch try Load.document(path) {
        case .envelope(let parsed, _):
            envelope = parsed
            kind = parsed.kind
            payload = parsed.payload
            let bytes = try Files.read(path, limit: maxInputBytes)
            envelopeJSON = try? StrictJSONParser.parse(bytes, limits: Limits.standard.json)
        case .rootPayload(_, let bytes):
            kind = .root
            payload = bytes
        case .manifestPayload(_, let bytes):
            kind = .pins
            payload = bytes
        }
        var document = ReviewedDocument(
            file: path, kind: kind, payload: payload,
            payloadJSON: (try? StrictJSONParser.parse(payload, limits: Limits.standard.json)) ?? .null,
            envelope: envelope, envelopeJSON: envelopeJSON)
        do throws(FormatError) {
            switch kind {
            case .pins: document.manifest = try ManifestPayload.parse(payload)
            case .root: document.root = try RootPayload.parse(payload, crypto: crypto)
            }
        } catch {
            throw .failure(Load.located(error, path).description)
        }
        return document
    }

    /// The payload member patterns the tables render by name.
    var rendered: Set<String> { kind == .root ? DocumentMembers.rootRendered : DocumentMembers.manifestRendered }

    /// Members the tables do not render by name (`x-` extensions at any depth), payload first,
    /// then the envelope's (paths prefixed `envelope.`).
    var otherMembers: [DocumentMember] {
        var members = DocumentMembers.unrendered(payloadJSON, rendered: rendered)
        if let envelopeJSON {
            members += DocumentMembers.unrendered(envelopeJSON, rendered: DocumentMembers.envelopeRendered).map {
                DocumentMember(path: "envelope." + $0.path, pattern: "envelope." + $0.pattern, value: $0.value)
            }
        }
        return members
    }

    /// `otherMembers` that differ between `old` and `new`. Envelope members are compared only
    /// when both are envelopes: a bare payload has no envelope to differ (the signatures line
    /// says the two were not compared), and each side's own envelope members are shown with it.
    static func otherChanges(_ old: ReviewedDocument, _ new: ReviewedDocument) -> [MemberChange] {
        var changes = DocumentMembers.changes(old.payloadJSON, new.payloadJSON, rendered: new.rendered)
        if let oldEnvelope = old.envelopeJSON, let newEnvelope = new.envelopeJSON {
            changes += DocumentMembers.changes(oldEnvelope, newEnvelope, rendered: DocumentMembers.envelopeRendered)
                .map { MemberChange(path: "envelope." + $0.path, old: $0.old, new: $0.new) }
        }
        return changes
    }
}
