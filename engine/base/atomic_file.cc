#include "engine/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "engine/base/cache_dir.h"
#include "engine/base/folder_list.h"
#include "engine/base/posix_file.h"
#include "engine/base/temp_name.h"
#include "engine/base/unique_fd.h"

namespace stitchfs::engine {
namespace {

Status WriteAndSync(const std::string& path, std::string_view data) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd) return Status::IOError("create " + path, errno);
  RETURN_IF_ERROR(WriteFully(fd.get(), data, path));
  if (::fsync(fd.get()) != 0) return Status::IOError("fsync " + path, errno);
  return fd.Close(path.c_str());
}

}  // namespace

Status SyncDir(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return Status::IOError("open " + dir, errno);
  // Without this the rename itself may be lost in a crash even though the data is on disk.
  if (::fsync(fd.get()) != 0) return Status::IOError("fsync " + dir, errno);
  return Status::OK();
}

Status WriteFileAtomically(const std::string& dir, std::string_view name, std::string_view data) {
  const std::string final_path = dir + "/" + std::string(name);
  const std::string tmp_prefix = "." + std::string(name) + ".tmp";
  if (auto names = ListFolder(dir); names.ok()) {
    for (const std::string& n : *names) {  // What an earlier writer killed midway left.
      struct stat st;
      const std::string path = dir + "/" + n;
      if (n.starts_with(tmp_prefix) && ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
          IsLeftoverTemp(n, st.st_mtime)) {
        ::unlink(path.c_str());
      }
    }
  }
  const std::string tmp = dir + "/." + std::string(name) + TempSuffix();
  Status s = WriteAndSync(tmp, data);
  if (s.ok() && ::rename(tmp.c_str(), final_path.c_str()) != 0) {
    s = Status::IOError("rename " + tmp + " to " + final_path, errno);
  }
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  return SyncDir(dir);
}

}  // namespace stitchfs::engine
