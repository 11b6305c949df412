#include "engine/store/prune.h"

#include <algorithm>
#include <map>
#include <set>

#include "engine/location/archive_kind.h"
#include "engine/location/location.h"
#include "engine/location/locator.h"
#include "engine/read/open_resolved.h"
#include "engine/read/resolved_backup.h"
#include "engine/storage/store.h"
#include "engine/storage/store_moves.h"
#include "engine/write/flatten.h"

namespace stitchfs::engine {
namespace {

// "YYYY-MM-DD" or "YYYY-MM" of a backup's timestamp text.
std::string Period(const StoreEntry& e, size_t len) {
  return e.backup ? e.backup->header().timestamp.substr(0, len) : "";
}

// Which backups the policy keeps (indexes into `all`, which is oldest first), and why.
std::map<size_t, std::string> Kept(const std::vector<StoreEntry>& all, const PrunePolicy& p) {
  std::map<size_t, std::string> kept;
  std::set<std::string> days, months;
  int last = 0;
  for (size_t k = all.size(); k-- > 0;) {
    if (!all[k].backup) {
      kept[k] = "unreadable, never removed";
      continue;
    }
    if (last < p.keep_last) {
      ++last;
      kept.emplace(k, "last");
    }
    const std::string day = Period(all[k], 10), month = Period(all[k], 7);
    if (static_cast<int>(days.size()) < p.keep_daily && days.insert(day).second)
      kept.emplace(k, "daily");
    if (static_cast<int>(months.size()) < p.keep_monthly && months.insert(month).second) {
      kept.emplace(k, "monthly");
    }
  }
  return kept;
}

// The chain of the kept backup `all[k]`, opened with every check ChainWalk makes, as store
// indexes (nullopt for a base outside the store), level 0 first.
StatusOr<std::vector<std::optional<size_t>>> ChainInStore(const std::vector<StoreEntry>& all,
                                                          size_t k, const ChainOptions& o) {
  auto chain = OpenResolved(all[k].path, o);
  if (!chain.ok()) {
    return chain.status().WithPrefix("prune removes nothing while a kept backup does not open (" +
                                     all[k].name + "): ");
  }
  std::map<FolderIdentity, size_t> by_id;
  for (size_t i = 0; i < all.size(); ++i) by_id[all[i].folder] = i;
  std::vector<std::optional<size_t>> levels;
  for (size_t l = 0; l < (*chain)->depth(); ++l) {
    auto it = by_id.find((*chain)->level(l).folder->identity());
    levels.push_back(it == by_id.end() ? std::nullopt : std::optional(it->second));
  }
  return levels;
}

// Does the kept backup with this chain need flattening? Yes when, going down its chain, a
// removed backup comes before any kept one (a kept one below looks after the rest itself).
bool NeedsFlatten(const std::vector<std::optional<size_t>>& levels,
                  const std::map<size_t, std::string>& kept) {
  for (size_t l = 1; l < levels.size(); ++l) {
    if (!levels[l]) continue;  // Outside the store: never removed.
    return kept.count(*levels[l]) == 0;
  }
  return false;
}

// Marks the backups at `paths` for removal (StoreMoves::SetAside: they still open, but no writer
// builds on them from now on), and makes the marks durable. `moved` lists what was marked.
Status SetAside(const std::vector<std::string>& paths, StoreMoves& moves,
                std::vector<std::string>* moved) {
  for (const std::string& path : paths) {
    RETURN_IF_ERROR(moves.SetAside(path));
    moved->push_back(path);
  }
  return moves.Sync();
}

// The backups a backup being written builds on are kept: its base (by uuid).
void KeepWritersBases(const std::vector<StoreEntry>& all, const std::vector<StoreWriter>& writers,
                      std::map<size_t, std::string>* kept) {
  for (const StoreWriter& w : writers) {
    if (w.lock.base_uuid.empty()) continue;
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i].backup && all[i].backup->header().uuid == w.lock.base_uuid) {
        kept->emplace(i, "the base of " + w.path + ", being written");
      }
    }
  }
}

// The names of the store's backups in `all` (folders no writer is at work in).
std::set<std::string> NamesOf(const std::vector<StoreEntry>& all) {
  std::set<std::string> names;
  for (const StoreEntry& e : all) names.insert(e.name);
  return names;
}

