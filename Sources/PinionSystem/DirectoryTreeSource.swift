// A published tree read from a local directory (the `--repo` of `pinion publish`), refusing
// symbolic links and anything but regular files inside the tree.

import Foundation
import PinionTrust
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The files of `{repo}/v1/{scope}/` on the local file system.
///
/// Inside the tree (`v1`, the scope directory, `root/`, `history/` and every file) no
/// symbolic link, device, FIFO or directory is followed or read: a tree is plain files. The
/// repository path itself may be a link. The directories are opened once, one component at
/// a time without following links, and files are opened relative to them (`openat` with
/// `O_NOFOLLOW`): no path is re-walked per file, so a directory swapped for a link during the
/// audit is never followed, and 10,000 history files cost 10,000 opens, not 50,000 checks.
/// Files are read with a size limit before they are read whole.
public final class DirectoryTreeSource: TreeSource {
    /// The directory given to `pinion publish --repo`.
    public let repo: String
    /// The scope whose files are read.
    public let scope: String

    /// Open descriptors of the scope directory and of `root/` and `history/` once found.
    private struct Handles {
        var scope: Int32?
        var folders: [TreeFolder: Int32] = [:]
    }

    private let handles = Mutex(Handles())

    /// - Parameters:
    ///   - repo: the tree's top directory (it holds `v1/`).
    ///   - scope: the root's scope.
    public init(repo: String, scope: String) {
        self.repo = repo
        self.scope = scope
    }

    deinit {
        handles.withLock { handles in
            if let scope = handles.scope { close(scope) }
            for descriptor in handles.folders.values { close(descriptor) }
        }
    }

    /// `{repo}/v1/{scope}`.
    public var location: String { repo + "/v1/" + scope }

    /// Checks that the scope directory exists as a directory reached without a link.
    ///
    /// - Throws: `TreeSourceError.io` when the repository or scope directory is missing
    ///   or unreadable; `.refused` when a component inside the tree is a link or a file.
    public func checkExists() throws(TreeSourceError) {
        _ = try scopeDescriptor()
    }

    private func scopeDescriptor() throws(TreeSourceError) -> Int32 {
        if let open = handles.withLock({ $0.scope }) { return open }
        let top = Glibc.open(repo, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard top >= 0 else {
            if errno == ENOTDIR { throw .io(file: repo, detail: "is not a directory") }
            throw .io(file: repo, detail: "cannot open: \(Self.errnoText())")
        }
        defer { close(top) }
        let v1 = try Self.openDirectory(
            top, "v1", path: repo + "/v1",
            missing: .io(file: repo + "/v1", detail: "does not exist (no tree published for scope \(scope) here)"))
        defer { close(v1) }
        let scopeFD = try Self.openDirectory(
            v1, scope, path: location,
            missing: .io(file: location, detail: "does not exist (no tree published for scope \(scope) here)"))
        return handles.withLock { handles in
            if let raced = handles.scope {
                close(scopeFD)
                return raced
            }
            handles.scope = scopeFD
            return scopeFD
        }
    }

    /// `root/` or `history/`, or nil when it does not exist (yet).
    private func folderDescriptor(_ folder: TreeFolder) throws(TreeSourceError) -> Int32? {
        if let open = handles.withLock({ $0.folders[folder] }) { return open }
        let scopeFD = try scopeDescriptor()
        let path = location + "/" + folder.rawValue
        let descriptor: Int32
        do {
            descriptor = try Self.openDirectoryOrNotFound(scopeFD, folder.rawValue, path: path)
        } catch {
            switch error {
            case .notFound: return nil
            case .source(let failure): throw failure
            }
        }
        return handles.withLock { handles in
            if let raced = handles.folders[folder] {
                close(descriptor)
                return raced
            }
            handles.folders[folder] = descriptor
            return descriptor
        }
    }

    private enum OpenFailure: Error {
        case notFound
        case source(TreeSourceError)
    }

    /// Opens directory `name` in `parent` without following a link; a missing one throws
    /// `missing`.
    private static func openDirectory(_ parent: Int32, _ name: String, path: String, missing: TreeSourceError)
        throws(TreeSourceError) -> Int32
    {
        do {
            return try openDirectoryOrNotFound(parent, name, path: path)
        } catch {
            switch error {
            case .notFound: throw missing
            case .source(let failure): throw failure
            }
        }
    }

    private static func openDirectoryOrNotFound(_ parent: Int32, _ name: String, path: String) throws(OpenFailure)
        -> Int32
    {
        let descriptor = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor >= 0 { return descriptor }
        let code = errno
        if code == ENOENT { throw .notFound }
        if code == ELOOP || code == ENOTDIR {
            var info = stat()
            if fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 {
                throw .source(.refused(file: path, kind: kind(info) + " where a directory belongs"))
            }
        }
        throw .source(.io(file: path, detail: "cannot open: \(String(cString: strerror(code)))"))
    }

    public func read(_ file: TreeFile, limit: Int) throws(TreeSourceError) -> [UInt8]? {
        let path = location + "/" + file.path
        let directory: Int32
        let name: String
        switch file {
        case .root(let version):
            guard let folder = try folderDescriptor(.root) else { return nil }
            (directory, name) = (folder, "\(version).json")
        case .history(let version):
            guard let folder = try folderDescriptor(.history) else { return nil }
            (directory, name) = (folder, "\(version).json")
        case .index: (directory, name) = (try scopeDescriptor(), "index.json")
        case .manifest: (directory, name) = (try scopeDescriptor(), "manifest.json")
        }
        let descriptor = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            switch errno {
            case ENOENT: return nil
            case ELOOP: throw .refused(file: path, kind: "a symbolic link")
            default: throw .io(file: path, detail: "cannot open: \(Self.errnoText())")
            }
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw .io(file: path, detail: "cannot inspect: \(Self.errnoText())")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .refused(file: path, kind: Self.kind(info)) }
        if Int64(info.st_size) > Int64(limit) { throw .tooLarge(file: path, limit: limit) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        // Sized to the file (history files are about 1 KiB): zeroing a 64 KiB chunk for each
        // of them was 5% of an audit's instructions (bench/RESULTS.md).
        var chunk = [UInt8](repeating: 0, count: min(64 * 1024, Int(info.st_size) + 1))
        while true {
            let count = chunk.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .io(file: path, detail: "read failed: \(Self.errnoText())")
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
            // The file may have grown since fstat.
            if bytes.count > limit { throw .tooLarge(file: path, limit: limit) }
        }
        return bytes
    }

    public func list(_ folder: TreeFolder) throws(TreeSourceError) -> TreeListing? {
        guard let descriptor = try folderDescriptor(folder) else { return TreeListing(versions: []) }
        let path = location + "/" + folder.rawValue
        // A second descriptor for the listing: closedir closes the one it is given.
        let copy = dup(descriptor)
        guard copy >= 0, let directory = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            throw .io(file: path, detail: "cannot list: \(Self.errnoText())")
        }
        defer { closedir(directory) }
        rewinddir(directory)
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return TreeListing.classify(names)
    }

    private static func requireDirectory(_ path: String, _ info: stat) throws(TreeSourceError) {
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw .refused(file: path, kind: kind(info) + " where a directory belongs")
        }
    }

    private static func kind(_ info: stat) -> String {
        switch info.st_mode & S_IFMT {
        case S_IFLNK: return "a symbolic link"
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFSOCK: return "a socket"
        case S_IFREG: return "a regular file"
        default: return "not a regular file"
        }
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}
