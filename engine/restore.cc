#include "engine/restore.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "engine/concat_file.h"
#include "engine/posix_file.h"

namespace stitchfs::engine {
namespace {

constexpr size_t kCopyBuffer = 1 << 20;

// Opens (creating as needed) folder `rel` beneath `root`, one component at a time, refusing
// symlinks, so a hostile target tree cannot redirect writes elsewhere.
StatusOr<UniqueFd> OpenDirBeneath(int root, std::string_view rel) {
  UniqueFd cur(::fcntl(root, F_DUPFD_CLOEXEC, 0));
  if (!cur) return Status::IOError("dup", errno);
  size_t start = 0;
  while (start < rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    const std::string part(rel.substr(start, end - start));
    if (::mkdirat(cur.get(), part.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::IOError("mkdir " + std::string(rel.substr(0, end)), errno);
    }
    UniqueFd next(
        ::openat(cur.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) return Status::IOError("open folder " + std::string(rel.substr(0, end)), errno);
    cur = std::move(next);
    start = end + 1;
  }
  return cur;
}

Status WriteAll(int fd, const char* p, size_t n, const std::string& what) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return Status::IOError("write " + what, errno);
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::OK();
}

// Copies `len` bytes at `off` of `src` to the end of `out`: in-kernel where possible.
Status CopySegment(const DataFile& src, uint64_t off, uint64_t len, int out, char* buf,
                   const std::string& what) {
  ASSIGN_OR_RETURN(auto fd, src.Fd());
  loff_t in_off = static_cast<loff_t>(off);
  while (len > 0) {
    ssize_t n = ::copy_file_range(fd->get(), &in_off, out, nullptr, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;  // Unsupported here: fall back to read/write below.
    if (n == 0) return Status::BackupDamaged("data file " + src.display_name() + " is truncated");
    len -= static_cast<uint64_t>(n);
  }
  for (; len > 0;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(len, kCopyBuffer));
    RETURN_IF_ERROR(PreadFully(fd->get(), static_cast<uint64_t>(in_off), std::span<char>(buf, n),
                               src.display_name()));
    RETURN_IF_ERROR(WriteAll(out, buf, n, what));
    in_off += static_cast<loff_t>(n);
    len -= n;
  }
  return Status::OK();
}

Status CopyEntry(const BackupChain& chain, size_t idx, int out, char* buf,
                 const std::string& what) {
  ASSIGN_OR_RETURN(std::vector<Extent> extents, chain.Resolve(0, idx));
  for (const Extent& x : extents) {
    ASSIGN_OR_RETURN(auto file, chain.OpenDataFile(x));
    if (file->size() != x.length) {
      return Status::BackupDamaged(chain.backup(x.level).Prefix() + "data file " +
                                   file->display_name() + " has " + std::to_string(file->size()) +
                                   " bytes, the manifest declares " + std::to_string(x.length));
    }
    RETURN_IF_ERROR(CopySegment(*file, 0, x.length, out, buf, what));
  }
  return Status::OK();
}

// Restores one entry to `root`/name via a temporary file and rename.
Status RestoreOne(const BackupChain& chain, size_t idx, int root, char* buf) {
  const FileEntry e = chain.top().manifest().entry(idx);
  const std::string name(e.name);
  const size_t slash = name.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : name.substr(0, slash);
  const std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  ASSIGN_OR_RETURN(UniqueFd dir_fd, OpenDirBeneath(root, dir));
  const std::string tmp = ".stitch-restore-" + std::to_string(::getpid()) + "-" + base;
  UniqueFd out(::openat(dir_fd.get(), tmp.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!out) return Status::IOError("create " + name, errno);
  Status s = CopyEntry(chain, idx, out.get(), buf, name);
  if (s.ok()) s = out.Close(name.c_str());
  if (s.ok() && ::renameat(dir_fd.get(), tmp.c_str(), dir_fd.get(), base.c_str()) != 0) {
    s = Status::IOError("rename into " + name, errno);
  }
  if (!s.ok()) ::unlinkat(dir_fd.get(), tmp.c_str(), 0);
  return s.WithPrefix(s.message().find(name) == std::string::npos ? "entry \"" + name + "\": "
                                                                  : "");
}

}  // namespace

StatusOr<std::vector<size_t>> SelectEntries(const Manifest& m,
                                            const std::vector<std::string>& paths) {
  std::vector<size_t> out;
  const auto& order = m.by_name();
  if (paths.empty()) return std::vector<size_t>(order.begin(), order.end());
  for (std::string p : paths) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    while (!p.empty() && p.front() == '/') p.erase(0, 1);
    const size_t before = out.size();
    const std::string prefix = p.empty() ? "" : p + "/";
    for (uint32_t i : order) {
      std::string_view n = m.entry(i).name;
      if (p.empty() || n == p || n.substr(0, prefix.size()) == prefix) out.push_back(i);
    }
    if (out.size() == before)
      return Status::EntryNotFound("no entry or folder \"" + p + "\" in the backup");
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

StatusOr<RestoreResult> RestoreBackup(const BackupChain& chain, const RestoreOptions& options,
                                      const std::function<void(uint64_t, uint64_t)>& progress) {
  ASSIGN_OR_RETURN(std::vector<size_t> selected,
                   SelectEntries(chain.top().manifest(), options.paths));
  if (::mkdir(options.target.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::IOError("mkdir " + options.target, errno);
  }
  UniqueFd root(::open(options.target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root) return Status::IOError("open " + options.target, errno);
  auto buf = std::make_unique<char[]>(kCopyBuffer);
  RestoreResult r;
  for (size_t idx : selected) {
    RETURN_IF_ERROR(RestoreOne(chain, idx, root.get(), buf.get()));
    ++r.files;
    r.bytes += chain.top().manifest().entry(idx).size;
    if (progress) progress(r.files, r.bytes);
  }
  return r;
}

}  // namespace stitchfs::engine
