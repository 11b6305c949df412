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
  const Inode* n = table_.Get(Real(ino));
  if (n == nullptr) return std::nullopt;
  struct stat st = table_.Stat(Real(ino), attr_);
  if (IsMirror(ino)) {
    st.st_ino = ino;
    if (n->type == InodeType::kFile) {
      // The bytes OpenStoredTail serves: those of the entry readers use for this content.
      const engine::Manifest& m = chain_->top().manifest();
      engine::FileEntry e = m.entry(n->ref);
      if (e.size > 0) e = m.entry(*m.FindByContent(e.size, e.checksum));
      st.st_size = static_cast<off_t>(e.size - e.base_size);
      st.st_blocks = (st.st_size + 511) / 512;
    }
  }
  return st;
}

uint64_t BackupView::Lookup(uint64_t parent, std::string_view name) const {
  const uint64_t child = table_.Lookup(Real(parent), name);
  if (child == 0 && parent == InodeTable::kRoot && name == kAppendedDir)
    return Mirror(InodeTable::kRoot);
  return child == 0 ? 0 : IsMirror(parent) ? Mirror(child) : child;
}

bool BackupView::DirEntry(uint64_t ino, size_t index, std::string* name, uint64_t* child) const {
  const uint64_t real = Real(ino);
  const Inode* dir = table_.Get(real);
  if (dir == nullptr) return false;
  if (index < 2) {
    *name = index == 0 ? "." : "..";
    if (index == 0) {
      *child = ino;
    } else if (real == InodeTable::kRoot) {
      *child = IsMirror(ino) ? InodeTable::kRoot : parent_ino_;
    } else {
      *child = IsMirror(ino) ? Mirror(dir->parent) : dir->parent;
    }
    return true;
  }
  auto kids = table_.Children(*dir);
  if (index - 2 >= kids.size()) return false;
  *name = std::string(kids[index - 2].Name());
  *child = IsMirror(ino) ? Mirror(kids[index - 2].ino) : kids[index - 2].ino;
  return true;
}

engine::StatusOr<std::shared_ptr<const engine::RandomAccessFile>> BackupView::Open(
    uint64_t ino) const {
  const Inode* n = table_.Get(Real(ino));
  if (n == nullptr || n->type != InodeType::kFile) {
    return engine::Status::EntryNotFound("no such file");
  }
  return IsMirror(ino) ? chain_->OpenStoredTail(n->ref) : chain_->OpenEntry(n->ref);
}

engine::StatusOr<std::string> BackupView::Readlink(uint64_t ino) const {
  const Inode* n = table_.Get(Real(ino));
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
