#include "engine/store/store_index.h"

#include <charconv>
#include <chrono>
#include <set>
#include <tuple>

namespace stitchfs::engine {
namespace {

int64_t SystemNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool SameFolder(const StoreSlot& s, const StoreFolder& f) {
  return s.folder == f.folder && s.manifest == f.manifest;
}

// Ends a scan whatever happens (even an exception while the lock is released): the lock is
// held again and the next scan may start.
class ScanGuard {
 public:
  ScanGuard(std::unique_lock<std::mutex>& lock, bool& scanning) : lock_(lock), scanning_(scanning) {
    scanning_ = true;
  }
  ~ScanGuard() {
    if (!lock_.owns_lock()) lock_.lock();
    scanning_ = false;
  }
  ScanGuard(const ScanGuard&) = delete;
  ScanGuard& operator=(const ScanGuard&) = delete;

 private:
  std::unique_lock<std::mutex>& lock_;
  bool& scanning_;
};

}  // namespace

StoreIndex::StoreIndex(std::string store, std::shared_ptr<const Storage> storage, Clock clock,
                       Log log)
    : store_(std::move(store)),
      storage_(std::move(storage)),
      clock_(clock ? std::move(clock) : Clock(SystemNs)),
      log_(std::move(log)),
      created_ns_(clock_()),
      changed_ns_(created_ns_) {}

StoreChanges StoreIndex::Rescan(std::unique_lock<std::mutex>& lock, bool force) {
  const int64_t now = clock_();
  if (scanning_ ||
      (!force && last_scan_ns_ && now - *last_scan_ns_ < storage_->StoreRescanNs(store_))) {
    return {};
  }
  last_scan_ns_ = now;
  ScanGuard guard(lock, scanning_);
  std::optional<std::vector<Scanned>> scanned = Scan(lock);
  if (!scanned) return {};
  return Merge(*scanned, clock_());
}

std::optional<std::vector<StoreIndex::Scanned>> StoreIndex::Scan(
    std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  auto folders = storage_->ScanStore(store_);
  if (!folders.ok()) {
    if (log_) log_(folders.status().ToString());
    lock.lock();
    // Gone (ENOENT, not a folder): no backups. Anything else may pass: keep what is known.
    if (folders.status().code() != ErrorCode::kBackupNotFound) return std::nullopt;
    return std::vector<Scanned>{};
  }
  std::vector<Scanned> out;
  for (StoreFolder& f : *folders) {
    Scanned s{std::move(f)};
    lock.lock();
    s.known = Known(s.folder);
    lock.unlock();
    if (!s.known) {
      FolderIdentity folder;
      s.header = ReadBackupHeader(*storage_, s.folder.path, &s.folder.manifest, &folder);
      if (s.header.ok() && folder != s.folder.folder) {
        s.header = Status::BackupNotFound("Backup " + s.folder.path + " changed while read");
      }
    }
    out.push_back(std::move(s));
  }
  lock.lock();
  return out;
}

bool StoreIndex::Known(const StoreFolder& f) const {
  auto it = last_of_name_.find(f.name);
  return it != last_of_name_.end() && SameFolder(slots_[it->second - 1], f);
}

StoreChanges StoreIndex::Merge(const std::vector<Scanned>& scanned, int64_t now) {
  StoreChanges changes;
  changes.scanned = true;
  std::set<std::string_view> seen;
  for (const Scanned& sc : scanned) {
    seen.insert(sc.folder.name);
    MergeOne(sc, now, &changes);
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    StoreSlot& s = slots_[i];
    if (s.present && !seen.count(s.name)) {
      s.present = false;
      changes.reset.push_back(i + 1);
      changed_ns_ = now;
      ++version_;
    }
  }
  Reindex();
  return changes;
}

void StoreIndex::MergeOne(const Scanned& sc, int64_t now, StoreChanges* changes) {
  auto it = last_of_name_.find(sc.folder.name);
  const uint64_t k = it == last_of_name_.end() ? 0 : it->second;
  StoreSlot* old = k ? &slots_[k - 1] : nullptr;
  const bool rewritten = old && !SameFolder(*old, sc.folder) && !sc.known && sc.header.ok() &&
                         sc.header->uuid == old->uuid && sc.header->timestamp == old->timestamp;
  if (old && (SameFolder(*old, sc.folder) || rewritten)) {
    if (rewritten) {  // Prune's flattening keeps uuid and time; Show checks the content.
      old->folder = sc.folder.folder;
      old->manifest = sc.folder.manifest;
      changes->reset.push_back(k);
      ++version_;
    }
    if (!old->present) {
      changed_ns_ = now;
      ++version_;
    }
    old->present = true;
    return;
  }
  if (old && sc.known) return;  // Replaced again since the scan looked: next time.
  if (old) {                    // Another backup took its place: the old slot retires.
    old->present = false;
    changes->reset.push_back(k);
  }
  StoreSlot s;
  s.name = sc.folder.name;
  s.path = sc.folder.path;
  s.folder = sc.folder.folder;
  s.manifest = sc.folder.manifest;
  if (sc.header.ok()) {
    s.uuid = sc.header->uuid;
    s.timestamp = sc.header->timestamp;
    s.time = sc.header->time;
  } else {
    s.error = sc.header.status();
  }
  Add(std::move(s), now);
}

uint64_t StoreIndex::Add(StoreSlot s, int64_t now) {
  slots_.push_back(std::move(s));
  const uint64_t k = slots_.size();
  last_of_name_[slots_.back().name] = k;
  changed_ns_ = now;
  ++version_;
  return k;
}

void StoreIndex::Reindex() {
  first_of_uuid_.clear();
  at_path_.clear();
  for (size_t i = 0; i < slots_.size(); ++i) {
    const StoreSlot& s = slots_[i];
    if (!s.present) continue;
    if (s.has_header()) first_of_uuid_.emplace(s.uuid, i + 1);
    at_path_[s.path] = i + 1;
  }
}

bool StoreIndex::Show(uint64_t k, uint64_t signature) {
  StoreSlot& s = slots_[k - 1];
  if (s.signature == 0 || s.signature == signature) {
    s.signature = signature;
    return true;
  }
  StoreSlot fresh = s;  // Same folder and header, shown under new numbers.
  fresh.signature = 0;
  s.present = false;
  Add(std::move(fresh), clock_());
  Reindex();
  return false;
}

const StoreSlot* StoreIndex::slot(uint64_t k) const {
  return k == 0 || k > slots_.size() ? nullptr : &slots_[k - 1];
}

uint64_t StoreIndex::Named(std::string_view name) const {
  auto it = last_of_name_.find(name);
  return it != last_of_name_.end() && slots_[it->second - 1].present ? it->second : 0;
}

uint64_t StoreIndex::AtPath(const std::string& path) const {
  auto it = at_path_.find(path);
  return it == at_path_.end() ? 0 : it->second;
}

uint64_t StoreIndex::Newest(CivilSeconds limit) const {
  uint64_t best = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    const StoreSlot& s = slots_[i];
    if (!s.present || !s.has_header() || s.time > limit) continue;
    const StoreSlot* b = best ? &slots_[best - 1] : nullptr;
    if (!b || std::tie(s.time, s.name) > std::tie(b->time, b->name)) best = i + 1;
  }
  return best;
}

