// StoreMoves for a store folder on this machine: renames within the store's folder
// (LocalStorage::MovesFor). Storage-layer code kept beside prune: nothing here includes a header
// above engine/storage/.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <unordered_set>

#include "engine/backends/local/backup_lock.h"
#include "engine/backends/local/local_storage.h"
#include "engine/base/atomic_file.h"
#include "engine/base/folder_list.h"
#include "engine/base/unique_fd.h"
#include "engine/location/archive_kind.h"
#include "engine/storage/backup.h"
#include "engine/storage/store_moves.h"

namespace fs = std::filesystem;

namespace stitchfs::engine {
namespace {

constexpr const char* kFlattenSuffix = ".stitch-flatten";
constexpr const char* kRemovedSuffix = ".stitch-removed";    // Taken out after the proof.
constexpr const char* kRemovingSuffix = ".stitch-removing";  // RemovingMarker.
// Set aside by an older version, before its proof: never deleted unproven, left with a warning.
constexpr const char* kOldDeletingSuffix = ".stitch-deleting";

// A work folder of prune beside `path`: ".<name><suffix>", never listed as a backup.
std::string WorkPath(const std::string& path, const char* suffix) {
  return (fs::path(path).parent_path() / ("." + fs::path(path).filename().string() + suffix))
      .string();
}

// Finishes the copy `w` in `tmp` of `storage`, reads its manifest back from the disk, and
// exchanges it with the backup at `path`; returns its bytes.
StatusOr<uint64_t> SwapIn(const Storage& storage, BackupWriter& w, std::string_view manifest,
                          const std::string& tmp, const std::string& path) {
  RETURN_IF_ERROR(w.Finish(manifest));
  // Written and fsynced: its pages are clean, and once dropped the read below goes to the disk.
  if (UniqueFd m(::open((tmp + "/.backup").c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)); m) {
    ::posix_fadvise(m.get(), 0, 0, POSIX_FADV_DONTNEED);
  }
  if (Status s = CheckManifestReadsBack(storage, tmp, manifest); !s.ok()) {
    std::error_code ec;
    fs::remove_all(tmp, ec);  // Never a kept backup; a later prune removes it otherwise.
    return s.WithSuffix("; the backup " + path + " was not replaced");
  }
  const uint64_t written = DiskUsage({tmp})[0];
  if (::syscall(SYS_renameat2, AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE) !=
      0) {
    return Status::IOError("exchange " + tmp + " with " + path, errno);
  }
  RETURN_IF_ERROR(SyncDir(fs::path(path).parent_path().string()));
  std::error_code ec;
  fs::remove_all(tmp, ec);  // Now the old, incremental copy.
  return written;
}

class LocalStoreMoves final : public StoreMoves {
 public:
  LocalStoreMoves(std::string store, const Storage& storage)
      : store_(std::move(store)), storage_(storage) {}

