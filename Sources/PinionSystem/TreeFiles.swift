// The one reader of a published tree: files below a directory opened without ever following a
// symbolic link (one openat2 call, or openat with O_NOFOLLOW at every step). `pinion serve`
// answers from it (PublishedFiles), and the auditor and `pinion status` read a local tree
// through it (DirectoryTreeSource).

#if canImport(Glibc)
    import Glibc
#endif

/// What identifies one version of a file: device, inode, size, modification and change
/// times. A file replaced by an atomic rename, or rewritten, gets another identity.
package struct FileIdentity: Sendable, Equatable {
    package let device: UInt64
    package let inode: UInt64
    /// Bytes.
    package let size: Int64
    package let modifiedSeconds: Int64
    package let modifiedNanoseconds: Int64
    package let changedSeconds: Int64
    package let changedNanoseconds: Int64
}

/// Why a path gave no file.
package enum TreeFileError: Error, Sendable, Equatable {
    /// No such file or directory (ENOENT).
    case notFound
    /// Something other than a plain file or directory on the way: `path` (the components up
    /// to the offending one, joined with `/`) is `kind`, e.g. "a symbolic link", "a FIFO",
    /// "a regular file where a directory belongs".
    case refused(path: String, kind: String)
    /// The system refused to open it (EACCES, ENAMETOOLONG, ENXIO, EISDIR; errno).
    case unreadable(errno: Int32)
    /// Larger than the caller's limit.
    case tooLarge
    /// An I/O error while opening or reading (errno).
    case readFailed(errno: Int32)
    /// The system is out of a resource (descriptors, memory; errno).
    case unavailable(errno: Int32)
}