uint64_t StoreIndex::Latest() const { return Newest(kMaxBackupTime); }

uint64_t StoreIndex::At(std::string_view name) const {
  const std::optional<CivilSeconds> end = PeriodEnd(name);
  return end ? Newest(*end) : 0;
}

uint64_t StoreIndex::ByUuid(std::string_view uuid) const {
  uint64_t last = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    const StoreSlot& s = slots_[i];
    if (s.present && s.has_header() && s.uuid == uuid) last = i + 1;
  }
  return last;
}

uint64_t StoreIndex::FirstWithUuid(std::string_view uuid) const {
  auto it = first_of_uuid_.find(uuid);
  return it == first_of_uuid_.end() ? 0 : it->second;
}

std::string StoreIndex::Generation(uint64_t k) const {
  return slots_[k - 1].name + "@" + std::to_string(k);
}

uint64_t StoreIndex::OfGeneration(std::string_view generation) const {
  const size_t at = generation.rfind('@');
  if (at == std::string_view::npos) return 0;
  const std::string_view digits = generation.substr(at + 1);
  uint64_t k = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits[0] == '0') return 0;
  if (k == 0 || k > slots_.size()) return 0;
  const StoreSlot& s = slots_[k - 1];
  return s.present && s.name == generation.substr(0, at) ? k : 0;
}

std::vector<uint64_t> StoreIndex::ByName() const {
  std::vector<uint64_t> out;
  for (const auto& [name, k] : last_of_name_) {
    if (slots_[k - 1].present) out.push_back(k);
  }
  return out;
}

std::vector<uint64_t> StoreIndex::WithHeader() const {
  std::vector<uint64_t> out;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].present && slots_[i].has_header()) out.push_back(i + 1);
  }
  return out;
}

}  // namespace stitchfs::engine
