// The Linux (POSIX) file storage behind PinionTrust's `StateStorage`: a private directory,
// files opened relative to it without following links, atomic durable replacement.

import Foundation
import PinionTrust

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `StateStorage` on a directory of the local file system.
///
/// The directory is created with mode 0700 (with missing parents) when absent; a path whose
/// last component is a symbolic link, that is not a directory, or that is writable by others
/// is refused. Every operation opens the directory again without following a symbolic link
/// and works relative to it, so swapping the directory for a link later is refused too.
/// Files are created with mode 0600; a file name that is a symbolic link or not a regular
/// file is refused. Temporary files are named `.NAME.tmp-PID-RANDOM`; ones left by a process
/// that no longer runs (a crash) are removed when the storage is opened.
public struct DirectoryStorage: StateStorage {
    /// The directory path, without trailing slashes.
    public let path: String

    /// Opens (and if needed creates) the state directory.
    ///
    /// - Parameter path: the directory; its last component must not be a symbolic link.
    /// - Throws: `StorageError` with `ENOTDIR` (not a directory, or a parent is a file),
    ///   `ELOOP` (a symbolic link), `EPERM` (writable by others) or the error of `mkdir`.
    public init(path: String) throws(StorageError) {
        var trimmed = path
        // "dir/" would make open(2) follow a symbolic link despite O_NOFOLLOW.
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard !trimmed.isEmpty else { throw StorageError.posix(.open, path, code: ENOENT, detail: "empty path") }
        self.path = trimmed
        try Self.createDirectory(trimmed)
        let directory = try openDirectory()
        close(directory)
        removeStaleTemporaryFiles()
    }

