// Where the auditor reads a published tree from (docs/DESIGN.md §9): the files of one scope,
// `v1/{scope}/...`, behind a protocol so a directory, an HTTPS server or a test can serve them.
import PinionLog

/// One file of a scope's published tree, relative to `v1/{scope}/`.
public enum TreeFile: Hashable, Sendable, CustomStringConvertible {
    /// `root/{version}.json`, immutable.
    case root(Int64)
    /// `index.json`, the history of every published manifest.
    case index
    /// `history/{version}.json`, immutable.
    case history(Int64)
    /// `manifest.json`, the latest manifest.
    case manifest
    /// `manifest.proof`, the C2SP tlog-proof@v1 of the log's last entry (docs/DESIGN.md §12).
    case manifestProof
    /// `log/checkpoint`, the cosigned checkpoint note.
    case logCheckpoint
    /// `log/` + the tile's path (`log/tile/0/x001/234`, `log/tile/entries/000.p/3`), immutable.
    case logTile(TileID)

    /// The path relative to the scope directory, e.g. `history/7.json`.
    public var path: String {
        switch self {
        case .root(let version): return "root/\(version).json"
        case .index: return "index.json"
        case .history(let version): return "history/\(version).json"
        case .manifest: return "manifest.json"
        case .manifestProof: return "manifest.proof"
        case .logCheckpoint: return "log/checkpoint"
        case .logTile(let tile): return "log/" + tile.path
        }
    }

    public var description: String { path }
}

/// The two folders of a tree that hold numbered files.
public enum TreeFolder: String, Sendable, CaseIterable {
    /// `root/`.
    case root
    /// `history/`.
    case history
}

/// The numbered files a source found in one folder.
public struct TreeListing: Sendable, Equatable {
    /// Versions of the files named `{version}.json` (canonical decimal), ascending.
    public var versions: [Int64]
    /// Other entries, neither numbered files nor hidden temporary files of a publish.
    public var strayNames: [String]

    /// - Parameters:
    ///   - versions: numbers of the `{version}.json` files, ascending.
    ///   - strayNames: other entry names.
    public init(versions: [Int64], strayNames: [String] = []) {
        self.versions = versions
        self.strayNames = strayNames
    }
}

/// Why a source could not deliver a file.
public enum TreeSourceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file exists but is refused: a symbolic link, a directory, a device or FIFO
    /// (`kind` says which). A property of the tree, reported as a violation.
    case refused(file: String, kind: String)
    /// The file is larger than `limit` bytes; reading stopped there. Reported as a violation.
    case tooLarge(file: String, limit: Int)
    /// The tree could not be read at all or the transfer failed (a missing directory,
    /// permissions, a network or TLS failure, an HTTP status other than 200 and 404).
    case io(file: String, detail: String)

    /// Whether the error describes the tree's content rather than a failure to reach it.
    public var isTreeProperty: Bool {
        switch self {
        case .refused, .tooLarge: return true
        case .io: return false
        }
    }

    public var description: String {
        switch self {
        case .refused(let file, let kind): return "\(file): is \(kind); only regular files are read"
        case .tooLarge(let file, let limit): return "\(file): larger than the limit of \(limit) bytes"
        case .io(let file, let detail): return "\(file): \(detail)"
        }
    }
}

/// The files of one scope of a published tree. Implementations: `DirectoryTreeSource`
/// (the directory given to `pinion publish`), `HTTPSTreeSource` (its https URL); tests
/// inject their own.
public protocol TreeSource: Sendable {
    /// Where the scope's files are, for messages: a directory path or a URL.
    var location: String { get }

    /// Reads one file.
    ///
    /// - Parameters:
    ///   - file: the file, relative to the scope directory.
    ///   - limit: the largest size accepted, in bytes.
    /// - Returns: the bytes, or nil when the file does not exist (ENOENT, HTTP 404).
    /// - Throws: `TreeSourceError`.
    func read(_ file: TreeFile, limit: Int) throws(TreeSourceError) -> [UInt8]?

    /// Lists the numbered files of a folder.
    ///
    /// - Returns: the listing (empty when the folder does not exist), or nil when the
    ///   source cannot list (HTTPS); the auditor then probes numbers one by one.
    /// - Throws: `TreeSourceError`.
    func list(_ folder: TreeFolder) throws(TreeSourceError) -> TreeListing?
}

extension TreeListing {
    /// Sorts directory entry names into numbered files and strays; hidden names (the
    /// temporary files of an atomic write) are skipped.
    public static func classify(_ names: [String]) -> TreeListing {
        var versions: [Int64] = []
        var strays: [String] = []
        for name in names where !name.hasPrefix(".") {
            if name.hasSuffix(".json") {
                let stem = name.dropLast(5)
                if !stem.isEmpty, stem.count <= 16, stem.first != "0",
                    stem.allSatisfy({ $0.isASCII && $0.isNumber }), let version = Int64(stem)
                {
                    versions.append(version)
                    continue
                }
            }
            strays.append(name)
        }
        return TreeListing(versions: versions.sorted(), strayNames: strays.sorted())
    }
}
