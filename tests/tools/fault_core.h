/* The bookkeeping behind the fault_inject LD_PRELOAD library (see fault_inject.c for what it
 * does and the variables that drive it): configuration, the table of open descriptors, path
 * resolution, the fault decision, source hooks and the count file. */
#ifndef STITCHFS_TESTS_TOOLS_FAULT_CORE_H_
#define STITCHFS_TESTS_TOOLS_FAULT_CORE_H_

#include <stddef.h>
#include <sys/types.h>

/* Kinds of destination calls, counted separately. */
enum fi_kind { FI_OPEN, FI_WRITE, FI_SYNC, FI_RENAME, FI_MKDIR, FI_UNLINK, FI_CLOSE, FI_NKINDS };

/* Descriptors below this are remembered in a table; others are looked up on every call. */
#define FI_FD_MAX 65536

/* Room for one absolute path (a joined dirfd path and a relative name). */
#define FI_PATH 8192

/* libc's write, bypassing this library's own. */
ssize_t fi_real_write(int fd, const void* buf, size_t n);

/* Reads the environment once; safe to call from any thread, at any time. */
void fi_init(void);

/* Nonzero when some variable asks for tracking (destination, hook or read errors). */
int fi_on(void);

/* The next definition of `name` after this library (the real libc function). */
void* fi_resolve(void** slot, const char* name);

/* Writes the absolute, lexically normalized form of `path` (relative to `dirfd`, or the cwd
 * for AT_FDCWD) into `out`; an empty string when it cannot. */
void fi_abs_path(int dirfd, const char* path, char* out);

/* Whether an absolute path is at or under a destination prefix. */
int fi_path_in_dest(const char* abs);

/* Whether a descriptor was opened on the destination. */
int fi_fd_in_dest(int fd);

/* Counts one destination call of `kind`; returns 0 to perform it or the errno to fail it with.
 * Raises SIGKILL instead when the configured errno is KILL. */
int fi_fault(enum fi_kind kind);

/* Descriptor table upkeep: learn a new descriptor's path, copy one, forget one. */
void fi_fd_opened(int fd);
void fi_fd_copied(int from, int to);
void fi_fd_closed(int fd);

/* Source hooks. Called right before an open of `abs`: runs the open hook when it is due. */
void fi_before_open(const char* abs);

/* Called right before a read from `fd`: runs the read hook when it is due; returns the errno
 * the read must fail with (STITCH_FAULT_READ_ERRNO), or 0. */
int fi_before_read(int fd);

#endif /* STITCHFS_TESTS_TOOLS_FAULT_CORE_H_ */
