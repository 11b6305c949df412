#include "engine/store.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>

#include "engine/locator.h"

namespace fs = std::filesystem;

namespace stitchfs::engine {

bool IsBackupFolder(const std::string& dir) {
  return ::access((dir + "/.backup").c_str(), F_OK) == 0;
}

namespace {

void FillFigures(StoreEntry& s) {
  const Manifest& m = s.backup->manifest();
  for (size_t i = 0; i < m.num_entries(); ++i) {
    const FileEntry e = m.entry(i);
    s.total_size += e.size;
    if (e.has_data_file() && e.data_file == e.name) s.stored_bytes += e.stored_size();
  }
  s.stored_bytes += s.backup->manifest_bytes();
  s.time = s.backup->header().time;
}

// Chain depth from the base locators, following bases that are in the store.
int Depth(size_t i, std::vector<StoreEntry>& all, const std::map<std::string, size_t>& by_path,
          std::vector<int>& memo, int guard) {
  if (memo[i] > 0) return memo[i];
  int depth = 1;
  const auto& b = all[i].backup;
  if (b && !b->header().base_backup.empty() && guard < 100000) {
    auto base =
        ResolveLocator(b->header().base_backup, fs::path(b->path()).parent_path().string(), {});
    if (base.ok()) {
      auto it = by_path.find(fs::path(*base).lexically_normal().string());
      if (it != by_path.end() && it->second != i)
        depth = 1 + Depth(it->second, all, by_path, memo, guard + 1);
    }
  }
  return memo[i] = depth;
}

}  // namespace

StatusOr<std::vector<StoreEntry>> ListStore(const std::string& store) {
  std::error_code ec;
  std::vector<StoreEntry> out;
  for (const auto& d : fs::directory_iterator(store, ec)) {
    if (!d.is_directory(ec) || !IsBackupFolder(d.path().string())) continue;
    if (d.path().filename().string().front() == '.') continue;  // Work folders of prune.
    StoreEntry s;
    s.name = d.path().filename().string();
    s.path = d.path().string();
    auto b = Backup::Open(s.path);
    if (b.ok()) {
      s.backup = *b;
      FillFigures(s);
    } else {
      s.status = b.status();
    }
    out.push_back(std::move(s));
  }
  if (ec) return Status::IOError("read store " + store, ec.value());
  std::sort(out.begin(), out.end(), [](const StoreEntry& a, const StoreEntry& b) {
    return std::tie(a.time, a.name) < std::tie(b.time, b.name);
  });
  std::map<std::string, size_t> by_path;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].backup) by_path[out[i].backup->path()] = i;
  }
  std::vector<int> memo(out.size(), 0);
  for (size_t i = 0; i < out.size(); ++i) out[i].depth = Depth(i, out, by_path, memo, 0);
  return out;
}

}  // namespace stitchfs::engine
