// Command-line parsing shared by every `stitch` subcommand.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/base/status_or.h"
#include "engine/read/chain_options.h"

namespace stitchfs::cli {

struct Args {
  std::vector<std::string> positional;
  std::set<std::string> flags;                             // Boolean flags given, e.g. "--json".
  std::map<std::string, std::vector<std::string>> values;  // Valued options, in order given.

  bool Has(const std::string& flag) const { return flags.count(flag) > 0; }
  std::string Value(const std::string& opt, const std::string& fallback = "") const;
};

struct ArgSpec {
  std::set<std::string> bool_flags;  // e.g. {"--json", "-l"}
  std::set<std::string> value_opts;  // e.g. {"--disk", "--base"}
  size_t min_positional = 0;
  size_t max_positional = 0;
  // The first `paths` positional arguments are file system paths. They, and the values of
  // --base and --disk, are made absolute and normal here, where they enter, so nothing later
  // compares a relative spelling with an absolute one.
  size_t paths = 0;
};

// Parses argv[first..]. `--opt=value` and `--opt value` are both accepted; `--` ends options.
// kInvalidArgument for unknown options, missing values or a wrong number of arguments.
engine::StatusOr<Args> ParseArgs(int argc, char** argv, int first, const ArgSpec& spec);

// ChainOptions from --disk NAME=DIR (repeatable) and --base DIR.
engine::StatusOr<engine::ChainOptions> ChainOptionsFrom(const Args& args);

// The options every command that opens a backup accepts.
ArgSpec WithChainOptions(ArgSpec spec);

}  // namespace stitchfs::cli
