/* Bookkeeping of the fault_inject LD_PRELOAD library: a fixed-size table of descriptors opened
 * on the destination or on hooked source files, path resolution against /proc/self/fd, the
 * atomic call counters that decide which call fails, the source hooks and the count file
 * written at exit. No allocation; everything shared between threads is atomic. */
#define _GNU_SOURCE
#include "fault_core.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fault_config.h"

extern char** environ;

#define FD_MAX FI_FD_MAX
#define FD_DEST 1  /* Table bits: opened on the destination, */
#define FD_HOOK 2  /* on a path the read hook watches, */
#define FD_RDERR 4 /* on a path whose reads fail. */

static atomic_long counts[FI_NKINDS + 1];
static atomic_long injected;
static atomic_long hooks_run;
static atomic_long reads_failed;
static atomic_long hook_reads;
static atomic_int hook_done;
static atomic_uchar fd_flags[FD_MAX];
static atomic_long fd_reads[FD_MAX];
static pthread_once_t once = PTHREAD_ONCE_INIT;

void* fi_resolve(void** slot, const char* name) {
  void* p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (p == NULL) {
    p = dlsym(RTLD_NEXT, name);
    __atomic_store_n(slot, p, __ATOMIC_RELEASE);
  }
  return p;
}

static int real_open(const char* path, int flags, mode_t mode) {
  static void* slot;
  return ((int (*)(const char*, int, ...))fi_resolve(&slot, "open"))(path, flags, mode);
}

ssize_t fi_real_write(int fd, const void* buf, size_t n) {
  static void* slot;
  return ((ssize_t(*)(int, const void*, size_t))fi_resolve(&slot, "write"))(fd, buf, n);
}

static int real_close(int fd) {
  static void* slot;
  return ((int (*)(int))fi_resolve(&slot, "close"))(fd);
}

static void init_once(void) { fi_read_config(); }

void fi_init(void) { pthread_once(&once, init_once); }

int fi_on(void) {
  fi_init();
  return fi_cfg.on;
}

/* Reads the path behind a descriptor into `out` (FI_PATH bytes); 0 on success. */
static int fd_path(int fd, char* out) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, out, FI_PATH - 1);
  if (n <= 0) return -1;
  out[n] = '\0';
  return out[0] == '/' ? 0 : -1;
}

void fi_abs_path(int dirfd, const char* path, char* out) {
  int saved = errno;
  out[0] = '\0';
  if (path != NULL && path[0] == '/') {
    if (strlen(path) >= FI_PATH) goto done;
    strcpy(out, path);
  } else {
    if (dirfd == AT_FDCWD ? getcwd(out, FI_PATH) == NULL : fd_path(dirfd, out) != 0) {
      out[0] = '\0';
      goto done;
    }
    size_t have = strlen(out), add = path ? strlen(path) : 0;
    if (have + add + 2 > FI_PATH) {
      out[0] = '\0';
      goto done;
    }
    if (add > 0) {
      out[have] = '/';
      memcpy(out + have + 1, path, add + 1);
    }
  }
  fi_normalize(out);
done:
  errno = saved;
}

int fi_path_in_dest(const char* abs) {
  if (abs[0] != '/') return 0;
  for (int i = 0; i < fi_cfg.nprefix; ++i) {
    size_t len = fi_cfg.prefix_len[i];
    if (strncmp(abs, fi_cfg.prefixes[i], len) == 0 && (abs[len] == '\0' || abs[len] == '/'))
      return 1;
  }
  return 0;
}

static int ends_with(const char* s, const char* suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return b > 0 && a >= b && memcmp(s + a - b, suffix, b) == 0;
}

/* The table bits a descriptor deserves, from its current path. */
static unsigned char classify(int fd) {
  char path[FI_PATH];
  if (fd_path(fd, path) != 0) return 0;
  unsigned char f = 0;
  if (fi_path_in_dest(path)) f |= FD_DEST;
  if (fi_cfg.hook == HOOK_READ && ends_with(path, fi_cfg.hook_suffix)) f |= FD_HOOK;
  if (fi_cfg.rderr && ends_with(path, fi_cfg.rderr_suffix)) f |= FD_RDERR;
  return f;
}

static unsigned char flags_of(int fd) {
  if (fd < 0) return 0;
  if (fd < FD_MAX) return atomic_load(&fd_flags[fd]);
  int saved = errno;
  unsigned char f = classify(fd);
  errno = saved;
  return f;
}

int fi_fd_in_dest(int fd) { return (flags_of(fd) & FD_DEST) != 0; }

void fi_fd_opened(int fd) {
  if (fd < 0 || fd >= FD_MAX) return;
  int saved = errno;
  atomic_store(&fd_reads[fd], 0);
  atomic_store(&fd_flags[fd], classify(fd));
  errno = saved;
}

