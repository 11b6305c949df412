#include "engine/backends/archive/archive_storage.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <deque>
#include <mutex>
#include <optional>

#include "engine/base/fd_file.h"
#include "engine/location/locator.h"

namespace stitchfs::engine {

// Thread-safe. At most kKept, the oldest forgotten first.
class ArchiveRefusals {
 public:
  // Why the archive at `path`, in the version `stamp`, was refused, if it was.
  std::optional<Status> Find(const ArchiveStamp& stamp, const std::string& path) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Refusal& r : refused_) {
      if (r.stamp == stamp && r.path == path) return r.status;
    }
    return std::nullopt;
  }
  void Add(const ArchiveStamp& stamp, const std::string& path, const Status& status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (refused_.size() >= kKept) refused_.pop_front();
    refused_.push_back({stamp, path, status});
  }

 private:
  struct Refusal {
    ArchiveStamp stamp;
    std::string path;
    Status status;
  };
  static constexpr size_t kKept = 64;
  mutable std::mutex mu_;
  std::deque<Refusal> refused_;
};

namespace {

ArchiveStamp StampOf(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size), FileTime::From(st.st_mtim),
          FileTime::From(st.st_ctim)};
}

class LocalFiles final : public ArchiveFiles {
 public:
  std::string Normal(const std::string& location) const override { return AbsolutePath(location); }

  StatusOr<OpenedArchive> Open(const std::string& location) const override {
    const std::string path = AbsolutePath(location);
    // Never blocks: a FIFO given an archive's name opens at once and is refused below.
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!fd) {
      const int e = errno;
      if (e == ENOENT || e == ENOTDIR || e == EACCES)
        return Status::BackupNotFound("Backup " + path + " not found", e);
      return Status::IOError("open archive " + path, e);
    }
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return Status::IOError("fstat archive " + path, errno);
    if (!S_ISREG(st.st_mode)) {
      return Status::BackupNotFound("Backup " + path +
                                    " not found (an archive name, but not a regular file)");
    }
    const ArchiveStamp stamp = StampOf(st);
    return OpenedArchive{std::make_shared<const FdFile>(std::move(fd), stamp.size, path), stamp};
  }

  StatusOr<std::optional<ArchiveStamp>> Stat(const std::string& location) const override {
    struct stat st;
    const std::string path = AbsolutePath(location);
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return std::optional<ArchiveStamp>();
      return Status::IOError("stat " + path, errno);
    }
    if (!S_ISREG(st.st_mode)) return std::optional<ArchiveStamp>();
    return std::optional(StampOf(st));
  }

  std::string LocatorFor(const std::string& location) const override {
    return FileLocator(AbsolutePath(location));
  }

  bool LockBeside(const std::string& location) const override {
    return ::access((AbsolutePath(location) + ".lock").c_str(), F_OK) == 0;
  }
};

// One archive opened: the file, and its reader once indexed (on first use).
class ArchiveFolder final : public BackupFolder {
 public:
  ArchiveFolder(std::string path, const ArchiveStamp& stamp,
                std::shared_ptr<const RandomAccessFile> file)
      : BackupFolder(std::move(path), {stamp.dev, stamp.ino}, kKind),
        stamp_(stamp),
        file_(std::move(file)) {}

  static constexpr BackendKind kKind{"an archive"};

  const ArchiveStamp& stamp() const { return stamp_; }

  // Indexed on first use, told to `sink` (may be null) as it goes.
  StatusOr<std::shared_ptr<const ArchiveReader>> Reader(const ArchiveCache* cache,
                                                        ArchiveRefusals& refusals,
                                                        const ProgressSink& sink) const {
    std::call_once(once_, [&] {
      if (auto refused = refusals.Find(stamp_, path())) {
        reader_ = *refused;
        return;
      }
      ArchiveReader::Progress progress;
      if (sink) {
        progress = [this, sink](uint64_t done, uint64_t total) { sink(path(), done, total); };
      }
      reader_ = ArchiveReader::Open(file_, ArchiveKindOf(path()), stamp_, path(), cache, progress);
      const ErrorCode code = reader_.status().code();
      if (code == ErrorCode::kBackupDamaged || code == ErrorCode::kNotSupported) {
        refusals.Add(stamp_, path(), reader_.status());
      }
    });
    return reader_;
  }

 private:
  const ArchiveStamp stamp_;
  const std::shared_ptr<const RandomAccessFile> file_;
  mutable std::once_flag once_;
  mutable StatusOr<std::shared_ptr<const ArchiveReader>> reader_ = Status::Internal("unset");
};