  Status Lock() override {
    lock_ = UniqueFd(::open(store_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!lock_) return Status::IOError("open " + store_, errno);
    if (::flock(lock_.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) {
        return Status::IOError("another stitch prune is running on " + store_, EBUSY);
      }
      return Status::IOError("flock " + store_, errno);
    }
    return Status::OK();
  }

  // Folders being deleted (taken out after prune's proof) and flattened copies go; a folder an
  // older version set aside is left with a warning (it may be unproven, or half deleted); then
  // the marks of backups never taken out (the prune stopped before its proof) are taken away.
  std::vector<std::string> RemoveLeftovers() override {
    auto names = ListFolder(store_);
    if (!names.ok()) return {};
    std::vector<std::string> left;
    std::error_code ec;
    for (const std::string& n : *names) {
      if (n.front() != '.') continue;
      if (n.ends_with(kRemovedSuffix) || n.ends_with(kFlattenSuffix) ||
          (n.ends_with(kOldDeletingSuffix) && MarkedAfterProof(n))) {
        fs::remove_all(store_ + "/" + n, ec);
      } else if (n.ends_with(kOldDeletingSuffix)) {
        left.push_back("left " + store_ + "/" + n + " as it is: a prune of an older version " +
                       "set it aside and stopped, maybe before proving it unneeded, maybe " +
                       "while deleting it; if a backup needs it and it is whole, rename it back " +
                       "to " + OldName(n) + ", else remove it");
      }
    }
    // Durable first: a mark must not outlive, after a power loss, the removal it guarded.
    if (Status s = SyncDir(store_); !s.ok()) return left;
    for (const std::string& n : *names) {
      if (n.front() == '.' && n.ends_with(kRemovingSuffix)) ::unlink((store_ + "/" + n).c_str());
    }
    return left;
  }

  StatusOr<std::vector<StoreWriter>> Writers(const std::set<std::string>& backups) override {
    ASSIGN_OR_RETURN(std::vector<std::string> names, ListFolder(store_));
    std::vector<StoreWriter> out;
    for (const std::string& n : names) {
      if (n.front() == '.' || backups.count(n)) continue;
      if (auto lock = LiveWriterIn(store_ + "/" + n)) out.push_back({store_ + "/" + n, *lock});
    }
    return out;
  }

  std::vector<uint64_t> BytesFreed(const std::vector<std::string>& paths) override {
    return DiskUsage(paths);
  }

  std::optional<std::string> NestedBackup(const std::string& path, const Manifest& m) override {
    std::unordered_set<std::string_view> data;
    for (size_t i = 0; i < m.num_entries(); ++i) {
      if (m.entry(i).has_data_file()) data.insert(m.entry(i).data_file);
    }
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(path, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if ((name != ".backup" && name != ".lock") || it.depth() == 0 || !it->is_regular_file(ec) ||
          it->is_symlink(ec)) {
        continue;
      }
      const std::string rel = it->path().lexically_relative(path).string();
      if (!data.count(rel)) return it->path().parent_path().string();
    }
    return std::nullopt;
  }

  StatusOr<std::unique_ptr<StoreReplacement>> StartReplace(const std::string& path,
                                                           const std::string& uuid) override {
    if (ArchiveKindOf(path).is_archive()) {  // Prune keeps an archive's bases instead.
      return Status::Internal("an archive backup is never rewritten: " + path);
    }
    const std::string tmp = WorkPath(path, kFlattenSuffix);
    std::error_code ec;
    fs::remove_all(tmp, ec);  // Left by an interrupted run: never a kept backup.
    std::string notice;
    ASSIGN_OR_RETURN(auto copy, storage_.StartBackup(tmp, WriterIntent{uuid, "", ""}, &notice));
    return std::unique_ptr<StoreReplacement>(new CopyReplacement(
        std::move(copy), "", [&storage = storage_, tmp, path](BackupWriter& w, std::string_view m) {
          return SwapIn(storage, w, m, tmp, path);
        }));
  }

  Status SetAside(const std::string& path) override {
    const std::string marker = RemovingMarker(path);
    UniqueFd fd(::open(marker.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return Status::IOError("create " + marker, errno);
    return Status::OK();
  }

  void PutBack(const std::string& path) override { ::unlink(RemovingMarker(path).c_str()); }

  // Taken out by a rename (from here on it no longer opens) made durable, then deleted; the
  // mark goes last.
  Status Remove(const std::string& path) override {
    const std::string gone = WorkPath(path, kRemovedSuffix);
    if (::rename(path.c_str(), gone.c_str()) != 0) return Status::IOError("rename " + path, errno);
    RETURN_IF_ERROR(SyncDir(store_));
    std::error_code ec;
    fs::remove_all(gone, ec);
    if (ec) return Status::IOError("remove " + gone, ec.value());
    ::unlink(RemovingMarker(path).c_str());
    return Status::OK();
  }

  Status Sync() override { return SyncDir(store_); }

 private:
  // NAME, of `.NAME.stitch-deleting`.
  static std::string OldName(const std::string& old) {
    return old.substr(1, old.size() - 1 - std::string_view(kOldDeletingSuffix).size());
  }
  // True if `.NAME.stitch-deleting` has a mark beside it and no NAME: taken out after the proof
  // (the first version that marked took it out under that name). A mark with NAME there is the
  // mark of a new backup of that name.
  bool MarkedAfterProof(const std::string& old) const {
    const std::string name = store_ + "/" + OldName(old);
    struct stat st;
    return ::lstat(RemovingMarker(name).c_str(), &st) == 0 && ::lstat(name.c_str(), &st) != 0 &&
           errno == ENOENT;
  }

  const std::string store_;
  const Storage& storage_;
  UniqueFd lock_;  // The store's folder, flocked by Lock().
};

}  // namespace

StatusOr<std::unique_ptr<StoreMoves>> LocalStorage::MovesFor(const std::string& location) const {
  return std::unique_ptr<StoreMoves>(new LocalStoreMoves(AbsolutePath(location), *this));
}

}  // namespace stitchfs::engine
