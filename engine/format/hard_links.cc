#include "engine/format/hard_links.h"

#include <xxhash.h>

#include <random>
#include <unordered_map>

namespace stitchfs::engine {
namespace {

// (dev, ino) pairs come from the manifest, so a fixed hash of them can be collided on purpose
// (every insert then walks one long bucket: quadratic). XXH3 with a seed drawn per process
// cannot be aimed at.
uint64_t ProcessSeed() {
  static const uint64_t seed = [] {
    std::random_device r;
    return (uint64_t{r()} << 32) ^ r();
  }();
  return seed;
}

struct KeyHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& k) const {
    const uint64_t words[2] = {k.first, k.second};
    return static_cast<size_t>(XXH3_64bits_withSeed(words, sizeof words, ProcessSeed()));
  }
};
using LeaderMap = std::unordered_map<std::pair<uint64_t, uint64_t>, uint32_t, KeyHash>;

bool SameFile(uint64_t size_a, const Checksum& sum_a, const PosixMeta* a, uint64_t size_b,
              const Checksum& sum_b, const PosixMeta* b) {
  return size_a == size_b && sum_a == sum_b && a && b && a->mode == b->mode && a->uid == b->uid &&
         a->gid == b->gid && a->mtime == b->mtime;
}

const PosixMeta* MetaOf(const FileEntry& e) { return e.meta ? &*e.meta : nullptr; }

}  // namespace

std::optional<std::pair<uint64_t, uint64_t>> LinkClaim(const PosixMeta* meta) {
  if (meta == nullptr || meta->ino == 0 || meta->nlink == 1) return std::nullopt;
  return std::make_pair(meta->dev, meta->ino);
}

bool SameLinkedFile(const FileEntry& a, const FileEntry& b) {
  return SameFile(a.size, a.checksum, MetaOf(a), b.size, b.checksum, MetaOf(b));
}

bool SameLinkedFile(const Manifest& m, size_t a, size_t b) {
  const auto& ra = m.tables().entries[a];
  const auto& rb = m.tables().entries[b];
  return SameFile(ra.size, ra.checksum, m.meta(a), rb.size, rb.checksum, m.meta(b));
}

std::vector<uint32_t> LinkLeaders(const Manifest& m) {
  std::vector<uint32_t> leader(m.num_entries());
  for (uint32_t i = 0; i < leader.size(); ++i) leader[i] = i;
  LeaderMap first;
  std::vector<bool> broken;  // Leaders of legacy groups whose members disagree.
  for (uint32_t i : m.by_name()) {
    auto claim = LinkClaim(m.meta(i));
    if (!claim) continue;
    auto [it, inserted] = first.emplace(*claim, i);
    if (inserted) continue;
    leader[i] = it->second;
    if (!SameLinkedFile(m, it->second, i)) {
      if (broken.empty()) broken.resize(leader.size());
      broken[it->second] = true;
    }
  }
  if (broken.empty()) return leader;
  for (uint32_t i = 0; i < leader.size(); ++i) {  // One pass: linear whatever the manifest.
    if (broken[leader[i]]) leader[i] = i;
  }
  return leader;
}

Status CheckLinks(const Manifest& m) {
  LeaderMap first;
  for (uint32_t i = 0; i < m.num_entries(); ++i) {
    const PosixMeta* meta = m.meta(i);
    if (meta == nullptr || meta->nlink <= 1 || meta->ino == 0) continue;
    auto [it, inserted] = first.emplace(std::make_pair(meta->dev, meta->ino), i);
    if (inserted) continue;
    if (!SameLinkedFile(m, it->second, i)) {
      return Status::BackupDamaged(
          "entries \"" + std::string(m.name(it->second)) + "\" and \"" + std::string(m.name(i)) +
          "\" claim to be hard links of one file (device " + std::to_string(meta->dev) +
          ", inode " + std::to_string(meta->ino) + ") but differ in content or attributes");
    }
  }
  return Status::OK();
}

}  // namespace stitchfs::engine
