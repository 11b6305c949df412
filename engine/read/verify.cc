#include "engine/read/verify.h"

#include <map>
#include <memory>

#include "engine/read/content_check.h"

namespace stitchfs::engine {
namespace {

constexpr size_t kBuffer = 1 << 20;

// Reads entry `i` through its chain and checks it (ContentCheck), telling `progress` of every
// piece read.
Status CheckEntry(const ResolvedBackup& chain, size_t i, char* buf, uint64_t* bytes,
                  const std::function<void()>& progress) {
  ASSIGN_OR_RETURN(auto file, chain.OpenEntry(i));
  return CheckFile(chain, i, *file, std::span<char>(buf, kBuffer), [&](uint64_t n) {
    *bytes += n;
    progress();
  });
}

}  // namespace

VerifyResult VerifyBackup(const ResolvedBackup& chain, const ProgressFn& progress) {
  VerifyResult r;
  auto buf = std::make_unique<char[]>(kBuffer);
  const Manifest& m = chain.top().manifest();
  std::map<std::pair<uint64_t, Checksum>, Status> by_content;
  for (size_t i = 0; i < m.num_entries(); ++i) {
    const FileEntry e = m.entry(i);
    ++r.files_checked;
    if (e.size > 0) {
      auto key = std::make_pair(e.size, e.checksum);
      auto it = by_content.find(key);
      if (it == by_content.end()) {
        const auto piece = [&] {
          if (progress) progress(r.files_checked - 1, r.bytes_read);
        };
        it = by_content.emplace(key, CheckEntry(chain, i, buf.get(), &r.bytes_read, piece)).first;
      }
      if (!it->second.ok()) r.problems.push_back({std::string(e.name), it->second});
    }
    if (progress) progress(r.files_checked, r.bytes_read);
  }
  return r;
}

}  // namespace stitchfs::engine
