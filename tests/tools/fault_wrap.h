/* Shared by the fault_inject wrapper files: how a wrapper finds the real libc function and
 * decides whether a call fails (see fault_inject.c). */
#ifndef STITCHFS_TESTS_TOOLS_FAULT_WRAP_H_
#define STITCHFS_TESTS_TOOLS_FAULT_WRAP_H_

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>

#include "fault_core.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#define EXPORT __attribute__((visibility("default")))
#define SLOT(fn) static void* slot_##fn
#define REAL(fn) ((__typeof__(&fn))fi_resolve(&slot_##fn, #fn))
#define FAIL(e) (errno = (e), -1)
/* Fails the call when it is the one chosen. */
#define GUARD(check)           \
  do {                         \
    if (fi_on()) {             \
      int e_ = (check);        \
      if (e_) return FAIL(e_); \
    }                          \
  } while (0)
#define GUARD_FD(kind, fd) GUARD(fd_fault(kind, fd))
#define GUARD_PATH(kind, dirfd, path) GUARD(path_fault(kind, dirfd, path))
#define GUARD_READ(fd) GUARD(fi_before_read(fd))
/* The mode argument of a variadic open, present only when the flags create a file. */
#define MODE_ARG(flags, mode)                                  \
  mode_t mode = 0;                                             \
  if (((flags)&O_CREAT) || ((flags)&O_TMPFILE) == O_TMPFILE) { \
    va_list ap_;                                               \
    va_start(ap_, flags);                                      \
    mode = (mode_t)va_arg(ap_, int);                           \
    va_end(ap_);                                               \
  }

int __open_2(const char* path, int flags);
int __open64_2(const char* path, int flags);
int __openat_2(int dirfd, const char* path, int flags);
int __openat64_2(int dirfd, const char* path, int flags);

static inline int fd_fault(enum fi_kind kind, int fd) {
  return fi_fd_in_dest(fd) ? fi_fault(kind) : 0;
}

static inline int path_fault(enum fi_kind kind, int dirfd, const char* path) {
  char abs[FI_PATH];
  fi_abs_path(dirfd, path, abs);
  return fi_path_in_dest(abs) ? fi_fault(kind) : 0;
}

static inline int pair_fault(enum fi_kind kind, int d1, const char* p1, int d2, const char* p2) {
  char a[FI_PATH], b[FI_PATH];
  fi_abs_path(d1, p1, a);
  fi_abs_path(d2, p2, b);
  return fi_path_in_dest(a) || fi_path_in_dest(b) ? fi_fault(kind) : 0;
}

#endif /* STITCHFS_TESTS_TOOLS_FAULT_WRAP_H_ */
