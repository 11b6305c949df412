// mount_work BACKUP [RUNS]: the two largest parts of a warm mount's own work, each timed RUNS
// times (default 30) in a loop: opening the backup through the per-user manifest cache
// ($STITCH_CACHE_DIR; the first open fills it and is not counted), and building the mount's
// inode table from the opened manifest. Prints the best and the median of each, in seconds, as
// one JSON line. Runs in the same process, so the cache's pages and the program are warm: this
// is the CPU work, which builds compare alternately.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "engine/backends/routing_storage.h"
#include "engine/format/manifest_cache.h"
#include "engine/storage/backup.h"
#include "fs/inode_table.h"

namespace {

struct Timing {
  double best = 0;
  double median = 0;
};

// `fn` run `runs` times; false from it stops with an error.
bool Time(int runs, const std::function<bool()>& fn, Timing* t) {
  std::vector<double> secs;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!fn()) return false;
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  t->best = secs.front();
  t->median = secs[secs.size() / 2];
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc == 3 ? std::atoi(argv[2]) : 30;
  if ((argc != 2 && argc != 3) || runs < 1) {
    std::fprintf(stderr, "usage: mount_work BACKUP [RUNS]\n");
    return 2;
  }
  using stitchfs::engine::Backup;
  const auto storage = stitchfs::engine::RoutingStorage::Create();
  const auto* cache = stitchfs::engine::ManifestCache::Default();
  auto first = Backup::Open(*storage, argv[1], cache);
  if (!first.ok()) {
    std::fprintf(stderr, "%s\n", first.status().ToString().c_str());
    return 1;
  }
  Timing open, table;
  const bool opened = Time(
      runs, [&] { return Backup::Open(*storage, argv[1], cache).ok(); }, &open);
  size_t inodes = 0;
  Time(
      runs,
      [&] {
        inodes = stitchfs::fs::InodeTable::Build((*first)->manifest()).size();
        return true;
      },
      &table);
  if (!opened) {
    std::fprintf(stderr, "an open in the loop failed\n");
    return 1;
  }
  std::printf(
      "{\"entries\":%zu,\"inodes\":%zu,\"runs\":%d,\"open_cached_best\":%.5f,"
      "\"open_cached_median\":%.5f,\"inode_table_best\":%.5f,\"inode_table_median\":%.5f}\n",
      (*first)->manifest().num_entries(), inodes, runs, open.best, open.median, table.best,
      table.median);
  return 0;
}
