/* fault_inject's wrappers of the calls that write, sync, rename, create or remove folders,
 * remove names, and read (for the source hooks). See fault_inject.c for the variables. */
#undef _FORTIFY_SOURCE
#undef _FILE_OFFSET_BITS
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fault_wrap.h"

/* ---- write ------------------------------------------------------------------------------ */

SLOT(write);
EXPORT ssize_t write(int fd, const void* buf, size_t n) {
  GUARD_FD(FI_WRITE, fd);
  return REAL(write)(fd, buf, n);
}
SLOT(pwrite);
EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  GUARD_FD(FI_WRITE, fd);
  return REAL(pwrite)(fd, buf, n, off);
}
SLOT(pwrite64);
EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  GUARD_FD(FI_WRITE, fd);
  return REAL(pwrite64)(fd, buf, n, off);
}
SLOT(writev);
EXPORT ssize_t writev(int fd, const struct iovec* iov, int cnt) {
  GUARD_FD(FI_WRITE, fd);
  return REAL(writev)(fd, iov, cnt);
}
SLOT(pwritev);
EXPORT ssize_t pwritev(int fd, const struct iovec* iov, int cnt, off_t off) {
  GUARD_FD(FI_WRITE, fd);
  return REAL(pwritev)(fd, iov, cnt, off);
}
SLOT(pwritev64);
EXPORT ssize_t pwritev64(int fd, const struct iovec* iov, int cnt, off64_t off) {
  GUARD_FD(FI_WRITE, fd);
  return REAL(pwritev64)(fd, iov, cnt, off);
}
SLOT(pwritev2);
EXPORT ssize_t pwritev2(int fd, const struct iovec* iov, int cnt, off_t off, int flags) {
  GUARD_FD(FI_WRITE, fd);
  return REAL(pwritev2)(fd, iov, cnt, off, flags);
}
SLOT(copy_file_range);
EXPORT ssize_t copy_file_range(int in, off64_t* in_off, int out, off64_t* out_off, size_t n,
                               unsigned flags) {
  GUARD_FD(FI_WRITE, out);
  GUARD_READ(in);
  return REAL(copy_file_range)(in, in_off, out, out_off, n, flags);
}
SLOT(sendfile);
EXPORT ssize_t sendfile(int out, int in, off_t* off, size_t n) {
  GUARD_FD(FI_WRITE, out);
  GUARD_READ(in);
  return REAL(sendfile)(out, in, off, n);
}
SLOT(ftruncate);
EXPORT int ftruncate(int fd, off_t len) {
  GUARD_FD(FI_WRITE, fd);
  return REAL(ftruncate)(fd, len);
}
SLOT(ftruncate64);
EXPORT int ftruncate64(int fd, off64_t len) {
  GUARD_FD(FI_WRITE, fd);
  return REAL(ftruncate64)(fd, len);
}
SLOT(truncate);
EXPORT int truncate(const char* path, off_t len) {
  GUARD_PATH(FI_WRITE, AT_FDCWD, path);
  return REAL(truncate)(path, len);
}
SLOT(fallocate);
EXPORT int fallocate(int fd, int mode, off_t off, off_t len) {
  GUARD_FD(FI_WRITE, fd);
  return REAL(fallocate)(fd, mode, off, len);
}
SLOT(fallocate64);
EXPORT int fallocate64(int fd, int mode, off64_t off, off64_t len) {
  GUARD_FD(FI_WRITE, fd);
  return REAL(fallocate64)(fd, mode, off, len);
}
/* posix_fallocate returns the error instead of setting errno. */
SLOT(posix_fallocate);
EXPORT int posix_fallocate(int fd, off_t off, off_t len) {
  int e = fi_on() ? fd_fault(FI_WRITE, fd) : 0;
  return e ? e : REAL(posix_fallocate)(fd, off, len);
}
SLOT(posix_fallocate64);
EXPORT int posix_fallocate64(int fd, off64_t off, off64_t len) {
  int e = fi_on() ? fd_fault(FI_WRITE, fd) : 0;
  return e ? e : REAL(posix_fallocate64)(fd, off, len);
}

/* ---- sync ------------------------------------------------------------------------------- */

