#include "engine/read/chain_resolve.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/base/civil_time.h"
#include "engine/read/chain_walk.h"

namespace stitchfs::engine {
namespace {

using FlatExtent = ResolvedTables::FlatExtent;

// Builds the tables of a chain one level at a time. Not thread-safe.
class Resolver {
 public:
  Resolver(const ChainOptions& o, const ResolveOptions& r) : o_(o), r_(r) {}

  StatusOr<std::unique_ptr<ResolvedBackup>> Run(std::shared_ptr<const Backup> top) {
    top_ = top.get();
    AddLevel(*top);
    Start(top->manifest());
    ChainWalk walk(o_, *top);
    std::shared_ptr<const Backup> child = top;
    for (uint32_t level = 0;; ++level) {
      ASSIGN_OR_RETURN(auto base, walk.Next(*child, level));
      if (!base) break;
      AddLevel(*base);
      Step(child->manifest(), base->manifest(), level + 1, base->header());
      child = std::move(base);
    }
    if (!pending_.empty()) {  // ChainWalk::Next found the user; defensive.
      return Status::NoBaseBackup(top->Prefix() + "a file needs a base backup that was not found");
    }
    Finish();
    return std::make_unique<ResolvedBackup>(std::move(top), o_.storage, std::move(tables_));
  }

 private:
  struct Pending {  // Top entry `rep` still needs the prefix (size, checksum) from below.
    uint32_t rep;
    uint64_t size;
    Checksum checksum;
  };
  struct Tagged {
    uint32_t rep;
    FlatExtent x;
  };
  struct Follow {  // Top entry `entry` is unchanged down to entry `at` of the current level.
    uint32_t entry, at;
  };

  void AddLevel(const Backup& b) {
    tables_.AddLevel({b.folder(), b.header().uuid, b.header().timestamp,
                      CivilToEpochSeconds(b.header().time), b.identity(), b.header().base_backup});
  }

  void Tag(uint32_t rep, uint32_t level, const FileEntry& e) {
    if (level == 0) {
      tagged_.push_back({rep, {ResolvedTables::kOwnFile, 0, e.stored_size()}});
      return;
    }
    std::string key = std::to_string(level) + '/';
    key += e.data_file;
    auto [it, inserted] = file_ids_.emplace(std::move(key), t_.files.size());
    if (inserted) {
      if (e.data_file == top_->manifest().name(rep)) {
        t_.files.push_back({level, rep, ResolvedTables::kEntryName});
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
      if (e.size == 0 || m.ContentRep(i) != i) continue;
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
      const size_t n = top_->manifest().num_entries();
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
    tables_.Adopt(std::move(t_));
  }

  // The prefix keys, grouped by rep (they were recorded level by level).
  void FinishPrefixes() {
    if (!r_.prefixes) return;
    tables_.has_prefixes = true;
    std::stable_sort(prefixes_.begin(), prefixes_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    const size_t n = top_->manifest().num_entries();
    tables_.first_prefix.assign(n + 1, 0);
    size_t pos = 0;
    for (size_t i = 0; i < n; ++i) {
      tables_.first_prefix[i] = static_cast<uint32_t>(pos);
      for (; pos < prefixes_.size() && prefixes_[pos].first == i; ++pos) {
        tables_.prefix_keys.push_back(prefixes_[pos].second);
      }
    }
    tables_.first_prefix[n] = static_cast<uint32_t>(pos);
  }

  const ChainOptions& o_;
  const ResolveOptions& r_;
  const Backup* top_ = nullptr;
  ResolvedTables tables_;
  ResolvedTables::Built t_;
  std::vector<std::pair<uint32_t, ContentKey>> prefixes_;  // (rep, key), level by level.
  std::unordered_map<std::string, uint32_t> file_ids_;
  std::vector<Tagged> tagged_;
  std::vector<Pending> pending_;
  std::vector<Follow> follow_;
};

}  // namespace

StatusOr<std::unique_ptr<ResolvedBackup>> ResolveByWalk(std::shared_ptr<const Backup> top,
                                                        const ChainOptions& options,
                                                        const ResolveOptions& r) {
  return Resolver(options, r).Run(std::move(top));
}

}  // namespace stitchfs::engine
