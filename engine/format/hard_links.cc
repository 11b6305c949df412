#include "engine/format/hard_links.h"

#include <unordered_map>

namespace stitchfs::engine {
namespace {

struct KeyHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& k) const {
    return std::hash<uint64_t>()(k.first * 0x9e3779b97f4a7c15ULL ^ k.second);
  }
};
using LeaderMap = std::unordered_map<std::pair<uint64_t, uint64_t>, uint32_t, KeyHash>;

}  // namespace

std::optional<std::pair<uint64_t, uint64_t>> LinkClaim(const FileEntry& e) {
  if (!e.meta || e.meta->ino == 0 || e.meta->nlink == 1) return std::nullopt;
  return std::make_pair(e.meta->dev, e.meta->ino);
}

bool SameLinkedFile(const FileEntry& a, const FileEntry& b) {
  return a.size == b.size && a.checksum == b.checksum && a.meta && b.meta &&
         a.meta->mode == b.meta->mode && a.meta->uid == b.meta->uid && a.meta->gid == b.meta->gid &&
         a.meta->mtime == b.meta->mtime;
}

std::vector<uint32_t> LinkLeaders(const Manifest& m) {
  std::vector<uint32_t> leader(m.num_entries());
  for (uint32_t i = 0; i < leader.size(); ++i) leader[i] = i;
  LeaderMap first;
  std::vector<uint32_t> broken;  // Leaders of legacy groups whose members disagree.
  for (uint32_t i : m.by_name()) {
    const FileEntry e = m.entry(i);
    auto claim = LinkClaim(e);
    if (!claim) continue;
    auto [it, inserted] = first.emplace(*claim, i);
    if (inserted) continue;
    leader[i] = it->second;
    if (!SameLinkedFile(m.entry(it->second), e)) broken.push_back(it->second);
  }
  for (uint32_t b : broken) {
    for (uint32_t& l : leader) {
      if (l == b) l = static_cast<uint32_t>(&l - leader.data());
    }
  }
  return leader;
}

Status CheckLinks(const Manifest& m) {
  LeaderMap first;
  for (uint32_t i = 0; i < m.num_entries(); ++i) {
    const FileEntry e = m.entry(i);
    if (!e.meta || e.meta->nlink <= 1 || e.meta->ino == 0) continue;
    auto [it, inserted] = first.emplace(std::make_pair(e.meta->dev, e.meta->ino), i);
    if (inserted) continue;
    const FileEntry other = m.entry(it->second);
    if (!SameLinkedFile(other, e)) {
      return Status::BackupDamaged(
          "entries \"" + std::string(other.name) + "\" and \"" + std::string(e.name) +
          "\" claim to be hard links of one file (device " + std::to_string(e.meta->dev) +
          ", inode " + std::to_string(e.meta->ino) + ") but differ in content or attributes");
    }
  }
  return Status::OK();
}

}  // namespace stitchfs::engine
