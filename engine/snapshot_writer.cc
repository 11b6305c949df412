#include "engine/snapshot_writer.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "engine/atomic_file.h"
#include "engine/backup_lock.h"
#include "engine/file_pass.h"
#include "engine/locator.h"
#include "engine/manifest_writer.h"
#include "engine/posix_file.h"
#include "engine/source_tree.h"
#include "engine/store.h"
#include "engine/uuid.h"
#include "engine/writer_plan.h"

namespace fs = std::filesystem;

namespace stitchfs::engine {
namespace {

constexpr const char* kTempDir = ".stitch-tmp";

// Shared, read-only state of one backup run plus the per-file results workers fill in.
class Run {
 public:
  Run(const BackupOptions& o, const SourceTree& tree, const Manifest* base, ChecksumAlgorithm alg,
      int src_fd, int tmp_fd)
      : o_(o),
        tree_(tree),
        base_(base),
        alg_(alg),
        src_fd_(src_fd),
        tmp_fd_(tmp_fd),
        results_(tree.files.size()) {}

  // Processes files from a shared counter until none are left. Thread-safe.
  void Work() {
    for (size_t i; (i = next_.fetch_add(1)) < tree_.files.size();) {
      results_[i] = ProcessWithRetries(i);
      files_done_.fetch_add(1, std::memory_order_relaxed);
      bytes_done_.fetch_add(static_cast<uint64_t>(tree_.files[i].st.st_size),
                            std::memory_order_relaxed);
    }
    std::lock_guard<std::mutex> lock(mu_);
    ++workers_done_;
    cv_.notify_all();
  }

  // Waits up to `timeout` for all `workers` to finish; true when they have.
  bool WaitWorkers(int workers, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return workers_done_ == workers; });
  }

  std::vector<FileResult>& results() { return results_; }
  uint64_t files_done() const { return files_done_.load(std::memory_order_relaxed); }
  uint64_t bytes_done() const { return bytes_done_.load(std::memory_order_relaxed); }

 private:
  bool Immutable(const std::string& name) const {
    for (const auto& g : o_.immutable_globs) {
      if (::fnmatch(g.c_str(), name.c_str(), 0) == 0) return true;
    }
    return false;
  }

  FileResult ProcessWithRetries(size_t i) {
    FileResult r;
    for (int attempt = 0;; ++attempt) {
      r = Process(i);
      const bool changed = !r.status.ok() && r.status.sys_errno() == EAGAIN;
      if (!changed || attempt >= o_.max_retries) break;
      ::unlinkat(tmp_fd_, std::to_string(i).c_str(), 0);
    }
    return r;
  }

  // The files cache: an unchanged file (same size, mtime, ctime, inode) is the base's file.
  bool TrustBase(const FileEntry& b, const struct stat& st, FileResult* r) const {
    if (!o_.files_cache || !b.meta || b.size != static_cast<uint64_t>(st.st_size)) return false;
    const PosixMeta now = MetaFromStat(st);
    if (b.meta->mtime != now.mtime || b.meta->ctime != now.ctime || b.meta->ino != now.ino ||
        b.meta->dev != now.dev) {
      return false;
    }
    r->size = b.size;
    r->pass.checksum = b.checksum;
    r->pass.base_size = b.size;
    r->pass.base_checksum = b.checksum;
    r->unread = true;
    return true;
  }

  // The base's entry named `name`, if the base has one.
  std::optional<FileEntry> BaseByName(const std::string& name) const {
    if (base_ == nullptr) return std::nullopt;
    auto idx = base_->FindByName(name);
    return idx ? std::optional(base_->entry(*idx)) : std::nullopt;
  }

  FileResult Process(size_t i) {
    const SourceFile& f = tree_.files[i];
    FileResult r;
    const std::optional<FileEntry> by_name = BaseByName(f.name);
    // The files cache decides from the walk's lstat, without opening the file.
    if (by_name && f.st.st_size > 0 && TrustBase(*by_name, f.st, &r)) {
      r.meta = MetaFromStat(f.st);
      return r;
    }
    auto fd = OpenBeneath(src_fd_, f.name);
    if (!fd.ok()) {
      r.status = fd.status();
      return r;
    }
    struct stat st;
    if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      r.status = Status::IOError("stat " + f.name, errno ? errno : EINVAL);
      return r;
    }
    r.meta = MetaFromStat(st);
    r.size = static_cast<uint64_t>(st.st_size);
    FilePassInput in;
    in.fd = fd->get();
    in.size = static_cast<uint64_t>(st.st_size);
    in.name = f.name;
    in.algorithm = alg_;
    if (by_name && by_name->size > 0) in.base = std::make_pair(by_name->size, by_name->checksum);
    in.immutable = Immutable(f.name);
    in.temp_dir_fd = tmp_fd_;
    in.temp_name = std::to_string(i);
    auto pass = RunFilePass(in);
    if (!pass.ok()) {
      r.status = pass.status();
      return r;
    }
    r.pass = *pass;
    r.size = in.size;
    struct stat after;
    if (::fstat(fd->get(), &after) == 0 &&
        (after.st_size != st.st_size || MetaFromStat(after).mtime != r.meta.mtime)) {
      r.status =
          Status(ErrorCode::kIOError, "file " + f.name + " changed while it was read", EAGAIN);
    }
    return r;
  }

  const BackupOptions& o_;
  const SourceTree& tree_;
  const Manifest* base_;
  const ChecksumAlgorithm alg_;
  const int src_fd_;
  const int tmp_fd_;
  std::vector<FileResult> results_;
  std::atomic<size_t> next_{0};
  std::atomic<uint64_t> files_done_{0};
  std::atomic<uint64_t> bytes_done_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  int workers_done_ = 0;  // Guarded by mu_.
};

