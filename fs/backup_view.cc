#include "fs/backup_view.h"

#include "engine/base/string_file.h"
#include "engine/format/flat_manifest.h"
#include "fs/xattrs.h"

namespace stitchfs::fs {
namespace {

engine::Status NoInode(uint64_t ino) {
  return engine::Status::EntryNotFound("no inode " + std::to_string(ino));
}

}  // namespace

BackupView::BackupView(std::shared_ptr<const engine::ResolvedBackup> backup, AttrOptions attr,
                       uint64_t parent_ino)
    : backup_(std::move(backup)),
      table_(std::make_shared<const InodeTable>(InodeTable::Build(backup_->top().manifest()))),
      attr_(attr),
      parent_ino_(parent_ino) {}

BackupView::BackupView(std::shared_ptr<const engine::ResolvedBackup> backup, InodeTable table,
                       AttrOptions attr)
    : backup_(std::move(backup)),
      table_(std::make_shared<const InodeTable>(
          table.IsOf(backup_->top().manifest()) ? std::move(table)
                                                : InodeTable::Build(backup_->top().manifest()))),
      attr_(attr),
      parent_ino_(InodeTable::kRoot) {}

BackupView::BackupView(std::shared_ptr<const engine::ResolvedBackup> backup,
                       const BackupView& shape)
    : backup_(std::move(backup)),
      table_(shape.table_),
      attr_(shape.attr_),
      parent_ino_(shape.parent_ino_) {}

uint64_t BackupView::TotalBytes() const {
  std::call_once(total_once_, [this] {
    const engine::Manifest& m = backup_->top().manifest();
    for (size_t i = 0; i < m.num_entries(); ++i) total_size_ += m.size(i);
  });
  return total_size_;
}

engine::StatusOr<std::string> BackupView::FlatManifest() const {
  return engine::RenderFlatManifest(backup_->top().manifest());
}

engine::StatusOr<struct stat> BackupView::ManifestAttr() const {
  std::call_once(manifest_once_, [this] {
    auto text = FlatManifest();
    manifest_size_ = text.ok() ? engine::StatusOr<uint64_t>(text->size()) : text.status();
  });
  ASSIGN_OR_RETURN(const uint64_t size, manifest_size_);
  struct stat st = table_->Stat(InodeTable::kRoot, attr_);
  st.st_ino = ManifestIno();
  st.st_mode = S_IFREG | (0444 & ~attr_.umask.value_or(0));
  st.st_nlink = 1;
  st.st_size = static_cast<off_t>(size);
  st.st_blocks = (st.st_size + 511) / 512;
  st.st_mtim = {static_cast<time_t>(attr_.default_mtime_sec), 0};
  st.st_atim = st.st_ctim = st.st_mtim;
  return st;
}

engine::StatusOr<struct stat> BackupView::Attr(uint64_t ino) const {
  if (IsManifest(ino)) return ManifestAttr();
  const Inode* n = Get(ino);
  if (n == nullptr) return NoInode(ino);
  struct stat st = table_->Stat(Real(ino), attr_);
  if (n->type == InodeType::kFile && !IsMirror(ino)) {
    // A file without metadata that is unchanged since an older backup shows that backup's time.
    const auto origin = backup_->origin(n->ref);
    if (origin.level != 0 && backup_->top().manifest().meta(n->ref) == nullptr) {
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

engine::StatusOr<uint64_t> BackupView::Lookup(uint64_t parent, std::string_view name) const {
  const uint64_t child = table_->Lookup(Real(parent), name);
  if (child != 0) return IsMirror(parent) ? Mirror(child) : child;
  if (parent == InodeTable::kRoot && name == kAppendedDir) return Mirror(InodeTable::kRoot);
  if (parent == InodeTable::kRoot && name == kManifestFile && attr_.backup_manifest) {
    return ManifestIno();
  }
  return engine::Status::EntryNotFound("no entry \"" + std::string(name) + "\"");
}

engine::StatusOr<std::vector<DirEntry>> BackupView::ReadDir(uint64_t ino, size_t offset,
                                                            size_t max) const {
  const Inode* dir = Get(ino);
  if (dir == nullptr) return NoInode(ino);
  if (dir->type != InodeType::kDir) return engine::Status::InvalidArgument("not a folder");
  const auto kids = table_->Children(*dir);
  std::vector<DirEntry> out;
  for (size_t i = offset; i < kids.size() + 2 && out.size() < max; ++i) {
    if (i >= 2) {
      const uint64_t child = kids[i - 2].ino;
      out.push_back({std::string(kids[i - 2].Name()), IsMirror(ino) ? Mirror(child) : child});
    } else if (i == 0) {
      out.push_back({".", ino});
    } else if (Real(ino) == InodeTable::kRoot) {
      out.push_back({"..", IsMirror(ino) ? InodeTable::kRoot : parent_ino_});
    } else {
      out.push_back({"..", IsMirror(ino) ? Mirror(dir->parent) : dir->parent});
    }
  }
  return out;
}

engine::StatusOr<std::shared_ptr<const engine::RandomAccessFile>> BackupView::Open(
    uint64_t ino) const {
  if (IsManifest(ino)) {
    ASSIGN_OR_RETURN(std::string text, FlatManifest());
    return std::shared_ptr<const engine::RandomAccessFile>(
        std::make_shared<engine::StringFile>(std::move(text)));
  }
  const Inode* n = Get(ino);
  if (n == nullptr) return NoInode(ino);
  if (n->type != InodeType::kFile) return engine::Status::EntryNotFound("not a regular file");
  return IsMirror(ino) ? backup_->OpenStoredTail(n->ref) : backup_->OpenEntry(n->ref);
}

engine::StatusOr<std::shared_ptr<FileReads>> BackupView::Reads(uint64_t ino) const {
  return reads_.Get(ino, [&]() -> engine::StatusOr<std::shared_ptr<FileReads>> {
    ASSIGN_OR_RETURN(auto reader, Open(ino));
    // A mirror's bytes are checked when they are the whole file (stored whole here): a tail
    // alone has no checksum of its own.
    const Inode* n = IsManifest(ino) ? nullptr : Get(ino);
    if (n != nullptr && IsMirror(ino) && n->type == InodeType::kFile &&
        reader->size() != backup_->top().manifest().entry(n->ref).size) {
      n = nullptr;
    }
    if (n == nullptr || n->type != InodeType::kFile || reader->size() == 0) {
      return std::make_shared<FileReads>(std::move(reader), nullptr, std::nullopt);
    }
    std::optional<engine::Status> known;
    {
      std::lock_guard<std::mutex> lock(damaged_mu_);
      if (auto it = damaged_.find(ino); it != damaged_.end()) known = it->second;
    }
    auto new_check = [backup = backup_, ref = n->ref] {
      return std::make_unique<engine::ContentCheck>(*backup, ref, backup);
    };
    return std::make_shared<FileReads>(std::move(reader), std::move(new_check), std::move(known));
  });
}

std::optional<uint64_t> BackupView::NextFile(uint64_t ino) const {
  const Inode* n = IsManifest(ino) ? nullptr : Get(ino);
  if (n == nullptr || n->type != InodeType::kFile) return std::nullopt;
  const uint64_t real = Real(ino);
  // Folders are numbered before files, symlinks after them: a few steps find the next file.
  for (uint64_t j = real + 1; j <= table_->size() && j <= real + kNextFileSteps; ++j) {
    if (Get(j)->type == InodeType::kFile) return IsMirror(ino) ? Mirror(j) : j;
  }
  return std::nullopt;
}

std::optional<uint64_t> BackupView::FirstFileIn(uint64_t dir) const {
  const Inode* n = Get(dir);
  for (int depth = 0; n != nullptr && n->type == InodeType::kDir && depth < 64; ++depth) {
    const auto kids = table_->Children(*n);
    if (kids.empty()) return std::nullopt;
    const Inode* first = Get(kids[0].ino);
    if (first->type == InodeType::kFile) {
      return IsMirror(dir) ? Mirror(kids[0].ino) : uint64_t{kids[0].ino};
    }
    n = first;
  }
  return std::nullopt;
}

void BackupView::NoteDamaged(uint64_t ino, const engine::Status& s) const {
  std::lock_guard<std::mutex> lock(damaged_mu_);
  if (damaged_.size() < kMaxDamaged) damaged_.emplace(ino, s);
}

engine::StatusOr<std::string> BackupView::Readlink(uint64_t ino) const {
  const Inode* n = Get(ino);
  if (n == nullptr) return NoInode(ino);
  if (n->type != InodeType::kSymlink) return engine::Status::InvalidArgument("not a symlink");
  return std::string(backup_->top().manifest().node(n->ref).target);
}

namespace {

XattrSource XattrSourceOf(const BackupView& v) {
  return {v.backup(), v.table(), [&v]() -> const engine::BackupStats& { return v.Stats(); }};
}

}  // namespace

engine::StatusOr<std::vector<std::string>> BackupView::XattrNames(uint64_t ino) const {
  if (IsManifest(ino)) return std::vector<std::string>{};
  if (Get(ino) == nullptr) return NoInode(ino);
  if (IsMirror(ino)) return std::vector<std::string>{};
  return fs::XattrNames(XattrSourceOf(*this), ino);
}

engine::StatusOr<std::string> BackupView::Xattr(uint64_t ino, const std::string& name) const {
  if (IsManifest(ino)) return engine::Status::EntryNotFound("no attribute " + name);
  if (Get(ino) == nullptr) return NoInode(ino);
  if (IsMirror(ino)) return engine::Status::EntryNotFound("no attribute " + name);
  return XattrValue(XattrSourceOf(*this), ino, name);
}

const engine::BackupStats& BackupView::Stats() const {
  std::call_once(stats_once_, [this] { stats_ = backup_->Stats(); });
  return stats_;
}

std::optional<engine::ResolvedBackup::Origin> BackupView::Origin(uint64_t ino) const {
  const Inode* n = IsMirror(ino) ? nullptr : table_->Get(ino);
  if (n == nullptr || n->type != InodeType::kFile || n->nlink != 1) return std::nullopt;
  return backup_->origin(n->ref);
}

}  // namespace stitchfs::fs
