#include "engine/read/resolved_backup.h"

#include <algorithm>
#include <unordered_map>

#include "engine/backends/routing_storage.h"
#include "engine/base/concat_file.h"
#include "engine/format/data_file_name.h"
#include "engine/location/s3_address.h"
#include "engine/read/chain_compose.h"
#include "engine/read/chain_walk.h"
#include "engine/storage/store.h"

namespace stitchfs::engine {

bool Unchanged(const FileEntry& a, const FileEntry& b) {
  if (a.size != b.size || a.checksum != b.checksum || a.meta.has_value() != b.meta.has_value())
    return false;
  if (!a.meta) return true;
  return a.meta->mode == b.meta->mode && a.meta->uid == b.meta->uid && a.meta->gid == b.meta->gid &&
         a.meta->mtime == b.meta->mtime;
}

namespace {

// The entry whose data and base coverage serve every copy of `i`'s content.
size_t RepOf(const Manifest& m, size_t i) {
  if (m.IsContentRep(i)) return i;
  const FileEntry e = m.entry(i);
  return e.size == 0 ? i : *m.FindByContent(e.size, e.checksum);
}

}  // namespace

// Builds a ResolvedBackup one level at a time. Not thread-safe.
class Resolver {
 public:
  Resolver(const ChainOptions& o, const ResolveOptions& r) : o_(o), r_(r) {}

  StatusOr<std::unique_ptr<ResolvedBackup>> Run(std::shared_ptr<const Backup> top_backup) {
    out_->top_ = std::move(top_backup);
    const Backup& top = *out_->top_;
    out_->storage_ = o_.storage;
    AddLevel(top);
    Start(top.manifest());
    ChainWalk walk(o_, top);
    std::shared_ptr<const Backup> child = out_->top_;
    for (uint32_t level = 0;; ++level) {
      ASSIGN_OR_RETURN(auto base, walk.Next(*child, level));
      if (!base) break;
      AddLevel(*base);
      Step(child->manifest(), base->manifest(), level + 1, base->header());
      child = std::move(base);
    }
    if (!pending_.empty()) {  // ChainWalk::Next found the user; defensive.
      return Status::NoBaseBackup(top.Prefix() + "a file needs a base backup that was not found");
    }
    Finish();
    return std::move(out_);
  }

 private:
  struct Pending {  // Top entry `rep` still needs the prefix (size, checksum) from below.
    uint32_t rep;
    uint64_t size;
    Checksum checksum;
  };
  struct Tagged {
    uint32_t rep;
    ResolvedBackup::FlatExtent x;
  };
  struct Follow {  // Top entry `entry` is unchanged down to entry `at` of the current level.
    uint32_t entry, at;
  };

  void AddLevel(const Backup& b) {
    out_->levels_.push_back({b.folder(), b.header().uuid, b.header().timestamp,
                             CivilToEpochSeconds(b.header().time), b.identity(),
                             b.header().base_backup});
  }

  void Tag(uint32_t rep, uint32_t level, const FileEntry& e) {
    if (level == 0) {
      tagged_.push_back({rep, {ResolvedBackup::kOwnFile, 0, e.stored_size()}});
      return;
    }
    std::string key = std::to_string(level) + '/';
    key += e.data_file;
    auto [it, inserted] = file_ids_.emplace(std::move(key), t_.files.size());
    if (inserted) {
      if (e.data_file == out_->top_->manifest().name(rep)) {
        t_.files.push_back({level, rep, ResolvedBackup::kEntryName});
      } else {
        t_.files.push_back({level, static_cast<uint32_t>(t_.names.size()),
                            static_cast<uint32_t>(e.data_file.size())});
        t_.names += e.data_file;
      }
    }
    tagged_.push_back({rep, {it->second, level, e.stored_size()}});
  }

  void Start(const Manifest& m) {
    for (uint32_t i = 0; i < m.num_entries(); ++i) {
      const FileEntry e = m.entry(i);
      if (r_.origins) follow_.push_back({i, i});
      if (e.size == 0 || RepOf(m, i) != i) continue;
      if (!e.uses_base()) continue;  // Its own data file, whole: no extent kept.
      if (e.has_data_file()) Tag(i, 0, e);
      pending_.push_back({i, e.base_size, e.base_checksum});
    }
    if (r_.origins) {
      t_.origins.resize(m.num_entries());
      for (uint32_t i = 0; i < m.num_entries(); ++i) t_.origins[i] = {0, i};
    }
  }

