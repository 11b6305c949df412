// S3Writer: a backup being uploaded to object storage (s3_writer.cc), made by S3Storage's
// StartBackup and StartRewrite (s3_writer_lock.cc) once they hold the backup's `.lock`.
#pragma once

#include <memory>
#include <string>

#include "engine/backends/s3/s3_bucket.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// The writer of the backup at `address`, holding generation `generation` of its `.lock`
// (engine/storage/generation_lock.h), whose text is `lock_text` (S3LockText: this process, not
// just the backup's uuid, which a prune's rewrite of it shares). Finish puts `.backup` only
// while that generation, with that text, is still the lock's highest. With `rewrite`, the backup
// exists and Finish replaces its manifest, then deletes every object of it that the new one does
// not name. Without Finish, its destructor takes back what it wrote (if the lock is still its).
std::unique_ptr<BackupWriter> NewS3Writer(std::shared_ptr<const S3Bucket> bucket, S3Address address,
                                          std::string lock_text, int generation,
                                          bool rewrite = false);

}  // namespace stitchfs::engine
