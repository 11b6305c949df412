#include "fs/backup_view.h"

#include "fs/xattrs.h"

namespace stitchfs::fs {

BackupView::BackupView(std::shared_ptr<const engine::ResolvedBackup> backup, AttrOptions attr,
                       uint64_t parent_ino)
    : backup_(std::move(backup)),
      table_(InodeTable::Build(backup_->top().manifest(), &conflicts_)),
      attr_(attr),
      parent_ino_(parent_ino) {
  const engine::Manifest& m = backup_->top().manifest();
  for (size_t i = 0; i < m.num_entries(); ++i) total_size_ += m.entry(i).size;
}

std::optional<struct stat> BackupView::Attr(uint64_t ino) const {
  const Inode* n = table_.Get(Real(ino));
  if (n == nullptr) return std::nullopt;
  struct stat st = table_.Stat(Real(ino), attr_);
  if (n->type == InodeType::kFile && !IsMirror(ino)) {
    // A file without metadata that is unchanged since an older backup shows that backup's time.
    const auto origin = backup_->origin(n->ref);
    if (origin.level != 0 && !backup_->top().manifest().entry(n->ref).meta) {
      st.st_mtim = {static_cast<time_t>(backup_->level(origin.level).mtime_sec), 0};
      st.st_atim = st.st_ctim = st.st_mtim;
    }
  }
  if (IsMirror(ino)) {
    st.st_ino = ino;
    if (n->type == InodeType::kFile) {  // The bytes OpenStoredTail serves.
      auto x = backup_->Extents(n->ref);
      st.st_size = !x.empty() && x.back().level == 0 ? static_cast<off_t>(x.back().length) : 0;
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
  return IsMirror(ino) ? backup_->OpenStoredTail(n->ref) : backup_->OpenEntry(n->ref);
}

engine::StatusOr<std::string> BackupView::Readlink(uint64_t ino) const {
  const Inode* n = table_.Get(Real(ino));
  if (n == nullptr || n->type != InodeType::kSymlink) {
    return engine::Status::InvalidArgument("not a symlink");
  }
  return std::string(backup_->top().manifest().node(n->ref).target);
}

std::vector<std::string> BackupView::XattrNames(uint64_t ino) const {
  return fs::XattrNames(*this, ino);
}

std::optional<std::string> BackupView::Xattr(uint64_t ino, const std::string& name) const {
  return XattrValue(*this, ino, name);
}

const engine::BackupStats& BackupView::Stats() const {
  std::call_once(stats_once_, [this] { stats_ = backup_->Stats(); });
  return stats_;
}

std::optional<engine::ResolvedBackup::Origin> BackupView::Origin(uint64_t ino) const {
  const Inode* n = IsMirror(ino) ? nullptr : table_.Get(ino);
  if (n == nullptr || n->type != InodeType::kFile || n->nlink != 1) return std::nullopt;
  return backup_->origin(n->ref);
}

}  // namespace stitchfs::fs
