// ManifestFile::Consistent: a manifest loaded from the binary cache is held to everything the
// XML reader checks, so that a cache file damaged behind a valid checksum (or written by a bug,
// or by someone else who can write the cache folder) is refused, never trusted.
#include <tuple>

#include "engine/base/path_check.h"
#include "engine/format/hard_links.h"
#include "engine/format/manifest_file.h"
#include "engine/format/name_check.h"

namespace stitchfs::engine {
namespace {

bool InRange(const std::vector<uint32_t>& index, size_t n) {
  for (uint32_t i : index) {
    if (i >= n) return false;
  }
  return true;
}

}  // namespace

bool ManifestFile::Consistent(Manifest& m) {
  const size_t n = m.entries_.size();
  if (!InRange(m.by_name_, n) || !InRange(m.by_content_, n)) return false;
  size_t with_data = 0;
  for (size_t i = 0; i < n; ++i) {
    Manifest::Record& r = m.entries_[i];
    if ((r.flags & ~(Manifest::kEncrypted | Manifest::kRep)) != 0) return false;
    r.flags &= ~Manifest::kRep;  // Set again below, from the index.
    const FileEntry e = m.entry(i);
    if (!CheckRelativePath(e.name).ok() || !CheckRelativePath(e.data_file).ok() ||
        !CheckEntry(e).ok()) {
      return false;
    }
    with_data += e.size > 0;
  }
  // by_content: every entry with data once, by (size, checksum, position).
  if (m.by_content_.size() != with_data) return false;
  for (size_t k = 0; k < m.by_content_.size(); ++k) {
    Manifest::Record& r = m.entries_[m.by_content_[k]];
    if (r.size == 0) return false;
    const Manifest::Record* prev = k ? &m.entries_[m.by_content_[k - 1]] : nullptr;
    if (prev && std::tie(prev->size, prev->checksum, m.by_content_[k - 1]) >=
                    std::tie(r.size, r.checksum, m.by_content_[k])) {
      return false;
    }
    if (!prev || prev->size != r.size || prev->checksum != r.checksum) r.flags |= Manifest::kRep;
  }
  // by_name: strictly sorted; a name left out is a later duplicate of one that is in it.
  std::vector<bool> listed(n, false);
  for (size_t k = 0; k < m.by_name_.size(); ++k) {
    if (k > 0 && !(m.NameOf(m.by_name_[k - 1]) < m.NameOf(m.by_name_[k]))) return false;
    listed[m.by_name_[k]] = true;
  }
  for (size_t i = 0; i < n; ++i) {
    if (listed[i]) continue;
    auto first = m.FindByName(m.NameOf(static_cast<uint32_t>(i)));
    if (!first || *first >= i) return false;
  }
  for (const Manifest::NodeRecord& node : m.nodes_) {
    if (!CheckRelativePath({node.name, node.name_len}).ok() || !CheckMeta(node.meta).ok() ||
        node.meta.nlink != 0 || (node.type == NodeType::kDir && node.target_len != 0)) {
      return false;
    }
  }
  return CheckNames(m).ok() && CheckLinks(m).ok();
}

}  // namespace stitchfs::engine
