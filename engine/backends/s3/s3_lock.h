// The `.lock` of a backup being written to object storage: who writes it (host, boot, pid
// and the process's start time), so that a later writer on the same machine can tell that it
// died and take its partial backup over. S3 has no flock: a writer on another machine is
// never judged dead.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "engine/backends/s3/s3_bucket.h"
#include "engine/storage/lock_text.h"

namespace stitchfs::engine {

// The `.lock` text of this process writing the backup `w` (LockText, then who writes it).
std::string S3LockText(const WriterIntent& w);

// True if `lock` was written by a process of this machine's current boot and pid namespace
// that is gone (false whenever that cannot be told).
bool S3LockWriterDied(const std::string& lock);

// True if `lock` is the one S3LockText(uuid) wrote: a writer only ever removes its own lock
// and objects (another may have taken the backup over, judging it dead).
bool S3LockIsOurs(const std::string& lock, const std::string& uuid);

// The sub-prefixes ("PREFIX.../") of `objects`' keys under `prefix` that hold another backup (a
// `.backup` or a `.lock`): a writer cleaning up under `prefix` must leave them alone.
std::set<std::string> NestedBackups(const std::vector<S3Object>& objects,
                                    const std::string& prefix);
bool InNestedBackup(const std::string& key, const std::set<std::string>& roots);

// Aborts the multipart uploads and deletes the objects under `prefix` (a backup's, "" or ending
// in '/'), but the objects `spare` says to keep and everything of the backups nested under it.
Status RemoveBackupObjects(const S3Bucket& bucket, const std::string& prefix,
                           const std::function<bool(const std::string& key)>& spare);

}  // namespace stitchfs::engine
