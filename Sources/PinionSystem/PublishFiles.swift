// POSIX file access of `pinion publish` (docs/DESIGN.md §9): the tree lock, lstat checks,
// O_NOFOLLOW reads, atomic writes (AtomicFile) with fsync of files and directories. Kept in
// PinionSystem so that PinionPublisher imports no C module.

import Foundation
import PinionTrust

#if canImport(Glibc)
    import Glibc
#endif

/// Why a file operation of the publisher failed. `path` names the file or directory.
public enum PublishFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An operating-system error (open, read, write, rename, lock), with strerror's text.
    case io(path: String, what: String, reason: String)
    /// A path that must be a regular file or a directory is a symbolic link or another kind.
    case wrongKind(path: String, expected: String)
    /// A file larger than the limit (bytes).
    case tooLarge(path: String, limit: Int)
    /// A no-clobber write found the file already there.
    case exists(path: String)

    public var description: String {
        switch self {
        case .io(let path, let what, let reason): return "\(path): cannot \(what): \(reason)"
        case .wrongKind(let path, let expected):
            return "\(path): not \(expected) (a symbolic link or special file); the tree needs repair"
        case .tooLarge(let path, let limit): return "\(path): larger than the limit of \(limit) bytes"
        case .exists(let path): return "\(path): already exists"
        }
    }

    /// Whether the operating system failed (exit code 3), not the tree's content.
    public var isIOError: Bool {
        if case .io = self { return true }
        return false
    }
}

/// The POSIX file operations a publish performs. Every path is a plain string; no method
/// follows a symbolic link at the last component.
public enum PublishFiles {
    /// What `lstat` says a path is.
    public enum Kind: Sendable, Equatable {
        case regular
        case directory
        /// A symbolic link, device, FIFO or socket.
        case other
    }