  // Moves every pending prefix and origin walk from `child` one level down, to `base`.
  void Step(const Manifest& child, const Manifest& base, uint32_t level,
            const ManifestHeader& base_header) {
    std::vector<Pending> next;
    for (const Pending& p : pending_) {
      if (r_.prefixes) prefixes_.push_back({p.rep, {p.size, p.checksum}});
      const size_t idx = *base.FindByContent(p.size, p.checksum);  // Checked by ChainWalk.
      const FileEntry e = base.entry(idx);
      if (e.has_data_file()) Tag(p.rep, level, e);
      if (e.uses_base()) next.push_back({p.rep, e.base_size, e.base_checksum});
    }
    pending_.swap(next);
    std::vector<Follow> keep;
    if (!r_.origin_ok || r_.origin_ok(base_header)) {
      for (const Follow& f : follow_) {
        const FileEntry a = child.entry(f.at);
        auto b = base.FindByName(a.name);
        if (!b || !Unchanged(a, base.entry(*b))) continue;
        t_.origins[f.entry] = {level, static_cast<uint32_t>(*b)};
        keep.push_back({f.entry, static_cast<uint32_t>(*b)});
      }
    }
    follow_.swap(keep);
  }

  void Finish() {
    FinishPrefixes();
    // File order: the deepest level's bytes come first.
    std::stable_sort(tagged_.begin(), tagged_.end(), [](const Tagged& a, const Tagged& b) {
      return a.rep != b.rep ? a.rep < b.rep : a.x.level > b.x.level;
    });
    if (!tagged_.empty()) {
      const size_t n = out_->top_->manifest().num_entries();
      t_.first_extent.assign(n + 1, 0);
      t_.extents.reserve(tagged_.size());
      size_t pos = 0;
      for (size_t i = 0; i < n; ++i) {
        t_.first_extent[i] = static_cast<uint32_t>(pos);
        for (; pos < tagged_.size() && tagged_[pos].rep == i; ++pos) {
          t_.extents.push_back(tagged_[pos].x);
        }
      }
      t_.first_extent[n] = static_cast<uint32_t>(pos);
    }
    out_->Adopt(std::move(t_));
  }

