// S3Storage's start of a backup being written (StartBackup) or rewritten in place
// (StartRewrite): where the writer gets the backup's `.lock`, fresh or over a dead writer's
// (engine/storage/generation_lock.h), before S3Writer (s3_writer.cc) writes anything.
#include "engine/backends/s3/bucket_objects.h"
#include "engine/backends/s3/s3_lock.h"
#include "engine/backends/s3/s3_storage.h"
#include "engine/backends/s3/s3_writer.h"
#include "engine/storage/generation_lock.h"

namespace stitchfs::engine {
namespace {

// True if `key` is a generation of the `.lock` of the backup at `a`.
bool IsLockObject(const std::string& key, const S3Address& a) {
  return LockGenerationOf(key, a.ObjectKey(".lock")) >= 0;
}

// After a fresh `.lock` (generation 0) went in: the prefix holds nothing but lock objects (a
// writer may have come and gone, leaving a whole backup, since the prefix was seen empty).
// kBackupAlreadyExists, the lock made taken back, otherwise.
Status ConfirmFreshLock(const S3Bucket& bucket, const S3Address& a, const std::string& shown) {
  const std::string prefix = a.key.empty() ? "" : a.key + "/";
  ASSIGN_OR_RETURN(S3Listing there, bucket.List(prefix, "/"));
  for (const S3Object& o : there.objects) {
    if (IsLockObject(o.key, a)) continue;
    RETURN_IF_ERROR(ReleaseLock(BucketObjects(bucket), a.ObjectKey(".lock"), 0));
    return Status::BackupAlreadyExists("Backup " + shown + " already exists (" +
                                       EscapeForMessage(o.key) + " came while it was locked)");
  }
  return Status::OK();
}

// kBackupAlreadyExists if a prefix above `a` holds a backup (a `.backup`) or one being written
// (a `.lock`): a backup is never written inside another, whose prune would take it along.
Status RefuseInsideABackup(const S3Bucket& bucket, const S3Address& a, const std::string& shown) {
  std::string key = a.key;
  for (size_t slash = key.rfind('/'); slash != std::string::npos; slash = key.rfind('/')) {
    key.resize(slash);
    for (const char* name : {"/.backup", "/.lock"}) {
      ASSIGN_OR_RETURN(auto there, bucket.Head(key + name));
      if (there) {
        return Status::BackupAlreadyExists("cannot write backup " + shown + " inside backup " +
                                           EscapeForMessage(key) + " (it holds " + (name + 1) +
                                           ")");
      }
    }
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::unique_ptr<BackupWriter>> S3Storage::StartBackup(const std::string& location,
                                                               const WriterIntent& intent,
                                                               std::string* notice) const {
  ASSIGN_OR_RETURN(S3Address a, ParseS3Address(location));
  auto bucket = BucketOf(a);
  const std::string shown = EscapeForMessage(a.Location());
  const std::string prefix = a.key.empty() ? "" : a.key + "/";
  const std::string lock_key = a.ObjectKey(".lock");
  const std::string text = S3LockText(intent);
  RETURN_IF_ERROR(RefuseInsideABackup(*bucket, a, shown));
  ASSIGN_OR_RETURN(auto lock, CurrentLock(BucketObjects(*bucket), lock_key));
  if (lock && !S3LockWriterDied(lock->text)) {
    return Status::BackupAlreadyExists(
        "Backup " + shown +
        " has a .lock: a backup is being written (or removed by a prune) there, or one whose "
        "writer died elsewhere (S3 cannot tell which); remove " +
        shown + "/.lock" + (lock->generation > 0 ? " and .lock.N" : "") +
        " if no backup is running");
  }
  if (lock) {  // Its writer, a process of this machine, died: take its partial backup over.
    ASSIGN_OR_RETURN(auto manifest, bucket->Head(a.ObjectKey(".backup")));
    if (manifest) {  // It died after its manifest was in: the backup is whole, and kept.
      return Status::BackupAlreadyExists("Backup " + shown + " already exists (its writer died " +
                                         "before removing its .lock; remove " + shown +
                                         "/.lock to read it)");
    }
    ASSIGN_OR_RETURN(bool taken, CreateLockGeneration(BucketObjects(*bucket), lock_key,
                                                      lock->generation + 1, text, lock->text));
    if (!taken) {
      return Status::BackupAlreadyExists("Backup " + shown +
                                         ": another writer took the dead writer's lock first");
    }
    RETURN_IF_ERROR(RemoveBackupObjects(
        *bucket, prefix, [&](const std::string& key) { return IsLockObject(key, a); }));
    if (notice)
      *notice = "took over " + shown + ": its writer died; its partial backup was removed";
    return NewS3Writer(std::move(bucket), std::move(a), text, lock->generation + 1);
  }
  ASSIGN_OR_RETURN(S3Listing there, bucket->List(prefix, "/"));
  if (!there.objects.empty() || !there.prefixes.empty()) {
    return Status::BackupAlreadyExists(
        "Backup " + shown + " already exists (" +
        EscapeForMessage(there.objects.empty() ? there.prefixes[0] : there.objects[0].key) +
        " is there)");
  }
  ASSIGN_OR_RETURN(bool taken, CreateLockGeneration(BucketObjects(*bucket), lock_key, 0, text));
  if (!taken) return Status::BackupAlreadyExists("Backup " + shown + ": another writer took it");
  RETURN_IF_ERROR(ConfirmFreshLock(*bucket, a, shown));
  return NewS3Writer(std::move(bucket), std::move(a), text, 0);
}

StatusOr<std::unique_ptr<BackupWriter>> S3Storage::StartRewrite(const std::string& location,
                                                                const std::string& uuid) const {
  ASSIGN_OR_RETURN(S3Address a, ParseS3Address(location));
  auto bucket = BucketOf(a);
  const std::string shown = EscapeForMessage(a.Location());
  ASSIGN_OR_RETURN(auto manifest, bucket->Head(a.ObjectKey(".backup")));
  if (!manifest) return Status::BackupNotFound("Backup " + shown + " not found (no .backup)");
  // A lock beside a `.backup` whose writer died (after the manifest went in, before the lock
  // came off) guards nothing: the rewrite takes it over like any dead writer's.
  const std::string text = S3LockText(WriterIntent{uuid, "", ""});
  ASSIGN_OR_RETURN(std::optional<int> generation, TakeS3Lock(*bucket, a.ObjectKey(".lock"), text));
  if (!generation) {
    return Status::BackupAlreadyExists("Backup " + shown +
                                       " has a .lock: another writer is at work there");
  }
  return NewS3Writer(std::move(bucket), std::move(a), text, *generation, true);
}

}  // namespace stitchfs::engine
