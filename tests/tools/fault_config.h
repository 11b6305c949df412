/* The configuration of the fault_inject library, read once from the STITCH_FAULT_* variables
 * (documented in fault_inject.c). */
#ifndef STITCHFS_TESTS_TOOLS_FAULT_CONFIG_H_
#define STITCHFS_TESTS_TOOLS_FAULT_CONFIG_H_

#include <stddef.h>

#include "fault_core.h"

#define MAX_PREFIX 16 /* Destination prefixes. */
#define KIND_ANY FI_NKINDS
#define KILL_ERRNO (-1)

enum hook_kind { HOOK_NONE, HOOK_OPEN, HOOK_READ };

/* What the variables ask for; written once, before any call is checked. */
struct fi_config {
  int on;
  char prefixes[MAX_PREFIX][1024];
  size_t prefix_len[MAX_PREFIX];
  int nprefix;
  int kind; /* enum fi_kind, KIND_ANY, or -1 for no fault. */
  long n;
  int err; /* An errno, or KILL_ERRNO. */
  int sticky;
  char count_file[1024];
  enum hook_kind hook;
  char hook_suffix[1024];
  const char* hook_cmd;
  long hook_at;
  int hook_repeat;
  char rderr_suffix[1024];
  int rderr;
};

extern struct fi_config fi_cfg;
extern const char* const fi_kind_names[FI_NKINDS + 1];

/* Fills fi_cfg from the environment; ends the process (exit 125) on a malformed variable. */
void fi_read_config(void);

/* Collapses "//", "/." and "/.." in an absolute path, in place. */
void fi_normalize(char* p);

#endif /* STITCHFS_TESTS_TOOLS_FAULT_CONFIG_H_ */