// With the backups to remove marked (they still open): no writer has started on one of them
// since the plan was made, and every backup of the store opens with its whole chain, in the
// store as it now is, without one of them: the kept ones, and any written meanwhile. A writer
// that checks its base just before its `.backup` goes in (as stitch backup does) either is seen
// here or finds its base marked.
Status ProveStore(const std::string& store, const std::vector<StoreEntry>& all,
                  const std::map<size_t, std::string>& kept,
                  const std::set<std::string>& removed_uuids, ChainOptions o, StoreMoves& moves) {
  ASSIGN_OR_RETURN(std::vector<StoreWriter> writers, moves.Writers(NamesOf(all)));
  for (const StoreWriter& w : writers) {
    if (removed_uuids.count(w.lock.base_uuid)) {
      return Status::BackupAlreadyExists("a backup being written (" + w.path +
                                         ") started on a backup prune removes; prune aborted, "
                                         "nothing removed");
    }
  }
  std::vector<std::string> paths;
  for (const auto& [k, why] : kept) {
    if (all[k].backup) paths.push_back(all[k].path);  // Unreadable before: nothing to prove.
  }
  const std::set<std::string> known = NamesOf(all);
  ASSIGN_OR_RETURN(std::vector<StoreFolder> now, o.storage->ScanStore(store));
  for (const StoreFolder& f : now) {
    if (!known.count(f.name)) paths.push_back(f.path);  // Written while prune ran.
  }
  o.backups = std::make_shared<BackupCache>(size_t{256} << 20);
  for (const std::string& path : paths) {
    auto chain = OpenResolved(path, o);
    if (!chain.ok()) {
      return chain.status().WithPrefix("backup " + path +
                                       " would no longer open; prune aborted, nothing removed: ");
    }
    for (size_t l = 1; l < (*chain)->depth(); ++l) {
      if (removed_uuids.count((*chain)->level(l).uuid)) {
        return Status::BackupAlreadyExists("backup " + path + " builds on " +
                                           (*chain)->level(l).path() +
                                           ", which prune removes; prune aborted, nothing removed");
      }
    }
  }
  return Status::OK();
}

// The backups `plan` removes, each before the backups it builds on (deeper chains first, then
// the newest): a removal that stops part way leaves only backups whose bases are still there.
// Not by timestamp alone: a clock, a time zone or --timestamp can put a backup before its base.
std::vector<std::string> ChildrenFirst(const std::vector<StoreEntry>& all,
                                       const std::vector<PruneAction>& plan) {
  std::vector<size_t> order;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].kind == PruneAction::kRemove) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&all](size_t a, size_t b) {
    return all[a].depth != all[b].depth ? all[a].depth > all[b].depth : a > b;
  });
  std::vector<std::string> paths;
  for (size_t i : order) paths.push_back(all[i].path);
  return paths;
}

// An archive in object storage is one object, not a prefix that prune can mark and take out:
// it is kept, saying so.
void KeepObjectStorageArchives(const std::vector<StoreEntry>& all,
                               std::map<size_t, std::string>* kept) {
  for (size_t i = 0; i < all.size(); ++i) {
    const Location where = LocationOf(all[i].path);
    if (where.in_object_storage() && where.is_archive()) {
      kept->emplace(i, "an archive in object storage, which prune does not remove");
    }
  }
}

// Archives are read-only, so a kept archive is never flattened: its bases in the store are kept
// with it (and theirs, down its chain).
Status KeepArchiveChains(const std::vector<StoreEntry>& all, const ChainOptions& o,
                         std::map<size_t, std::string>* kept) {
  std::vector<size_t> archives;
  for (const auto& [k, why] : *kept) {
    if (all[k].backup && LocationOf(all[k].path).is_archive()) archives.push_back(k);
  }
  for (size_t k : archives) {
    ASSIGN_OR_RETURN(auto levels, ChainInStore(all, k, o));
    for (size_t l = 1; l < levels.size(); ++l) {
      if (levels[l]) kept->emplace(*levels[l], "base of kept archive " + all[k].name);
    }
  }
  return Status::OK();
}

