// Reading input files with a size limit and writing outputs atomically, never clobbering
// unless asked.

import Foundation
import PinionCore

#if canImport(Glibc)
    import Glibc
#endif

enum Files {
    /// Reads `path`, refusing more than `limit` bytes before reading them all.
    ///
    /// The file is opened non-blocking, so a FIFO without a writer reads as empty instead
    /// of hanging; blocking mode is restored before reading so a pipe with a writer
    /// (`<(...)`) still works.
    ///
    /// - Throws: `CLIError.io` when the file cannot be read; `.failure` when it is too large.
    static func read(_ path: String, limit: Int) throws(CLIError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw .io("\(path): cannot open: \(errnoText())") }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .io("\(path): cannot inspect: \(errnoText())") }
        if info.st_mode & S_IFMT == S_IFDIR { throw .io("\(path): is a directory") }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        let data: Data
        do { data = try handle.read(upToCount: limit + 1) ?? Data() } catch {
            throw .io("\(path): read failed: \(error.localizedDescription)")
        }
        if data.count > limit {
            throw .failure("\(path): larger than the limit of \(limit) bytes")
        }
        return [UInt8](data)
    }

    /// Refuses to replace anything but a regular file (a device node, FIFO, directory or
    /// symbolic link would be silently swapped for a plain file by the rename).
    ///
    /// - Returns: the permission bits of the existing regular file, or nil if none exists.
    static func existingRegularFileMode(_ path: String) throws(CLIError) -> mode_t? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .io("\(path): cannot inspect: \(errnoText())")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            let kind = info.st_mode & S_IFMT == S_IFLNK ? "a symbolic link" : "not a regular file"
            throw .usage("\(path) is \(kind); refusing to replace it (write to a regular file path)")
        }
        return info.st_mode & 0o7777
    }

    /// Writes `bytes` to `path` atomically: a temporary file in the same directory,
    /// fsync, then a rename (replace) or a hard link (no-clobber), then fsync of the
    /// directory. A crash leaves either the old file or the new one.
    ///
    /// - Parameters:
    ///   - replace: when false and `path` exists, refuse with a usage error naming `--force`.
    ///   - mode: permission bits of the new file.
    ///   - modifiedAfter: when given, the new file's modification time is made at least one
    ///     second later than this (the replaced file's), even within the same second.
    /// - Throws: `CLIError.io` on any write failure (the temporary file is removed).
    static func writeAtomically(
        _ bytes: [UInt8], to path: String, replace: Bool, mode: mode_t = 0o644, modifiedAfter: timespec? = nil
    ) throws(CLIError) {
        let existingMode = try existingRegularFileMode(path)
        if !replace, existingMode != nil {
            throw .usage("\(path) already exists; refusing to overwrite it (use --force to replace it)")
        }
        // A replaced file keeps its permissions (a 0600 payload stays 0600).
        let mode = existingMode ?? mode
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let temporary =
            directory + "/." + url.lastPathComponent
            + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw .io("\(path): cannot create \(temporary): \(errnoText())") }
        if existingMode != nil { _ = fchmod(descriptor, mode) }  // keep the replaced file's exact bits
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        do {
            try handle.write(contentsOf: bytes)
            try handle.synchronize()
        } catch {
            close(descriptor)
            unlink(temporary)
            throw .io("\(path): write failed: \(error.localizedDescription)")
        }
        if let earlier = modifiedAfter {
            // Servers that derive validators from mtime and size (nginx's ETag, Last-Modified
            // in whole seconds) must never see the new file as the old one.
            var info = stat()
            if fstat(descriptor, &info) == 0, info.st_mtim.tv_sec <= earlier.tv_sec {
                let later = timespec(tv_sec: earlier.tv_sec + 1, tv_nsec: 0)
                _ = futimens(descriptor, [later, later])
            }
        }
        close(descriptor)
        if replace {
            guard rename(temporary, path) == 0 else {
                let reason = errnoText()
                unlink(temporary)
                throw .io("\(path): rename failed: \(reason)")
            }
        } else {
            // link(2) fails with EEXIST instead of replacing a file created meanwhile.
            let result = link(temporary, path)
            let linkErrno = errno
            unlink(temporary)
            guard result == 0 else {
                if linkErrno == EEXIST {
                    throw .usage(
                        "\(path) already exists; refusing to overwrite it (use --force to replace it)")
                }
                throw .io("\(path): cannot create: \(String(cString: strerror(linkErrno)))")
            }
        }
        let directoryDescriptor = open(
            directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}
