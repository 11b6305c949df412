#include "cli/args.h"

#include "engine/storage/locator.h"
#include "engine/storage/manifest_cache.h"

namespace stitchfs::cli {

std::string Args::Value(const std::string& opt, const std::string& fallback) const {
  auto it = values.find(opt);
  return it == values.end() || it->second.empty() ? fallback : it->second.back();
}

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
    } else if (spec.value_opts.count(arg)) {
      if (!has_value) {
        if (i + 1 >= argc)
          return engine::Status::InvalidArgument("option " + arg + " needs a value");
        value = argv[++i];
      }
      a.values[arg].push_back(value);
    } else {
      return engine::Status::InvalidArgument("unknown option " + arg);
    }
  }
  if (a.positional.size() < spec.min_positional || a.positional.size() > spec.max_positional) {
    return engine::Status::InvalidArgument("wrong number of arguments");
  }
  for (size_t i = 0; i < spec.paths && i < a.positional.size(); ++i) {
    a.positional[i] = engine::NormalLocation(a.positional[i]);
  }
  if (auto it = a.values.find("--base"); it != a.values.end()) {
    for (auto& v : it->second) v = engine::NormalLocation(v);
  }
  if (auto it = a.values.find("--disk"); it != a.values.end()) {
    for (auto& v : it->second) {
      const size_t eq = v.find('=');
      if (eq != std::string::npos && eq + 1 < v.size()) {
        v = v.substr(0, eq + 1) + engine::NormalLocation(v.substr(eq + 1));
      }
    }
  }
  return a;
}

engine::StatusOr<engine::ChainOptions> ChainOptionsFrom(const Args& args) {
  engine::ChainOptions o;
  o.cache = engine::ManifestCache::Default();
  if (auto it = args.values.find("--disk"); it != args.values.end()) {
    for (const std::string& d : it->second) {
      size_t eq = d.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == d.size()) {
        return engine::Status::InvalidArgument("--disk takes NAME=DIR, got " + d);
      }
      o.disks[d.substr(0, eq)] = d.substr(eq + 1);
    }
  }
  o.base_override = args.Value("--base");
  return o;
}

ArgSpec WithChainOptions(ArgSpec spec) {
  spec.value_opts.insert("--disk");
  spec.value_opts.insert("--base");
  return spec;
}

}  // namespace stitchfs::cli
