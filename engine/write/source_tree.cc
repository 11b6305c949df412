#include "engine/write/source_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <set>

#include "engine/base/interrupt.h"
#include "engine/base/posix_file.h"
#include "engine/base/remote_fs.h"
#include "engine/base/unique_fd.h"
#include "engine/format/manifest_writer.h"
#include "engine/write/file_pass.h"

namespace stitchfs::engine {
namespace {

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

std::string Join(const std::string& dir, const char* name) {
  return dir.empty() ? std::string(name) : dir + "/" + name;
}

class Walker {
 public:
  explicit Walker(SourceTree* out) : out_(out) {}

  // Visits folder `rel` beneath `root`; queues its sub-folders.
  void Visit(int root, const std::string& rel) {
    auto fd = rel.empty() ? StatusOr<UniqueFd>(UniqueFd(::fcntl(root, F_DUPFD_CLOEXEC, 0)))
                          : OpenBeneath(root, rel, O_DIRECTORY);
    if (!fd.ok()) return Missing(Shown(rel), fd.status());
    NoteFileSystem(fd->get());
    std::unique_ptr<DIR, DirCloser> dir(::fdopendir(fd->get()));
    if (!dir) return Missing(Shown(rel), Status::IOError("read folder", errno));
    const int dfd = fd->release();  // Now owned by `dir`.
    for (;;) {
      errno = 0;
      struct dirent* d = ::readdir(dir.get());
      if (d == nullptr) break;
      if (!std::strcmp(d->d_name, ".") || !std::strcmp(d->d_name, "..")) continue;
      Entry(dfd, rel, d->d_name);
    }
    // A listing cut short would silently leave files out.
    if (errno != 0) Missing(Shown(rel), Status::IOError("read folder", errno));
  }

  std::vector<std::string> pending;  // Folders still to visit.

 private:
  static std::string Shown(const std::string& rel) { return rel.empty() ? "." : rel; }
  // Notes the device of folder `fd` as local if it is (asked once per device).
  void NoteFileSystem(int fd) {
    struct stat st;
    if (::fstat(fd, &st) != 0 || !devices_.insert(st.st_dev).second) return;
    if (!OnRemoteFileSystem(fd)) out_->local_devices.push_back(st.st_dev);
  }
  void Missing(const std::string& path, const Status& s) {
    out_->missing.push_back({MakePrintable(path), ReasonOf(s)});
  }

  void Entry(int dfd, const std::string& rel, const char* name) {
    const std::string path = Join(rel, name);
    if (!CheckXmlText(path, "").ok()) {
      return Missing(path, Status::InvalidArgument("its name has bytes a manifest cannot carry"));
    }
    struct stat st;
    if (::fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return Missing(path, Status::IOError("stat", errno));
    }
    if (S_ISREG(st.st_mode)) {
      out_->files.push_back({path, st});
      out_->total_bytes += static_cast<uint64_t>(st.st_size);
    } else if (S_ISDIR(st.st_mode)) {
      out_->nodes.push_back({NodeType::kDir, path, "", MetaFromStat(st)});
      pending.push_back(path);
    } else if (S_ISLNK(st.st_mode)) {
      Symlink(dfd, name, path, st);
    } else {
      out_->warnings.push_back("skipped " + path + " (not a file, folder or symlink)");
    }
  }

  // The link `name` of `dfd`, found with `st`: its whole target, with the metadata of the same
  // link (one replaced meanwhile, as `ln -sfn` does, is read again, up to 3 times).
  void Symlink(int dfd, const char* name, const std::string& path, struct stat st) {
    for (int attempt = 0; attempt < 3; ++attempt) {
      auto target = ReadLinkWhole(dfd, name, static_cast<size_t>(st.st_size));
      if (!target.ok()) return Missing(path, target.status());
      struct stat now;
      if (::fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0) {
        return Missing(path, Status::IOError("lstat", errno));
      }
      if (!S_ISLNK(now.st_mode)) return Missing(path, ChangedWhileRead(path, "was replaced"));
      if (now.st_ino != st.st_ino || now.st_dev != st.st_dev ||
          now.st_ctim.tv_sec != st.st_ctim.tv_sec || now.st_ctim.tv_nsec != st.st_ctim.tv_nsec) {
        st = now;  // Another link: its own target.
        continue;
      }
      if (!CheckXmlText(*target, "").ok()) {
        return Missing(path,
                       Status::InvalidArgument("its target has bytes a manifest cannot carry"));
      }
      out_->nodes.push_back({NodeType::kSymlink, path, *target, MetaFromStat(now)});
      return;
    }
    Missing(path, ChangedWhileRead(path));
  }

  SourceTree* out_;
  std::set<uint64_t> devices_;  // Seen by NoteFileSystem.
};

}  // namespace

std::string ReasonOf(const Status& s) {
  // (Reported once every retry found the file changing.)
  if (IsChangedWhileRead(s)) return "it changed while it was read, each time it was read";
  if (s.code() == ErrorCode::kIOError && s.sys_errno() != 0) return std::strerror(s.sys_errno());
  return s.message();
}

PosixMeta MetaFromStat(const struct stat& st) {
  PosixMeta m;
  m.mode = st.st_mode & 07777;
  m.uid = st.st_uid;
  m.gid = st.st_gid;
  m.mtime = FileTime::From(st.st_mtim);
  m.ctime = FileTime::From(st.st_ctim);
  m.nlink =
      S_ISREG(st.st_mode) ? static_cast<uint32_t>(std::min<nlink_t>(st.st_nlink, UINT32_MAX)) : 0;
  m.ino = st.st_ino;
  m.dev = st.st_dev;
  return m;
}

StatusOr<SourceTree> WalkSource(int root_fd) {
  SourceTree tree;
  Walker walker(&tree);
  walker.pending.push_back("");
  while (!walker.pending.empty()) {
    RETURN_IF_ERROR(CheckStop());  // A walk of millions of files stops at Ctrl-C too.
    std::string rel = std::move(walker.pending.back());
    walker.pending.pop_back();
    walker.Visit(root_fd, rel);
  }
  std::sort(tree.files.begin(), tree.files.end(),
            [](const SourceFile& a, const SourceFile& b) { return a.name < b.name; });
  std::sort(tree.nodes.begin(), tree.nodes.end(),
            [](const SourceNode& a, const SourceNode& b) { return a.name < b.name; });
  return tree;
}

}  // namespace stitchfs::engine
