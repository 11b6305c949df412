// A lock in an object store built on conditional creation alone (ObjectStore::CreateIfAbsent:
// `If-None-Match: *` on PUT, which S3 and radosgw honour; radosgw 16 refuses `If-Match` on
// PUT, so nothing may depend on replacing an object conditionally). Generation 0 is the object KEY
// itself (ClickHouse's
// `.lock`); generation N >= 1 is KEY.N. The holder is whoever created the highest generation
// there is. A writer that finds the highest one left by a dead writer creates the next one:
// of several doing so at once exactly one succeeds (the others get 412 and leave without
// touching anything), so a dead writer's lock is taken over by one writer only. Release deletes
// every generation, the oldest first, so that the holder's stays to the end.
//
// Safety, for a backup's `.lock` (see man stitch(1), CONCURRENCY): a writer acts on the
// backup's objects (removing a dead writer's, writing its own, `.backup` last) only after its
// create succeeded and was confirmed. A create of generation N+1 succeeds for one writer only
// while N+1 exists; it is confirmed only if generation N still holds the very text the writer
// judged dead when it listed. A holder releases by deleting its generation and every one below
// it, oldest first, so if anyone held N+1 and released it between the writer's look and its
// create, N is gone by then (or holds another text, a new holder's), and the writer deletes what
// it made and gives up. A holder is judged dead only when its process is gone (same machine,
// boot and pid namespace), and a live holder is never taken over, so at any moment at most one
// live process holds the lock. A fresh create (generation 0, nothing there) is confirmed by
// its caller: for a backup, that the prefix holds nothing but the lock, since a writer may have
// come and gone (leaving a whole backup) between the look and the create.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/storage/object_store.h"

namespace stitchfs::engine {

struct LockGeneration {
  int generation = 0;
  std::string key;   // KEY or KEY.N.
  std::string text;  // What its holder wrote.
};

// The generations of lock `key` there are, oldest first (their texts not read).
StatusOr<std::vector<LockGeneration>> ListLockGenerations(const ObjectStore& store,
                                                          const std::string& key);
// The highest generation with its text, or nullopt if there is none.
StatusOr<std::optional<LockGeneration>> CurrentLock(const ObjectStore& store,
                                                    const std::string& key);
// Creates generation `generation` of lock `key` with `text`, only if it does not exist, and
// for a takeover (`generation` > 0) confirms it: generation - 1 must still hold `taken_over`,
// the text judged dead. True if this call made it (or an earlier attempt of the same text whose
// answer was lost did) and it stands; false if another writer made it first, or the lock
// changed between the look and the create (what this call made is deleted then).
StatusOr<bool> CreateLockGeneration(const ObjectStore& store, const std::string& key,
                                    int generation, const std::string& text,
                                    const std::string& taken_over = "");
// Deletes generations 0..`upto` of lock `key` (a holder's own and the dead ones below it), the
// oldest first.
Status ReleaseLock(const ObjectStore& store, const std::string& key, int upto);
// The generation the object `object` is of lock `key`, or -1 if it is not one of its objects.
int LockGenerationOf(const std::string& object, const std::string& key);

}  // namespace stitchfs::engine
