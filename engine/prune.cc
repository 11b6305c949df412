#include "engine/prune.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>

#include "engine/atomic_file.h"
#include "engine/backup_chain.h"
#include "engine/flatten.h"
#include "engine/locator.h"
#include "engine/store.h"

namespace fs = std::filesystem;

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

// The store entry that `e`'s base locator names, if it is in the store.
std::optional<size_t> BaseIndex(const StoreEntry& e, const std::vector<StoreEntry>& all) {
  if (!e.backup || e.backup->header().base_backup.empty()) return std::nullopt;
  auto base =
      ResolveLocator(e.backup->header().base_backup, fs::path(e.path).parent_path().string(), {});
  if (!base.ok()) return std::nullopt;
  const std::string want = fs::path(*base).lexically_normal().string();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].backup && all[i].backup->path() == want) return i;
  }
  return std::nullopt;
}

uint64_t FolderBytes(const std::string& dir) {
  uint64_t n = 0;
  std::error_code ec;
  for (auto& f : fs::recursive_directory_iterator(dir, ec)) {
    if (f.is_regular_file(ec)) n += f.file_size(ec);
  }
  return n;
}

// Replaces backup `path` by a flattened copy with the same uuid, atomically.
StatusOr<uint64_t> FlattenInPlace(const std::string& path) {
  ASSIGN_OR_RETURN(auto chain, BackupChain::Open(path));
  // A dot-name: stores never list it, even if a run is interrupted around the exchange.
  const std::string tmp = (fs::path(path).parent_path() /
                           ("." + fs::path(path).filename().string() + ".stitch-flatten"))
                              .string();
  std::error_code ec;
  fs::remove_all(tmp, ec);  // Left by an interrupted run: never a kept backup.
  ASSIGN_OR_RETURN(FlattenResult r, FlattenBackup(*chain, tmp, /*keep_uuid=*/true));
  if (::syscall(SYS_renameat2, AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE) !=
      0) {
    return Status::IOError("exchange " + tmp + " with " + path, errno);
  }
  RETURN_IF_ERROR(SyncDir(fs::path(path).parent_path().string()));
  fs::remove_all(tmp, ec);  // Now the old, incremental copy.
  return r.bytes_stored;
}

// Removes a backup: first renamed out of the store's namespace, so it never opens half-deleted.
Status RemoveBackup(const std::string& path) {
  const std::string gone = (fs::path(path).parent_path() /
                            ("." + fs::path(path).filename().string() + ".stitch-deleting"))
                               .string();
  if (::rename(path.c_str(), gone.c_str()) != 0) return Status::IOError("rename " + path, errno);
  RETURN_IF_ERROR(SyncDir(fs::path(path).parent_path().string()));
  std::error_code ec;
  fs::remove_all(gone, ec);
  if (ec) return Status::IOError("remove " + gone, ec.value());
  return Status::OK();
}

}  // namespace

StatusOr<std::vector<PruneAction>> PruneStore(const std::string& store, const PrunePolicy& p) {
  if (p.keep_last <= 0 && p.keep_daily <= 0 && p.keep_monthly <= 0) {
    return Status::InvalidArgument("a policy needs --keep-last, --keep-daily or --keep-monthly");
  }
  ASSIGN_OR_RETURN(std::vector<StoreEntry> all, ListStore(store));
  const auto kept = Kept(all, p);
  std::vector<PruneAction> plan;
  for (size_t i = 0; i < all.size(); ++i) {
    auto k = kept.find(i);
    if (k == kept.end()) {
      plan.push_back({PruneAction::kRemove, all[i].name, "", FolderBytes(all[i].path)});
      continue;
    }
    auto base = BaseIndex(all[i], all);
    if (base && !kept.count(*base)) {
      plan.push_back({PruneAction::kFlatten, all[i].name, all[*base].name, 0});
    } else {
      plan.push_back({PruneAction::kKeep, all[i].name, k->second, 0});
    }
  }
  if (p.dry_run) return plan;
  // Work folders of an interrupted run: never a kept backup (stores do not list dot-names).
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(store, ec)) {
    const std::string n = d.path().filename().string();
    if (n.front() == '.' && (n.ends_with(".stitch-deleting") || n.ends_with(".stitch-flatten"))) {
      fs::remove_all(d.path(), ec);
    }
  }
  std::map<std::string, std::string> path_of;
  for (const auto& e : all) path_of[e.name] = e.path;
  for (auto& a : plan) {  // Oldest first: a flattened backup never needs a removed one.
    if (a.kind == PruneAction::kFlatten) {
      ASSIGN_OR_RETURN(a.bytes, FlattenInPlace(path_of[a.name]));
    }
  }
  for (const auto& a : plan) {
    if (a.kind == PruneAction::kRemove) RETURN_IF_ERROR(RemoveBackup(path_of[a.name]));
  }
  return plan;
}

}  // namespace stitchfs::engine
