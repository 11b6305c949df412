// The `.lock` of a backup being written to object storage: who writes it (host, boot, pid
// and the process's start time), so that a later writer on the same machine can tell that it
// died and take its partial backup over. S3 has no flock: a writer on another machine is
// never judged dead.
#pragma once

#include <functional>
#include <optional>
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

// Takes the lock `lock_key` (a backup's `.lock`) for `text` as a writer takes over a dead
// writer's (engine/storage/generation_lock.h): generation 0 if there is none, else the next
// one over a holder that died. The generation taken; nullopt, nothing changed, if the holder
// is alive or of another machine, or another process took it first.
StatusOr<std::optional<int>> TakeS3Lock(const S3Bucket& bucket, const std::string& lock_key,
                                        const std::string& text);

// The sub-prefixes ("PREFIX.../") of `objects`' keys under `prefix` that hold another backup (a
// `.backup` or a `.lock`): a writer cleaning up under `prefix` must leave them alone.
std::set<std::string> NestedBackups(const std::vector<S3Object>& objects,
                                    const std::string& prefix);
bool InNestedBackup(const std::string& key, const std::set<std::string>& roots);

// The object with which prune marks a backup it removes, beside its data: put before its proof,
// removed last, once every other object of the backup is gone (S3StoreMoves).
inline constexpr const char* kS3DeletingMarker = ".stitch-deleting";

// True if `key` says what the prefix `prefix` ("" or ending in '/') holds: its `.backup`, a
// generation of its `.lock`, or prune's `.stitch-deleting` marker.
bool IsGuardObject(const std::string& key, const std::string& prefix);

// Aborts the multipart uploads and deletes the objects under `prefix` (a backup's, "" or ending
// in '/'), but the objects `spare` says to keep and everything of the backups nested under it.
// DeleteObjects applies a batch in any order, and a request that fails or a process killed
// midway leaves any subset of it deleted, so no batch holds a guard (IsGuardObject): the data
// goes first, then, once all of it is gone, the `.lock` generations (oldest first) and the
// marker, one request each. Whatever an interrupted call leaves is still a backup being written
// (the next writer of this machine takes it over) or being removed (the next prune removes
// it). kBackupAlreadyExists, nothing deleted, if `prefix` holds a `.backup` not spared.
Status RemoveBackupObjects(const S3Bucket& bucket, const std::string& prefix,
                           const std::function<bool(const std::string& key)>& spare);

}  // namespace stitchfs::engine