int DefaultJobs() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 2 : static_cast<int>(std::min(n, 8u));
}

// Runs the workers, reporting progress from this thread.
void RunWorkers(Run& run, int jobs, const SourceTree& tree, const WriterProgress& progress) {
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back([&run] { run.Work(); });
  do {
    if (progress) progress(run.files_done(), run.bytes_done(), tree.files.size(), tree.total_bytes);
  } while (!run.WaitWorkers(jobs, std::chrono::milliseconds(100)));
  for (auto& t : threads) t.join();
  if (progress) progress(run.files_done(), run.bytes_done(), tree.files.size(), tree.total_bytes);
}

StatusOr<std::shared_ptr<const BackupChain>> OpenBase(const BackupOptions& o) {
  if (o.base.empty()) return std::shared_ptr<const BackupChain>();
  auto chain = BackupChain::Open(o.base, o.base_chain);
  if (!chain.ok()) return chain.status().WithPrefix("base backup " + o.base + ": ");
  return chain;
}

// `File('<base relative to the folder holding dest>')`, so a store can be moved as a whole.
std::string BaseLocator(const std::string& base, const std::string& dest) {
  fs::path b = fs::absolute(base).lexically_normal();
  fs::path holder = fs::absolute(dest).lexically_normal().parent_path();
  fs::path rel = b.lexically_relative(holder);
  return FileLocator(rel.empty() ? b.string() : rel.string());
}

}  // namespace

StatusOr<BackupSummary> WriteBackup(const BackupOptions& o, const WriterProgress& progress) {
  ASSIGN_OR_RETURN(auto base, OpenBase(o));
  ChecksumAlgorithm alg =
      base ? base->top().header().algorithm : o.algorithm.value_or(ChecksumAlgorithm::kXxh3);
  if (o.algorithm && *o.algorithm != alg) {
    return Status::InvalidArgument(std::string("the base uses ") + ChecksumAlgorithmName(alg) +
                                   " checksums; a chain keeps one algorithm");
  }
  if (!o.timestamp.empty()) {
    if (auto t = ParseBackupTime(o.timestamp); !t.ok())
      return t.status().WithPrefix("--timestamp: ");
  }
  ASSIGN_OR_RETURN(SourceTree tree, WalkSource(o.source));
  UniqueFd src(::open(o.source.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!src) return Status::IOError("open " + o.source, errno);
  BackupSummary summary;
  summary.uuid = NewUuid();
  std::string notice;
  ASSIGN_OR_RETURN(auto lock, BackupLock::Acquire(o.dest, summary.uuid, &notice));
  if (!notice.empty()) summary.warnings.push_back(notice);
  summary.warnings.insert(summary.warnings.end(), tree.warnings.begin(), tree.warnings.end());
  summary.errors = tree.errors;
  if (::mkdirat(lock->dir_fd(), kTempDir, 0700) != 0)
    return Status::IOError("create temp folder", errno);
  UniqueFd tmp(::openat(lock->dir_fd(), kTempDir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!tmp) return Status::IOError("open temp folder", errno);

  Run run(o, tree, base ? &base->top().manifest() : nullptr, alg, src.get(), tmp.get());
  RunWorkers(run, o.jobs > 0 ? o.jobs : DefaultJobs(), tree, progress);

  PlanInput plan{tree,           run.results(), base ? &base->top().manifest() : nullptr,
                 lock->dir_fd(), tmp.get(),     kTempDir};
  ASSIGN_OR_RETURN(std::vector<FileEntry> entries, FinishEntries(plan, &summary));
  ManifestHeader h;
  h.timestamp = o.timestamp.empty() ? FormatCivil(NowCivil()) : o.timestamp;
  h.uuid = summary.uuid;
  h.deduplicate_files = true;
  h.algorithm = alg;
  bool uses_base = false;
  for (const auto& e : entries) uses_base |= e.uses_base();
  if (uses_base) {
    h.base_backup = BaseLocator(o.base, o.dest);
    h.base_backup_uuid = base->top().header().uuid;
  }
  std::vector<Node> nodes;
  for (const SourceNode& n : tree.nodes) nodes.push_back({n.type, n.name, n.target, n.meta});
  summary.nodes = nodes.size();
  std::string xml;
  RETURN_IF_ERROR(RenderManifest(h, entries, &xml, nodes));
  tmp.Reset(-1);
  ::unlinkat(lock->dir_fd(), kTempDir, AT_REMOVEDIR);
  // One syncfs makes every data file durable before the manifest that names them exists.
  if (::syncfs(lock->dir_fd()) != 0) return Status::IOError("syncfs " + o.dest, errno);
  RETURN_IF_ERROR(WriteFileAtomically(o.dest, ".backup", xml));
  RETURN_IF_ERROR(lock->Commit());
  return summary;
}

}  // namespace stitchfs::engine
