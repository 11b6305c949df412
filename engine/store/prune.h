// Prune: removes the backups of a store that a retention policy does not keep, without ever
// breaking a kept one: a kept backup whose base goes is first flattened in place (atomically).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/base/status_or.h"
#include "engine/storage/context.h"

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
  std::string why;  // For kFlatten: the removed base; for kKeep: the rule.
  // The bytes the store no longer holds: kRemove, the backup; kFlatten, its old copy (what
  // `du` counts locally, each file once, none linked from a kept backup; the objects' lengths
  // in S3). Removing and flattening together free the sum (StoreMoves::BytesFreed).
  uint64_t freed = 0;
  uint64_t written = 0;  // kFlatten: the bytes of the new copy, measured the same way.
};

// Plans (and unless dry_run, carries out) the pruning of `store`. The plan opens the chain of
// every kept backup (with every check of a chain walk: uuids, entries) and matches its levels
// to the store's folders by identity, so the spelling of paths (relative, through symlinks)
// cannot mislead it; a kept backup whose chain reaches a removed backup before any other kept
// one is flattened. Order of work: each such backup is flattened into a sibling folder that
// keeps its uuid and is swapped in with one atomic exchange (renameat2 RENAME_EXCHANGE); the
// backups to remove are marked (StoreMoves::SetAside: writers refuse them as bases); then no
// writer may have started on one, and every kept backup, and any written meanwhile, must open
// with its whole chain without one of them; if not, the marks are taken away and nothing is
// deleted. Only then are they taken out, each before the bases of its chain. Interrupted at
// any point, every kept backup still opens, and nothing not proven unneeded was taken out.
// Errors: kInvalidArgument for an empty policy; a kept backup that does not open (prune then
// changes nothing); kBackupDamaged for bytes of a backup it flattens that do not check;
// kIOError (a flattened copy that reads back wrong included).
// The store is in ctx.storage, which changes it (Storage::MovesFor; kInvalidArgument without
// one); manifests and resolved indexes are read through ctx.cache, if any; base locators mean
// what ctx.locators says. ctx.progress("flatten", done, total): bytes of the kept backups being
// flattened (kFlattenPasses times their files' sizes: copied, then read back), as the
// flattening goes; never called for a dry run or a prune that flattens nothing.
StatusOr<std::vector<PruneAction>> PruneStore(const std::string& store, const PrunePolicy& policy,
                                              const Context& ctx);

}  // namespace stitchfs::engine
