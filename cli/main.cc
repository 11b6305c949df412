// stitch: the command-line front end of the engine (no FUSE).
#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <new>

#include "cli/commands.h"
#include "cli/help.h"
#include "cli/progress.h"
#include "engine/base/cache_dir.h"
#include "engine/base/error_table.h"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* usage;
};

constexpr Command kCommands[] = {
    {"backup", stitchfs::cli::CmdBackup,
     "backup SOURCE DEST [--base BASE] [--immutable GLOB]... [--checksum xxh3|clickhouse]\n"
     "                [--jobs N] [--files-cache] [--timestamp T] [--json]"},
    {"diff", stitchfs::cli::CmdDiff, "diff OLD NEW [PATH] [--base BASE] [--json]"},
    {"flatten", stitchfs::cli::CmdFlatten, "flatten BACKUP DEST [--base BASE] [--json]"},
    {"info", stitchfs::cli::CmdInfo, "info BACKUP [--base BASE] [--json]"},
    {"log", stitchfs::cli::CmdLog, "log STORE [--json]"},
    {"ls", stitchfs::cli::CmdLs, "ls BACKUP [PATH] [-l] [-R] [--base BASE] [--json]"},
    {"prune", stitchfs::cli::CmdPrune,
     "prune STORE [--keep-last N] [--keep-daily N] [--keep-monthly N] [--dry-run] [--json]"},
    {"cat", stitchfs::cli::CmdCat, "cat BACKUP PATH [--base BASE]"},
    {"restore", stitchfs::cli::CmdRestore,
     "restore BACKUP TARGET [PATH...] [--base BASE] [--json]"},
    {"verify", stitchfs::cli::CmdVerify, "verify BACKUP [--base BASE] [--json]"},
};

// The commands; with `full` (stitch --help), also examples and the exit codes.
void Usage(FILE* out, bool full) {
  std::fprintf(out, "usage: stitch COMMAND ...   (stitch --version: the version)\n");
  for (const Command& c : kCommands) std::fprintf(out, "  stitch %s\n", c.usage);
  if (full) {
    stitchfs::cli::PrintGeneralHelp(out);
  } else {
    std::fprintf(out,
                 "stitch --help: examples and exit codes; stitch COMMAND --help: one command\n");
  }
}

// Many data files may be open at once for long chains; take the hard limit.
void RaiseFdLimit() {
  struct rlimit rl;
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    Usage(stderr, false);
    return stitchfs::engine::kExitUsage;
  }
  if (!std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help") ||
      !std::strcmp(argv[1], "help")) {
    Usage(stdout, true);
    return 0;
  }
  if (!std::strcmp(argv[1], "-V") || !std::strcmp(argv[1], "--version") ||
      !std::strcmp(argv[1], "version")) {
    std::printf("stitch %s\n", STITCHFS_VERSION);
    return 0;
  }
  RaiseFdLimit();
  // Before any cache is opened: a cache folder that cannot be made private is not used.
  if (const std::string& w = stitchfs::engine::CheckDefaultCacheDir(); !w.empty()) {
    std::fprintf(stderr, "stitch: warning: %s\n", w.c_str());
  }
  for (const Command& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    if (stitchfs::cli::WantsHelp(argc - 1, argv + 1)) {
      stitchfs::cli::PrintCommandHelp(stdout, c.name, c.usage);
      return stitchfs::engine::kExitOk;
    }
    try {
      int code = c.run(argc - 1, argv + 1);
      if (code == stitchfs::engine::kExitUsage) std::fprintf(stderr, "usage: stitch %s\n", c.usage);
      return code;
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "stitch: out of memory\n");
      return stitchfs::engine::kExitFailure;
    }
  }
  std::fprintf(stderr, "stitch: unknown command '%s'\n",
               stitchfs::engine::EscapeForMessage(argv[1]).c_str());
  Usage(stderr, false);
  return stitchfs::engine::kExitUsage;
}
