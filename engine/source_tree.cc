#include "engine/source_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "engine/manifest_writer.h"
#include "engine/posix_file.h"
#include "engine/unique_fd.h"

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
    if (!fd.ok()) return Error(fd.status());
    std::unique_ptr<DIR, DirCloser> dir(::fdopendir(fd->get()));
    if (!dir) return Error(Status::IOError("read folder " + Shown(rel), errno));
    const int dfd = fd->release();  // Now owned by `dir`.
    while (struct dirent* d = ::readdir(dir.get())) {
      if (!std::strcmp(d->d_name, ".") || !std::strcmp(d->d_name, "..")) continue;
      Entry(dfd, rel, d->d_name);
    }
  }

  std::vector<std::string> pending;  // Folders still to visit.

 private:
  static std::string Shown(const std::string& rel) { return rel.empty() ? "." : rel; }
  void Error(Status s) { out_->errors.push_back(std::move(s)); }

  void Entry(int dfd, const std::string& rel, const char* name) {
    const std::string path = Join(rel, name);
    if (Status s = CheckXmlText(path, "source path \"" + path + "\""); !s.ok()) return Error(s);
    struct stat st;
    if (::fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return Error(Status::IOError("stat " + path, errno));
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

  void Symlink(int dfd, const char* name, const std::string& path, const struct stat& st) {
    std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
    ssize_t n = ::readlinkat(dfd, name, target.data(), target.size());
    if (n < 0) return Error(Status::IOError("readlink " + path, errno));
    target.resize(static_cast<size_t>(n));
    if (Status s = CheckXmlText(target, "symlink target of \"" + path + "\""); !s.ok())
      return Error(s);
    out_->nodes.push_back({NodeType::kSymlink, path, target, MetaFromStat(st)});
  }

  SourceTree* out_;
};

}  // namespace

PosixMeta MetaFromStat(const struct stat& st) {
  PosixMeta m;
  m.mode = st.st_mode & 07777;
  m.uid = st.st_uid;
  m.gid = st.st_gid;
  m.mtime = FileTime::From(st.st_mtim);
  m.ctime = FileTime::From(st.st_ctim);
  m.nlink = S_ISREG(st.st_mode) ? static_cast<uint32_t>(std::min<nlink_t>(st.st_nlink, UINT32_MAX)) : 0;
  m.ino = st.st_ino;
  m.dev = st.st_dev;
  return m;
}

StatusOr<SourceTree> WalkSource(const std::string& root) {
  UniqueFd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return Status::IOError("open source folder " + root, errno);
  SourceTree tree;
  Walker walker(&tree);
  walker.pending.push_back("");
  while (!walker.pending.empty()) {
    std::string rel = std::move(walker.pending.back());
    walker.pending.pop_back();
    walker.Visit(fd.get(), rel);
  }
  std::sort(tree.files.begin(), tree.files.end(),
            [](const SourceFile& a, const SourceFile& b) { return a.name < b.name; });
  std::sort(tree.nodes.begin(), tree.nodes.end(),
            [](const SourceNode& a, const SourceNode& b) { return a.name < b.name; });
  return tree;
}

}  // namespace stitchfs::engine