/// A directory opened once (following a symbolic link there, once, at start); files below
/// it are opened with one openat2(2) call refusing every symbolic link (`openBeneath`), or
/// where the kernel lacks it with `openat(O_NOFOLLOW)` component by component, so no link
/// planted in the tree is ever followed; and with O_NONBLOCK, so a FIFO there never stalls
/// the caller.
package final class TreeDirectory: Sendable {
    private let descriptor: Int32
    /// False: always walk the components with `openat(O_NOFOLLOW)`, as on a kernel without
    /// openat2(2) (for the tests of that path).
    private let opensInOneCall: Bool

    /// Opens `path` as a directory.
    ///
    /// - Parameters:
    ///   - path: the directory.
    ///   - opensInOneCall: true (the default) opens a file with one openat2(2) call
    ///     (`openBeneath`) where the kernel offers it; false always walks the components.
    /// - Throws: the system's reason (strerror text) when it is not a readable directory.
    package init(path: String, opensInOneCall: Bool = true) throws(TreeDirectoryError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw TreeDirectoryError(code: code, detail: String(cString: strerror(code)))
        }
        self.descriptor = descriptor
        self.opensInOneCall = opensInOneCall
    }

    private init(descriptor: Int32, opensInOneCall: Bool) {
        self.descriptor = descriptor
        self.opensInOneCall = opensInOneCall
    }

    /// The directory at `components` below this one, opened the same way as a file (no
    /// symbolic link at any component).
    ///
    /// - Parameter components: path components (checked by the caller); at least one.
    /// - Throws: `TreeFileError` (`.refused` when a component is not a directory).
    package func subdirectory(_ components: [String]) throws(TreeFileError) -> TreeDirectory {
        let opened = try openBelow(
            components, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, finalIsDirectory: true)
        return TreeDirectory(descriptor: opened, opensInOneCall: opensInOneCall)
    }

    /// The names in this directory, without `.` and `..`, in the order the system lists them.
    ///
    /// - Throws: `.readFailed` with errno when it cannot be listed.
    package func names() throws(TreeFileError) -> [String] {
        // A second descriptor for the listing: closedir closes the one it is given.
        let copy = dup(descriptor)
        guard copy >= 0, let directory = fdopendir(copy) else {
            let code = errno
            if copy >= 0 { close(copy) }
            throw .readFailed(errno: code)
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
        return names
    }

    deinit { close(descriptor) }

    /// The identity and, unless `unchanged` says the caller already holds this version, the
    /// bytes of the regular file at `components` below the directory.
    ///
    /// - Parameters:
    ///   - components: path components (checked by the caller: no `..`, no empty ones).
    ///   - maxBytes: the largest file accepted.
    ///   - unchanged: true when the caller has the file of this identity already; then the
    ///     file is not read and `body` is nil.
    /// - Throws: `TreeFileError`.
    package func read(
        _ components: [String], maxBytes: Int, unchanged: (FileIdentity) -> Bool
    ) throws(TreeFileError) -> (identity: FileIdentity, body: [UInt8]?) {
        // O_NONBLOCK: a FIFO planted in the tree must not stall a worker; it is then refused
        // as not a regular file.
        let file = try openBelow(
            components, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, finalIsDirectory: false)
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0 else { throw .readFailed(errno: errno) }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw .refused(path: components.joined(separator: "/"), kind: Self.kind(status.st_mode))
        }
        guard status.st_size <= Int64(maxBytes) else { throw .tooLarge }
        let identity = FileIdentity(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
            modifiedSeconds: Int64(status.st_mtim.tv_sec), modifiedNanoseconds: Int64(status.st_mtim.tv_nsec),
            changedSeconds: Int64(status.st_ctim.tv_sec), changedNanoseconds: Int64(status.st_ctim.tv_nsec))
        if unchanged(identity) { return (identity, nil) }
        return (identity, try Self.readAll(file, expected: Int(status.st_size)))
    }

    /// Opens `components` with `flags`, in one openat2(2) call where the kernel offers it.
    private func openBelow(_ components: [String], flags: Int32, finalIsDirectory: Bool) throws(TreeFileError) -> Int32
    {
        switch opensInOneCall ? openBeneath(descriptor, components: components, flags: flags) : .unsupported {
        case .opened(let opened): return opened
        case .failed(let code): throw openFailure(code, components, finalIsDirectory: finalIsDirectory)
        case .unsupported: return try openByWalking(components, flags: flags, finalIsDirectory: finalIsDirectory)
        }
    }

    /// Opens `components` one at a time with `openat(O_NOFOLLOW)`, directories with
    /// `O_DIRECTORY`: where openat2(2) is not available (`BeneathOpen.unsupported`).
    private func openByWalking(_ components: [String], flags: Int32, finalIsDirectory: Bool) throws(TreeFileError)
        -> Int32
    {
        var directory = descriptor
        defer { if directory != descriptor { close(directory) } }
        for name in components.dropLast() {
            let next = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else { throw openFailure(errno, components, finalIsDirectory: finalIsDirectory) }
            if directory != descriptor { close(directory) }
            directory = next
        }
        guard let name = components.last else { throw .notFound }
        let file = openat(directory, name, flags)
        guard file >= 0 else { throw openFailure(errno, components, finalIsDirectory: finalIsDirectory) }
        return file
    }

    /// What an open's errno means. A symbolic link (refused by O_NOFOLLOW or
    /// RESOLVE_NO_SYMLINKS), a file where a directory belongs, or a way out (RESOLVE_BENEATH)
    /// is `.refused`, naming the component found by looking at each in turn without following
    /// it; running out of descriptors or memory is `.unavailable`.
    private func openFailure(_ code: Int32, _ components: [String], finalIsDirectory: Bool) -> TreeFileError {
        switch code {
        case ENOENT: return .notFound
        case ENOTDIR, ELOOP, EXDEV:
            return diagnose(components, finalIsDirectory: finalIsDirectory) ?? .notFound
        case EACCES, ENAMETOOLONG, ENXIO, EISDIR: return .unreadable(errno: code)
        case EMFILE, ENFILE, ENOMEM, ENOBUFS, EAGAIN, EINTR: return .unavailable(errno: code)
        default: return .readFailed(errno: code)
        }
    }

    /// The first component that is a symbolic link, or not a directory where one belongs,
    /// looked at with fstatat(AT_SYMLINK_NOFOLLOW) from this directory; nil when none is
    /// (the tree changed meanwhile). Used for messages only: the open has already refused.
    private func diagnose(_ components: [String], finalIsDirectory: Bool) -> TreeFileError? {
        var prefix: [String] = []
        for (index, component) in components.enumerated() {
            prefix.append(component)
            var info = stat()
            guard fstatat(descriptor, prefix.joined(separator: "/"), &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                return nil
            }
            let mustBeDirectory = index < components.count - 1 || finalIsDirectory
            let type = info.st_mode & S_IFMT
            if type == S_IFLNK || (mustBeDirectory && type != S_IFDIR) {
                let kind = Self.kind(info.st_mode)
                return .refused(
                    path: prefix.joined(separator: "/"),
                    kind: mustBeDirectory ? kind + " where a directory belongs" : kind)
            }
        }
        return nil
    }

    /// What a file type is, in words.
    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFLNK: return "a symbolic link"
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFSOCK: return "a socket"
        case S_IFREG: return "a regular file"
        default: return "not a regular file"
        }
    }

    private static func readAll(_ descriptor: Int32, expected: Int) throws(TreeFileError) -> [UInt8] {
        var body = [UInt8](repeating: 0, count: expected)
        var filled = 0
        while filled < expected {
            let count = body.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.read(descriptor, base + filled, expected - filled)
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

/// Why a tree's top directory could not be opened.
package struct TreeDirectoryError: Error, Sendable, Equatable {
    /// The POSIX error number (`ENOENT`, `ENOTDIR`, ...).
    package let code: Int32
    /// The system's reason (strerror text).
    package let detail: String
}
