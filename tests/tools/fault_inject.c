/* fault_inject: an LD_PRELOAD library that makes one chosen file-system call of a program fail
 * (or kills the program there), to prove that a backup, prune or flatten interrupted at any
 * call leaves either a complete backup or nothing that opens as one. It also runs commands at
 * precise moments of the reads of a source tree, to make races deterministic.
 *
 * With none of the variables below set, every call goes straight to libc.
 *
 * STITCH_FAULT_DEST=PREFIX[:PREFIX...]  absolute paths that are "the destination". A call
 *     touches it when a path argument (made absolute against its dirfd, read from
 *     /proc/self/fd/N, or the cwd, then normalized lexically: symlinks are not resolved) is at
 *     or under a prefix, or when its descriptor was opened on such a path.
 * STITCH_FAULT_KIND=open|write|sync|rename|mkdir|unlink|close|any  the calls counted:
 *     open    open, open64, openat, openat64, creat, creat64, __open_2, __openat_2 (and their
 *             64 forms), and syscall(SYS_openat2, ...)
 *     write   write, pwrite, pwrite64, writev, pwritev, pwritev64, pwritev2, copy_file_range
 *             and sendfile (by their output fd), ftruncate, truncate, fallocate,
 *             posix_fallocate (and their 64 forms)
 *     sync    fsync, fdatasync, syncfs, sync_file_range
 *     rename  rename, renameat, renameat2, syscall(SYS_renameat2, ...), link, linkat (either
 *             name on the destination)
 *     mkdir   mkdir, mkdirat
 *     unlink  unlink, unlinkat, rmdir, remove
 *     close   close and closedir of a destination descriptor (the descriptor is released
 *             even when the close fails, as Linux does)
 *     any     all of the above, counted together
 * STITCH_FAULT_N=N  the call that fails: the Nth destination call of that kind (1-based,
 *     counted over all threads).
 * STITCH_FAULT_ERRNO=ENOSPC|EIO|EDQUOT|EACCES|EROFS|EPERM|KILL  what the call fails with
 *     (default EIO); KILL raises SIGKILL at that call instead (the count file is written
 *     first).
 * STITCH_FAULT_STICKY=1  every call of that kind from the Nth on fails, not only the Nth.
 * STITCH_FAULT_COUNT_FILE=PATH  written at exit: one "KIND COUNT" line per kind (and "any")
 *     with the number of destination calls seen, "injected K" (faults injected), "hooks H"
 *     (hook commands run) and "reads_failed R".
 * STITCH_FAULT_HOOK=KIND:SUFFIX:COMMAND  KIND is open or read. Right before the first open of
 *     a path ending in SUFFIX (for read: before the Nth read, counted over all descriptors
 *     opened on such paths, of read, pread, pread64, readv, preadv, preadv2, and the input of
 *     copy_file_range and sendfile), COMMAND runs with /bin/sh -c, without LD_PRELOAD and the
 *     STITCH_FAULT_* variables, and the call waits for it, then proceeds.
 * STITCH_FAULT_HOOK_AT=N  which read runs the read hook (default 1).
 * STITCH_FAULT_HOOK_REPEAT=1  run the hook again for every later open of such a path (open
 *     hook), or at the Nth read of every descriptor opened on such a path (read hook): a file
 *     that keeps changing.
 * STITCH_FAULT_TIMEOUT=S  the program dies of SIGALRM after S seconds (a hang; exit status 142
 *     in a shell), without a timeout(1) process around it.
 * STITCH_FAULT_READ_ERRNO=SUFFIX:ERRNO  every read of a descriptor opened on a path ending in
 *     SUFFIX fails with ERRNO (EIO, EACCES, ...): an unreadable file, even for root.
 *
 * Not seen: calls libc makes internally (fopen/fwrite streams, opendir's own open), raw
 * syscalls other than openat2 and renameat2, io_uring, and mmap writes. */
#undef _FORTIFY_SOURCE
#undef _FILE_OFFSET_BITS
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fault_wrap.h"

/* Before an open: the source hook, then the destination fault. 0 or an errno. */
static int before_open(int dirfd, const char* path) {
  char abs[FI_PATH];
  fi_abs_path(dirfd, path, abs);
  fi_before_open(abs);
  return fi_path_in_dest(abs) ? fi_fault(FI_OPEN) : 0;
}

static int after_open(int fd) {
  if (fd >= 0) fi_fd_opened(fd);
  return fd;
}

/* Opens: `call` performs the real open once the hook and the fault check are done. */
#define OPEN_BODY(dirfd, path, call) \
  if (!fi_on()) return call;         \
  int e_ = before_open(dirfd, path); \
  if (e_) return FAIL(e_);           \
  return after_open(call)

