// BackupLock: exclusive ownership of a destination folder while a backup is written there,
// with ClickHouse's `.lock` file (held with flock, so a dead writer's lock is recognised).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "engine/base/status_or.h"
#include "engine/base/unique_fd.h"
#include "engine/storage/lock_text.h"

namespace stitchfs::engine {

// Not thread-safe. Until Commit(), destruction removes everything written into the folder (and
// the folder itself if this lock created it), so a failed backup leaves nothing behind: the
// `.backup` goes first, and if it cannot be removed nothing else is (a `.backup` is only ever
// written after every data file is in place and synced, so what stays is a complete backup,
// never a manifest without its data).
// The lock of a backup being written in folder `dir`: its fields if a live writer holds its
// `.lock` (an exclusive flock: a shared one cannot be taken) and `dir` has no `.backup`;
// nullopt otherwise (no lock, or a dead writer's).
std::optional<LockFields> LiveWriterIn(const std::string& dir);

class BackupLock {
 public:
  // Creates `dest` (and missing parents) if needed and takes it. kBackupAlreadyExists if it
  // holds a `.backup`, a `.lock` held by a live writer, or anything else. A `.lock` whose
  // writer died is taken over: the partial backup beside it is removed, and `notice` says so.
  // kInvalidArgument if `dest` is a symlink (never written through; the message says where
  // it leads), kBackupAlreadyExists if it is a file.
  static StatusOr<std::unique_ptr<BackupLock>> Acquire(const std::string& dest,
                                                       const WriterIntent& intent,
                                                       std::string* notice);
  ~BackupLock();
  BackupLock(const BackupLock&) = delete;
  BackupLock& operator=(const BackupLock&) = delete;

  int dir_fd() const { return dir_.get(); }
  const std::string& path() const { return path_; }
  // The backup is complete (manifest written): removes `.lock`, syncs the folder.
  Status Commit();

 private:
  BackupLock(std::string path, UniqueFd dir, UniqueFd lock, bool created)
      : path_(std::move(path)), dir_(std::move(dir)), lock_(std::move(lock)), created_(created) {}
  void RemoveContents();  // `.backup` first, then RemoveData.
  void RemoveData();      // Everything but `.backup` and `.lock`.

  std::string path_;
  UniqueFd dir_;
  UniqueFd lock_;
  bool created_;
  bool committed_ = false;
};

}  // namespace stitchfs::engine
