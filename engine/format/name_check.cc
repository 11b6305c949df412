#include "engine/format/name_check.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace stitchfs::engine {
namespace {

// One name of the manifest: an entry (a file) or a node (a folder or a symlink).
struct Named {
  std::string_view name;
  NodeType type;  // kDir or kSymlink for a node.
  bool is_entry;
  uint32_t index;  // Of the entry (manifest order) or the node.

  bool folder() const { return !is_entry && type == NodeType::kDir; }
  std::string Describe() const {
    std::string out = is_entry ? "file \"" : folder() ? "folder \"" : "symlink \"";
    out.append(name);
    if (is_entry) return out + "\" (<file> number " + std::to_string(index + 1) + ")";
    return out + (folder() ? "\" (<stitchfs_dir>)" : "\" (<stitchfs_symlink>)");
  }
};

Status OneName(const Named& a, const Named& b) {
  return Status::BackupDamaged(a.Describe() + " and " + b.Describe() + " have one name");
}

// by_name() keeps the first entry of a name: the first entry left out has an earlier namesake.
Status DuplicateEntry(const Manifest& m) {
  std::vector<bool> listed(m.num_entries(), false);
  for (uint32_t i : m.by_name()) listed[i] = true;
  for (uint32_t i = 0; i < listed.size(); ++i) {
    if (listed[i]) continue;
    const auto first = static_cast<uint32_t>(m.FindByName(m.name(i)).value_or(i));
    return OneName({m.name(first), NodeType::kDir, true, first},
                   {m.name(i), NodeType::kDir, true, i});
  }
  return Status::Internal("by_name() lost an entry that has no namesake");
}

// The nodes in name order (a stable sort, only if the writer did not leave them sorted).
std::vector<Named> SortedNodes(const Manifest& m) {
  std::vector<Named> nodes;
  nodes.reserve(m.num_nodes());
  for (uint32_t i = 0; i < m.num_nodes(); ++i) {
    const Node n = m.node(i);
    nodes.push_back({n.name, n.type, false, i});
  }
  auto by_name = [](const Named& a, const Named& b) { return a.name < b.name; };
  if (!std::is_sorted(nodes.begin(), nodes.end(), by_name)) {
    std::stable_sort(nodes.begin(), nodes.end(), by_name);
  }
  return nodes;
}

// Walks every name in sorted order. Between a name and any path under it ("a", "a/b") only
// names that begin with it sort ("a.txt"), so the files and symlinks that begin the current
// name form a stack of prefixes of one another; no path under one of them is accepted, so the
// top is the only one the current name can be under.
class Walk {
 public:
  Status Next(const Named& n) {
    if (prev_ && prev_->name == n.name) return OneName(*prev_, n);
    while (!files_.empty() && !n.name.starts_with(files_.back().name)) files_.pop_back();
    if (!files_.empty() && n.name[files_.back().name.size()] == '/') {
      return Status::BackupDamaged(n.Describe() + " is under " + files_.back().Describe() +
                                   ", which is not a folder");
    }
    if (!n.folder()) files_.push_back(n);
    prev_ = n;
    return Status::OK();
  }

 private:
  std::vector<Named> files_;  // Files and symlinks that begin the current name.
  std::optional<Named> prev_;
};

}  // namespace

Status CheckNames(const Manifest& m) {
  if (m.by_name().size() != m.num_entries()) return DuplicateEntry(m);
  const std::vector<Named> nodes = SortedNodes(m);
  const std::span<const uint32_t> entries = m.by_name();
  Walk walk;
  size_t e = 0, k = 0;
  while (e < entries.size() || k < nodes.size()) {
    const bool take_entry =
        k == nodes.size() || (e < entries.size() && m.name(entries[e]) <= nodes[k].name);
    if (take_entry) {
      const uint32_t i = entries[e++];
      RETURN_IF_ERROR(walk.Next({m.name(i), NodeType::kDir, true, i}));
    } else {
      RETURN_IF_ERROR(walk.Next(nodes[k++]));
    }
  }
  return Status::OK();
}

}  // namespace stitchfs::engine
