#include "engine/read/restore.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>

#include "engine/base/concat_file.h"
#include "engine/base/posix_file.h"
#include "engine/format/hard_links.h"
#include "engine/read/content_check.h"
#include "engine/read/restore_meta.h"
#include "engine/read/restore_target.h"
#include "engine/storage/writable_fd.h"

namespace stitchfs::engine {
namespace {

// Copies `len` bytes at `off` of `src` to the end of `out`: within the object store when both
// are in one (WritableFile::AppendCopy), in-kernel for a local data file (copy_file_range),
// else, or where neither can, through `buf`.
Status CopySegment(const RandomAccessFile& src, uint64_t off, uint64_t len, WritableFile& out,
                   char* buf, const std::string& what, const CopyProgress& progress) {
  constexpr uint64_t kStep = uint64_t{64} << 20;  // In-kernel copies, for progress.
  uint64_t done = 0;
  ASSIGN_OR_RETURN(const bool copied, out.AppendCopy(src, off, len));  // Server-side.
  if (copied) {
    if (progress) progress(len);
    return Status::OK();
  }
  ASSIGN_OR_RETURN(auto fd, src.KernelFd());
  if (fd != nullptr && out.fd() >= 0) {
    loff_t in_off = static_cast<loff_t>(off);
    while (done < len) {
      ssize_t n =
          ::copy_file_range(fd->get(), &in_off, out.fd(), nullptr, std::min(len - done, kStep), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // Unsupported here, or the file ended: the reads below tell which.
      done += static_cast<uint64_t>(n);
      if (progress) progress(static_cast<uint64_t>(n));
    }
  }
  while (done < len) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(len - done, kCopyBuffer));
    ASSIGN_OR_RETURN(size_t n, src.ReadAt(off + done, std::span<char>(buf, want)));
    if (n == 0) return Status::BackupDamaged("a data file of " + what + " ended early");
    RETURN_IF_ERROR(out.Append(std::string_view(buf, n)).WithPrefix(what + ": "));
    done += n;
    if (progress) progress(n);
  }
  return Status::OK();
}

}  // namespace

Status CopySegments(const std::vector<Segment>& segments, WritableFile& out, char* buf,
                    const std::string& what, const CopyProgress& progress) {
  for (const Segment& s : segments) {
    RETURN_IF_ERROR(CopySegment(*s.file, s.file_offset, s.length, out, buf, what, progress));
  }
  return Status::OK();
}

Status CopyEntry(const ResolvedBackup& backup, size_t idx, WritableFile& out, char* buf,
                 const std::string& what, const CopyProgress& progress) {
  ASSIGN_OR_RETURN(std::vector<Segment> segments, backup.OpenSegments(idx));
  return CopySegments(segments, out, buf, what, progress);
}

