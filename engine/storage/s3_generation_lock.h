// A lock in object storage built on conditional creation alone: `If-None-Match: *` on PUT,
// which S3 and radosgw honour (radosgw 16 refuses `If-Match` on PUT, so nothing may depend on
// replacing an object conditionally). Generation 0 is the object KEY itself (ClickHouse's
// `.lock`); generation N >= 1 is KEY.N. The holder is whoever created the highest generation
// there is. A writer that finds the highest one left by a dead writer creates the next one:
// of several doing so at once exactly one succeeds (the others get 412 and leave without
// touching anything), so a dead writer's lock is taken over by one writer only. Release deletes
// every generation, the oldest first, so that the holder's stays to the end.
//
// Safety, for a backup's `.lock` (see man stitch(1), CONCURRENCY): a writer acts on the
// backup's objects (removing a dead writer's, writing its own, `.backup` last) only after its
// create succeeded, and a create of generation N+1 succeeds for one writer only. A writer that
// created N+1 saw N (and its writer dead) when it listed; a live writer never sees a higher
// generation than its own while it holds it, because only takeovers of a dead holder create
// one, and a holder is judged dead only when its process is gone (same machine, boot and pid
// namespace). So at any moment at most one live process holds the lock.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/s3/s3_bucket.h"

namespace stitchfs::engine {

struct S3LockGeneration {
  int generation = 0;
  std::string key;   // KEY or KEY.N.
  std::string text;  // What its holder wrote.
};

// The generations of lock `key` there are, oldest first (their texts not read).
StatusOr<std::vector<S3LockGeneration>> ListLockGenerations(const S3Bucket& bucket,
                                                            const std::string& key);
// The highest generation with its text, or nullopt if there is none.
StatusOr<std::optional<S3LockGeneration>> CurrentLock(const S3Bucket& bucket,
                                                      const std::string& key);
// Creates generation `generation` of lock `key` with `text`, only if it does not exist. True
// if this call made it (or an earlier attempt of the same text whose answer was lost did);
// false if another writer made it first.
StatusOr<bool> CreateLockGeneration(const S3Bucket& bucket, const std::string& key, int generation,
                                    const std::string& text);
// Deletes every generation of lock `key`, the oldest first.
Status ReleaseLock(const S3Bucket& bucket, const std::string& key);

}  // namespace stitchfs::engine
