// POSIX access for the CLI's own files: reading an input with a size limit (FIFOs and pipes included) and what an output path holds.

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The file access a CLI command needs besides atomic writes (which are
/// `PublishFiles.writeAtomically`, the one writer): inputs read with a size limit, and
/// what an output path holds before it is replaced. Errors are `PublishFileError`s.
public enum CommandFiles {
    /// What is at a path, without following a symbolic link at its last component.
    public enum Existing: Sendable, Equatable {
        /// Nothing (ENOENT).
        case none
        /// A regular file with these permission bits (`st_mode & 0o7777`).
        case regular(mode: UInt32)
        /// A symbolic link.
        case symbolicLink
        /// A directory, device, FIFO or socket.
        case other
    }

    /// What `lstat(2)` says `path` is.
    /// - Throws: `.io` for any error but ENOENT.
    public static func existing(_ path: String) throws(PublishFileError) -> Existing {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return .none }
            throw .io(path: path, what: "inspect", reason: errnoText())
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regular(mode: UInt32(info.st_mode & 0o7777))
        case S_IFLNK: return .symbolicLink
        default: return .other
        }
    }

    /// Reads `path` (following links, as a user's input may be one), refusing more than
    /// `limit` bytes before reading them all.
    ///
    /// The file is opened non-blocking, so a FIFO without a writer reads as empty instead
    /// of hanging; blocking mode is restored before reading so a pipe with a writer
    /// (`<(...)`) still works.
    ///
    /// - Throws: `.io` when the file cannot be opened, inspected or read, or is a
    ///   directory; `.tooLarge` when it holds more than `limit` bytes.
    public static func read(_ path: String, limit: Int) throws(PublishFileError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw .io(path: path, what: "open", reason: errnoText()) }
        return try readOpened(descriptor, path: path, limit: limit) { mode throws(PublishFileError) in
            if mode & S_IFMT == S_IFDIR { throw .io(path: path, what: "read", reason: "is a directory") }
        }
    }

    /// Reads `path` like `read`, but only a regular file (following links): a FIFO, device,
    /// socket or directory is refused before any byte is read, so a FIFO with a writer that
    /// never closes cannot hang the command.
    ///
    /// - Throws: `.io` when the file cannot be opened, inspected or read, or is not a
    ///   regular file; `.tooLarge` when it holds more than `limit` bytes.
    public static func readRegular(_ path: String, limit: Int) throws(PublishFileError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw .io(path: path, what: "open", reason: errnoText()) }
        return try readOpened(descriptor, path: path, limit: limit) { mode throws(PublishFileError) in
            if mode & S_IFMT != S_IFREG { throw .io(path: path, what: "read", reason: "not a regular file") }
        }
    }

    /// Reads the file open non-blocking as `descriptor` (closed on return): fstat, then
    /// `check` on its `st_mode`, blocking mode restored, and at most `limit` bytes read.
    /// Shared with `PublishFiles.readRegularIfPresent`.
    /// - Throws: `check`'s error, `.io` when fstat or the read fails, `.tooLarge`.
    static func readOpened(
        _ descriptor: Int32, path: String, limit: Int, check: (mode_t) throws(PublishFileError) -> Void
    ) throws(PublishFileError) -> [UInt8] {
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .io(path: path, what: "inspect", reason: errnoText()) }
        try check(info.st_mode)
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        let data: Data
        do { data = try handle.read(upToCount: limit + 1) ?? Data() } catch {
            throw .io(path: path, what: "read", reason: error.localizedDescription)
        }
        guard data.count <= limit else { throw .tooLarge(path: path, limit: limit) }
        return [UInt8](data)
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}
