#include "engine/write/source_read.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "engine/base/posix_file.h"
#include "engine/format/data_file_name.h"

namespace stitchfs::engine {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

bool SameTimes(const struct stat& a, const struct stat& b) {
  return a.st_size == b.st_size && FileTime::From(a.st_mtim) == FileTime::From(b.st_mtim) &&
         FileTime::From(a.st_ctim) == FileTime::From(b.st_ctim);
}

class Reader {
 public:
  Reader(const SourceReadOptions& o, const SourceFile& f, size_t index)
      : o_(o), f_(f), temp_name_(std::to_string(index)), immutable_(Immutable()) {}

  FileResult Run() {
    const std::optional<FileEntry> by_name = BaseByName();
    FileResult r;
    // The files cache decides from the walk's lstat, without opening the file.
    if (by_name && f_.st.st_size > 0 && TrustBase(*by_name, &r)) return r;
    for (int attempt = 0;; ++attempt) {
      r = Attempt(by_name);
      if (!IsChangedWhileRead(r.status) || attempt >= o_.max_retries) break;
      o_.writer->DropStaged(temp_name_).IgnoreError();  // Staged again by the next attempt.
    }
    return r;
  }

 private:
  bool Immutable() const {
    if (o_.immutable_globs == nullptr) return false;
    for (const auto& g : *o_.immutable_globs) {
      if (::fnmatch(g.c_str(), f_.name.c_str(), 0) == 0) return true;
    }
    return false;
  }

  // True if a file whose last change has time `ctime` (every change sets it) was not changed
  // again after a backup that began reading at `read_start` read it, while keeping that time:
  // `ctime` is older than the read by more than the times' step. Sub-second times step by a
  // clock tick (the kernel's coarse clock, a few ms); whole-second ones by a second or two
  // (FAT). On a remote file system (`remote`) the server sets the times, by its own clock: 10 s
  // allow for it being that far behind this machine's. Unknown start: never.
  static bool ClearlyBeforeRead(const FileTime& ctime, const std::optional<int64_t>& read_start,
                                bool remote) {
    constexpr int64_t kFineStepNs = 20'000'000;
    constexpr int64_t kCoarseStepNs = 10'000'000'000;
    if (!read_start) return false;
    const int64_t step = ctime.nsec != 0 && !remote ? kFineStepNs : kCoarseStepNs;
    const int64_t start_sec = *read_start / 1'000'000'000;
    const int64_t start_ns = *read_start % 1'000'000'000;
    if (ctime.sec < start_sec - 20) return true;  // (Far older; compared in ns below, near.)
    if (ctime.sec > start_sec + 20) return false;
    return (ctime.sec - start_sec) * 1'000'000'000 + (ctime.nsec - start_ns) < -step;
  }

  bool OnRemote() const {
    const std::vector<uint64_t>* l = o_.local_devices;
    return l != nullptr &&
           std::find(l->begin(), l->end(), static_cast<uint64_t>(f_.st.st_dev)) == l->end();
  }

  std::optional<FileEntry> BaseByName() const {
    if (o_.base == nullptr) return std::nullopt;
    auto idx = o_.base->FindByName(f_.name);
    return idx ? std::optional(o_.base->entry(*idx)) : std::nullopt;
  }

  // The files cache: an unchanged file (same size, mtime, ctime, inode) is the base's file, if
  // its times were clearly older than the base's read (ClearlyBeforeRead).
  bool TrustBase(const FileEntry& b, FileResult* r) const {
    if (!o_.files_cache || !b.meta || b.size != static_cast<uint64_t>(f_.st.st_size)) return false;
    if (!ClearlyBeforeRead(b.meta->ctime, o_.base->header().read_start_ns, OnRemote())) {
      return false;
    }
    const PosixMeta now = MetaFromStat(f_.st);
    if (b.meta->mtime != now.mtime || b.meta->ctime != now.ctime || b.meta->ino != now.ino ||
        b.meta->dev != now.dev) {
      return false;
    }
    r->size = b.size;
    r->pass.checksum = b.checksum;
    r->pass.base_size = b.size;
    r->pass.base_checksum = b.checksum;
    r->unread = true;
    r->meta = now;
    return true;
  }

  FileResult Attempt(const std::optional<FileEntry>& by_name) {
    FileResult r;
    r.fault = PassFault::kSource;
    auto fd = OpenBeneath(o_.source_fd, f_.name);
    if (!fd.ok()) {
      r.status = fd.status();
      return r;
    }
    struct stat st;
    if (::fstat(fd->get(), &st) != 0) {
      r.status = Status::IOError("stat " + f_.name, errno);
      return r;
    }
    if (!S_ISREG(st.st_mode)) {
      r.status = Status::InvalidArgument("it is now " + std::string(KindOf(st.st_mode)));
      return r;
    }
    r.meta = MetaFromStat(st);
    FilePassInput in;
    in.fd = fd->get();
    // Its size now, not the walk's: a file that grew since the walk may as well have been
    // rewritten (truncated, then written longer: same inode, other times), and its first bytes
    // then were never the walk's; bytes appended while it is read are not taken.
    in.size = r.size = static_cast<uint64_t>(st.st_size);
    in.name = f_.name;
    in.algorithm = o_.algorithm;
    if (by_name && by_name->size > 0) in.base = std::make_pair(by_name->size, by_name->checksum);
    in.immutable = immutable_;
    in.writer = o_.writer;
    in.staged_id = temp_name_;
    in.data_name = DataFileNameFor(f_.name);
    in.read_progress = o_.read_progress;
    auto pass = RunFilePass(in, &r.fault);
    if (!pass.ok()) {
      r.status = pass.status();
      return r;
    }
    r.pass = *pass;
    r.status = Verify(fd->get(), st, r);
    r.fault = r.status.ok() ? PassFault::kNone : PassFault::kSource;
    return r;
  }

  // The bytes backed up are the file's: if anything changed under the read, the prefix is read
  // again and must hash the same.
  Status Verify(int fd, const struct stat& before, const FileResult& r) const {
    struct stat after;
    if (::fstat(fd, &after) != 0) return Status::IOError("stat " + f_.name, errno);
    if (static_cast<uint64_t>(after.st_size) < r.size) return ChangedWhileRead(f_.name, "shrank");
    if (SameTimes(before, after) || r.size == 0) return Status::OK();
    auto again = HashPrefix(fd, r.size, o_.algorithm, f_.name);
    if (!again.ok()) return again.status();
    if (*again != r.pass.checksum) return ChangedWhileRead(f_.name, "changed");
    return Status::OK();
  }

  const SourceReadOptions& o_;
  const SourceFile& f_;
  const std::string temp_name_;
  const bool immutable_;
};

}  // namespace

FileResult ReadSourceFile(const SourceReadOptions& o, const SourceFile& f, size_t index) {
  return Reader(o, f, index).Run();
}

}  // namespace stitchfs::engine
