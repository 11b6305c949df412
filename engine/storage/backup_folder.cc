#include "engine/storage/backup_folder.h"

#include <atomic>
#include <filesystem>

namespace stitchfs::engine {

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  std::string out = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec || out.empty()) out = path;
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

uint64_t NewFdCacheKey() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

}  // namespace stitchfs::engine
