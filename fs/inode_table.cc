#include "fs/inode_table.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "engine/format/hard_links.h"

namespace stitchfs::fs {
namespace {

std::string_view ParentOf(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

std::string_view LeafOf(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

constexpr uint32_t kUnset = UINT32_MAX;  // first_child before the children are laid out.

// A folder's child folder: (parent inode, leaf name).
struct DirKey {
  uint32_t parent;
  std::string_view leaf;
  bool operator==(const DirKey&) const = default;
};
struct DirKeyHash {
  size_t operator()(const DirKey& k) const {
    return std::hash<std::string_view>()(k.leaf) * 31 + k.parent;
  }
};

// Collects (parent ino, name, child ino) while inodes are created. Folders are found component
// by component from the root, keyed by (parent, leaf): the work is linear in the length of the
// paths asked for, however deep (a full path per folder level made it quadratic in the depth).
class Builder {
 public:
  explicit Builder(std::vector<Inode>* inodes) : inodes_(inodes) {
    inodes_->push_back({InodeType::kDir, InodeTable::kRoot, InodeTable::kNoRef, kUnset, 2});
  }

  // The folder inode for `path` (a view into the manifest's names), created (with its parents)
  // if missing, parents first. Names come sorted, so consecutive paths mostly share their
  // leading folders: those are taken from the last path's, and only the rest are looked up.
  uint32_t Dir(std::string_view path) {
    if (path.empty()) return InodeTable::kRoot;
    const size_t kept = SharedFolders(path);
    stack_.resize(kept);
    uint32_t ino = kept ? stack_.back().ino : InodeTable::kRoot;
    for (size_t start = kept ? stack_.back().end + 1 : 0; start <= path.size();) {
      const size_t slash = std::min(path.find('/', start), path.size());
      ino = Child(ino, path.substr(start, slash - start));
      stack_.push_back({slash, ino});
      start = slash + 1;
    }
    last_path_ = path;
    return ino;
  }

  uint32_t New(InodeType type, uint32_t parent, uint32_t ref) {
    inodes_->push_back({type, parent, ref, kUnset, type == InodeType::kDir ? 2u : 1u});
    return static_cast<uint32_t>(inodes_->size());
  }

  // True if folder `parent` has a child folder named `leaf`. Most folders hold files only (a
  // part's columns): those answer without a lookup.
  bool IsDir(uint32_t parent, std::string_view leaf) const {
    return parent < has_dirs_.size() && has_dirs_[parent] && dirs_.count(DirKey{parent, leaf}) > 0;
  }
  void SetDirRef(std::string_view path, uint32_t node) { (*inodes_)[Dir(path) - 1].ref = node; }

  struct LinkRec {  // 24 bytes: there is one per name in the backup.
    uint32_t parent, ino;
    const char* name;
    uint32_t name_len;
    std::string_view Name() const { return {name, name_len}; }
  };
  void AddLink(uint32_t parent, std::string_view name, uint32_t ino) {
    links_.push_back({parent, ino, name.data(), static_cast<uint32_t>(name.size())});
  }
  std::vector<LinkRec> links_;

 private:
  std::vector<Inode>* inodes_;
  std::unordered_map<DirKey, uint32_t, DirKeyHash> dirs_;
  std::vector<bool> has_dirs_;  // [ino]: the folder has a child folder.
  // The last path asked for, and its folders: where each one's name ends in it, and its inode.
  struct Level {
    size_t end;
    uint32_t ino;
  };
  std::string_view last_path_;
  std::vector<Level> stack_;

  // How many leading folders of `path` are those of last_path_.
  size_t SharedFolders(std::string_view path) const {
    const size_t n = std::min(path.size(), last_path_.size());
    const size_t same =
        std::mismatch(path.begin(), path.begin() + n, last_path_.begin()).first - path.begin();
    size_t kept = 0;
    while (kept < stack_.size() && stack_[kept].end < same) ++kept;
    // A folder ending where the two part is shared if `path` ends there too, or goes into it.
    if (kept < stack_.size() && stack_[kept].end == same &&
        (same == path.size() || path[same] == '/')) {
      ++kept;
    }
    return kept;
  }

  // Folder `parent`'s child folder `leaf`, created if missing.
  uint32_t Child(uint32_t parent, std::string_view leaf) {
    auto [it, added] = dirs_.try_emplace(DirKey{parent, leaf}, 0);
    if (added) {
      it->second = New(InodeType::kDir, parent, InodeTable::kNoRef);
      AddLink(parent, leaf, it->second);
      if (has_dirs_.size() <= parent) has_dirs_.resize(parent + 1);
      has_dirs_[parent] = true;
    }
    return it->second;
  }
};

// The order of `links` by (parent, name), as indexes: a counting sort by parent (stable), then
// each folder's names, which mostly come sorted already (the manifest is sorted by full path).
template <typename Link>
std::vector<uint32_t> SortLinks(const std::vector<Link>& links, size_t num_inodes) {
  std::vector<uint32_t> start(num_inodes + 2, 0);
  for (const Link& l : links) ++start[l.parent + 1];
  for (size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  std::vector<uint32_t> order(links.size());
  for (uint32_t i = 0; i < links.size(); ++i) order[start[links[i].parent]++] = i;
  // start[p] is now the end of folder p's run, and the start of folder p + 1's.
  auto by_name = [&links](uint32_t x, uint32_t y) { return links[x].Name() < links[y].Name(); };
  for (size_t p = 0, begin = 0; p + 1 < start.size(); begin = start[p++]) {
    auto first = order.begin() + begin, last = order.begin() + start[p];
    if (!std::is_sorted(first, last, by_name)) std::stable_sort(first, last, by_name);
  }
  return order;
}

}  // namespace

InodeTable InodeTable::Build(const engine::Manifest& m) {
  InodeTable t(&m);
  Builder b(&t.inodes_);
  std::vector<std::pair<std::string_view, uint32_t>> symlinks;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    engine::Node n = m.node(i);
    if (n.type == engine::NodeType::kDir) {
      b.SetDirRef(n.name, static_cast<uint32_t>(i));
    } else {
      symlinks.emplace_back(n.name, static_cast<uint32_t>(i));
    }
  }
  // Every folder first, so a name that is both a file and a folder resolves to the folder.
  std::vector<uint32_t> parents;  // Of each name, in by_name order.
  parents.reserve(m.by_name().size());
  for (uint32_t i : m.by_name()) parents.push_back(b.Dir(ParentOf(m.name(i))));
  for (auto [name, node] : symlinks) b.Dir(ParentOf(name));
  const size_t names = m.by_name().size() + symlinks.size();  // No reallocation from here on.
  t.inodes_.reserve(t.inodes_.size() + names + 1);            // (+ the sentinel)
  b.links_.reserve(b.links_.size() + names);
  // Names of one file (engine::LinkLeaders): the leader's inode, shared.
  const std::vector<uint32_t> leaders = engine::LinkLeaders(m);
  std::unordered_map<uint32_t, uint32_t> leader_ino;
  for (size_t k = 0; k < parents.size(); ++k) {
    const uint32_t i = m.by_name()[k], parent = parents[k];
    const std::string_view name = m.name(i);
    if (b.IsDir(parent, LeafOf(name))) continue;  // (CheckNames refuses it.)
    uint32_t ino = 0;
    if (leaders[i] != i) {
      auto it = leader_ino.find(leaders[i]);
      if (it != leader_ino.end()) {
        ino = it->second;
        ++t.inodes_[ino - 1].nlink;
      }
    }
    if (ino == 0) {
      ino = b.New(InodeType::kFile, 0, i);
      if (engine::LinkClaim(m.meta(i))) leader_ino.emplace(leaders[i], ino);
    }
    b.AddLink(parent, LeafOf(name), ino);
  }
  for (auto [name, node] : symlinks) {
    const uint32_t parent = b.Dir(ParentOf(name));
    if (b.IsDir(parent, LeafOf(name))) continue;  // (CheckNames refuses it.)
    b.AddLink(parent, LeafOf(name), b.New(InodeType::kSymlink, 0, node));
  }
  const auto& links = b.links_;
  const std::vector<uint32_t> order = SortLinks(links, t.inodes_.size());
  t.children_.reserve(links.size());
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& l = links[order[k]];
    const auto* prev = k ? &links[order[k - 1]] : nullptr;
    if (prev && prev->parent == l.parent && prev->Name() == l.Name()) continue;  // Keep the first.
    Inode& dir = t.inodes_[l.parent - 1];
    if (dir.first_child == kUnset) dir.first_child = static_cast<uint32_t>(t.children_.size());
    Inode& child = t.inodes_[l.ino - 1];
    if (child.type == InodeType::kDir) ++dir.nlink;
    t.children_.push_back({l.name, l.name_len, l.ino});
  }
  // Runs are in inode order: an inode without children starts where the next run starts.
  t.inodes_.push_back({InodeType::kFile, 0, kNoRef, static_cast<uint32_t>(t.children_.size()), 0});
  for (size_t i = t.inodes_.size() - 1; i-- > 0;) {
    if (t.inodes_[i].first_child == kUnset) t.inodes_[i].first_child = t.inodes_[i + 1].first_child;
  }
  return t;
}

const Inode* InodeTable::Get(uint64_t ino) const {
  if (ino == 0 || ino > size()) return nullptr;
  return &inodes_[ino - 1];
}

std::span<const Dirent> InodeTable::Children(const Inode& dir) const {
  if (dir.type != InodeType::kDir) return {};
  const uint32_t end = (&dir + 1)->first_child;  // The next inode, or the sentinel.
  return std::span<const Dirent>(children_.data() + dir.first_child, end - dir.first_child);
}

uint32_t InodeTable::Lookup(uint64_t dir_ino, std::string_view name) const {
  const Inode* dir = Get(dir_ino);
  if (dir == nullptr) return 0;
  auto kids = Children(*dir);
  auto it = std::lower_bound(kids.begin(), kids.end(), name,
                             [](const Dirent& d, std::string_view n) { return d.Name() < n; });
  return it != kids.end() && it->Name() == name ? it->ino : 0;
}

struct stat InodeTable::Stat(uint64_t ino, const AttrOptions& o) const {
  const Inode& n = inodes_[ino - 1];
  struct stat st = {};
  st.st_ino = ino;
  st.st_nlink = n.nlink;
  const engine::PosixMeta* meta = nullptr;
  if (n.type == InodeType::kFile) {
    st.st_size = static_cast<off_t>(m_->size(n.ref));
    meta = m_->meta(n.ref);
    st.st_mode = S_IFREG | 0444;
  } else if (n.type == InodeType::kSymlink) {
    st.st_size = static_cast<off_t>(m_->node(n.ref).target.size());
    meta = &m_->node_meta(n.ref);
    st.st_mode = S_IFLNK | 0777;
  } else {
    if (n.ref != kNoRef) meta = &m_->node_meta(n.ref);
    st.st_mode = S_IFDIR | 0555;
  }
  struct timespec mtime = {static_cast<time_t>(o.default_mtime_sec), 0};
  if (meta) {
    st.st_mode = (st.st_mode & S_IFMT) | (n.type == InodeType::kSymlink ? 0777 : meta->mode);
    st.st_uid = meta->uid;
    st.st_gid = meta->gid;
    mtime = meta->mtime.ToTimespec();
  }
  if (o.uid) st.st_uid = *o.uid;
  if (o.gid) st.st_gid = *o.gid;
  if (o.umask) st.st_mode &= ~*o.umask;
  st.st_mtim = mtime;
  st.st_atim = st.st_ctim = st.st_mtim;
  st.st_blksize = 4096;
  st.st_blocks = (st.st_size + 511) / 512;
  return st;
}

}  // namespace stitchfs::fs
