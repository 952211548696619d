// C2SP tlog-checkpoint note text: origin, tree size, base64 root hash, extension lines.

import PinionCore

/// Why a checkpoint body was refused.
public enum CheckpointError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Fewer than three lines, an empty line, or text not ending in a newline.
    case malformed(String)
    /// The size line is not a decimal without leading zeroes below 2^63.
    case invalidSize(String)
    /// The root hash line is not canonical base64 of 32 bytes.
    case invalidRootHash(String)
    /// A checkpoint of size 0 whose root hash is not the empty tree's.
    case emptyTreeHash

    public var description: String {
        switch self {
        case .malformed(let reason): return "malformed checkpoint: \(reason)"
        case .invalidSize(let line): return "invalid checkpoint tree size '\(line)'"
        case .invalidRootHash(let line): return "invalid checkpoint root hash '\(line)'"
        case .emptyTreeHash: return "a checkpoint of size 0 must carry the empty tree's hash"
        }
    }
}

/// A checkpoint: the log's origin, tree size and root hash, with optional extension lines.
/// Equal when origins and extension lines have the same UTF-8 bytes (`NoteText.equal`).
public struct Checkpoint: Sendable, Equatable, Hashable {
    /// The origin line: the log's identity.
    public let origin: String
    /// The tree size, in leaves.
    public let size: UInt64
    /// The 32-byte RFC 6962 root hash.
    public let rootHash: [UInt8]
    /// Opaque non-empty extension lines (not recommended; Pinion writes none).
    public let extensions: [String]

    public static func == (lhs: Checkpoint, rhs: Checkpoint) -> Bool {
        NoteText.equal(lhs.origin, rhs.origin) && lhs.size == rhs.size && lhs.rootHash == rhs.rootHash
            && lhs.extensions.count == rhs.extensions.count
            && zip(lhs.extensions, rhs.extensions).allSatisfy { NoteText.equal($0, $1) }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(Array(origin.utf8))
        hasher.combine(size)
        hasher.combine(rootHash)
        hasher.combine(extensions.map { Array($0.utf8) })
    }

    /// - Throws: `CheckpointError` for an empty or multi-line origin, a hash that is not 32
    ///   bytes, or an empty or multi-line extension.
    public init(origin: String, size: UInt64, rootHash: [UInt8], extensions: [String] = []) throws(CheckpointError) {
        guard !origin.isEmpty, !origin.contains("\n") else { throw .malformed("empty origin") }
        guard rootHash.count == 32 else { throw .invalidRootHash(Base64.encode(rootHash)) }
        guard size <= UInt64(Int64.max) else { throw .invalidSize(String(size)) }
        for line in extensions where line.isEmpty || line.contains("\n") {
            throw .malformed("empty extension line")
        }
        self.origin = origin
        self.size = size
        self.rootHash = rootHash
        self.extensions = extensions
    }

    /// The note text: `<origin>\n<size>\n<base64 root>\n` and any extension lines.
    public var text: String {
        ([origin, String(size), Base64.encode(rootHash)] + extensions).map { $0 + "\n" }.joined()
    }

    /// Parses a checkpoint's note text strictly.
    ///
    /// - Parameters:
    ///   - text: the verified note's text.
    ///   - hasher: the Merkle hasher, to check a size-0 checkpoint's hash.
    /// - Throws: `CheckpointError`.
    public static func parse(_ text: String, hasher: MerkleHasher) throws(CheckpointError) -> Checkpoint {
        let bytes = Array(text.utf8)
        guard bytes.last == 0x0A else { throw .malformed("does not end in a newline") }
        // Split on U+000A bytes only, as every signed-note reader of both SDKs does.
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast().map {
            String(decoding: $0, as: UTF8.self)
        }
        guard lines.count >= 3 else { throw .malformed("fewer than three lines") }
        guard !lines.contains(where: \.isEmpty) else { throw .malformed("an empty line") }
        let sizeLine = lines[1]
        guard sizeLine.utf8.count <= 19, sizeLine.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            sizeLine == "0" || !sizeLine.hasPrefix("0"), let size = UInt64(sizeLine), size <= UInt64(Int64.max)
        else { throw .invalidSize(sizeLine) }
        guard let root = Base64.decodeCanonical(lines[2]), root.count == 32 else { throw .invalidRootHash(lines[2]) }
        if size == 0 && root != hasher.emptyRoot { throw .emptyTreeHash }
        return try Checkpoint(origin: lines[0], size: size, rootHash: root, extensions: Array(lines[3...]))
    }
}
