// Command-line parsing shared by every `stitch` subcommand.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/base/status_or.h"
#include "engine/location/locator.h"
#include "engine/read/chain_options.h"
#include "engine/storage/context.h"

namespace stitchfs::cli {

struct Args {
  std::vector<std::string> positional;
  std::set<std::string> flags;                             // Boolean flags given, e.g. "--json".
  std::map<std::string, std::vector<std::string>> values;  // Valued options, in order given.
  // The backups root and disks from --clickhouse-config, --backups-root and --disk.
  engine::LocatorContext locators;
  std::string base_locator;  // --base as the user wrote it, when written as a locator.

  bool Has(const std::string& flag) const { return flags.count(flag) > 0; }
  std::string Value(const std::string& opt, const std::string& fallback = "") const;
};

struct ArgSpec {
  std::set<std::string> bool_flags;  // e.g. {"--json", "-l"}
  std::set<std::string> value_opts;  // e.g. {"--disk", "--base"}
  size_t min_positional = 0;
  size_t max_positional = 0;
  // The first `paths` positional arguments are locations (paths, S3 URLs, or locators such
  // as `File('daily/b1')` or `Disk('backups', 'b1')`, taken as the server takes them). They,
  // and the values of --base, --disk, --backups-root and --clickhouse-config, are made
  // absolute and normal here, where they enter, so nothing later compares a relative spelling
  // with an absolute one.
  size_t paths = 0;
};

// Parses argv[first..]. `--opt=value` and `--opt value` are both accepted; `--` ends options.
// Every spec takes --backups-root DIR, --clickhouse-config FILE and --disk NAME=DIR (the
// context of locators, read here; the configuration's warnings go to stderr). kInvalidArgument
// for unknown options, missing or empty values, a valued option given twice (only --disk and
// --immutable repeat), a wrong number of arguments, an unreadable configuration, or a locator
// the context cannot resolve.
engine::StatusOr<Args> ParseArgs(int argc, char** argv, int first, const ArgSpec& spec);

// The context of a command: this machine's files and object storage (one RoutingStorage), the
// per-user cache, and the locator context of `args`. Each command builds it once.
engine::Context ContextFrom(const Args& args);

// ChainOptions: ContextFrom(args) and --base DIR.
engine::StatusOr<engine::ChainOptions> ChainOptionsFrom(const Args& args);

// The options every command that opens a backup accepts.
ArgSpec WithChainOptions(ArgSpec spec);

}  // namespace stitchfs::cli
