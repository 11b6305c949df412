// RestoreTarget: where a restore may write. Never into a backup: not into a folder of the chain
// being read (its data files would be overwritten under their checksums: wrong bytes, silently,
// or every backup on it damaged), nor into a folder holding a `.backup` or a `.lock` file (another
// backup, or one being written) unless the backup restored puts that very file there (a backup of
// backups, restored again). Folders are compared by identity (device and inode) and followed up
// to the root through their real places (folder_above.h), so neither a symlink nor a bind mount,
// of the target or inside it, leads around the check. Every folder is checked before the restore
// creates anything in it. And the names a restore writes are short enough for any leaf name.
#pragma once

#include <sys/types.h>

#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/base/status_or.h"
#include "engine/base/unique_fd.h"
#include "engine/read/resolved_backup.h"

namespace stitchfs::engine {

// Not thread-safe.
class RestoreTarget {
 public:
  // For the target folder `target`, open as `root`, and the backup `chain` being read: checks
  // the target and every folder above it. kInvalidArgument (exit 2) naming the backup when it
  // is, or lies inside, a folder of the chain or a folder holding `.backup` (or `.lock`: the
  // target only). `chain` must outlive this.
  static StatusOr<RestoreTarget> Check(int root, const std::string& target,
                                       const ResolvedBackup& chain);

  // The folder `rel` beneath the target ("" for the target), made where missing (without
  // following symlinks), each folder on the way checked before anything is made in it, and the
  // folder itself checked for writing. kInvalidArgument if one is refused; kIOError.
  StatusOr<UniqueFd> OpenDir(int root, std::string_view rel);

  // The temporary name under which a file or symlink named `leaf` is written before its rename
  // into place: unique to the process, and short (a leaf of NAME_MAX bytes has room).
  static std::string TempName(const std::string& leaf);

 private:
  using Id = std::pair<dev_t, ino_t>;
  RestoreTarget(Id root, const Manifest& m) : root_(root), m_(&m) {}
  // OK if the restore may write into folder `dir`, `rel` beneath the target: it and each folder
  // up to one already checked are checked, once.
  Status MayWriteIn(int dir, std::string_view rel);
  // Why the restore may not write into folder `fd` (identity `id`), or "" if it may. `rel`: its
  // path beneath the target when it lies there (the restored manifest may put a `.backup` in
  // it), nullptr otherwise; a `.lock` counts only with `lock`.
  std::string Refusal(int fd, Id id, const std::string* rel, bool lock) const;

  Id root_;
  const Manifest* m_;   // The backup's being restored.
  std::set<Id> chain_;  // The folders of the chain on this machine.
  std::set<Id> safe_;   // Folders checked, with the target's.
};

}  // namespace stitchfs::engine