    /// The kind of `path` (without following a link), or nil when it does not exist.
    /// - Throws: `.io` for any error but ENOENT.
    public static func kind(_ path: String) throws(PublishFileError) -> Kind? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .io(path: path, what: "inspect", reason: errnoText())
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regular
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// An exclusive flock(2) on `directory` (created with its parents if missing), held
    /// until the returned lock is released or deallocated.
    /// - Throws: `.io` when the directory cannot be created, opened or locked.
    public static func lock(_ directory: String) throws(PublishFileError) -> StorageLock {
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw .io(path: directory, what: "create", reason: error.localizedDescription)
        }
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .io(path: directory, what: "open", reason: errnoText()) }
        while flock(descriptor, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            let reason = errnoText()
            close(descriptor)
            throw .io(path: directory, what: "lock", reason: reason)
        }
        return StorageLock(release: {
            _ = flock(descriptor, LOCK_UN)
            _ = close(descriptor)
        })
    }

    /// The bytes of the regular file `path`, or nil when it does not exist. Opened with
    /// O_NOFOLLOW and checked with fstat, so a symbolic link or special file is refused.
    /// - Throws: `.wrongKind`, `.tooLarge`, `.io`.
    public static func readRegularIfPresent(_ path: String, limit: Int) throws(PublishFileError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw .wrongKind(path: path, expected: "a regular file") }
            throw .io(path: path, what: "open", reason: errnoText())
        }
        return try CommandFiles.readOpened(descriptor, path: path, limit: limit) { mode throws(PublishFileError) in
            guard mode & S_IFMT == S_IFREG else { throw .wrongKind(path: path, expected: "a regular file") }
        }
    }

    /// Names in `directory`; none when it does not exist. An unreadable directory is an
    /// error, never empty.
    /// - Throws: `.wrongKind` when it is not a directory, `.io` otherwise.
    public static func list(_ directory: String) throws(PublishFileError) -> [String] {
        switch try kind(directory) {
        case nil: return []
        case .directory: break
        default: throw .wrongKind(path: directory, expected: "a directory")
        }
        do { return try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw .io(path: directory, what: "list", reason: error.localizedDescription)
        }
    }

    /// Creates each directory (with parents) that is missing.
    /// - Throws: `.io`.
    public static func createDirectories(_ directories: [String]) throws(PublishFileError) {
        for directory in directories {
            do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
                throw .io(path: directory, what: "create", reason: error.localizedDescription)
            }
        }
    }

    /// The directories among `path`, its ancestors and `inside` that do not exist yet,
    /// deepest first: what a refused publish removes again with `removeEmptyDirectories`.
    public static func missingDirectories(from path: String, inside: [String]) -> [String] {
        var missing: [String] = []
        var candidate = path
        while !candidate.isEmpty, candidate != "/", candidate != ".", !FileManager.default.fileExists(atPath: candidate)
        {
            missing.append(candidate)
            let parent = PathText.parent(of: candidate)
            if parent == candidate { break }
            candidate = parent
        }
        for directory in inside where !FileManager.default.fileExists(atPath: directory) {
            var step = directory
            while step.count > path.count, !missing.contains(step) {
                missing.append(step)
                step = PathText.parent(of: step)
            }
        }
        return missing.sorted { $0.count > $1.count }
    }

    /// rmdir(2) on each directory, in order; a directory with anything in it stays.
    public static func removeEmptyDirectories(_ directories: [String]) {
        for directory in directories { _ = rmdir(directory) }
    }

    /// Removes regular files whose names start with `.` and contain `.json.tmp-` (what a
    /// publish that died left behind) from each directory. Call only under the tree's lock.
    public static func removeAbandonedTemporaryFiles(in directories: [String]) {
        for directory in directories {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { continue }
            for name in names where name.hasPrefix(".") && name.contains(".json.tmp-") {
                let path = directory + "/" + name
                if (try? kind(path)) == .regular { unlink(path) }
            }
        }
    }

    /// Writes `bytes` to `path` atomically: a temporary file in the same directory, fsync,
    /// then rename (replace) or link (no-clobber), then fsync of the directory. A crash
    /// leaves the old file or the new one. A replaced file keeps its permission bits, and
    /// its successor's modification time is made later than the old one's (servers derive
    /// ETag and Last-Modified from mtime and size). The publisher's tree files and every file
    /// a CLI command writes go through here, and through `AtomicFile` like the SDK's state.
    ///
    /// - Parameters:
    ///   - replace: whether an existing regular file is replaced (else `.exists`).
    ///   - mode: permission bits of a new file (a replaced file keeps its own).
    /// - Throws: `.wrongKind` when `path` exists and is not a regular file, `.exists` when
    ///   `replace` is false and it exists, `.io` on any failure (the temporary file is removed).
    public static func writeAtomically(
        _ bytes: [UInt8], to path: String, replace: Bool, mode newMode: UInt32 = 0o644
    ) throws(PublishFileError) {
        var old = stat()
        let exists = lstat(path, &old) == 0
        if !exists, errno != ENOENT { throw .io(path: path, what: "inspect", reason: errnoText()) }
        if exists, old.st_mode & S_IFMT != S_IFREG { throw .wrongKind(path: path, expected: "a regular file") }
        if exists, !replace { throw .exists(path: path) }
        let url = URL(fileURLWithPath: path)
        let directoryPath = url.deletingLastPathComponent().path
        let directory = open(directoryPath.isEmpty ? "." : directoryPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw .io(path: path, what: "open the directory", reason: errnoText()) }
        defer { close(directory) }
        do {
            try AtomicFile.write(
                bytes, directory: directory, name: url.lastPathComponent,
                mode: exists ? .exactly(old.st_mode & 0o7777) : .lessUmask(mode_t(newMode & 0o7777)),
                replace: replace, modifiedAfter: exists ? old.st_mtim : nil)
        } catch {
            let reason = String(cString: strerror(error.code))
            switch error.step {
            case .link where error.code == EEXIST: throw .exists(path: path)
            case .link: throw .io(path: path, what: "create", reason: reason)
            case .create: throw .io(path: path, what: "create \(directoryPath)/\(error.temporary)", reason: reason)
            case .write, .sync, .close: throw .io(path: path, what: "write", reason: reason)
            case .rename: throw .io(path: path, what: "rename", reason: reason)
            case .syncDirectory: throw .io(path: directoryPath, what: "fsync", reason: reason)
            }
        }
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}
