// LocalStorage's writing side: a backup folder being written on this machine.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "engine/backends/local/backup_lock.h"
#include "engine/backends/local/data_file.h"
#include "engine/backends/local/local_storage.h"
#include "engine/base/atomic_file.h"
#include "engine/base/fd_file.h"
#include "engine/base/interrupt.h"
#include "engine/base/posix_file.h"
#include "engine/storage/writable_fd.h"

namespace stitchfs::engine {
namespace {

constexpr const char* kStaging = ".stitch-tmp";

class LocalWriter final : public BackupWriter {
 public:
  LocalWriter(std::unique_ptr<BackupLock> lock, UniqueFd staging)
      : lock_(std::move(lock)), staging_(std::move(staging)) {}

  StatusOr<std::unique_ptr<WritableFile>> CreateStaged(const std::string& id,
                                                       const std::string& /*name*/) override {
    UniqueFd fd(::openat(staging_.get(), id.c_str(),
                         O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd) return Status::IOError("create a staged data file", errno);
    return WritableFd(std::move(fd), id);
  }

  Status DropStaged(const std::string& id) override {
    if (::unlinkat(staging_.get(), id.c_str(), 0) != 0 && errno != ENOENT) {
      return Status::IOError("remove a staged data file", errno);
    }
    return Status::OK();
  }

  Status Publish(const std::string& id, const std::string& name) override {
    auto [dir, leaf] = Split(name);
    ASSIGN_OR_RETURN(UniqueFd parent, MakeDirsBeneath(lock_->dir_fd(), dir));
    if (::renameat(staging_.get(), id.c_str(), parent.get(), leaf.c_str()) != 0) {
      return Status::IOError("move data file into place as " + name, errno);
    }
    return Status::OK();
  }

  StatusOr<std::unique_ptr<WritableFile>> CreateDataFile(const std::string& name) override {
    auto [dir, leaf] = Split(name);
    ASSIGN_OR_RETURN(UniqueFd parent, MakeDirsBeneath(lock_->dir_fd(), dir));
    UniqueFd fd(::openat(parent.get(), leaf.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!fd) return Status::IOError("create data file " + name, errno);
    return WritableFd(std::move(fd), name);
  }

  StatusOr<std::shared_ptr<const RandomAccessFile>> ReadBack(const std::string& name,
                                                             uint64_t size) override {
    const std::string display = lock_->path() + "/" + name;
    ASSIGN_OR_RETURN(auto opened, OpenDataFileBeneath(lock_->dir_fd(), name, display));
    if (opened.second.size != size) {
      return Status::BackupDamaged("data file " + display + " has " +
                                   std::to_string(opened.second.size) + " bytes, " +
                                   std::to_string(size) + " were written");
    }
    return std::shared_ptr<const RandomAccessFile>(
        std::make_shared<const FdFile>(std::move(opened.first), size, display));
  }

  Status Finish(std::string_view manifest) override {
    RETURN_IF_ERROR(staging_.Close(kStaging));
    if (::unlinkat(lock_->dir_fd(), kStaging, AT_REMOVEDIR) != 0) {
      return Status::IOError("remove " + lock_->path() + "/" + kStaging, errno);
    }
    // One syncfs makes every data file durable before the manifest that names them exists.
    if (::syncfs(lock_->dir_fd()) != 0) return Status::IOError("syncfs " + lock_->path(), errno);
    RETURN_IF_ERROR(WriteFileAtomically(lock_->path(), ".backup", manifest));
    return lock_->Commit();
  }

 private:
  static std::pair<std::string, std::string> Split(const std::string& name) {
    const size_t slash = name.rfind('/');
    if (slash == std::string::npos) return {"", name};
    return {name.substr(0, slash), name.substr(slash + 1)};
  }

  std::unique_ptr<BackupLock> lock_;
  UniqueFd staging_;
};

}  // namespace

StatusOr<std::unique_ptr<BackupWriter>> LocalStorage::StartBackup(const std::string& location,
                                                                  const WriterIntent& intent,
                                                                  std::string* notice) const {
  ASSIGN_OR_RETURN(auto lock, BackupLock::Acquire(location, intent, notice));
  if (::mkdirat(lock->dir_fd(), kStaging, 0700) != 0) {
    return Status::IOError("create " + location + "/" + kStaging, errno);
  }
  UniqueFd staging(::openat(lock->dir_fd(), kStaging, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!staging) return Status::IOError("open " + location + "/" + kStaging, errno);
  return std::unique_ptr<BackupWriter>(new LocalWriter(std::move(lock), std::move(staging)));
}

}  // namespace stitchfs::engine
