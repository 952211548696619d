// C2SP tlog-tiles resource names: tile/<L>/<N>[.p/<W>] and tile/entries/<N>[.p/<W>].

/// Why a tile path, tile or entry bundle was refused.
public enum TileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A path that is not a C2SP tlog-tiles tile or entry bundle path.
    case invalidPath(String)
    /// A hash tile whose length is not 32 bytes times its width; carries both, in bytes.
    case wrongTileLength(path: String, expected: Int, actual: Int)
    /// An entry bundle that does not hold exactly its width of length-prefixed entries.
    case malformedEntryBundle(path: String, reason: String)
    /// An entry longer than the 65,535 bytes a uint16 length prefix can carry.
    case entryTooLong(Int)
    /// The tile reader had no such tile.
    case missingTile(String)
    /// A tile's hashes disagree with the tile below or the checkpoint's root hash.
    case hashMismatch(String)

    public var description: String {
        switch self {
        case .invalidPath(let path): return "not a tlog-tiles path: \(path)"
        case .wrongTileLength(let path, let expected, let actual):
            return "\(path) should be \(expected) bytes, is \(actual)"
        case .malformedEntryBundle(let path, let reason): return "entry bundle \(path): \(reason)"
        case .entryTooLong(let count): return "a log entry is at most 65535 bytes, got \(count)"
        case .missingTile(let path): return "no tile \(path)"
        case .hashMismatch(let what): return "tile hashes disagree: \(what)"
        }
    }
}

/// One C2SP tlog-tiles resource: a hash tile at a level, or an entry bundle; full (256 wide)
/// or partial (1-255 wide).
public struct TileID: Hashable, Sendable, CustomStringConvertible {
    /// Hashes (or entries) in a full tile: 256, tiles of height 8.
    public static let fullWidth = 256
    /// The highest tile level the spec allows.
    public static let maxLevel = 63

    /// The tile level 0-63, or nil for an entry bundle.
    public let level: Int?
    /// The tile's index within its level.
    public let index: UInt64
    /// 1-256; 256 is a full tile (no `.p/` suffix).
    public let width: Int

    /// A hash tile.
    /// - Throws: `TileError.invalidPath` when level or width is out of range.
    public init(level: Int, index: UInt64, width: Int = TileID.fullWidth) throws(TileError) {
        guard (0...TileID.maxLevel).contains(level), (1...TileID.fullWidth).contains(width) else {
            throw .invalidPath("level \(level) width \(width)")
        }
        self.level = level
        self.index = index
        self.width = width
    }

    /// An entry bundle.
    /// - Throws: `TileError.invalidPath` when width is out of range.
    public init(entriesIndex index: UInt64, width: Int = TileID.fullWidth) throws(TileError) {
        guard (1...TileID.fullWidth).contains(width) else { throw .invalidPath("width \(width)") }
        self.level = nil
        self.index = index
        self.width = width
    }

    /// Whether this is a partial tile (fewer than 256 hashes or entries).
    public var isPartial: Bool { width < TileID.fullWidth }

    /// The path under the log prefix, e.g. `tile/0/x001/x234/067.p/8` or `tile/entries/000`.
    public var path: String {
        var text = "tile/" + (level.map(String.init) ?? "entries") + "/" + TileID.encodeIndex(index)
        if isPartial { text += ".p/\(width)" }
        return text
    }

    public var description: String { path }

    /// Parses a tile or entry bundle path strictly (no leading zeroes in level or width,
    /// 3-digit index elements with `x` on all but the last).
    ///
    /// - Throws: `TileError.invalidPath`.
    public init(path: String) throws(TileError) {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, parts[0] == "tile" else { throw .invalidPath(path) }
        var width = TileID.fullWidth
        if parts.count >= 4, parts[parts.count - 2].hasSuffix(".p") {
            guard let w = TileID.decimal(parts[parts.count - 1]), (1..<TileID.fullWidth).contains(w) else {
                throw .invalidPath(path)
            }
            width = w
            parts.removeLast()
            parts[parts.count - 1].removeLast(2)
        }
        let elements = Array(parts[2...])
        var index: UInt64 = 0
        for (position, element) in elements.enumerated() {
            var digits = Substring(element)
            let last = position == elements.count - 1
            if !last {
                guard digits.first == "x" else { throw .invalidPath(path) }
                digits = digits.dropFirst()
            }
            guard digits.utf8.count == 3, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                let value = UInt64(digits)
            else { throw .invalidPath(path) }
            let (shifted, overflow) = index.multipliedReportingOverflow(by: 1000)
            guard !overflow else { throw .invalidPath(path) }
            index = shifted + value
        }
        guard TileID.encodeIndex(index) == elements.joined(separator: "/") else { throw .invalidPath(path) }
        if parts[1] == "entries" {
            try self.init(entriesIndex: index, width: width)
        } else {
            guard let level = TileID.decimal(parts[1]), level <= TileID.maxLevel else { throw .invalidPath(path) }
            try self.init(level: level, index: index, width: width)
        }
    }

    /// `N` as zero-padded 3-digit elements, `x` before all but the last: 1234067 is `x001/x234/067`.
    public static func encodeIndex(_ index: UInt64) -> String {
        var groups = [String]()
        var rest = index
        repeat {
            let group = String(rest % 1000)
            groups.insert(String(repeating: "0", count: 3 - group.count) + group, at: 0)
            rest /= 1000
        } while rest > 0
        return groups.enumerated().map { $0.offset == groups.count - 1 ? $0.element : "x" + $0.element }
            .joined(separator: "/")
    }

    /// A decimal with no leading zeroes (a lone `0` allowed), below 2^31.
    static func decimal(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 9, bytes.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        guard bytes.count == 1 || bytes[0] != 0x30 else { return nil }
        return Int(text)
    }
}