  // The prefix keys, grouped by rep (they were recorded level by level).
  void FinishPrefixes() {
    if (!r_.prefixes) return;
    out_->has_prefixes_ = true;
    std::stable_sort(prefixes_.begin(), prefixes_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    const size_t n = out_->top_->manifest().num_entries();
    out_->first_prefix_.assign(n + 1, 0);
    size_t pos = 0;
    for (size_t i = 0; i < n; ++i) {
      out_->first_prefix_[i] = static_cast<uint32_t>(pos);
      for (; pos < prefixes_.size() && prefixes_[pos].first == i; ++pos) {
        out_->prefix_keys_.push_back(prefixes_[pos].second);
      }
    }
    out_->first_prefix_[n] = static_cast<uint32_t>(pos);
  }

  const ChainOptions& o_;
  const ResolveOptions& r_;
  std::unique_ptr<ResolvedBackup> out_{new ResolvedBackup()};
  ResolvedBackup::Tables t_;
  std::vector<std::pair<uint32_t, ContentKey>> prefixes_;  // (rep, key), level by level.
  std::unordered_map<std::string, uint32_t> file_ids_;
  std::vector<Tagged> tagged_;
  std::vector<Pending> pending_;
  std::vector<Follow> follow_;
};

StatusOr<std::unique_ptr<ResolvedBackup>> ResolvedBackup::Walk(std::shared_ptr<const Backup> top,
                                                               const ChainOptions& options,
                                                               const ResolveOptions& r) {
  return Resolver(options, r).Run(std::move(top));
}

StatusOr<std::shared_ptr<const ResolvedBackup>> ResolvedBackup::Open(const std::string& dir,
                                                                     const ChainOptions& options,
                                                                     const ResolveOptions& r) {
  ChainOptions local = options;
  if (!local.storage) {
    local.storage = RoutingStorage::Create(options.max_open_files);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ResolvedBackup> out, OpenChain(dir, local, r));
  return std::shared_ptr<const ResolvedBackup>(std::move(out));
}

void ResolvedBackup::Adopt(Tables t) {
  t.names.shrink_to_fit();
  t.files.shrink_to_fit();
  t.extents.shrink_to_fit();
  SetOrigins(std::move(t.origins));  // Kept apart, so that replacing them frees them.
  auto kept = std::make_shared<const Tables>(std::move(t));
  extents_ = kept->extents;
  first_extent_ = kept->first_extent;
  files_ = kept->files;
  names_ = kept->names;
  backing_ = std::move(kept);
}

void ResolvedBackup::SetOrigins(std::vector<Origin> o) {
  auto kept = std::make_shared<const std::vector<Origin>>(std::move(o));
  origins_ = *kept;
  origins_backing_ = std::move(kept);
}

std::string_view ResolvedBackup::FileName(uint32_t file) const {
  const DataFileName& f = files_[file];
  if (f.length == kEntryName) return top_->manifest().name(f.offset);
  return names_.substr(f.offset, f.length);
}

size_t ResolvedBackup::Rep(size_t entry) const { return RepOf(top_->manifest(), entry); }

std::vector<ResolvedBackup::FlatExtent> ResolvedBackup::Extents(size_t entry) const {
  const size_t r = Rep(entry);
  if (!first_extent_.empty() && first_extent_[r + 1] > first_extent_[r]) {
    return {extents_.begin() + first_extent_[r], extents_.begin() + first_extent_[r + 1]};
  }
  const FileEntry e = top_->manifest().entry(r);
  if (e.size == 0) return {};
  return {{kOwnFile, 0, e.size}};
}

ResolvedBackup::Origin ResolvedBackup::origin(size_t entry) const {
  return origins_.empty() ? Origin{0, static_cast<uint32_t>(entry)} : origins_[entry];
}

StatusOr<std::shared_ptr<const BackupDataFile>> ResolvedBackup::OpenNamed(
    const std::shared_ptr<const BackupFolder>& folder, const std::string& name,
    uint64_t length) const {
  auto object = ParseObjectDataFileName(name);
  if (!object) return storage_->OpenDataFile(folder, name, length);
  // A lightweight snapshot's file: an object of the source's object storage.
  auto bucket = storage_->OpenFolder(object->bucket_url);
  if (!bucket.ok()) {
    return bucket.status().WithPrefix("Backup " + folder->path() + ": object " + object->key +
                                      " of " + RedactUrl(object->bucket_url) +
                                      " (a lightweight snapshot): ");
  }
  return storage_->OpenDataFile(*bucket, object->key, length);
}

StatusOr<std::shared_ptr<const BackupDataFile>> ResolvedBackup::OpenDataFile(
    size_t rep, const FlatExtent& x) const {
  const bool own = x.file == kOwnFile;
  const uint64_t key = own ? rep : (uint64_t{1} << 32) | x.file;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto cached = open_[key].lock()) return cached;
  std::string name(own ? top_->manifest().entry(rep).data_file : FileName(x.file));
  ASSIGN_OR_RETURN(auto file, OpenNamed(levels_[x.level].folder, name, x.length));
  open_[key] = file;
  if (++inserts_ % 1024 == 0) {  // Forget the files no reader holds any more.
    std::erase_if(open_, [](const auto& kv) { return kv.second.expired(); });
  }
  return file;
}

StatusOr<std::vector<Segment>> ResolvedBackup::Segments(size_t rep,
                                                        std::span<const FlatExtent> extents) const {
  std::vector<Segment> segments;
  segments.reserve(extents.size());
  for (const FlatExtent& x : extents) {
    ASSIGN_OR_RETURN(auto file, OpenDataFile(rep, x));
    RETURN_IF_ERROR(file->CheckDeclaredSize(x.length));
    segments.push_back({std::move(file), 0, x.length});
  }
  return segments;
}

StatusOr<std::shared_ptr<const RandomAccessFile>> ResolvedBackup::Stitch(
    size_t rep, std::span<const FlatExtent> extents) const {
  ASSIGN_OR_RETURN(std::vector<Segment> segments, Segments(rep, extents));
  return Concatenate(std::move(segments));
}

StatusOr<std::vector<Segment>> ResolvedBackup::OpenSegments(size_t entry) const {
  auto r = Segments(Rep(entry), Extents(entry));
  if (r.ok()) return r;
  return AboutEntry(entry, r.status());
}

std::vector<ContentKey> ResolvedBackup::Prefixes(size_t entry) const {
  const FileEntry e = top_->manifest().entry(entry);
  std::vector<ContentKey> out;
  if (e.size == 0) return out;
  out.push_back({e.size, e.checksum});
  const size_t r = Rep(entry);
  if (r + 1 < first_prefix_.size()) {
    out.insert(out.end(), prefix_keys_.begin() + first_prefix_[r],
               prefix_keys_.begin() + first_prefix_[r + 1]);
  }
  return out;
}

Status ResolvedBackup::AboutEntry(size_t entry, const Status& s) const {
  return s.WithPrefix(top_->Prefix() + "entry \"" +
                      std::string(top_->manifest().entry(entry).name) + "\": ");
}

StatusOr<std::shared_ptr<const RandomAccessFile>> ResolvedBackup::OpenEntry(size_t entry) const {
  auto r = Stitch(Rep(entry), Extents(entry));
  if (r.ok()) return r;
  return AboutEntry(entry, r.status());
}

StatusOr<std::shared_ptr<const RandomAccessFile>> ResolvedBackup::OpenStoredTail(
    size_t entry) const {
  std::vector<FlatExtent> x = Extents(entry);
  if (!x.empty() && x.back().level == 0) {
    x.erase(x.begin(), x.end() - 1);
  } else {
    x.clear();
  }
  auto r = Stitch(Rep(entry), x);
  if (r.ok()) return r;
  return AboutEntry(entry, r.status());
}

BackupStats ResolvedBackup::Stats() const {
  BackupStats st = ManifestStats(*top_, depth());
  for (size_t i = 0; i < top_->manifest().num_entries(); ++i) {
    for (const FlatExtent& x : Extents(i)) st.bytes_by_level[x.level] += x.length;
  }
  return st;
}

size_t ResolvedBackup::MemoryUsage() const {
  return extents_.size_bytes() + first_extent_.size_bytes() + files_.size_bytes() + names_.size() +
         origins_.size_bytes();
}

}  // namespace stitchfs::engine
