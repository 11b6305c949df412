// Prune: removes the backups of a store that a retention policy does not keep, without ever
// breaking a kept one: a kept backup whose base goes is first flattened in place (atomically).
#pragma once

#include <string>
#include <vector>

#include "engine/status_or.h"

namespace stitchfs::engine {

struct PrunePolicy {
  int keep_last = 0;     // The newest N backups.
  int keep_daily = 0;    // The newest backup of each of the newest N days that have one.
  int keep_monthly = 0;  // The newest backup of each of the newest N months that have one.
  bool dry_run = false;
};

struct PruneAction {
  enum Kind { kKeep, kFlatten, kRemove } kind;
  std::string name;
  std::string why;     // For kFlatten: the removed base; for kKeep: the rule.
  uint64_t bytes = 0;  // kRemove: bytes freed; kFlatten: bytes written.
};

// Plans (and unless dry_run, carries out) the pruning of `store`. Order of work: every kept
// backup that loses its direct base is flattened into a sibling folder that keeps its uuid and
// is swapped in with one atomic exchange (renameat2 RENAME_EXCHANGE); only then are the other
// backups removed, each renamed away first so a half-deleted one never opens. Interrupted at
// any point, every kept backup still opens. kInvalidArgument for an empty policy.
StatusOr<std::vector<PruneAction>> PruneStore(const std::string& store, const PrunePolicy& policy);

}  // namespace stitchfs::engine