// The plan: one action per backup, oldest first. A backup holding a nested one is kept.
StatusOr<std::vector<PruneAction>> Plan(const std::vector<StoreEntry>& all,
                                        std::map<size_t, std::string>& kept, ChainOptions o,
                                        StoreMoves& moves) {
  o.backups = std::make_shared<BackupCache>(size_t{256} << 20);
  std::vector<PruneAction> plan;
  for (size_t i = 0; i < all.size(); ++i) {
    auto k = kept.find(i);
    if (k == kept.end() && all[i].backup) {
      if (auto nested = moves.NestedBackup(all[i].path, all[i].backup->manifest())) {
        k = kept.emplace(i, "holds another backup, " + *nested + "; move it out first").first;
      }
    }
    if (k == kept.end()) {
      plan.push_back({PruneAction::kRemove, all[i].name, ""});
      continue;
    }
    if (!all[i].backup) {
      return all[i].status.WithPrefix(
          "prune removes nothing while a backup of the store does not "
          "open (" +
          all[i].name + "); fix or remove it first: ");
    }
    ASSIGN_OR_RETURN(auto levels, ChainInStore(all, i, o));
    if (NeedsFlatten(levels, kept)) {
      plan.push_back({PruneAction::kFlatten, all[i].name, all[*levels[1]].name});
    } else {
      plan.push_back({PruneAction::kKeep, all[i].name, k->second});
    }
  }
  // What goes: the removed backups and the old copies of the flattened ones, measured
  // together (a data file hard-linked between two of them is freed once, and only if no
  // kept backup links it).
  std::vector<std::string> gone;
  std::vector<size_t> of;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].kind == PruneAction::kKeep) continue;
    gone.push_back(all[i].path);
    of.push_back(i);
  }
  const std::vector<uint64_t> freed = moves.BytesFreed(gone);
  for (size_t g = 0; g < gone.size(); ++g) plan[of[g]].freed = freed[g];
  return plan;
}

}  // namespace

StatusOr<std::vector<PruneAction>> PruneStore(const std::string& store_arg, const PrunePolicy& p,
                                              const Context& ctx) {
  if (p.keep_last <= 0 && p.keep_daily <= 0 && p.keep_monthly <= 0) {
    return Status::InvalidArgument("a policy needs --keep-last, --keep-daily or --keep-monthly");
  }
  const std::string store = NormalLocation(store_arg);
  RETURN_IF_ERROR(RequireStorage(ctx, "Store " + store));
  ChainOptions o;
  o.storage = ctx.storage;
  o.cache = ctx.cache;
  o.locators = ctx.locators;
  ASSIGN_OR_RETURN(std::unique_ptr<StoreMoves> moves, o.storage->MovesFor(store));
  if (!p.dry_run) {
    RETURN_IF_ERROR(moves->Lock());  // Before the store is read for the plan,
    for (const std::string& w : moves->RemoveLeftovers()) {  // which sees it finished.
      if (ctx.warn) ctx.warn(w);
    }
  }
  ASSIGN_OR_RETURN(std::vector<StoreEntry> all, ListStore(o, store));
  auto kept = Kept(all, p);
  ASSIGN_OR_RETURN(std::vector<StoreWriter> writers, moves->Writers(NamesOf(all)));
  KeepWritersBases(all, writers, &kept);
  KeepObjectStorageArchives(all, &kept);
  RETURN_IF_ERROR(KeepArchiveChains(all, o, &kept));
  ASSIGN_OR_RETURN(std::vector<PruneAction> plan, Plan(all, kept, o, *moves));
  if (p.dry_run) return plan;
  std::set<std::string> doomed_uuids;
  uint64_t to_flatten = 0, flattened = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].kind == PruneAction::kFlatten) to_flatten += kFlattenPasses * all[i].total_size;
  }
  const CopyProgress on_copy = [&](uint64_t n) {
    flattened += n;
    if (ctx.progress) ctx.progress("flatten", std::min(flattened, to_flatten), to_flatten);
  };
  for (size_t i = 0; i < plan.size(); ++i) {  // Oldest first.
    if (plan[i].kind == PruneAction::kFlatten) {
      ASSIGN_OR_RETURN(auto chain, OpenResolved(all[i].path, o));
      ASSIGN_OR_RETURN(plan[i].written, FlattenInPlace(*chain, all[i].path, *moves, on_copy));
    } else if (plan[i].kind == PruneAction::kRemove) {
      doomed_uuids.insert(all[i].backup->header().uuid);
    }
  }
  const std::vector<std::string> doomed = ChildrenFirst(all, plan);
  std::vector<std::string> moved;
  Status s = SetAside(doomed, *moves, &moved);
  if (s.ok()) s = ProveStore(store, all, kept, doomed_uuids, o, *moves);
  if (!s.ok()) {
    for (const std::string& path : moved) moves->PutBack(path);
    return s;
  }
  for (const std::string& path : doomed) RETURN_IF_ERROR(moves->Remove(path));
  return plan;
}

}  // namespace stitchfs::engine
