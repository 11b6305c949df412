#include "engine/write/snapshot_writer.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "engine/base/interrupt.h"
#include "engine/base/posix_file.h"
#include "engine/base/uuid.h"
#include "engine/format/manifest_writer.h"
#include "engine/location/location.h"
#include "engine/location/locator.h"
#include "engine/location/s3_address.h"
#include "engine/read/chain_compose.h"
#include "engine/read/open_resolved.h"
#include "engine/read/resolved_backup.h"
#include "engine/storage/backup.h"
#include "engine/storage/store.h"
#include "engine/write/file_pass.h"
#include "engine/write/source_read.h"
#include "engine/write/source_tree.h"
#include "engine/write/writer_plan.h"

namespace fs = std::filesystem;

namespace stitchfs::engine {
namespace {

// Shared, read-only state of one backup run plus the per-file results workers fill in.
class Run {
 public:
  Run(const SourceReadOptions& o, const SourceTree& tree, int workers)
      : o_(o),
        tree_(tree),
        results_(tree.files.size()),
        reading_(new Reading[workers]),
        workers_(workers) {}

  // Processes files from a shared counter until none are left, or until one fails to write
  // the destination (then the backup fails: no point filling a full disk). Thread-safe for
  // distinct `worker`s in [0, workers).
  void Work(int worker) {
    SourceReadOptions o = o_;
    Reading& mine = reading_[worker];
    o.read_progress = &mine.bytes;
    for (size_t i;
         !stop_.load() && !StopRequested() && (i = next_.fetch_add(1)) < tree_.files.size();) {
      const auto size = static_cast<uint64_t>(tree_.files[i].st.st_size);
      mine.size.store(size, std::memory_order_relaxed);
      results_[i] = ReadSourceFile(o, tree_.files[i], i);
      if (results_[i].fault == PassFault::kDestination) stop_.store(true);
      files_done_.fetch_add(1, std::memory_order_relaxed);
      bytes_done_.fetch_add(size, std::memory_order_relaxed);
      mine.bytes.store(0, std::memory_order_relaxed);
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

  // The first failure to write the destination, if any (REQUIRES: workers finished).
  Status DestinationError() const {
    for (const FileResult& r : results_) {
      if (r.fault == PassFault::kDestination) return r.status;
    }
    return Status::OK();
  }

  std::vector<FileResult>& results() { return results_; }
  uint64_t files_done() const { return files_done_.load(std::memory_order_relaxed); }
  // The bytes of the files done, and those read so far of each file being read (for progress:
  // may be off by a file for an instant as a worker moves on).
  uint64_t bytes_done() const {
    uint64_t b = bytes_done_.load(std::memory_order_relaxed);
    for (int w = 0; w < workers_; ++w) {
      b += std::min(reading_[w].bytes.load(std::memory_order_relaxed),
                    reading_[w].size.load(std::memory_order_relaxed));
    }
    return std::min(b, tree_.total_bytes);
  }

 private:
  const SourceReadOptions& o_;
  const SourceTree& tree_;
  std::vector<FileResult> results_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> files_done_{0};
  std::atomic<uint64_t> bytes_done_{0};
  struct Reading {  // What a worker has read of the file it is at (relaxed: progress).
    std::atomic<uint64_t> bytes{0};
    std::atomic<uint64_t> size{0};
  };
  std::unique_ptr<Reading[]> reading_;  // [worker].
  const int workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  int workers_done_ = 0;  // Guarded by mu_.
};

// One worker per core (up to 8), but 8 at least for object storage, where a worker mostly
// waits for its request's answer (each holds at most 4 parts of 16 MiB in memory).
int DefaultJobs(const std::string& dest) {
  unsigned n = std::thread::hardware_concurrency();
  const int local = n == 0 ? 2 : static_cast<int>(std::min(n, 8u));
  return LocationOf(dest).in_object_storage() ? std::max(local, 8) : local;
}

// Runs the workers, reporting progress from this thread every 10 ms (the sink decides what it
// draws: a terminal's bar, at most STITCH_PROGRESS_FPS frames a second).
void RunWorkers(Run& run, int jobs, const SourceTree& tree, const WriterProgress& progress) {
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back([&run, t] { run.Work(t); });
  do {
    if (progress) progress(run.files_done(), run.bytes_done(), tree.files.size(), tree.total_bytes);
  } while (!run.WaitWorkers(jobs, std::chrono::milliseconds(10)));
  for (auto& t : threads) t.join();
  if (progress) progress(run.files_done(), run.bytes_done(), tree.files.size(), tree.total_bytes);
}

StatusOr<std::shared_ptr<const ResolvedBackup>> OpenBase(const BackupOptions& o) {
  if (o.base.empty()) return std::shared_ptr<const ResolvedBackup>();
  ResolveOptions r;
  r.origins = true;  // For the new backup's resolved index.
  auto chain = OpenResolved(o.base, o.chain, r);
  if (!chain.ok()) return chain.status().WithPrefix("base backup " + o.base + ": ");
  return chain;
}

// Just before the manifest goes in (this backup's `.lock` is there already): the base is still
// where it was opened, with its uuid (a prune may have removed it meanwhile; one that flattened
// it in place kept its uuid and every content the new backup names), and no prune is removing
// it. kNoBaseBackup otherwise: the backup is not kept. (A prune marks what it removes, then
// looks for writers and new backups on it in its store: it sees this one, if written at the
// top level of the base's store, or this check sees the mark.)
Status CheckBaseStillThere(const Storage& storage, const ResolvedBackup& base) {
  const std::string& path = base.top().path();
  // The mark first: a prune takes it away only once the base is gone, so a base read after no
  // mark was found is either there for good or found gone.
  auto marked = storage.BeingRemoved(path);
  if (!marked.ok()) {
    return marked.status().WithPrefix("the base " + path + ": is a prune removing it? ");
  }
  if (*marked) {
    return Status::NoBaseBackup("the base " + path + " (uuid " + base.top().header().uuid +
                                ") is being removed by a prune (or one that stopped left it "
                                "marked: the next stitch prune of its store clears that); the "
                                "new backup is not kept");
  }
  ManifestIdentity id;
  FolderIdentity folder;
  auto now = ReadBackupHeader(storage, path, &id, &folder);
  if (now.ok() && now->uuid == base.top().header().uuid) return Status::OK();
  return Status::NoBaseBackup("the base " + path + " (uuid " + base.top().header().uuid + ") " +
                              (now.ok() ? "was replaced by backup " + now->uuid
                                        : "is gone (" + now.status().ToString() + ")") +
                              " while this backup was written (a prune?); the new backup is not "
                              "kept");
}

// The locator of the base that ClickHouse resolves without help (FORMAT.md §5.1): Disk(...)
// when the user named the base through a disk; `S3('url')` in object storage (never with
// credentials); else `File()` relative to the backups root when the base lies under it (what
// ClickHouse resolves a relative path against), else with the absolute path.
std::string BaseLocator(const BackupOptions& o, const Storage& storage) {
  if (auto named = ParseLocator(o.base_locator);
      named.ok() && named->engine == "Disk" && named->args.size() == 2) {
    if (auto rel = PathInDisk(named->args[1]); rel.ok()) return DiskLocator(named->args[0], *rel);
  }
  if (LocationOf(o.base).in_object_storage()) return storage.LocatorFor(o.base);
  const std::string base = AbsolutePath(o.base);
  const std::string& root = o.chain.locators.backups_root;
  if (!root.empty()) {
    const std::string rel = fs::path(base).lexically_relative(root).string();
    if (!rel.empty() && rel != "." && rel.rfind("..", 0) != 0) return FileLocator(rel);
  }
  return FileLocator(base);
}

// True if `tree` is laid out as a ClickHouse backup (`metadata/DB.sql` or
// `metadata/DB/TABLE.sql`, possibly under `shards/N/replicas/M/`) or a server's data folder.
bool LooksLikeClickHouseTree(const SourceTree& tree) {
  for (const SourceFile& f : tree.files) {
    std::string_view n = f.name;
    if (n.rfind("shards/", 0) == 0) {
      const size_t m = n.find("/metadata/");
      if (m == std::string_view::npos) continue;
      n.remove_prefix(m + 1);
    }
    if (n.rfind("metadata/", 0) != 0 || n.size() < 13 || n.substr(n.size() - 4) != ".sql") continue;
    if (std::count(n.begin(), n.end(), '/') <= 2) return true;
  }
  return false;
}

// The checksum algorithm of the new backup: the base's (a chain keeps one), else the option's,
// else ClickHouse's for a tree laid out as ClickHouse's (so that ClickHouse's own incremental
// BACKUP on it reuses its files and prefixes, and its parts' checksums.txt values are the
// manifest's), else XXH3.
StatusOr<ChecksumAlgorithm> AlgorithmFor(const BackupOptions& o, const ResolvedBackup* base,
                                         const SourceTree& tree) {
  const ChecksumAlgorithm alg =
      base ? base->top().header().algorithm
           : o.algorithm.value_or(LooksLikeClickHouseTree(tree) ? ChecksumAlgorithm::kClickHouse
                                                                : ChecksumAlgorithm::kXxh3);
  if (o.algorithm && *o.algorithm != alg) {
    return Status::InvalidArgument(std::string("the base uses ") + ChecksumAlgorithmName(alg) +
                                   " checksums; a chain keeps one algorithm");
  }
  if (!o.timestamp.empty()) {
    if (auto t = ParseBackupTime(o.timestamp); !t.ok()) {
      return t.status().WithPrefix("--timestamp: ");
    }
  }
  return alg;
}

ManifestHeader HeaderFor(const BackupOptions& o, const Storage& storage, const BackupSummary& s,
                         const ResolvedBackup* base, const std::vector<FileEntry>& entries,
                         ChecksumAlgorithm alg) {
  ManifestHeader h;
  h.timestamp = o.timestamp.empty() ? FormatCivil(NowCivil()) : o.timestamp;
  h.uuid = s.uuid;
  h.deduplicate_files = true;
  h.algorithm = alg;
  bool uses_base = false;
  for (const auto& e : entries) uses_base |= e.uses_base();
  if (uses_base) {
    h.base_backup = BaseLocator(o, storage);
    h.base_backup_uuid = base->top().header().uuid;
    h.copy_s3_credentials = storage.SharesCredentials(o.dest, o.base);
  }
  return h;
}

// Reads every source file, staging data files with the writer, and turns the results into
// entries.
StatusOr<std::vector<FileEntry>> ReadAll(const BackupOptions& o, const SourceTree& tree,
                                         const SourceReadOptions& ro,
                                         const WriterProgress& progress, BackupSummary* summary,
                                         std::deque<std::string>& data_names) {
  const int jobs = o.jobs > 0 ? o.jobs : DefaultJobs(o.dest);
  Run run(ro, tree, jobs);
  RunWorkers(run, jobs, tree, progress);
  RETURN_IF_ERROR(CheckStop());  // Files left unread: nothing is kept.
  RETURN_IF_ERROR(run.DestinationError());
  SplitChangedLinks(tree, run.results(), &summary->warnings);
  PlanInput plan{tree, run.results(), ro.base, *ro.writer, data_names};
  return FinishEntries(plan, summary);
}

}  // namespace

StatusOr<BackupSummary> WriteBackup(const BackupOptions& o, const WriterProgress& progress) {
  RETURN_IF_ERROR(RequireStorage(o.chain, "Backup " + o.dest));
  ASSIGN_OR_RETURN(auto base, OpenBase(o));
  UniqueFd src(::open(o.source.c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC));
  if (!src) return Status::IOError("open source folder " + o.source, errno);
  timespec started;  // Before any time of the source is taken (ManifestHeader::read_start_ns).
  ::clock_gettime(CLOCK_REALTIME, &started);
  ASSIGN_OR_RETURN(SourceTree tree, WalkSource(src.get()));
  ASSIGN_OR_RETURN(const ChecksumAlgorithm alg, AlgorithmFor(o, base.get(), tree));
  BackupSummary summary;
  summary.algorithm = alg;
  summary.uuid = NewUuid();
  std::string notice;
  const std::shared_ptr<const Storage>& storage = o.chain.storage;
  WriterIntent intent{summary.uuid, "", ""};
  if (base) intent = {summary.uuid, base->top().header().uuid, base->top().path()};
  ASSIGN_OR_RETURN(auto writer, storage->StartBackup(o.dest, intent, &notice));
  if (!notice.empty()) summary.warnings.push_back(notice);
  summary.warnings.insert(summary.warnings.end(), tree.warnings.begin(), tree.warnings.end());
  summary.missing = tree.missing;
  SourceReadOptions ro{src.get(),
                       writer.get(),
                       alg,
                       base ? &base->top().manifest() : nullptr,
                       o.files_cache,
                       o.max_retries,
                       &o.immutable_globs};
  ro.local_devices = &tree.local_devices;
  std::deque<std::string> data_names;
  ASSIGN_OR_RETURN(std::vector<FileEntry> entries,
                   ReadAll(o, tree, ro, progress, &summary, data_names));
  ManifestHeader h = HeaderFor(o, *storage, summary, base.get(), entries, alg);
  h.read_start_ns = int64_t{started.tv_sec} * 1'000'000'000 + started.tv_nsec;
  std::vector<Node> nodes;
  for (const SourceNode& n : tree.nodes) nodes.push_back({n.type, n.name, n.target, n.meta});
  summary.nodes = nodes.size();
  std::string xml;
  RETURN_IF_ERROR(RenderManifest(h, entries, &xml, nodes, summary.missing));
  if (base) RETURN_IF_ERROR(CheckBaseStillThere(*storage, *base));
  RETURN_IF_ERROR(writer->Finish(xml));
  if (base) {  // Only a quicker open: a backup without it is complete.
    ChainOptions self;
    self.storage = storage;
    self.cache = o.chain.cache;
    Status s = WriteResolvedIndex(o.dest, *base, self);
    if (!s.ok()) summary.warnings.push_back("no resolved index kept: " + s.ToString());
  }
  return summary;
}

}  // namespace stitchfs::engine
