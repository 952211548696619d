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
    /// - Throws: `CLIError.io` when the file cannot be read; `.failure` when it is too large.
    static func read(_ path: String, limit: Int) throws(CLIError) -> [UInt8] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .io("\(path): no such file")
        }
        if isDirectory.boolValue { throw .io("\(path): is a directory") }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .io("\(path): cannot open for reading")
        }
        defer { try? handle.close() }
        let data: Data
        do { data = try handle.read(upToCount: limit + 1) ?? Data() } catch {
            throw .io("\(path): read failed: \(error.localizedDescription)")
        }
        if data.count > limit {
            throw .failure(
                FormatError(file: path, path: "", rule: .tooLarge(bytes: data.count, limit: limit))
                    .description)
        }
        return [UInt8](data)
    }

    /// Writes `bytes` to `path` atomically: a temporary file in the same directory,
    /// fsync, then a rename (replace) or a hard link (no-clobber), then fsync of the
    /// directory. A crash leaves either the old file or the new one.
    ///
    /// - Parameters:
    ///   - replace: when false and `path` exists, refuse with a usage error naming `--force`.
    ///   - mode: permission bits of the new file.
    /// - Throws: `CLIError.io` on any write failure (the temporary file is removed).
    static func writeAtomically(
        _ bytes: [UInt8], to path: String, replace: Bool, mode: mode_t = 0o644
    ) throws(CLIError) {
        if !replace, FileManager.default.fileExists(atPath: path) {
            throw .usage("\(path) already exists; refusing to overwrite it (use --force to replace it)")
        }
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let temporary =
            directory + "/." + url.lastPathComponent
            + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw .io("\(path): cannot create \(temporary): \(errnoText())") }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        do {
            try handle.write(contentsOf: bytes)
            try handle.synchronize()
        } catch {
            close(descriptor)
            unlink(temporary)
            throw .io("\(path): write failed: \(error.localizedDescription)")
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
