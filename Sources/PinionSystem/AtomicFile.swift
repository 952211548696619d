// The one atomic file writer of the project: the SDK's state directory (DirectoryStorage),
// the publisher's tree files and every file a CLI command writes (PublishFiles).
//
// A temporary file in the target's directory is written in full, fsynced and closed (close(2)
// can report a deferred write error on network file systems), then renamed over the target,
// or linked to it for a no-clobber write, and the directory is fsynced. Every step works
// relative to one descriptor of the directory and never follows a symbolic link at the last
// component. A crash leaves the old file or the new one, never a mix, and every failure
// before the rename removes the temporary file.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes one file atomically and durably inside an open directory.
enum AtomicFile {
    /// The step that failed, with `errno`.
    struct Failure: Error {
        /// A step of the write, in order.
        enum Step {
            /// Creating the temporary file (or setting its mode).
            case create
            /// write(2).
            case write
            /// fsync(2) of the temporary file.
            case sync
            /// close(2) of the temporary file.
            case close
            /// rename(2) over the target.
            case rename
            /// link(2) to the target (a no-clobber write); `EEXIST` when the target exists.
            case link
            /// fsync(2) of the directory. The new file is already in place: it is there
            /// when read back, but a power loss may still bring back the old one.
            case syncDirectory
        }

        /// The step that failed.
        var step: Step
        /// The POSIX error number.
        var code: Int32
        /// The temporary file's name, for messages about `create`.
        var temporary: String
    }

    /// How the new file's permission bits are set.
    enum Mode {
        /// Exactly these bits, whatever the umask (fchmod after creation).
        case exactly(mode_t)
        /// These bits narrowed by the process's umask, as open(2) does.
        case lessUmask(mode_t)
    }

    /// Writes `bytes` as `name` in the directory open as `directory`.
    ///
    /// - Parameters:
    ///   - bytes: the whole new content.
    ///   - directory: a descriptor of the directory (`O_RDONLY | O_DIRECTORY`); it stays open.
    ///   - name: a single file name (no `/`).
    ///   - mode: the permission bits of the new file.
    ///   - replace: rename over an existing file (true), or fail with `.link`/`EEXIST` when
    ///     the target exists, even if it was created after the caller looked (false).
    ///   - modifiedAfter: when given, the new file's modification time is made later than
    ///     this (servers derive ETag and Last-Modified from mtime and size).
    /// - Throws: `Failure`; before `.syncDirectory` the target is unchanged and the
    ///   temporary file removed.
    static func write(
        _ bytes: [UInt8], directory: Int32, name: String, mode: Mode, replace: Bool, modifiedAfter: timespec? = nil
    ) throws(Failure) {
        let temporary = ".\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let bits: mode_t
        switch mode {
        case .exactly(let exact): bits = exact
        case .lessUmask(let requested): bits = requested
        }
        let descriptor = openat(directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, bits)
        guard descriptor >= 0 else { throw Failure(step: .create, code: errno, temporary: temporary) }
        func fail(_ step: Failure.Step, _ code: Int32, closing: Bool) -> Failure {
            if closing { close(descriptor) }
            unlinkat(directory, temporary, 0)
            return Failure(step: step, code: code, temporary: temporary)
        }
        if case .exactly = mode, fchmod(descriptor, bits) != 0 { throw fail(.create, errno, closing: true) }
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw fail(.write, errno, closing: true)
            }
            offset += count
        }
        if let modifiedAfter {
            var info = stat()
            if fstat(descriptor, &info) == 0, info.st_mtim.tv_sec <= modifiedAfter.tv_sec {
                let later = timespec(tv_sec: modifiedAfter.tv_sec + 1, tv_nsec: 0)
                _ = futimens(descriptor, [later, later])
            }
        }
        guard fsync(descriptor) == 0 else { throw fail(.sync, errno, closing: true) }
        guard close(descriptor) == 0 else { throw fail(.close, errno, closing: false) }
        if replace {
            guard renameat(directory, temporary, directory, name) == 0 else {
                throw fail(.rename, errno, closing: false)
            }
        } else {
            // link(2) fails with EEXIST instead of replacing a file created meanwhile.
            let result = linkat(directory, temporary, directory, name, 0)
            let code = errno
            unlinkat(directory, temporary, 0)
            guard result == 0 else { throw Failure(step: .link, code: code, temporary: temporary) }
        }
        guard fsync(directory) == 0 else { throw Failure(step: .syncDirectory, code: errno, temporary: temporary) }
    }
}

/// write(2), named apart from `AtomicFile.write`, which would shadow it inside the enum.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