class MemberDataFile final : public BackupDataFile {
 public:
  MemberDataFile(std::unique_ptr<RandomAccessFile> member, std::string display)
      : member_(std::move(member)), display_(std::move(display)) {}
  uint64_t size() const override { return member_->size(); }
  const std::string& display_name() const override { return display_; }
  bool DropCached() const override { return member_->DropCached(); }

 protected:
  Status ReadExact(uint64_t offset, std::span<char> dst) const override {
    return member_->ReadAt(offset, dst).status();
  }

 private:
  std::unique_ptr<RandomAccessFile> member_;
  std::string display_;
};

}  // namespace

ArchiveStorage::ArchiveStorage(const ArchiveCache* cache, std::shared_ptr<const ArchiveFiles> files,
                               ProgressSink progress)
    : cache_(cache),
      files_(std::move(files)),
      refusals_(std::make_shared<ArchiveRefusals>()),
      progress_(std::move(progress)) {}

std::shared_ptr<const ArchiveFiles> LocalArchiveFiles() {
  static const auto files = std::make_shared<const LocalFiles>();
  return files;
}

StatusOr<std::shared_ptr<const BackupFolder>> ArchiveStorage::OpenFolder(
    const std::string& location) const {
  ASSIGN_OR_RETURN(OpenedArchive a, files_->Open(location));
  return std::shared_ptr<const BackupFolder>(
      std::make_shared<ArchiveFolder>(files_->Normal(location), a.stamp, std::move(a.file)));
}

StatusOr<ManifestSource> ArchiveStorage::OpenManifest(const BackupFolder& folder) const {
  ASSIGN_OR_RETURN(const ArchiveFolder* f, FolderAs<ArchiveFolder>(folder));
  ASSIGN_OR_RETURN(auto reader, f->Reader(cache_, *refusals_, progress_));
  const ArchiveMember* m = reader->index().Find(".backup");
  if (m == nullptr) {
    std::string why = "the archive has no .backup member: not a backup";
    if (files_->LockBeside(folder.path())) {
      why = "no .backup member; its .lock shows a backup being written, or one whose writer died";
    }
    return Status::BackupNotFound("Backup " + folder.path() + " not found (" + why + ")");
  }
  return ManifestSource{reader->OpenMember(*m), ArchiveIdentity(f->stamp())};
}

StatusOr<std::optional<ManifestIdentity>> ArchiveStorage::StatManifest(
    const std::string& location) const {
  ASSIGN_OR_RETURN(std::optional<ArchiveStamp> stamp, files_->Stat(location));
  if (!stamp) return std::optional<ManifestIdentity>();
  return std::optional(ArchiveIdentity(*stamp));
}

StatusOr<std::shared_ptr<const BackupDataFile>> ArchiveStorage::OpenDataFile(
    const std::shared_ptr<const BackupFolder>& folder, const std::string& relative,
    uint64_t /*declared_size*/) const {
  ASSIGN_OR_RETURN(const ArchiveFolder* f, FolderAs<ArchiveFolder>(*folder));
  ASSIGN_OR_RETURN(auto reader, f->Reader(cache_, *refusals_, progress_));
  const ArchiveMember* m = reader->index().Find(relative);
  const std::string display = folder->path() + ":" + relative;
  if (m == nullptr) {
    return Status::BackupDamaged("data file " + EscapeForMessage(display) +
                                 " is missing (no such member in the archive)");
  }
  return std::shared_ptr<const BackupDataFile>(
      std::make_shared<MemberDataFile>(reader->OpenMember(*m), display));
}

StatusOr<SharedBytes> ArchiveStorage::ReadIndex(const BackupFolder& folder) const {
  return Status::BackupNotFound("no resolved index in archive " + folder.path());
}

Status ArchiveStorage::WriteIndex(const BackupFolder& folder, std::string_view) const {
  return Status::NotSupported("archive " + folder.path() + " is read-only");
}

StatusOr<std::vector<StoreFolder>> ArchiveStorage::ScanStore(const std::string& location) const {
  return Status::BackupNotFound("store " + files_->Normal(location) +
                                " is an archive, not a folder of backups");
}

std::string ArchiveStorage::LocatorFor(const std::string& location) const {
  return files_->LocatorFor(location);
}

StatusOr<std::unique_ptr<BackupWriter>> ArchiveStorage::StartBackup(const std::string& location,
                                                                    const WriterIntent&,
                                                                    std::string*) const {
  return Status::NotSupported("cannot write backup " + location +
                              ": archives are read-only here; write a folder backup, then archive "
                              "it (tar, zip)");
}

}  // namespace stitchfs::engine
