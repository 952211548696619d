// C2SP tlog-proof@v1: an entry's index, its inclusion proof and the cosigned checkpoint, in one text file.

import PinionCore

/// Why a tlog-proof file was refused.
public enum TlogProofError: Error, Equatable, Sendable, CustomStringConvertible {
    /// More bytes than the limit; carries it, in bytes.
    case tooLarge(limit: Int)
    /// The header, extra, index or hash lines are not as the spec says; carries the reason.
    case malformed(String)
    /// More inclusion proof lines than the limit (63).
    case tooManyProofLines(limit: Int)
    /// The embedded checkpoint note is malformed.
    case note(NoteError)

    public var description: String {
        switch self {
        case .tooLarge(let limit): return "the proof is larger than \(limit) bytes"
        case .malformed(let reason): return "malformed tlog-proof: \(reason)"
        case .tooManyProofLines(let limit): return "the proof has more than \(limit) inclusion proof lines"
        case .note(let error): return "the proof's checkpoint: \(error)"
        }
    }
}

/// Limits applied while reading a proof (docs/DESIGN.md §12: size, 63 proof lines, 32 signature lines).
public struct TlogProofLimits: Sendable, Equatable {
    /// Largest proof file, in bytes (default 32 KiB).
    public var maxBytes: Int
    /// Most inclusion proof lines (default and maximum useful: 63).
    public var maxProofLines: Int
    /// Limits for the embedded checkpoint note (default 32 signature lines).
    public var note: NoteLimits

    /// - Parameters:
    ///   - maxBytes: largest proof file, in bytes.
    ///   - maxProofLines: most inclusion proof lines.
    ///   - note: limits for the embedded checkpoint note.
    public init(maxBytes: Int = 32 * 1024, maxProofLines: Int = 63, note: NoteLimits = .standard) {
        self.maxBytes = maxBytes
        self.maxProofLines = maxProofLines
        self.note = note
    }

    /// The defaults: 32 KiB, 63 proof lines, 32 signature lines.
    public static let standard = TlogProofLimits()
}

/// A C2SP tlog-proof@v1 (`.tlog-proof`).
public struct TlogProof: Sendable, Equatable {
    /// The first line.
    public static let header = "c2sp.org/tlog-proof@v1"

    /// Opaque extra data (Pinion: the head record bytes); unauthenticated until the leaf
    /// hash computed from it is proven included.
    public let extra: [UInt8]?
    /// The entry's zero-based index.
    public let index: UInt64
    /// The inclusion proof, 32-byte hashes from the leaf's sibling up.
    public let inclusionProof: [[UInt8]]
    /// The checkpoint note, verbatim.
    public let checkpointNote: SignedNote

    /// A proof from its parts.
    public init(extra: [UInt8]?, index: UInt64, inclusionProof: [[UInt8]], checkpointNote: SignedNote) {
        self.extra = extra
        self.index = index
        self.inclusionProof = inclusionProof
        self.checkpointNote = checkpointNote
    }

    /// The file's bytes.
    public var bytes: [UInt8] {
        var text = TlogProof.header + "\n"
        if let extra { text += "extra " + Base64.encode(extra) + "\n" }
        text += "index \(index)\n"
        for hash in inclusionProof { text += Base64.encode(hash) + "\n" }
        text += "\n"
        return Array(text.utf8) + checkpointNote.bytes
    }

    /// Parses a proof strictly, checking the size before anything else and the line counts
    /// while reading.
    ///
    /// - Throws: `TlogProofError`.
    public static func parse(_ bytes: [UInt8], limits: TlogProofLimits = .standard) throws(TlogProofError)
        -> TlogProof
    {
        guard bytes.count <= limits.maxBytes else { throw .tooLarge(limit: limits.maxBytes) }
        var offset = 0
        func nextLine() throws(TlogProofError) -> String {
            guard let end = bytes[offset...].firstIndex(of: 0x0A) else { throw .malformed("missing the checkpoint") }
            guard let line = String(validating: bytes[offset..<end], as: UTF8.self) else {
                throw .malformed("not UTF-8")
            }
            offset = end + 1
            return line
        }
        guard try nextLine() == header else { throw .malformed("the first line is not \(header)") }
        var line = try nextLine()
        var extra: [UInt8]? = nil
        if line.hasPrefix("extra ") {
            guard let data = Base64.decodeCanonical(String(line.dropFirst(6))) else {
                throw .malformed("extra is not canonical base64")
            }
            extra = data
            line = try nextLine()
        }
        guard line.hasPrefix("index ") else { throw .malformed("no index line") }
        let digits = String(line.dropFirst(6))
        guard !digits.isEmpty, digits.utf8.count <= 19, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            digits == "0" || !digits.hasPrefix("0"), let index = UInt64(digits), index <= UInt64(Int64.max)
        else { throw .malformed("invalid index '\(digits)'") }
        var proof = [[UInt8]]()
        while true {
            let hashLine = try nextLine()
            if hashLine.isEmpty { break }
            guard proof.count < limits.maxProofLines else { throw .tooManyProofLines(limit: limits.maxProofLines) }
            guard let hash = Base64.decodeCanonical(hashLine), hash.count == 32 else {
                throw .malformed("proof line \(proof.count + 1) is not a base64 SHA-256 hash")
            }
            proof.append(hash)
        }
        let note: SignedNote
        do { note = try SignedNote.parse(Array(bytes[offset...]), limits: limits.note) } catch { throw .note(error) }
        return TlogProof(extra: extra, index: index, inclusionProof: proof, checkpointNote: note)
    }

    /// Checks that the entry with `leafHash` is at `index` in `checkpoint`'s tree.
    ///
    /// - Throws: `MerkleError`.
    public func verifyInclusion(leafHash: [UInt8], checkpoint: Checkpoint, hasher: MerkleHasher) throws(MerkleError) {
        try MerkleProofs.verifyInclusion(
            leafHash: leafHash, index: index, size: checkpoint.size, proof: inclusionProof, root: checkpoint.rootHash,
            hasher: hasher)
    }
}
