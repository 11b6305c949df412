#include "engine/backends/local/local_store_scan.h"

#include <dirent.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "engine/base/path_check.h"
#include "engine/base/unique_fd.h"
#include "engine/location/location.h"

namespace stitchfs::engine {
namespace {

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

// The store folder `name` in the open store `dir_fd`, if it is one (ScanLocalStore's rule).
std::optional<StoreFolder> Probe(int dir_fd, const std::string& store, const char* name) {
  struct stat st, mst;
  if (name[0] == '.' || ::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return std::nullopt;
  }
  const bool archive = S_ISREG(st.st_mode) && LocationOf(name).is_archive();
  if (!S_ISDIR(st.st_mode) && !archive) return std::nullopt;
  const std::string manifest = std::string(name) + "/.backup";
  if (archive) {
    mst = st;
  } else if (::fstatat(dir_fd, manifest.c_str(), &mst, AT_SYMLINK_NOFOLLOW) != 0 ||
             !S_ISREG(mst.st_mode)) {
    return std::nullopt;
  }
  StoreFolder f;
  f.name = name;
  f.path = store == "/" ? "/" + f.name : store + "/" + f.name;
  f.folder = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  f.manifest = LocalIdentityOf(mst);
  return f;
}

}  // namespace

ManifestIdentity LocalIdentityOf(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size), FileTime::From(st.st_mtim),
          FileTime::From(st.st_ctim)};
}

StatusOr<std::vector<StoreFolder>> ScanLocalStore(const std::string& store_path) {
  const std::string store = AbsolutePath(store_path);
  UniqueFd fd(::open(store.c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR)
      return Status::BackupNotFound("store " + store + " not found", e);
    return Status::IOError("read store " + store, e);
  }
  std::unique_ptr<DIR, DirCloser> dir(::fdopendir(fd.get()));
  if (!dir) return Status::IOError("read store " + store, errno);
  const int dfd = fd.release();  // Now owned by `dir`.
  std::vector<StoreFolder> out;
  for (;;) {
    errno = 0;
    struct dirent* d = ::readdir(dir.get());
    if (d == nullptr) break;
    if (auto f = Probe(dfd, store, d->d_name)) out.push_back(std::move(*f));
  }
  if (errno != 0) return Status::IOError("read store " + store, errno);
  std::sort(out.begin(), out.end(),
            [](const StoreFolder& a, const StoreFolder& b) { return a.name < b.name; });
  return out;
}

StatusOr<std::optional<ManifestIdentity>> StatLocalManifest(const std::string& dir) {
  struct stat st;
  const std::string path = dir + "/.backup";
  if (::fstatat(AT_FDCWD, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<ManifestIdentity>();
    return Status::IOError("stat " + path, errno);
  }
  if (!S_ISREG(st.st_mode)) return std::optional<ManifestIdentity>();
  return std::optional(LocalIdentityOf(st));
}

}  // namespace stitchfs::engine
