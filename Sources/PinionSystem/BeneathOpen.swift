// Opens a file below a directory in one openat2(2) call that follows no symbolic link, for `pinion serve`'s tree.

import CPinionShims

#if canImport(Glibc)
    import Glibc
#endif

/// The outcome of `openBeneath(_:components:flags:)`.
package enum BeneathOpen: Sendable, Equatable {
    /// The open descriptor; the caller closes it.
    case opened(Int32)
    /// The kernel refused the path: `errno` as openat(2) would give it (ENOENT, ENOTDIR,
    /// EACCES, EMFILE, ...), ELOOP for a symbolic link at any component, EXDEV for an escape
    /// from the directory.
    case failed(errno: Int32)
    /// openat2(2) is not available here (ENOSYS on a kernel before 5.6, EPERM from a seccomp
    /// filter, EINVAL or E2BIG for a `struct open_how` it does not know) or asked for a retry
    /// (EAGAIN): open the components one at a time with `openat(O_NOFOLLOW)` instead.
    case unsupported
}

/// Opens `components` (joined with `/`) below the open directory `directory` with openat(2)
/// `flags`, in one openat2(2) call with RESOLVE_NO_SYMLINKS and RESOLVE_BENEATH: a symbolic
/// link at any component, the last included, is refused, and so is any way out of
/// `directory`. This is what opening each component in turn with `O_NOFOLLOW` (and
/// `O_DIRECTORY` for all but the last) checks, in one system call instead of an `openat` and
/// a `close` per directory: for a conditional GET of `pinion serve`, 4 of its 11 system calls
/// (bench/NOTES.md).
///
/// - Parameters:
///   - directory: an open directory descriptor.
///   - components: path components, already checked by the caller (none empty, none `.` or
///     `..`, no `/` or NUL inside); at least one.
///   - flags: openat(2) flags (`O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC`, ...).
/// - Returns: see `BeneathOpen`.
package func openBeneath(_ directory: Int32, components: [String], flags: Int32) -> BeneathOpen {
    guard !components.isEmpty else { return .failed(errno: ENOENT) }
    let path = components.count == 1 ? components[0] : components.joined(separator: "/")
    let descriptor = pinion_openat2_beneath_no_symlinks(directory, path, flags)
    if descriptor >= 0 { return .opened(descriptor) }
    let code = errno
    switch code {
    case ENOSYS, EPERM, EINVAL, E2BIG, EAGAIN: return .unsupported
    default: return .failed(errno: code)
    }
}