SLOT(open);
EXPORT int open(const char* path, int flags, ...) {
  MODE_ARG(flags, mode);
  OPEN_BODY(AT_FDCWD, path, REAL(open)(path, flags, mode));
}
SLOT(open64);
EXPORT int open64(const char* path, int flags, ...) {
  MODE_ARG(flags, mode);
  OPEN_BODY(AT_FDCWD, path, REAL(open64)(path, flags, mode));
}
SLOT(__open_2);
EXPORT int __open_2(const char* path, int flags) {
  OPEN_BODY(AT_FDCWD, path, REAL(__open_2)(path, flags));
}
SLOT(__open64_2);
EXPORT int __open64_2(const char* path, int flags) {
  OPEN_BODY(AT_FDCWD, path, REAL(__open64_2)(path, flags));
}
SLOT(openat);
EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  MODE_ARG(flags, mode);
  OPEN_BODY(dirfd, path, REAL(openat)(dirfd, path, flags, mode));
}
SLOT(openat64);
EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  MODE_ARG(flags, mode);
  OPEN_BODY(dirfd, path, REAL(openat64)(dirfd, path, flags, mode));
}
SLOT(__openat_2);
EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  OPEN_BODY(dirfd, path, REAL(__openat_2)(dirfd, path, flags));
}
SLOT(__openat64_2);
EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  OPEN_BODY(dirfd, path, REAL(__openat64_2)(dirfd, path, flags));
}
SLOT(creat);
EXPORT int creat(const char* path, mode_t mode) {
  OPEN_BODY(AT_FDCWD, path, REAL(creat)(path, mode));
}
SLOT(creat64);
EXPORT int creat64(const char* path, mode_t mode) {
  OPEN_BODY(AT_FDCWD, path, REAL(creat64)(path, mode));
}

SLOT(opendir);
EXPORT DIR* opendir(const char* path) {
  DIR* d = REAL(opendir)(path);
  if (d != NULL && fi_on()) fi_fd_opened(dirfd(d));
  return d;
}

/* syscall(): openat2 and renameat2 are checked; everything else is passed on untouched. */
SLOT(syscall);
EXPORT long syscall(long nr, ...) {
  va_list ap;
  va_start(ap, nr);
  long a[6];
  for (int i = 0; i < 6; ++i) a[i] = va_arg(ap, long);
  va_end(ap);
  if (fi_on() && nr == SYS_openat2) {
    int e = before_open((int)a[0], (const char*)a[1]);
    if (e) return FAIL(e);
    long fd = REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (fd >= 0) fi_fd_opened((int)fd);
    return fd;
  }
  if (nr == SYS_renameat2) {
    GUARD(pair_fault(FI_RENAME, (int)a[0], (const char*)a[1], (int)a[2], (const char*)a[3]));
  }
  return REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* Descriptor copies carry their origin; closes forget it (before the number can be reused). */
SLOT(dup);
EXPORT int dup(int fd) {
  int r = REAL(dup)(fd);
  if (r >= 0 && fi_on()) fi_fd_copied(fd, r);
  return r;
}
SLOT(dup2);
EXPORT int dup2(int fd, int to) {
  int r = REAL(dup2)(fd, to);
  if (r >= 0 && fi_on()) fi_fd_copied(fd, r);
  return r;
}
SLOT(dup3);
EXPORT int dup3(int fd, int to, int flags) {
  int r = REAL(dup3)(fd, to, flags);
  if (r >= 0 && fi_on()) fi_fd_copied(fd, r);
  return r;
}

static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd, void* arg) {
  int r = real(fd, cmd, arg);
  if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && fi_on()) fi_fd_copied(fd, r);
  return r;
}
SLOT(fcntl);
EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fcntl_common(REAL(fcntl), fd, cmd, arg);
}
int fcntl64(int fd, int cmd, ...);
SLOT(fcntl64);
EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fcntl_common(REAL(fcntl64), fd, cmd, arg);
}

SLOT(close);
EXPORT int close(int fd) {
  if (!fi_on()) return REAL(close)(fd);
  int e = fd_fault(FI_CLOSE, fd);
  fi_fd_closed(fd);
  int r = REAL(close)(fd);
  return e ? FAIL(e) : r;
}
SLOT(closedir);
EXPORT int closedir(DIR* d) {
  if (!fi_on()) return REAL(closedir)(d);
  int fd = dirfd(d);
  int e = fd_fault(FI_CLOSE, fd);
  fi_fd_closed(fd);
  int r = REAL(closedir)(d);
  return e ? FAIL(e) : r;
}
SLOT(fclose);
EXPORT int fclose(FILE* f) {
  if (fi_on()) fi_fd_closed(fileno(f));
  return REAL(fclose)(f);
}
SLOT(close_range);
EXPORT int close_range(unsigned first, unsigned last, int flags) {
  if (fi_on() && !(flags & CLOSE_RANGE_CLOEXEC)) {
    for (unsigned fd = first; fd <= last && fd < FI_FD_MAX; ++fd) fi_fd_closed((int)fd);
  }
  return REAL(close_range)(first, last, flags);
}
