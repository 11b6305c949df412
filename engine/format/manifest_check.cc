// ManifestFile::Consistent: a manifest loaded from the binary cache is held to everything the
// XML reader checks, so that a cache file damaged behind a valid checksum (or written by a bug,
// or by someone else who can write the cache folder) is refused, never trusted.
#include <span>
#include <tuple>

#include "engine/base/both_hold.h"
#include "engine/base/path_check.h"
#include "engine/format/hard_links.h"
#include "engine/format/manifest_file.h"
#include "engine/format/name_check.h"

namespace stitchfs::engine {
namespace {

bool InRange(std::span<const uint32_t> index, size_t n) {
  for (uint32_t i : index) {
    if (i >= n) return false;
  }
  return true;
}

// The indexes are complete and in the order lookups rely on (a binary search of a shuffled or
// partial index would silently miss entries), and the content-representative flags those the
// index gives (the first of each content), not trusted.
bool IndexesFit(const ManifestTables& t) {
  using R = ManifestTables;
  const size_t n = t.entries.size();
  if (!InRange(t.by_name, n) || !InRange(t.by_content, n)) return false;
  size_t with_data = 0;
  for (const R::Record& r : t.entries) {
    if ((r.flags & ~(R::kEncrypted | R::kRep)) != 0) return false;
    if (r.size == 0 && (r.flags & R::kRep) != 0) return false;
    with_data += r.size > 0;
  }
  // by_content: every entry with data once, by (size, checksum, position).
  if (t.by_content.size() != with_data) return false;
  for (size_t k = 0; k < t.by_content.size(); ++k) {
    const R::Record& r = t.entries[t.by_content[k]];
    if (r.size == 0) return false;
    const R::Record* prev = k ? &t.entries[t.by_content[k - 1]] : nullptr;
    if (prev && std::tie(prev->size, prev->checksum, t.by_content[k - 1]) >=
                    std::tie(r.size, r.checksum, t.by_content[k])) {
      return false;
    }
    const bool rep = !prev || prev->size != r.size || prev->checksum != r.checksum;
    if (rep != ((r.flags & R::kRep) != 0)) return false;
  }
  // by_name: strictly sorted.
  for (size_t k = 1; k < t.by_name.size(); ++k) {
    if (!(t.name(t.by_name[k - 1]) < t.name(t.by_name[k]))) return false;
  }
  return true;
}

// Every entry and node valid (CheckEntry, CheckMeta, safe names); a name left out of by_name is
// a later duplicate of one that is in it.
bool EachEntryFits(const Manifest& m) {
  const size_t n = m.num_entries();
  std::vector<bool> listed(n, false);
  for (uint32_t i : m.by_name()) listed[i] = true;
  for (size_t i = 0; i < n; ++i) {
    const FileEntry e = m.entry(i);
    const bool own_data_name = m.tables().entries[i].data_file != ManifestTables::kSameName;
    if (!CheckRelativePath(e.name).ok() ||
        (own_data_name && !CheckRelativePath(e.data_file).ok()) || !CheckEntry(e).ok()) {
      return false;
    }
    if (listed[i]) continue;
    auto first = m.FindByName(e.name);
    if (!first || *first >= i) return false;
  }
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const Node node = m.node(i);
    if (!CheckRelativePath(node.name).ok() || !CheckMeta(node.meta).ok() || node.meta.nlink != 0 ||
        (node.type == NodeType::kDir && !node.target.empty())) {
      return false;
    }
  }
  return true;
}

// From this many entries on, the names and links are checked on a second core while the first
// checks each entry (a thread costs tens of microseconds; an entry's checks about 0.1).
constexpr size_t kBothCoresFrom = 4096;

// EachEntryFits, and names and hard links as the reader checks them. REQUIRES: IndexesFit (the
// checks of names read through the indexes, which must be in range).
bool EntriesFit(const Manifest& m) {
  auto each = [&m] { return EachEntryFits(m); };
  auto names = [&m] { return CheckNames(m).ok() && CheckLinks(m).ok(); };
  if (m.num_entries() < kBothCoresFrom) return each() && names();
  return BothHold(each, names);
}

}  // namespace

std::unique_ptr<const Manifest> ManifestFile::Consistent(ManifestTables t) {
  if (!IndexesFit(t)) return nullptr;
  auto m = std::make_unique<const Manifest>(std::move(t));
  if (!EntriesFit(*m)) return nullptr;
  return m;
}

}  // namespace stitchfs::engine
