// openat2(2) through syscall(2), for PinionSystem's tree file opener (see the header).
#define _GNU_SOURCE
#include "pinion_shims_files.h"

#include <errno.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int pinion_openat2_beneath_no_symlinks(int directory, const char *path, int flags) {
#ifdef SYS_openat2
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)(unsigned int)flags;
    how.mode = 0;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH;
    return (int)syscall(SYS_openat2, directory, path, &how, sizeof how);
#else
    (void)directory;
    (void)path;
    (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}
