// How `pinion serve` maps a request path to a file of the published tree and caches bodies
// with their ETags (the files are opened by PinionSystem's TreeDirectory).

import Foundation
import PinionCore
import PinionCrypto
import PinionLog
import PinionSystem
import PinionTrust
import Synchronization

/// A request path checked against the tree's shape: `/v1/...` components of letters,
/// digits, `.`, `_` and `-` that do not start with a dot, the last one ending in `.json`;
/// or, for a scope's transparency log (docs/TRANSPARENCY.md), exactly
/// `/v1/{scope}/manifest.proof`, `/v1/{scope}/log/checkpoint` or
/// `/v1/{scope}/log/tile/...` naming a C2SP tlog-tiles tile or entry bundle.
/// Everything else (`..`, percent-encoding of any byte, backslashes, NUL, empty
/// components, hidden files such as a crashed publish's `.N.json.tmp-*`) is refused.
public struct PublishedPath: Sendable, Equatable {
    /// The path components below the tree, e.g. `["v1", "com.example", "manifest.json"]`.
    public let components: [String]

    /// The longest path accepted, in bytes.
    public static let maxBytes = 1024

    /// Checks `path` (the request target without its query).
    ///
    /// - Returns: the components, or nil when the path is refused (the server answers 404).
    public init?(_ path: String) {
        guard path.utf8.count <= Self.maxBytes, path.hasPrefix("/v1/") else { return nil }
        let parts = path.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count >= 2, parts.count <= 16 else { return nil }
        for part in parts {
            guard let first = part.first, first != UInt8(ascii: "."), part.count <= 255 else { return nil }
            let allowed = part.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    return true
                default:
                    return false
                }
            }
            guard allowed else { return nil }
        }
        let names = parts.map { String(decoding: $0, as: UTF8.self) }
        guard let last = parts.last else { return nil }
        // Every byte is ASCII here, so the UTF-8 count is the length.
        if last.count > 5, last.reversed().starts(with: ".json".utf8.reversed()), names.count <= 8 {
            components = names
            return
        }
        guard names.count >= 3, PublishedPath.isLogFile(Array(names[2...])) else { return nil }
        components = names
    }

    /// `manifest.proof`, `log/checkpoint` or `log/tile/...` (a valid tlog-tiles path) below a scope.
    private static func isLogFile(_ below: [String]) -> Bool {
        if below == ["manifest.proof"] || below == ["log", "checkpoint"] { return true }
        guard below.count >= 4, below[0] == "log", below[1] == "tile" else { return false }
        let path = below.dropFirst().joined(separator: "/")
        return (try? TileID(path: path))?.path == path  // canonical form only
    }

    /// Whether this is a scope's `manifest.json` (`/v1/{scope}/manifest.json`).
    public var isManifest: Bool { components.count == 3 && components[2] == "manifest.json" }

    /// Whether this is a log tile or entry bundle (immutable, binary).
    public var isLogTile: Bool { components.count >= 5 && components[2] == "log" && components[3] == "tile" }

    /// The Content-Type the file is served with: JSON documents, text notes, binary tiles.
    public var contentType: String {
        guard let last = components.last else { return "application/json" }
        if last.hasSuffix(".json") { return "application/json" }
        return isLogTile ? "application/octet-stream" : "text/plain; charset=utf-8"
    }

    /// How long caches may keep the file (docs/DESIGN.md §9): root and history files never
    /// change once written; `manifest.json`, `index.json` and anything else must be
    /// revalidated.
    public var cacheControl: String {
        let directory = components.count >= 2 ? components[components.count - 2] : ""
        if components.count == 4, directory == "root" || directory == "history" {
            return "public, max-age=31536000, immutable"
        }
        // Tiles never change: a partial tile of a new width has a new path (C2SP tlog-tiles).
        if isLogTile { return "public, max-age=31536000, immutable" }
        return "no-cache"
    }
}

/// A file body ready to serve.
public struct PublishedFile: Sendable {
    /// The bytes.
    public let body: [UInt8]
    /// The entity tag: the quoted lowercase hex SHA-256 of `body` (docs/DESIGN.md §9).
    public let etag: String
    /// The file's modification time, in whole seconds since 1970 (Last-Modified).
    public let lastModified: Int64
    /// `lastModified` as an IMF-fixdate (RFC 9110 §5.6.7), the Last-Modified value: made once
    /// per file version, not per response.
    public let lastModifiedText: String

    /// The gzip-encoded representation (a log tile or entry bundle whose encoding is smaller
    /// than `body`), served to a client that accepts gzip; nil for every other file.
    public let gzipped: Encoded?

    /// The bytes this file holds in memory: the body and its encoded representation.
    var cachedBytes: Int { body.count + (gzipped?.body.count ?? 0) }

    /// A content-coded representation of the file (RFC 9110 §8.4).
    public struct Encoded: Sendable {
        /// The encoded bytes.
        public let body: [UInt8]
        /// Its entity tag: the quoted lowercase hex SHA-256 of these bytes, so each
        /// representation has its own strong validator (RFC 9110 §8.8.3).
        public let etag: String
    }

    /// For a scope's `manifest.json`: the version its payload names (read without checking
    /// signatures; it only labels `pinion_manifest_polls_total`), nil when it does not parse.
    /// Nil for every other file.
    public let manifestVersion: Int64?