SLOT(fsync);
EXPORT int fsync(int fd) {
  GUARD_FD(FI_SYNC, fd);
  return REAL(fsync)(fd);
}
SLOT(fdatasync);
EXPORT int fdatasync(int fd) {
  GUARD_FD(FI_SYNC, fd);
  return REAL(fdatasync)(fd);
}
SLOT(syncfs);
EXPORT int syncfs(int fd) {
  GUARD_FD(FI_SYNC, fd);
  return REAL(syncfs)(fd);
}
SLOT(sync_file_range);
EXPORT int sync_file_range(int fd, off64_t off, off64_t n, unsigned flags) {
  GUARD_FD(FI_SYNC, fd);
  return REAL(sync_file_range)(fd, off, n, flags);
}

/* ---- rename and link -------------------------------------------------------------------- */

SLOT(rename);
EXPORT int rename(const char* from, const char* to) {
  GUARD(pair_fault(FI_RENAME, AT_FDCWD, from, AT_FDCWD, to));
  return REAL(rename)(from, to);
}
SLOT(renameat);
EXPORT int renameat(int fd1, const char* from, int fd2, const char* to) {
  GUARD(pair_fault(FI_RENAME, fd1, from, fd2, to));
  return REAL(renameat)(fd1, from, fd2, to);
}
SLOT(renameat2);
EXPORT int renameat2(int fd1, const char* from, int fd2, const char* to, unsigned flags) {
  GUARD(pair_fault(FI_RENAME, fd1, from, fd2, to));
  return REAL(renameat2)(fd1, from, fd2, to, flags);
}
SLOT(link);
EXPORT int link(const char* from, const char* to) {
  GUARD(pair_fault(FI_RENAME, AT_FDCWD, from, AT_FDCWD, to));
  return REAL(link)(from, to);
}
SLOT(linkat);
EXPORT int linkat(int fd1, const char* from, int fd2, const char* to, int flags) {
  GUARD(pair_fault(FI_RENAME, fd1, from, fd2, to));
  return REAL(linkat)(fd1, from, fd2, to, flags);
}

/* ---- mkdir and unlink ------------------------------------------------------------------- */

SLOT(mkdir);
EXPORT int mkdir(const char* path, mode_t mode) {
  GUARD_PATH(FI_MKDIR, AT_FDCWD, path);
  return REAL(mkdir)(path, mode);
}
SLOT(mkdirat);
EXPORT int mkdirat(int dirfd, const char* path, mode_t mode) {
  GUARD_PATH(FI_MKDIR, dirfd, path);
  return REAL(mkdirat)(dirfd, path, mode);
}
SLOT(unlink);
EXPORT int unlink(const char* path) {
  GUARD_PATH(FI_UNLINK, AT_FDCWD, path);
  return REAL(unlink)(path);
}
SLOT(unlinkat);
EXPORT int unlinkat(int dirfd, const char* path, int flags) {
  GUARD_PATH(FI_UNLINK, dirfd, path);
  return REAL(unlinkat)(dirfd, path, flags);
}
SLOT(rmdir);
EXPORT int rmdir(const char* path) {
  GUARD_PATH(FI_UNLINK, AT_FDCWD, path);
  return REAL(rmdir)(path);
}
SLOT(remove);
EXPORT int remove(const char* path) {
  GUARD_PATH(FI_UNLINK, AT_FDCWD, path);
  return REAL(remove)(path);
}

/* ---- reads (source hooks and unreadable files) ------------------------------------------ */

SLOT(read);
EXPORT ssize_t read(int fd, void* buf, size_t n) {
  GUARD_READ(fd);
  return REAL(read)(fd, buf, n);
}
SLOT(pread);
EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  GUARD_READ(fd);
  return REAL(pread)(fd, buf, n, off);
}
SLOT(pread64);
EXPORT ssize_t pread64(int fd, void* buf, size_t n, off64_t off) {
  GUARD_READ(fd);
  return REAL(pread64)(fd, buf, n, off);
}
SLOT(readv);
EXPORT ssize_t readv(int fd, const struct iovec* iov, int cnt) {
  GUARD_READ(fd);
  return REAL(readv)(fd, iov, cnt);
}
SLOT(preadv);
EXPORT ssize_t preadv(int fd, const struct iovec* iov, int cnt, off_t off) {
  GUARD_READ(fd);
  return REAL(preadv)(fd, iov, cnt, off);
}
SLOT(preadv64);
EXPORT ssize_t preadv64(int fd, const struct iovec* iov, int cnt, off64_t off) {
  GUARD_READ(fd);
  return REAL(preadv64)(fd, iov, cnt, off);
}
SLOT(preadv2);
EXPORT ssize_t preadv2(int fd, const struct iovec* iov, int cnt, off_t off, int flags) {
  GUARD_READ(fd);
  return REAL(preadv2)(fd, iov, cnt, off, flags);
}
