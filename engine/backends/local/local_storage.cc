#include "engine/backends/local/local_storage.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "engine/backends/local/data_file.h"
#include "engine/backends/local/local_folder.h"
#include "engine/backends/local/local_store_scan.h"
#include "engine/base/atomic_file.h"
#include "engine/base/fd_file.h"
#include "engine/base/posix_file.h"
#include "engine/format/data_file_name.h"
#include "engine/location/locator.h"
#include "engine/storage/backup.h"
#include "engine/storage/store_moves.h"

namespace stitchfs::engine {
namespace {

// Why `.backup` in `dir_fd` could not be opened.
Status ManifestOpenError(int dir_fd, const std::string& path, int e) {
  std::string why = e == ENOENT  ? "no .backup manifest"
                    : e == ELOOP ? ".backup is a symlink, which is never followed"
                                 : std::strerror(e);
  if (e == ENOENT && ::faccessat(dir_fd, ".lock", F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
    why =
        "no .backup manifest; its .lock shows a backup being written, or one whose writer "
        "died: run the same backup again to take it over, or remove the folder";
  }
  if (e == EMFILE || e == ENFILE || e == ENOMEM || e == EIO) {
    return Status::IOError("Backup " + path + ": open .backup", e);
  }
  return Status::BackupNotFound("Backup " + path + " not found (" + why + ")", e);
}

}  // namespace

std::shared_ptr<const LocalStorage> LocalStorage::Create(size_t max_open_files) {
  return std::make_shared<const LocalStorage>(
      std::make_shared<FdCache>(max_open_files ? max_open_files : DefaultFdCapacity()));
}

StatusOr<std::shared_ptr<const BackupFolder>> LocalStorage::OpenFolder(
    const std::string& location) const {
  UniqueFd fd;
  ASSIGN_OR_RETURN(auto folder, LocalFolder::Open(location, &fd));
  // Keep the fd just opened for the manifest and the data files that follow.
  RETURN_IF_ERROR(
      fds_->Get(folder->cache_key(), [&fd]() -> StatusOr<UniqueFd> { return std::move(fd); })
          .status());
  return std::shared_ptr<const BackupFolder>(std::move(folder));
}

StatusOr<std::shared_ptr<const UniqueFd>> LocalStorage::FolderFd(const BackupFolder& folder) const {
  ASSIGN_OR_RETURN(const LocalFolder* local, FolderAs<LocalFolder>(folder));
  return fds_->Get(local->cache_key(), [local] { return local->Reopen(); });
}

StatusOr<ManifestSource> LocalStorage::OpenManifest(const BackupFolder& folder) const {
  ASSIGN_OR_RETURN(auto dir, FolderFd(folder));
  const std::string& path = folder.path();
  UniqueFd fd(::openat(dir->get(), ".backup", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) return ManifestOpenError(dir->get(), path, errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0)
    return Status::IOError("Backup " + path + ": fstat .backup", errno);
  if (!S_ISREG(st.st_mode)) {
    return Status::BackupNotFound("Backup " + path + ": .backup is not a regular file");
  }
  const ManifestIdentity id = LocalIdentityOf(st);
  return ManifestSource{std::make_unique<FdFile>(std::move(fd), id.size, path + "/.backup"), id};
}

std::string LocalStorage::LocatorFor(const std::string& location) const {
  return FileLocator(AbsolutePath(location));
}

StatusOr<std::optional<ManifestIdentity>> LocalStorage::StatManifest(
    const std::string& location) const {
  return StatLocalManifest(location);
}

StatusOr<bool> LocalStorage::BeingRemoved(const std::string& location) const {
  // Beside the backup's real place: named through a symlink (`latest`), it is marked by the
  // name prune listed. Gone: not marked (reading it fails).
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(location.c_str(), nullptr),
                                                   &std::free);
  if (!real) {
    if (errno == ENOENT || errno == ENOTDIR) return false;
    return Status::IOError("realpath " + location, errno);
  }
  const std::string marker = RemovingMarker(real.get());
  struct stat st;
  if (::lstat(marker.c_str(), &st) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return Status::IOError("stat " + marker, errno);
}

StatusOr<std::shared_ptr<const BackupDataFile>> LocalStorage::OpenDataFile(
    const std::shared_ptr<const BackupFolder>& folder, const std::string& relative,
    uint64_t /*declared_size: the file's own size is learnt when it is opened*/) const {
  ASSIGN_OR_RETURN(auto local, FolderAs<LocalFolder>(folder));
  ASSIGN_OR_RETURN(auto file, DataFile::Open(fds_, std::move(local), relative));
  return std::shared_ptr<const BackupDataFile>(std::move(file));
}

StatusOr<SharedBytes> LocalStorage::ReadIndex(const BackupFolder& folder) const {
  ASSIGN_OR_RETURN(auto dir, FolderFd(folder));
  const std::string name = folder.path() + "/" + std::string(kIndexFile);
  auto fd = OpenBeneath(dir->get(), std::string(kIndexFile));
  if (!fd.ok()) return Status::BackupNotFound("no index " + name);
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return Status::IOError("stat " + name, errno);
  if (!S_ISREG(st.st_mode) || st.st_size > (off_t{1} << 32)) {
    return Status::BackupNotFound("not an index: " + name);
  }
  return SharedBytes::Read(fd->get(), static_cast<size_t>(st.st_size), name);
}

Status LocalStorage::WriteIndex(const BackupFolder& folder, std::string_view bytes) const {
  ASSIGN_OR_RETURN(const LocalFolder* local, FolderAs<LocalFolder>(folder));
  ASSIGN_OR_RETURN(UniqueFd dir, local->Reopen());
  RETURN_IF_ERROR(MakeDirsBeneath(dir.get(), kStitchDir).status());
  return WriteFileAtomically(folder.path() + "/" + std::string(kStitchDir), "index", bytes);
}

StatusOr<std::vector<StoreFolder>> LocalStorage::ScanStore(const std::string& location) const {
  return ScanLocalStore(location);
}

}  // namespace stitchfs::engine
