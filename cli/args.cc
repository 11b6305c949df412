#include "cli/args.h"

#include <cstdio>

#include "engine/backends/routing_storage.h"
#include "engine/base/progress_bar.h"
#include "engine/format/manifest_cache.h"
#include "engine/location/locator.h"
#include "engine/storage/clickhouse_config.h"

namespace stitchfs::cli {

std::string Args::Value(const std::string& opt, const std::string& fallback) const {
  auto it = values.find(opt);
  return it == values.end() || it->second.empty() ? fallback : it->second.back();
}

namespace {

// Options every command takes: what gives locators their meaning.
const std::set<std::string> kLocatorOptions = {"--backups-root", "--clickhouse-config", "--disk"};
// The valued options that may be given more than once; any other is refused the second time
// (taking the last one silently would back up on another base than the user meant).
const std::set<std::string> kRepeatable = {"--disk", "--immutable"};

// The context of locators: --clickhouse-config, then --backups-root and each --disk NAME=DIR.
engine::StatusOr<engine::LocatorContext> LocatorsFrom(const Args& a) {
  std::map<std::string, std::string> disks;
  if (auto it = a.values.find("--disk"); it != a.values.end()) {
    for (const std::string& d : it->second) {
      const size_t eq = d.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == d.size()) {
        return engine::Status::InvalidArgument("--disk takes NAME=DIR, got " + d);
      }
      disks[d.substr(0, eq)] = d.substr(eq + 1);
    }
  }
  std::vector<std::string> warnings;
  auto c = engine::MakeLocatorContext(a.Value("--clickhouse-config"), a.Value("--backups-root"),
                                      disks, &warnings);
  for (const auto& w : warnings) {
    std::fprintf(stderr, "stitch: warning: %s\n", engine::EscapeForMessage(w).c_str());
  }
  return c;
}

}  // namespace

engine::StatusOr<Args> ParseArgs(int argc, char** argv, int first, const ArgSpec& spec) {
  Args a;
  bool options_done = false;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (options_done || arg.size() < 2 || arg[0] != '-') {
      a.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    std::string value;
    bool has_value = false;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    if (spec.bool_flags.count(arg) && !has_value) {
      a.flags.insert(arg);
    } else if (spec.value_opts.count(arg) || kLocatorOptions.count(arg)) {
      if (!has_value) {
        if (i + 1 >= argc)
          return engine::Status::InvalidArgument("option " + arg + " needs a value");
        value = argv[++i];
      }
      if (value.empty()) {
        return engine::Status::InvalidArgument("option " + arg + " is given an empty value");
      }
      if (a.values.count(arg) && !kRepeatable.count(arg)) {
        return engine::Status::InvalidArgument("option " + arg + " is given twice");
      }
      a.values[arg].push_back(value);
    } else {
      return engine::Status::InvalidArgument("unknown option " + arg);
    }
  }
  if (a.positional.size() < spec.min_positional || a.positional.size() > spec.max_positional) {
    return engine::Status::InvalidArgument("wrong number of arguments");
  }
  ASSIGN_OR_RETURN(a.locators, LocatorsFrom(a));
  for (size_t i = 0; i < spec.paths && i < a.positional.size(); ++i) {
    ASSIGN_OR_RETURN(a.positional[i], engine::ResolveUserLocation(a.positional[i], a.locators));
  }
  if (auto it = a.values.find("--base"); it != a.values.end()) {
    for (auto& v : it->second) {
      if (engine::LooksLikeLocator(v)) a.base_locator = v;
      ASSIGN_OR_RETURN(v, engine::ResolveUserLocation(v, a.locators));
    }
  }
  return a;
}

engine::Context ContextFrom(const Args& args) {
  engine::Context ctx;
  // Archives being indexed show as bars on a terminal.
  ctx.storage = engine::RoutingStorage::Create(0, {}, engine::TerminalProgress("index"));
  ctx.cache = engine::ManifestCache::Default();
  ctx.locators = args.locators;
  return ctx;
}

engine::StatusOr<engine::ChainOptions> ChainOptionsFrom(const Args& args) {
  engine::ChainOptions o;
  static_cast<engine::Context&>(o) = ContextFrom(args);
  o.base_override = args.Value("--base");
  return o;
}

ArgSpec WithChainOptions(ArgSpec spec) {
  spec.value_opts.insert("--base");
  return spec;
}

}  // namespace stitchfs::cli
