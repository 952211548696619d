// Shims for file system calls that Swift's Glibc module cannot reach (no glibc wrapper).
#ifndef PINION_SHIMS_FILES_H
#define PINION_SHIMS_FILES_H

/// openat2(2) (Linux 5.6+) with `how.flags = flags`, `how.mode = 0` and
/// `how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH`: opens `path`, relative to the
/// directory `directory`, in one call that refuses a symbolic link at any component (ELOOP)
/// and any escape from `directory` (EXDEV). glibc 2.36 has no wrapper, so this goes through
/// syscall(2). Returns the descriptor, or -1 with errno set (ENOSYS on a kernel without
/// openat2; EPERM where a seccomp filter refuses it).
int pinion_openat2_beneath_no_symlinks(int directory, const char *path, int flags);
#endif
