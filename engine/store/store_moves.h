// StoreMoves: the steps by which prune changes a store, the only part of pruning that differs
// between a folder of this machine and object storage. Locally a backup is set aside by a
// rename and a flattened copy swapped in with one RENAME_EXCHANGE; in object storage, where
// nothing renames, a backup is set aside by taking its `.backup` away (kept in memory to put
// back, with a marker object saying it is being deleted) and flattened in place: new data
// objects under names of their own, then one PUT of the new `.backup`, then the old objects go.
// Either way every kept backup opens at every moment.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/base/status_or.h"
#include "engine/read/resolved_backup.h"
#include "engine/read/restore.h"
#include "engine/storage/lock_text.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// A backup being written in the store: where, and what its `.lock` says (its base's uuid).
struct StoreWriter {
  std::string path;
  LockFields lock;
};

// Not thread-safe.
class StoreMoves {
 public:
  virtual ~StoreMoves() = default;
  // Keeps any other prune of this store out until this object is gone (a second prune would
  // take the first one's work folders for leftovers). kIOError (EBUSY) if one is running.
  // Locally a flock on the store's folder; in object storage a lock object
  // (`.stitch-prune.lock`, taken like a backup's `.lock`: a dead prune's is taken over, one
  // of another machine is refused, naming it).
  virtual Status Lock() = 0;
  // The backups of the store being written by live writers (locally: a `.lock` whose flock is
  // held; in object storage: a `.lock` whose writer is not known to be dead), but the folders
  // named in `backups` (complete backups: no writer is at work there).
  virtual StatusOr<std::vector<StoreWriter>> Writers(const std::set<std::string>& backups) = 0;
  // Removes what an interrupted prune left in the store (work folders, backups set aside).
  virtual void RemoveLeftovers() = 0;
  // The bytes removing all the backups at `paths` frees, attributed to each (in order; the sum
  // is the total): locally what `du` counts (DiskUsage: blocks of files and folders, a file
  // linked from outside `paths` freeing nothing), in object storage the objects' lengths.
  virtual std::vector<uint64_t> BytesFreed(const std::vector<std::string>& paths) = 0;
  // A backup nested inside the backup at `path` (whose manifest is `m`): a folder below it
  // holding a `.backup` or `.lock` that is not one of `m`'s data files; nullopt if none. Prune
  // keeps such a backup rather than take the other along. (Object storage spares nested
  // backups when it removes one: nullopt.)
  virtual std::optional<std::string> NestedBackup(const std::string& path, const Manifest& m) = 0;
  // Replaces the backup at `path` (the top of `chain`) by a flattened copy with its uuid;
  // returns the bytes of the new copy, measured as BytesFreed measures. A reader opening
  // `path` meanwhile gets the old or the new one. `progress`: as FlattenBackup's.
  virtual StatusOr<uint64_t> FlattenInPlace(const ResolvedBackup& chain, const std::string& path,
                                            const CopyProgress& progress) = 0;
  // Takes the backup at `path` out of the store (it no longer opens) so that PutBack can
  // return it; Remove deletes it for good.
  virtual Status SetAside(const std::string& path) = 0;
  virtual void PutBack(const std::string& path) = 0;
  virtual Status Remove(const std::string& path) = 0;
  // After a batch of SetAside calls: makes them durable.
  virtual Status Sync() = 0;
};

// The moves for the store at `store` (a normal location) in `storage` (a RoutingStorage or
// the storage the location belongs to).
StatusOr<std::unique_ptr<StoreMoves>> MovesFor(const std::string& store, const Storage& storage);

}  // namespace stitchfs::engine
