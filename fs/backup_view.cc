#include "fs/backup_view.h"

#include "fs/xattrs.h"

namespace stitchfs::fs {

BackupView::BackupView(std::shared_ptr<const engine::BackupChain> chain, AttrOptions attr,
                       uint64_t parent_ino)
    : chain_(std::move(chain)),
      table_(InodeTable::Build(chain_->top().manifest(), &conflicts_)),
      attr_(attr),
      parent_ino_(parent_ino) {
  const engine::Manifest& m = chain_->top().manifest();
  for (size_t i = 0; i < m.num_entries(); ++i) total_size_ += m.entry(i).size;
}

std::optional<struct stat> BackupView::Attr(uint64_t ino) const {
  if (table_.Get(ino) == nullptr) return std::nullopt;
  return table_.Stat(ino, attr_);
}

uint64_t BackupView::Lookup(uint64_t parent, std::string_view name) const {
  return table_.Lookup(parent, name);
}

bool BackupView::DirEntry(uint64_t ino, size_t index, std::string* name, uint64_t* child) const {
  const Inode* dir = table_.Get(ino);
  if (dir == nullptr) return false;
  if (index < 2) {
    *name = index == 0 ? "." : "..";
    *child = index == 0 ? ino : ino == InodeTable::kRoot ? parent_ino_ : dir->parent;
    return true;
  }
  auto kids = table_.Children(*dir);
  if (index - 2 >= kids.size()) return false;
  *name = std::string(kids[index - 2].Name());
  *child = kids[index - 2].ino;
  return true;
}

engine::StatusOr<std::shared_ptr<const engine::RandomAccessFile>> BackupView::Open(
    uint64_t ino) const {
  const Inode* n = table_.Get(ino);
  if (n == nullptr || n->type != InodeType::kFile)
    return engine::Status::EntryNotFound("no such file");
  return chain_->OpenEntry(n->ref);
}

engine::StatusOr<std::string> BackupView::Readlink(uint64_t ino) const {
  const Inode* n = table_.Get(ino);
  if (n == nullptr || n->type != InodeType::kSymlink) {
    return engine::Status::InvalidArgument("not a symlink");
  }
  return std::string(chain_->top().manifest().node(n->ref).target);
}

std::vector<std::string> BackupView::XattrNames(uint64_t ino) const {
  return fs::XattrNames(*this, ino);
}

std::optional<std::string> BackupView::Xattr(uint64_t ino, const std::string& name) const {
  return XattrValue(*this, ino, name);
}

const engine::BackupStats& BackupView::Stats() const {
  std::call_once(stats_once_, [this] {
    auto st = engine::ComputeStats(*chain_);
    if (st.ok()) stats_ = *st;
  });
  return stats_;
}

}  // namespace stitchfs::fs
