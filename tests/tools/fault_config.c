/* Reads the fault_inject library's configuration from the STITCH_FAULT_* variables (see
 * fault_inject.c); a malformed variable ends the process, so a typo never passes as "no fault". */
#define _GNU_SOURCE
#include "fault_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fi_config fi_cfg;
const char* const fi_kind_names[FI_NKINDS + 1] = {"open",  "write",  "sync",  "rename",
                                                  "mkdir", "unlink", "close", "any"};
/* Reports a configuration error and ends the process: a typo must not pass as "no fault". */
static void die(const char* what, const char* value) {
  char msg[1200];
  int n = snprintf(msg, sizeof msg, "fault_inject: bad %s: %s\n", what, value ? value : "");
  fi_real_write(2, msg, (size_t)n);
  _exit(125);
}

void fi_normalize(char* p) {
  char* out = p;
  const char* in = p;
  while (*in) {
    while (*in == '/') ++in;
    if (!*in) break;
    const char* seg = in;
    while (*in && *in != '/') ++in;
    size_t len = (size_t)(in - seg);
    if (len == 1 && seg[0] == '.') continue;
    if (len == 2 && seg[0] == '.' && seg[1] == '.') {
      while (out > p && *--out != '/') {
      }
      continue;
    }
    *out++ = '/';
    memmove(out, seg, len);
    out += len;
  }
  if (out == p) *out++ = '/';
  *out = '\0';
}

static int parse_errno(const char* s) {
  static const struct {
    const char* name;
    int value;
  } kNames[] = {{"ENOSPC", ENOSPC}, {"EIO", EIO},     {"EDQUOT", EDQUOT},  {"EACCES", EACCES},
                {"EROFS", EROFS},   {"EPERM", EPERM}, {"KILL", KILL_ERRNO}};
  for (size_t i = 0; i < sizeof kNames / sizeof kNames[0]; ++i) {
    if (strcmp(s, kNames[i].name) == 0) return kNames[i].value;
  }
  die("errno name", s);
  return 0;
}

static void parse_dest(const char* v) {
  while (v && *v) {
    const char* end = strchr(v, ':');
    size_t len = end ? (size_t)(end - v) : strlen(v);
    if (len > 0) {
      if (fi_cfg.nprefix == MAX_PREFIX || len >= sizeof fi_cfg.prefixes[0] || v[0] != '/')
        die("STITCH_FAULT_DEST (absolute prefixes, at most 16)", v);
      char* p = fi_cfg.prefixes[fi_cfg.nprefix];
      memcpy(p, v, len);
      p[len] = '\0';
      fi_normalize(p);
      fi_cfg.prefix_len[fi_cfg.nprefix] = strcmp(p, "/") == 0 ? 0 : strlen(p);
      ++fi_cfg.nprefix;
    }
    v = end ? end + 1 : NULL;
  }
}

static void parse_fault(void) {
  const char* kind = getenv("STITCH_FAULT_KIND");
  fi_cfg.kind = -1;
  if (kind == NULL || !*kind) return;
  for (int k = 0; k <= FI_NKINDS; ++k) {
    if (strcmp(kind, fi_kind_names[k]) == 0) fi_cfg.kind = k;
  }
  if (fi_cfg.kind < 0) die("STITCH_FAULT_KIND", kind);
  const char* n = getenv("STITCH_FAULT_N");
  fi_cfg.n = n ? atol(n) : 0;
  if (fi_cfg.n < 1) die("STITCH_FAULT_N (1 or more)", n);
  const char* e = getenv("STITCH_FAULT_ERRNO");
  fi_cfg.err = parse_errno(e && *e ? e : "EIO");
  const char* sticky = getenv("STITCH_FAULT_STICKY");
  fi_cfg.sticky = sticky && strcmp(sticky, "1") == 0;
}

/* STITCH_FAULT_HOOK="KIND:SUFFIX:COMMAND". */
static void parse_hook(void) {
  const char* h = getenv("STITCH_FAULT_HOOK");
  if (h == NULL || !*h) return;
  const char* c1 = strchr(h, ':');
  const char* c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  if (c2 == NULL || c2 == c1 + 1 || (size_t)(c2 - c1 - 1) >= sizeof fi_cfg.hook_suffix)
    die("STITCH_FAULT_HOOK (KIND:SUFFIX:COMMAND)", h);
  if (c1 - h == 4 && strncmp(h, "open", 4) == 0) {
    fi_cfg.hook = HOOK_OPEN;
  } else if (c1 - h == 4 && strncmp(h, "read", 4) == 0) {
    fi_cfg.hook = HOOK_READ;
  } else {
    die("STITCH_FAULT_HOOK kind (open or read)", h);
  }
  memcpy(fi_cfg.hook_suffix, c1 + 1, (size_t)(c2 - c1 - 1));
  fi_cfg.hook_cmd = c2 + 1;
  const char* at = getenv("STITCH_FAULT_HOOK_AT");
  fi_cfg.hook_at = at && *at ? atol(at) : 1;
  if (fi_cfg.hook_at < 1) die("STITCH_FAULT_HOOK_AT (1 or more)", at);
  const char* rep = getenv("STITCH_FAULT_HOOK_REPEAT");
  fi_cfg.hook_repeat = rep && strcmp(rep, "1") == 0;
}

/* STITCH_FAULT_READ_ERRNO="SUFFIX:ERRNO". */
static void parse_read_errno(void) {
  const char* r = getenv("STITCH_FAULT_READ_ERRNO");
  if (r == NULL || !*r) return;
  const char* colon = strrchr(r, ':');
  if (colon == NULL || colon == r || (size_t)(colon - r) >= sizeof fi_cfg.rderr_suffix)
    die("STITCH_FAULT_READ_ERRNO (SUFFIX:ERRNO)", r);
  memcpy(fi_cfg.rderr_suffix, r, (size_t)(colon - r));
  fi_cfg.rderr = parse_errno(colon + 1);
  if (fi_cfg.rderr == KILL_ERRNO) die("STITCH_FAULT_READ_ERRNO errno", colon + 1);
}

void fi_read_config(void) {
  int saved = errno;
  parse_dest(getenv("STITCH_FAULT_DEST"));
  parse_fault();
  parse_hook();
  parse_read_errno();
  const char* cf = getenv("STITCH_FAULT_COUNT_FILE");
  if (cf && strlen(cf) < sizeof fi_cfg.count_file) strcpy(fi_cfg.count_file, cf);
  fi_cfg.on = fi_cfg.nprefix > 0 || fi_cfg.hook != HOOK_NONE || fi_cfg.rderr != 0;
  const char* timeout = getenv("STITCH_FAULT_TIMEOUT");
  if (timeout && atoi(timeout) > 0) alarm((unsigned)atoi(timeout));
  errno = saved;
}