void fi_fd_copied(int from, int to) {
  if (to < 0 || to >= FD_MAX || from == to) return;
  atomic_store(&fd_reads[to], 0);
  atomic_store(&fd_flags[to], flags_of(from));
}

void fi_fd_closed(int fd) {
  if (fd >= 0 && fd < FD_MAX) atomic_store(&fd_flags[fd], 0);
}

static int real_rename(const char* from, const char* to) {
  static void* slot;
  return ((int (*)(const char*, const char*))fi_resolve(&slot, "rename"))(from, to);
}

static int real_unlink(const char* path) {
  static void* slot;
  return ((int (*)(const char*))fi_resolve(&slot, "unlink"))(path);
}

/* Appends "NAME VALUE\n" at `at` in `buf` (room for 64 bytes); returns the new end. */
static size_t put_line(char* buf, size_t at, const char* name, long value) {
  int n = snprintf(buf + at, 64, "%s %ld\n", name, value);
  return at + (n > 0 && n < 64 ? (size_t)n : 0);
}

/* Replaces the count file in one rename, so that threads writing it at once (a fault in each)
 * or a kill right after leave one complete version. */
static void write_counts(void) {
  if (!fi_cfg.count_file[0]) return;
  int saved = errno;
  char buf[64 * (FI_NKINDS + 4)], tmp[sizeof fi_cfg.count_file + 32];
  size_t n = 0;
  for (int k = 0; k <= FI_NKINDS; ++k) n = put_line(buf, n, fi_kind_names[k], counts[k]);
  n = put_line(buf, n, "injected", injected);
  n = put_line(buf, n, "hooks", hooks_run);
  n = put_line(buf, n, "reads_failed", reads_failed);
  snprintf(tmp, sizeof tmp, "%s.%d.%d", fi_cfg.count_file, (int)getpid(), (int)gettid());
  int fd = real_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    int ok = fi_real_write(fd, buf, n) == (ssize_t)n;
    real_close(fd);
    if (!ok || real_rename(tmp, fi_cfg.count_file) != 0) real_unlink(tmp);
  }
  errno = saved;
}

__attribute__((destructor)) static void fi_at_exit(void) {
  if (fi_cfg.count_file[0]) write_counts();
}

__attribute__((constructor)) static void fi_at_start(void) { fi_init(); }

int fi_fault(enum fi_kind kind) {
  long n_kind = atomic_fetch_add(&counts[kind], 1) + 1;
  long n_any = atomic_fetch_add(&counts[KIND_ANY], 1) + 1;
  long n;
  if (fi_cfg.kind == KIND_ANY) {
    n = n_any;
  } else if (fi_cfg.kind == (int)kind) {
    n = n_kind;
  } else {
    return 0;
  }
  if (n != fi_cfg.n && !(fi_cfg.sticky && n > fi_cfg.n)) return 0;
  atomic_fetch_add(&injected, 1);
  write_counts(); /* Now, too: the program may die of the fault (abort, kill). */
  if (fi_cfg.err == KILL_ERRNO) {
    raise(SIGKILL);
    for (;;) pause();
  }
  return fi_cfg.err;
}

/* Runs the hook command with /bin/sh, without this library or its variables, and waits. */
static void run_hook(void) {
  int saved = errno;
  char* envp[512];
  size_t k = 0;
  for (char** e = environ; e && *e && k + 1 < sizeof envp / sizeof envp[0]; ++e) {
    if (strncmp(*e, "LD_PRELOAD=", 11) == 0 || strncmp(*e, "STITCH_FAULT_", 13) == 0) continue;
    envp[k++] = *e;
  }
  envp[k] = NULL;
  char* argv[] = {"sh", "-c", (char*)fi_cfg.hook_cmd, NULL};
  pid_t pid;
  if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, envp) == 0) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    atomic_fetch_add(&hooks_run, 1);
    write_counts(); /* Now, too: the program may hang or die after it. */
  }
  errno = saved;
}

void fi_before_open(const char* abs) {
  if (fi_cfg.hook != HOOK_OPEN || !ends_with(abs, fi_cfg.hook_suffix)) return;
  int expected = 0;
  if (fi_cfg.hook_repeat || atomic_compare_exchange_strong(&hook_done, &expected, 1)) run_hook();
}

int fi_before_read(int fd) {
  unsigned char f = flags_of(fd);
  if (f & FD_RDERR) {
    atomic_fetch_add(&reads_failed, 1);
    return fi_cfg.rderr;
  }
  if (!(f & FD_HOOK)) return 0;
  if (fi_cfg.hook_repeat && fd < FD_MAX) {
    if (atomic_fetch_add(&fd_reads[fd], 1) + 1 == fi_cfg.hook_at) run_hook();
  } else if (atomic_fetch_add(&hook_reads, 1) + 1 == fi_cfg.hook_at) {
    run_hook();
  }
  return 0;
}