    init(body: [UInt8], etag: String, lastModified: Int64, gzipped: Encoded? = nil, manifestVersion: Int64? = nil) {
        self.body = body
        self.etag = etag
        self.lastModified = lastModified
        self.gzipped = gzipped
        self.manifestVersion = manifestVersion
        lastModifiedText = HTTPDate.format(lastModified)
    }
}

/// Why a path gave no file.
public enum PublishedFileError: Error, Sendable, Equatable {
    /// Missing, not a regular file, a symbolic link on the way, or unreadable: 404.
    case notFound
    /// Larger than the serving limit: 404 as well, and logged.
    case tooLarge
    /// An I/O error while reading (errno): 500.
    case readFailed(errno: Int32)
    /// The system is out of a resource (descriptors, memory; errno): 503, never 404.
    case unavailable(errno: Int32)
}

/// Opens files of the tree below a directory, refusing symbolic links at every step
/// (PinionSystem's `TreeDirectory`), and keeps recently served bodies keyed by path and file
/// identity (device, inode, size, modification and change times), so a file replaced by
/// `pinion publish`'s atomic rename is read afresh at once while an unchanged one is neither
/// re-read nor re-hashed.
public final class PublishedFiles: Sendable {
    private struct Entry {
        let identity: FileIdentity
        let file: PublishedFile
    }

    private struct Cache {
        var entries: [[String]: Entry] = [:]
        var bytes = 0
    }

    private let root: TreeDirectory
    private let maxFileBytes: Int
    private let maxCacheBytes: Int
    private let cache = Mutex(Cache())

    /// Opens the tree's top directory (following a symbolic link there, once, at start).
    ///
    /// - Parameters:
    ///   - directory: the directory given to `pinion publish --repo`.
    ///   - maxFileBytes: the largest file served, in bytes.
    ///   - maxCacheBytes: the most body bytes kept in memory across all files.
    /// - Throws: `PublisherError.repositoryUnreadable` when it is not a readable directory.
    public convenience init(directory: String, maxFileBytes: Int = 64 << 20, maxCacheBytes: Int = 256 << 20)
        throws(PublisherError)
    {
        try self.init(
            directory: directory, maxFileBytes: maxFileBytes, maxCacheBytes: maxCacheBytes, opensInOneCall: true)
    }

    /// As `init(directory:maxFileBytes:maxCacheBytes:)`; `opensInOneCall: false` never uses
    /// openat2(2), the path taken where the kernel does not offer it (`TreeDirectory`).
    init(directory: String, maxFileBytes: Int, maxCacheBytes: Int, opensInOneCall: Bool) throws(PublisherError) {
        do throws(TreeDirectoryError) {
            root = try TreeDirectory(path: directory, opensInOneCall: opensInOneCall)
        } catch {
            throw .repositoryUnreadable(path: directory, detail: error.detail)
        }
        self.maxFileBytes = maxFileBytes
        self.maxCacheBytes = maxCacheBytes
    }

    /// The current contents of the file at `path`.
    ///
    /// - Throws: `PublishedFileError`.
    public func file(at path: PublishedPath) throws(PublishedFileError) -> PublishedFile {
        var cached: PublishedFile?
        let read: (identity: FileIdentity, body: [UInt8]?)
        do throws(TreeFileError) {
            read = try root.read(path.components, maxBytes: maxFileBytes) { identity in
                guard let entry = cache.withLock({ $0.entries[path.components] }), entry.identity == identity else {
                    return false
                }
                cached = entry.file
                return true
            }
        } catch {
            switch error {
            // A client learns nothing about what is on the disk: missing, a link, a FIFO or
            // a file it may not read are all "not found".
            case .notFound, .refused, .unreadable: throw .notFound
            case .tooLarge: throw .tooLarge
            case .readFailed(let code): throw .readFailed(errno: code)
            case .unavailable(let code): throw .unavailable(errno: code)
            }
        }
        if let cached { return cached }
        guard let body = read.body, let digest = OpenSSLSupport.sha256(body) else { throw .readFailed(errno: EIO) }
        var gzipped: PublishedFile.Encoded?
        if path.isLogTile {
            // Entry bundles (JSON heads) shrink; hash tiles are random bytes and do not, and
            // are then served only as they are.
            let encoded = Gzip.encode(body)
            if encoded.count < body.count, let encodedDigest = OpenSSLSupport.sha256(encoded) {
                gzipped = PublishedFile.Encoded(body: encoded, etag: "\"" + Hex.encode(encodedDigest) + "\"")
            }
        }
        var manifestVersion: Int64?
        if path.isManifest, let envelope = try? Envelope.parse(body) {
            manifestVersion = try? ManifestPayload.parse(envelope.payload).version
        }
        let file = PublishedFile(
            body: body, etag: "\"" + Hex.encode(digest) + "\"", lastModified: read.identity.modifiedSeconds,
            gzipped: gzipped, manifestVersion: manifestVersion)
        remember(Entry(identity: read.identity, file: file), for: path.components)
        return file
    }

    private func remember(_ entry: Entry, for key: [String]) {
        let size = entry.file.cachedBytes
        guard size <= maxCacheBytes / 4 else { return }
        cache.withLock { cache in
            if let old = cache.entries[key] { cache.bytes -= old.file.cachedBytes }
            if cache.bytes + size > maxCacheBytes {
                // Simple and bounded: start over. The hot files (manifest.json, index.json)
                // come back on their next request.
                cache.entries.removeAll(keepingCapacity: true)
                cache.bytes = 0
            }
            cache.entries[key] = entry
            cache.bytes += size
        }
    }
}
