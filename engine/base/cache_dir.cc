#include "engine/base/cache_dir.h"

#include <cstdlib>
#include <filesystem>

namespace stitchfs::engine {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

std::string DefaultCacheDir() {
  std::string dir = Env("STITCH_CACHE_DIR");
  if (dir == "off") return "";
  if (dir.empty() && !Env("XDG_CACHE_HOME").empty()) dir = Env("XDG_CACHE_HOME") + "/stitchfs";
  if (dir.empty() && !Env("HOME").empty()) dir = Env("HOME") + "/.cache/stitchfs";
  if (dir.empty()) return "";
  return std::filesystem::absolute(dir).string();
}

}  // namespace stitchfs::engine
