// How `pinion serve` maps a request path to a file of the published tree, opens it
// without ever following a symbolic link, and caches bodies with their ETags.

import Foundation
import PinionCore
import PinionCrypto
import PinionSystem
import PinionTrust
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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

    init(body: [UInt8], etag: String, lastModified: Int64) {
        self.body = body
        self.etag = etag
        self.lastModified = lastModified
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

/// Opens files of the tree below a directory, refusing symbolic links at every step, and
/// keeps recently served bodies keyed by path and file identity (device, inode, size,
/// modification and change times), so a file replaced by `pinion publish`'s atomic rename
/// is read afresh at once while an unchanged one is neither re-read nor re-hashed.
public final class PublishedFiles: Sendable {
    private struct Identity: Equatable {
        let device: UInt64
        let inode: UInt64
        let size: Int64
        let modified: timespec
        let changed: timespec

        static func == (lhs: Identity, rhs: Identity) -> Bool {
            lhs.device == rhs.device && lhs.inode == rhs.inode && lhs.size == rhs.size
                && lhs.modified.tv_sec == rhs.modified.tv_sec && lhs.modified.tv_nsec == rhs.modified.tv_nsec
                && lhs.changed.tv_sec == rhs.changed.tv_sec && lhs.changed.tv_nsec == rhs.changed.tv_nsec
        }
    }

    private struct Entry {
        let identity: Identity
        let file: PublishedFile
    }

    private struct Cache {
        var entries: [[String]: Entry] = [:]
        var bytes = 0
    }

    private let rootDescriptor: Int32
    private let maxFileBytes: Int
    private let maxCacheBytes: Int
    private let cache = Mutex(Cache())
    /// False: always walk the components with `openat(O_NOFOLLOW)`, as on a kernel without
    /// openat2(2) (for the tests of that path).
    private let opensInOneCall: Bool

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
    /// openat2(2), the path taken where the kernel does not offer it.
    init(directory: String, maxFileBytes: Int, maxCacheBytes: Int, opensInOneCall: Bool) throws(PublisherError) {
        self.opensInOneCall = opensInOneCall
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .repositoryUnreadable(path: directory, detail: String(cString: strerror(errno)))
        }
        rootDescriptor = descriptor
        self.maxFileBytes = maxFileBytes
        self.maxCacheBytes = maxCacheBytes
    }

    deinit { close(rootDescriptor) }

    /// The current contents of the file at `path`.
    ///
    /// - Throws: `PublishedFileError`.
    public func file(at path: PublishedPath) throws(PublishedFileError) -> PublishedFile {
        // O_NONBLOCK: a FIFO planted in the tree must not stall a worker; it is then refused
        // as not a regular file.
        let flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
        let descriptor: Int32
        switch opensInOneCall ? openBeneath(rootDescriptor, components: path.components, flags: flags) : .unsupported {
        case .opened(let opened): descriptor = opened
        case .failed(let code): throw Self.openFailure(code)
        case .unsupported: descriptor = try openByWalking(path.components, flags: flags)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { throw .notFound }
        guard status.st_size <= Int64(maxFileBytes) else { throw .tooLarge }
        let identity = Identity(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
            modified: status.st_mtim, changed: status.st_ctim)
        if let entry = cache.withLock({ $0.entries[path.components] }), entry.identity == identity {
            return entry.file
        }
        let body = try readAll(descriptor, expected: Int(status.st_size))
        guard let digest = OpenSSLSupport.sha256(body) else { throw .readFailed(errno: EIO) }
        let file = PublishedFile(
            body: body, etag: "\"" + Hex.encode(digest) + "\"", lastModified: Int64(status.st_mtim.tv_sec))
        remember(Entry(identity: identity, file: file), for: path.components)
        return file
    }

    /// Opens `components` one at a time with `openat(O_NOFOLLOW)`, directories with
    /// `O_DIRECTORY`: where openat2(2) is not available (`BeneathOpen.unsupported`).
    private func openByWalking(_ components: [String], flags: Int32) throws(PublishedFileError) -> Int32 {
        var directory = rootDescriptor
        defer { if directory != rootDescriptor { close(directory) } }
        for name in components.dropLast() {
            let next = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else { throw Self.openFailure(errno) }
            if directory != rootDescriptor { close(directory) }
            directory = next
        }
        guard let name = components.last else { throw .notFound }
        let descriptor = openat(directory, name, flags)
        guard descriptor >= 0 else { throw Self.openFailure(errno) }
        return descriptor
    }

    /// Only "no such file" answers (missing, not a directory, a symbolic link refused by
    /// O_NOFOLLOW or RESOLVE_NO_SYMLINKS, a way out refused by RESOLVE_BENEATH, no
    /// permission) are 404; running out of descriptors or memory is not.
    private static func openFailure(_ code: Int32) -> PublishedFileError {
        switch code {
        case ENOENT, ENOTDIR, ELOOP, EXDEV, EACCES, ENAMETOOLONG, ENXIO, EISDIR: return .notFound
        case EMFILE, ENFILE, ENOMEM, ENOBUFS, EAGAIN, EINTR: return .unavailable(errno: code)
        default: return .readFailed(errno: code)
        }
    }

    private func remember(_ entry: Entry, for key: [String]) {
        let size = entry.file.body.count
        guard size <= maxCacheBytes / 4 else { return }
        cache.withLock { cache in
            if let old = cache.entries[key] { cache.bytes -= old.file.body.count }
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

    private func readAll(_ descriptor: Int32, expected: Int) throws(PublishedFileError) -> [UInt8] {
        var body = [UInt8](repeating: 0, count: expected)
        var filled = 0
        while filled < expected {
            let count = body.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + filled, expected - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .readFailed(errno: errno)
            }
            // The file shrank under us (it should not: published files are replaced by
            // rename, never rewritten); serve what the identity check will catch next time.
            if count == 0 { break }
            filled += count
        }
        body.removeSubrange(filled...)
        return body
    }
}
