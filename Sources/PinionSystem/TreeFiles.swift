// Reads files below a directory without ever following a symbolic link (one openat2 call, or openat with O_NOFOLLOW at every step), for `pinion serve`'s published tree.

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
    /// Missing, not a regular file, a symbolic link on the way, or no permission.
    case notFound
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
        guard descriptor >= 0 else { throw TreeDirectoryError(detail: String(cString: strerror(errno))) }
        self.descriptor = descriptor
        self.opensInOneCall = opensInOneCall
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
        let flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
        let file: Int32
        switch opensInOneCall ? openBeneath(descriptor, components: components, flags: flags) : .unsupported {
        case .opened(let opened): file = opened
        case .failed(let code): throw Self.openFailure(code)
        case .unsupported: file = try openByWalking(components, flags: flags)
        }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { throw .notFound }
        guard status.st_size <= Int64(maxBytes) else { throw .tooLarge }
        let identity = FileIdentity(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
            modifiedSeconds: Int64(status.st_mtim.tv_sec), modifiedNanoseconds: Int64(status.st_mtim.tv_nsec),
            changedSeconds: Int64(status.st_ctim.tv_sec), changedNanoseconds: Int64(status.st_ctim.tv_nsec))
        if unchanged(identity) { return (identity, nil) }
        return (identity, try Self.readAll(file, expected: Int(status.st_size)))
    }

    /// Opens `components` one at a time with `openat(O_NOFOLLOW)`, directories with
    /// `O_DIRECTORY`: where openat2(2) is not available (`BeneathOpen.unsupported`).
    private func openByWalking(_ components: [String], flags: Int32) throws(TreeFileError) -> Int32 {
        var directory = descriptor
        defer { if directory != descriptor { close(directory) } }
        for name in components.dropLast() {
            let next = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else { throw Self.openFailure(errno) }
            if directory != descriptor { close(directory) }
            directory = next
        }
        guard let name = components.last else { throw .notFound }
        let file = openat(directory, name, flags)
        guard file >= 0 else { throw Self.openFailure(errno) }
        return file
    }

    /// Only "no such file" answers (missing, not a directory, a symbolic link refused by
    /// O_NOFOLLOW or RESOLVE_NO_SYMLINKS, a way out refused by RESOLVE_BENEATH, no
    /// permission) are `notFound`; running out of descriptors or memory is not.
    private static func openFailure(_ code: Int32) -> TreeFileError {
        switch code {
        case ENOENT, ENOTDIR, ELOOP, EXDEV, EACCES, ENAMETOOLONG, ENXIO, EISDIR: return .notFound
        case EMFILE, ENFILE, ENOMEM, ENOBUFS, EAGAIN, EINTR: return .unavailable(errno: code)
        default: return .readFailed(errno: code)
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
    /// The system's reason (strerror text).
    package let detail: String
}
