// bench_open BACKUP: opens a backup (parse + index the manifest) and prints the time taken,
// the peak RSS growth, and the bytes per entry of both, as one JSON line.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "engine/backends/routing_storage.h"
#include "engine/format/manifest_cache.h"
#include "engine/storage/backup.h"

namespace {

// Current resident set size in bytes (from /proc/self/statm).
long ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * 4096;
}

long PeakBytes() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss * 1024;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: bench_open BACKUP\n");
    return 2;
  }
  const auto storage = stitchfs::engine::RoutingStorage::Create();
  const long rss_before = ResidentBytes();
  const auto t0 = std::chrono::steady_clock::now();
  // As the front ends open it: through the per-user manifest cache ($STITCH_CACHE_DIR).
  auto b =
      stitchfs::engine::Backup::Open(*storage, argv[1], stitchfs::engine::ManifestCache::Default());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!b.ok()) {
    std::fprintf(stderr, "%s\n", b.status().ToString().c_str());
    return 1;
  }
  const size_t n = (*b)->manifest().num_entries();
  const long peak = PeakBytes() - rss_before;
  const long held = ResidentBytes() - rss_before;
  std::printf(
      "{\"entries\":%zu,\"seconds\":%.3f,\"peak_rss_bytes\":%ld,\"peak_bytes_per_entry\":%.1f,"
      "\"resident_bytes_per_entry\":%.1f,\"index_bytes_per_entry\":%.1f}\n",
      n, secs, peak, static_cast<double>(peak) / static_cast<double>(n),
      static_cast<double>(held) / static_cast<double>(n),
      static_cast<double>((*b)->manifest().MemoryUsage()) / static_cast<double>(n));
  return 0;
}
