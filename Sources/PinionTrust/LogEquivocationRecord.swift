// The side file in which the client keeps the evidence of a log equivocation (docs/DESIGN.md §12): both signed checkpoint notes, for the app to report.

import PinionCore
import PinionLog

/// `log-equivocation.json` in the state directory: the first split view the client saw, two
/// checkpoint notes of one origin and size with different root hashes. Written once by
/// `PinningClient` (a later equivocation does not replace it), never read for trust:
///
///     {"type": "pinion.log-equivocation", "formatVersion": 1, "origin": "<origin>",
///      "size": <tree size>, "storedNote": "<base64 note>", "receivedNote": "<base64 note>"}
public enum LogEquivocationRecord {
    /// The file name in the state directory.
    public static let fileName = "log-equivocation.json"
    /// The `type` member.
    public static let documentType = "pinion.log-equivocation"
    /// Largest file read: two notes at `TlogProofLimits.standard.note.maxBytes` in base64, and framing.
    public static let maxBytes = 4 * TlogProofLimits.standard.note.maxBytes

    /// The file's bytes (JSON, deterministic).
    public static func encode(_ evidence: Equivocation) -> [UInt8] {
        JSONWriter.write(
            .object(
                JSONObject([
                    .init("type", .string(documentType)), .init("formatVersion", .number("1")),
                    .init("origin", .string(evidence.stored.origin)),
                    .init("size", .number(String(evidence.stored.size))),
                    .init("storedNote", .string(Base64.encode(evidence.storedNote))),
                    .init("receivedNote", .string(Base64.encode(evidence.receivedNote))),
                ])))
    }

    /// Reads the file back strictly: both notes must be signed checkpoint notes of the same
    /// origin and size with different root hashes (their signatures are not checked here).
    ///
    /// - Returns: the evidence, or nil when the file is not such a record.
    public static func decode(_ bytes: [UInt8], hasher: any SHA256Hasher) -> Equivocation? {
        guard bytes.count <= maxBytes,
            case .object(let object)? = try? StrictJSONParser.parse(
                bytes, limits: JSONLimits(maxBytes: maxBytes, maxDepth: 2, maxElements: 16)),
            object.members.count == 6, object["type"] == .string(documentType),
            object["formatVersion"] == .number("1"), case .string(let storedText)? = object["storedNote"],
            case .string(let receivedText)? = object["receivedNote"],
            let (storedNote, stored) = note(storedText, hasher: hasher),
            let (receivedNote, received) = note(receivedText, hasher: hasher),
            NoteText.equal(stored.origin, received.origin), stored.size == received.size,
            stored.rootHash != received.rootHash,
            object["origin"] == .string(stored.origin), object["size"] == .number(String(stored.size))
        else { return nil }
        return Equivocation(stored: stored, storedNote: storedNote, received: received, receivedNote: receivedNote)
    }

    private static func note(_ text: String, hasher: any SHA256Hasher) -> ([UInt8], Checkpoint)? {
        guard let bytes = Base64.decodeCanonical(text),
            let note = try? SignedNote.parse(bytes, limits: TlogProofLimits.standard.note),
            let checkpoint = try? Checkpoint.parse(note.text, hasher: MerkleHasher(hasher))
        else { return nil }
        return (bytes, checkpoint)
    }
}

extension PinningClient {
    /// The evidence of the first log equivocation this client saw (both checkpoint notes),
    /// from `log-equivocation.json` in the state directory; nil when there is none or it
    /// cannot be read.
    public var logEquivocationEvidence: Equivocation? {
        guard
            let bytes = try? store.storage.read(
                LogEquivocationRecord.fileName, maxBytes: LogEquivocationRecord.maxBytes)
        else { return nil }
        return LogEquivocationRecord.decode(bytes, hasher: crypto.hasher)
    }

    /// Keeps `evidence` in the side file unless one is already there (the first split view
    /// is the one to report). A failure to write is not fatal: the event carries both notes.
    func keepLogEquivocation(_ evidence: Equivocation) {
        let existing: [UInt8]?
        do {
            existing = try store.storage.read(LogEquivocationRecord.fileName, maxBytes: LogEquivocationRecord.maxBytes)
        } catch {
            return
        }
        guard existing == nil else { return }
        try? store.storage.writeAtomically(LogEquivocationRecord.fileName, LogEquivocationRecord.encode(evidence))
    }
}
