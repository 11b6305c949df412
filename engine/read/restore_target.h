// RestoreTarget: where a restore may write. Never into a backup: not into a folder of the chain
// being read (its data files would be overwritten under their checksums: wrong bytes, silently,
// or every backup on it damaged), nor into any folder that held a `.backup` or a `.lock` before
// the restore wrote there (another backup, or one being written). Folders are compared by
// identity (device and inode), so no path leads around the check: not a symlink, not a bind
// mount. And the names a restore writes are short enough for any leaf name.
#pragma once

#include <sys/types.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/status_or.h"
#include "engine/read/resolved_backup.h"

namespace stitchfs::engine {

// Not thread-safe.
class RestoreTarget {
 public:
  // For the target folder `target`, open as `root`, and the backup `chain` being read: checks
  // the target and every folder above it. kInvalidArgument (exit 2) naming the backup when it
  // is, or lies inside, a folder of the chain or a folder holding `.backup` or `.lock`.
  static StatusOr<RestoreTarget> Check(int root, const std::string& target,
                                       const ResolvedBackup& chain);

  // OK if the restore may write into folder `dir` beneath the target (`name`: its path there,
  // for messages): it and each folder up to the target are checked once, before the restore
  // first writes into them (so the restore's own `.backup` files, of a backup of backups, do
  // not stop it). kInvalidArgument otherwise.
  Status MayWriteIn(int dir, const std::string& name);

  // The temporary name under which a file or symlink named `leaf` is written before its rename
  // into place: unique to the process, and short (a leaf of NAME_MAX bytes has room).
  static std::string TempName(const std::string& leaf);

 private:
  using Id = std::pair<dev_t, ino_t>;
  explicit RestoreTarget(Id root) : root_(root) {}
  // Why the restore may not write into the folder `fd` (identity `id`), or "" if it may (a
  // `.lock` counts only with `lock`).
  std::string Refusal(int fd, Id id, bool lock) const;

  Id root_;
  std::set<Id> chain_;  // The folders of the chain on this machine.
  std::set<Id> safe_;   // Folders checked, with the target's.
};

}  // namespace stitchfs::engine