namespace {

// Hard links (engine/format/hard_links.h): each entry's group leader, and where each group was
// first restored.
struct Links {
  std::vector<uint32_t> leader;
  std::map<uint32_t, std::string> restored;  // Leader -> the name restored first.
};

// The bytes written to `fd` (read back: what is on the target, in-kernel copies included) are
// entry `idx`'s, by its manifest's checksum (ContentCheck).
Status CheckWritten(const ResolvedBackup& chain, size_t idx, int fd, char* buf) {
  ContentCheck check(chain, idx);
  for (uint64_t off = 0;;) {
    const ssize_t n = ::pread(fd, buf, kCopyBuffer, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError("read back what was restored", errno);
    if (n == 0) break;
    check.Update(std::string_view(buf, static_cast<size_t>(n)));
    off += static_cast<uint64_t>(n);
  }
  return check.Finish();
}

// Copies entry `idx` into `out` (an empty file) and checks what was written. Bytes that fail
// their checksum when some may have come from a copy kept on the way (DropCached) are
// copied once more from the storage.
Status CopyChecked(const ResolvedBackup& chain, size_t idx, WritableFile& out, char* buf,
                   const std::string& name, const CopyProgress& progress) {
  // The segments' files are held through both copies: what they kept is what is dropped.
  ASSIGN_OR_RETURN(std::vector<Segment> segments, chain.OpenSegments(idx));
  RETURN_IF_ERROR(CopySegments(segments, out, buf, name, progress));
  Status s = CheckWritten(chain, idx, out.fd(), buf);
  if (s.code() != ErrorCode::kBackupDamaged || !ConcatFile(segments).DropCached()) return s;
  if (::ftruncate(out.fd(), 0) != 0 || ::lseek(out.fd(), 0, SEEK_SET) != 0) {
    return Status::IOError("truncate " + name + " to copy it again", errno);
  }
  RETURN_IF_ERROR(CopySegments(segments, out, buf, name, CopyProgress{}));
  s = CheckWritten(chain, idx, out.fd(), buf);
  return s.WithSuffix(" (copied twice, the second time with nothing cached)");
}

// Fills temp file `out` with entry `idx`: a hard link to an earlier name, or its bytes.
Status FillEntry(const ResolvedBackup& chain, const FileEntry& e, size_t idx, int root, int dir_fd,
                 const std::string& tmp, Links* links, char* buf, const CopyProgress& progress) {
  const std::string name(e.name);
  if (LinkClaim(e)) {
    auto [it, first] = links->restored.emplace(links->leader[idx], name);
    if (!first) {  // Link to the earlier name, through /proc so no path is re-resolved.
      ASSIGN_OR_RETURN(UniqueFd src, OpenBeneath(root, it->second, O_PATH));
      const std::string proc = "/proc/self/fd/" + std::to_string(src.get());
      if (::linkat(AT_FDCWD, proc.c_str(), dir_fd, tmp.c_str(), AT_SYMLINK_FOLLOW) != 0) {
        return Status::IOError("hard link " + name + " to " + it->second, errno);
      }
      return Status::OK();
    }
  }
  UniqueFd fd(
      ::openat(dir_fd, tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd) return Status::IOError("create " + name, errno);
  auto out = WritableFd(std::move(fd), name);
  RETURN_IF_ERROR(CopyChecked(chain, idx, *out, buf, name, progress));
  if (e.meta) RETURN_IF_ERROR(ApplyMeta(out->fd(), *e.meta, name));
  return out->Close();
}

// Restores one entry to `root`/name via a temporary name and rename.
Status RestoreOne(const ResolvedBackup& chain, size_t idx, int root, RestoreTarget& target,
                  Links* links, char* buf, const CopyProgress& progress) {
  const FileEntry e = chain.top().manifest().entry(idx);
  const std::string name(e.name);
  auto [dir, leaf] = SplitParent(name);
  ASSIGN_OR_RETURN(UniqueFd dir_fd, target.OpenDir(root, dir));
  const std::string tmp = RestoreTarget::TempName(leaf);
  Status s = FillEntry(chain, e, idx, root, dir_fd.get(), tmp, links, buf, progress);
  if (s.ok() && ::renameat(dir_fd.get(), tmp.c_str(), dir_fd.get(), leaf.c_str()) != 0) {
    s = Status::IOError("rename into " + name, errno);
  }
  if (!s.ok()) ::unlinkat(dir_fd.get(), tmp.c_str(), 0);
  return s.WithPrefix(s.message().find(name) == std::string::npos ? "entry \"" + name + "\": "
                                                                  : "");
}

bool Selected(std::string_view name, const std::vector<std::string>& paths) {
  if (paths.empty()) return true;
  for (std::string p : paths) {
    while (!p.empty() && p.back() == '/') p.pop_back();
    while (!p.empty() && p.front() == '/') p.erase(0, 1);
    if (p.empty() || name == p ||
        (name.size() > p.size() && name.substr(0, p.size()) == p && name[p.size()] == '/')) {
      return true;
    }
  }
  return false;
}

// A path with its existing part's symlinks resolved, for comparing places ("" if it cannot be
// made absolute).
std::string Resolved(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? "" : p.string();
}

bool IsWithin(const std::string& path, const std::string& folder) {
  return path == folder ||
         (path.size() > folder.size() && path.compare(0, folder.size(), folder) == 0 &&
          (folder.back() == '/' || path[folder.size()] == '/'));
}

// Restoring must never write into a folder of the chain being read: its data files would be
// overwritten under their checksums (the same length: wrong bytes, silently; else every backup
// on it damaged). kInvalidArgument if `target` lies in one, or if a selected entry would land
// in one lying inside `target`.
Status CheckTargetOutsideChain(const ResolvedBackup& chain, const std::string& target,
                               const std::vector<size_t>& selected) {
  const std::string t = Resolved(target);
  if (t.empty()) return Status::OK();
  const Manifest& m = chain.top().manifest();
  for (size_t i = 0; i < chain.depth(); ++i) {
    const std::string& shown = chain.level(i).path();
    std::error_code ec;
    if (!std::filesystem::is_directory(shown, ec)) continue;  // Object storage, an archive.
    const std::string f = Resolved(shown);
    if (f.empty()) continue;
    if (IsWithin(t, f)) {
      return Status::InvalidArgument("restore target " + target + " is inside backup " + shown +
                                     ", which the restore reads: choose another target");
    }
    if (!IsWithin(f, t)) continue;
    const std::string rel = f.substr(t.size() + (t.back() == '/' ? 0 : 1));
    for (size_t idx : selected) {
      if (IsWithin(std::string(m.entry(idx).name), rel)) {
        return Status::InvalidArgument("restore target " + target + ": entry \"" +
                                       std::string(m.entry(idx).name) + "\" would land in backup " +
                                       shown + ", which the restore reads");
      }
    }
  }
  return Status::OK();
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
    bool node = false;
    for (size_t i = 0; i < m.num_nodes() && !node; ++i) node = Selected(m.node(i).name, {p});
    if (out.size() == before && !node) {
      return Status::EntryNotFound("no entry or folder \"" + p + "\" in the backup");
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

StatusOr<RestoreResult> RestoreBackup(const ResolvedBackup& chain, const RestoreOptions& options,
                                      const std::function<void(uint64_t, uint64_t)>& progress) {
  ASSIGN_OR_RETURN(std::vector<size_t> selected,
                   SelectEntries(chain.top().manifest(), options.paths));
  RETURN_IF_ERROR(CheckTargetOutsideChain(chain, options.target, selected));
  const bool made = ::mkdir(options.target.c_str(), 0755) == 0;
  if (!made && errno != EEXIST) return Status::IOError("mkdir " + options.target, errno);
  UniqueFd root(::open(options.target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root) return Status::IOError("open " + options.target, errno);
  auto target = RestoreTarget::Check(root.get(), options.target, chain);
  if (!target.ok()) {
    if (made) ::rmdir(options.target.c_str());
    return target.status();
  }
  const Manifest& m = chain.top().manifest();
  std::vector<Node> dirs;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    Node n = m.node(i);
    if (n.type != NodeType::kDir || !Selected(n.name, options.paths)) continue;
    RETURN_IF_ERROR(RestoreDir(root.get(), n, *target));
    dirs.push_back(n);
  }
  auto buf = std::make_unique<char[]>(kCopyBuffer);
  Links links{LinkLeaders(m), {}};
  RestoreResult r;
  for (size_t idx : selected) {
    uint64_t copied = 0;  // Of this file, so far.
    const CopyProgress on_copy = [&](uint64_t n) {
      copied += n;
      if (progress) progress(r.files, r.bytes + copied);
    };
    RETURN_IF_ERROR(RestoreOne(chain, idx, root.get(), *target, &links, buf.get(), on_copy));
    ++r.files;
    r.bytes += m.entry(idx).size;
    if (progress) progress(r.files, r.bytes);
  }
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    Node n = m.node(i);
    if (n.type == NodeType::kSymlink && Selected(n.name, options.paths)) {
      RETURN_IF_ERROR(RestoreSymlink(root.get(), n, *target));
    }
  }
  RETURN_IF_ERROR(FinishDirs(root.get(), dirs));
  return r;
}

}  // namespace stitchfs::engine
