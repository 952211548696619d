// A published tree read from a local directory (the `--repo` of `pinion publish`), refusing
// symbolic links and anything but regular files inside the tree.

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The files of `{repo}/v1/{scope}/` on the local file system.
///
/// Inside the tree (`v1`, the scope directory, `root/`, `history/` and every file) no
/// symbolic link, device, FIFO or directory is followed or read: a tree is plain files. The
/// repository path itself may be a link. Files are read with a size limit before they are
/// read whole.
public struct DirectoryTreeSource: TreeSource {
    /// The directory given to `pinion publish --repo`.
    public let repo: String
    /// The scope whose files are read.
    public let scope: String

    /// - Parameters:
    ///   - repo: the tree's top directory (it holds `v1/`).
    ///   - scope: the root's scope.
    public init(repo: String, scope: String) {
        self.repo = repo
        self.scope = scope
    }

    /// `{repo}/v1/{scope}`.
    public var location: String { repo + "/v1/" + scope }

    /// Checks that the scope directory exists as a directory reached without a link.
    ///
    /// - Throws: `TreeSourceError.io` when the repository or scope directory is missing
    ///   or unreadable; `.refused` when a component inside the tree is a link or a file.
    public func checkExists() throws(TreeSourceError) {
        var info = stat()
        guard stat(repo, &info) == 0 else { throw .io(file: repo, detail: "cannot open: \(Self.errnoText())") }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .io(file: repo, detail: "is not a directory") }
        for component in [repo + "/v1", location] {
            guard lstat(component, &info) == 0 else {
                if errno == ENOENT {
                    throw .io(file: component, detail: "does not exist (no tree published for scope \(scope) here)")
                }
                throw .io(file: component, detail: "cannot open: \(Self.errnoText())")
            }
            try Self.requireDirectory(component, info)
        }
    }

    public func read(_ file: TreeFile, limit: Int) throws(TreeSourceError) -> [UInt8]? {
        let path = location + "/" + file.path
        switch file {
        case .root: guard try folderExists(.root) else { return nil }
        case .history: guard try folderExists(.history) else { return nil }
        case .index, .manifest: try checkExists()
        }
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
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
        guard try folderExists(folder) else { return TreeListing(versions: []) }
        let path = location + "/" + folder.rawValue
        do {
            return TreeListing.classify(try FileManager.default.contentsOfDirectory(atPath: path))
        } catch {
            throw .io(file: path, detail: "cannot list: \(error.localizedDescription)")
        }
    }

    /// Whether `root/` or `history/` exists (as a real directory).
    private func folderExists(_ folder: TreeFolder) throws(TreeSourceError) -> Bool {
        try checkExists()
        let path = location + "/" + folder.rawValue
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return false }
            throw .io(file: path, detail: "cannot open: \(Self.errnoText())")
        }
        try Self.requireDirectory(path, info)
        return true
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