    /// Locks the state directory itself with `flock(2)` (waiting for another process's
    /// refresh to finish).
    ///
    /// - Throws: `StorageError` when the directory cannot be opened or locked.
    public func lockExclusively() throws(StorageError) -> StorageLock {
        let directory = try openDirectory()
        while flock(directory, LOCK_EX) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(directory)
            throw StorageError.posix(.open, path, code: code, detail: "cannot lock the state directory")
        }
        return StorageLock(release: {
            _ = flock(directory, LOCK_UN)
            _ = close(directory)
        })
    }

    /// Locks the state directory itself with `flock(2)` without waiting (`pinion witness`:
    /// a second process on the same state must refuse to start rather than wait).
    ///
    /// - Returns: the lock, or nil when another process holds it.
    /// - Throws: `StorageError` when the directory cannot be opened or locked.
    public func tryLockExclusively() throws(StorageError) -> StorageLock? {
        let directory = try openDirectory()
        while flock(directory, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(directory)
            if code == EWOULDBLOCK { return nil }
            throw StorageError.posix(.open, path, code: code, detail: "cannot lock the state directory")
        }
        return StorageLock(release: {
            _ = flock(directory, LOCK_UN)
            _ = close(directory)
        })
    }

    /// Reads `name` (regular files only; a symbolic link is refused with `ELOOP`).
    ///
    /// - Parameters:
    ///   - name: the file name.
    ///   - maxBytes: reading stops after `maxBytes + 1` bytes.
    /// - Returns: the content, or nil when the file is absent.
    /// - Throws: `StorageError`.
    public func read(_ name: String, maxBytes: Int) throws(StorageError) -> [UInt8]? {
        try read(name, maxBytes: maxBytes, refuseWritableByOthers: false)
    }

    /// Reads `name` as `read(_:maxBytes:)` does.
    ///
    /// - Parameters:
    ///   - name: the file name.
    ///   - maxBytes: reading stops after `maxBytes + 1` bytes.
    ///   - refuseWritableByOthers: refuse (`EPERM`) a file writable by its group or by
    ///     others (mode `& 0o022`), for state whose tampering is a security failure
    ///     (`pinion witness`'s memory of what it cosigned). The files this storage writes are
    ///     0600.
    /// - Returns: the content, or nil when the file is absent.
    /// - Throws: `StorageError`.
    public func read(_ name: String, maxBytes: Int, refuseWritableByOthers: Bool) throws(StorageError)
        -> [UInt8]?
    {
        try Self.check(name)
        let directory = try openDirectory()
        defer { close(directory) }
        let descriptor = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw StorageError.posix(.open, name, code: code, detail: code == ELOOP ? "is a symbolic link" : nil)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw StorageError.posix(.open, name, code: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw StorageError.posix(.open, name, code: EINVAL, detail: "not a regular file")
        }
        if refuseWritableByOthers {
            try Self.refuseWritable(info.st_mode, mask: 0o022, name, what: "its group or others")
        }
        return try POSIX.readAll(descriptor, limit: maxBytes < Int.max ? maxBytes + 1 : maxBytes, name: name)
    }

    /// Writes a temporary file (mode 0600), fsyncs it, renames it over `name` and fsyncs the
    /// directory. The temporary file is removed on any failure.
    ///
    /// A failing directory fsync is not reported: the rename is then done but may not survive
    /// a power loss, which leaves the old file, still never a mix.
    ///
    /// - Parameters:
    ///   - name: the file name.
    ///   - bytes: the new content.
    /// - Throws: `StorageError` (e.g. `ENOSPC`, `EROFS`, `EISDIR`); the old file is unchanged.
    public func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(StorageError) {
        try Self.check(name)
        let directory = try openDirectory()
        defer { close(directory) }
        do {
            try AtomicFile.write(bytes, directory: directory, name: name, mode: .exactly(0o600), replace: true)
        } catch {
            switch error.step {
            case .syncDirectory: return
            case .create, .write, .close: throw StorageError.posix(.write, name, code: error.code)
            case .sync: throw StorageError.posix(.sync, name, code: error.code)
            case .rename, .link: throw StorageError.posix(.rename, name, code: error.code)
            }
        }
    }

    /// Removes `name` and fsyncs the directory; an absent file is not an error.
    ///
    /// - Parameter name: the file name.
    /// - Throws: `StorageError`.
    public func remove(_ name: String) throws(StorageError) {
        try Self.check(name)
        let directory = try openDirectory()
        defer { close(directory) }
        guard unlinkat(directory, name, 0) == 0 else {
            let code = errno
            if code == ENOENT { return }
            throw StorageError.posix(.remove, name, code: code)
        }
        _ = fsync(directory)
    }

    // MARK: - Private

    /// A single file name not starting with `.` (reserved for temporary files).
    private static func check(_ name: String) throws(StorageError) {
        let valid =
            !name.isEmpty && name.utf8.count <= 200 && !name.hasPrefix(".") && !name.utf8.contains(UInt8(ascii: "/"))
            && !name.utf8.contains(0)
        guard valid else { throw StorageError.posix(.open, name, code: EINVAL, detail: "not a plain file name") }
    }

    /// `mkdir -p` with mode 0700 for every directory it creates.
    private static func createDirectory(_ path: String) throws(StorageError) {
        if mkdir(path, 0o700) == 0 { return }
        let code = errno
        switch code {
        case EEXIST: return  // checked by openDirectory
        case ENOENT:
            let parent = PathText.parent(of: path)
            guard !parent.isEmpty, parent != path else { throw StorageError.posix(.createDirectory, path, code: code) }
            try createDirectory(parent)
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
                throw StorageError.posix(.createDirectory, path, code: errno)
            }
        default: throw StorageError.posix(.createDirectory, path, code: code)
        }
    }

    /// Opens the directory itself (not a symbolic link to one) and checks its kind and mode.
    private func openDirectory() throws(StorageError) -> Int32 {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            var info = stat()
            let isLink = lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
            throw StorageError.posix(
                .open, path, code: isLink ? ELOOP : code, detail: isLink ? "is a symbolic link" : nil)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw StorageError.posix(.open, path, code: code)
        }
        // Others could plant or swap files in a world-writable directory (such as /tmp).
        do { try Self.refuseWritable(info.st_mode, mask: 0o002, path, what: "others") } catch {
            close(descriptor)
            throw error
        }
        return descriptor
    }

    /// Refuses a directory, or any parent up to the first one owned by root, that its group
    /// or others can write (mode `& 0o022`): whoever can write a directory can rename an
    /// older file over a state file in it, which is as good as writing the file. For state
    /// whose tampering is a security failure (a witness's latest checkpoints). The first
    /// root-owned parent and those above it are the system's (`/`, `/var`, a sticky `/tmp`).
    ///
    /// - Parameter path: the state directory (it must exist).
    /// - Throws: `StorageError` `EPERM` naming the directory and its mode; the error of `stat`.
    public static func refuseWritableAncestry(_ path: String) throws(StorageError) {
        var current = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        while current.count > 1, current.hasSuffix("/") { current.removeLast() }
        var first = true
        while true {
            var info = stat()
            guard stat(current, &info) == 0 else { throw StorageError.posix(.open, current, code: errno) }
            if !first, info.st_uid == 0 { return }
            try refuseWritable(
                info.st_mode, mask: 0o022, current,
                what: first ? "its group or others" : "its group or others (a parent of the state directory)")
            first = false
            guard current != "/", let slash = current.lastIndex(of: "/") else { return }
            current = slash == current.startIndex ? "/" : String(current[..<slash])
        }
    }

    /// The one permission check of state: `mode & mask` must be 0, or `EPERM` naming the
    /// octal mode and who can write (the directory: others; a protected file: group or others).
    private static func refuseWritable(_ mode: mode_t, mask: mode_t, _ name: String, what: String)
        throws(StorageError)
    {
        guard mode & mask != 0 else { return }
        throw StorageError.posix(
            .open, name, code: EPERM,
            detail: "writable by \(what) (mode \(String(mode & 0o777, radix: 8))); make it private (chmod go-w)")
    }

    /// Temporary files of writes that a crash interrupted: those whose writer process
    /// (`.NAME.tmp-PID-RANDOM`) no longer exists. A live process's file is in flight.
    private func removeStaleTemporaryFiles() {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        let directory: Int32
        do { directory = try openDirectory() } catch { return }
        defer { close(directory) }
        for entry in entries where entry.hasPrefix(".") {
            guard let marker = entry.range(of: ".tmp-", options: .backwards) else { continue }
            let fields = entry[marker.upperBound...].split(separator: "-")
            guard fields.count == 2, let pid = pid_t(fields[0]), pid > 0, UInt32(fields[1]) != nil else { continue }
            if pid != getpid(), kill(pid, 0) != 0, errno == ESRCH { unlinkat(directory, entry, 0) }
        }
    }
}

extension StorageError {
    /// An error with the platform's text for `code` (`strerror`) unless a more precise
    /// detail is given.
    public static func posix(_ operation: Operation, _ name: String, code: Int32, detail: String? = nil) -> StorageError
    {
        StorageError(operation, name, code: code, detail: detail ?? String(cString: strerror(code)))
    }
}

/// The read(2) loop with errno, kept apart from `DirectoryStorage` whose methods
/// share the names.
private enum POSIX {
    static func readAll(_ descriptor: Int32, limit: Int, name: String) throws(StorageError) -> [UInt8] {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: max(1, min(limit, 1 << 16)))
        while output.count < limit {
            let count = read(descriptor, &chunk, min(chunk.count, limit - output.count))
            if count < 0 {
                if errno == EINTR { continue }
                throw StorageError.posix(.read, name, code: errno)
            }
            if count == 0 { break }
            output.append(contentsOf: chunk[0..<count])
        }
        return output
    }

}
