// StoreMoves for a store in object storage (S3Storage::MovesFor): nothing renames, so a backup
// to remove is first marked (a `.stitch-deleting` marker beside its data: it still opens, but
// no writer builds on it), then leaves the store when its `.backup` goes, once prune has proved
// nothing needs it; it is flattened in place by a rewrite (S3Storage::StartRewrite). A backup being
// removed (marked, unmarked, or its objects deleted) is held as a writer holds it: prune
// takes its `.lock` first, so that no writer takes the prefix over meanwhile, and never
// removes a prefix whose lock a live process holds. Storage-layer code kept beside prune:
// nothing here includes a header above engine/storage/.
#include <cerrno>
#include <map>

#include "engine/backends/s3/bucket_objects.h"
#include "engine/backends/s3/s3_lock.h"
#include "engine/backends/s3/s3_storage.h"
#include "engine/base/uuid.h"
#include "engine/storage/generation_lock.h"
#include "engine/storage/store_moves.h"

namespace stitchfs::engine {
namespace {

constexpr const char* kPruneLock = ".stitch-prune.lock";

class S3StoreMoves final : public StoreMoves {
 public:
  S3StoreMoves(S3Address store, const S3Storage& s3) : store_(std::move(store)), s3_(s3) {}

  std::vector<std::string> RemoveLeftovers() override {
    std::vector<std::string> left;
    auto bucket = s3_.BucketOf(store_);
    auto list = bucket->List(store_.ObjectKey(""), "/");
    if (!list.ok()) return left;
    for (const std::string& p : list->prefixes) {
      S3Address a = store_;
      a.key = p.substr(0, p.size() - 1);
      auto marker = bucket->Head(a.ObjectKey(kS3DeletingMarker));
      auto manifest = bucket->Head(a.ObjectKey(".backup"));
      if (!marker.ok() || !*marker || !manifest.ok()) continue;
      if (*manifest) {
        bucket->Delete(a.ObjectKey(kS3DeletingMarker)).IgnoreError();  // Never taken out.
        continue;
      }
      const std::string path = a.Location();
      Status s = LockBackup(a);
      if (s.ok()) s = FinishLeftover(a, path, &left);
      if (!s.ok()) left.push_back("left " + path + " as it is: " + s.message());
    }
    return left;
  }

  std::optional<std::string> NestedBackup(const std::string&, const Manifest&) override {
    return std::nullopt;  // RemoveBackupObjects spares them.
  }

  std::vector<uint64_t> BytesFreed(const std::vector<std::string>& paths) override {
    std::vector<uint64_t> out;
    for (const std::string& path : paths) {
      uint64_t sum = 0;
      if (auto a = ParseS3Address(path); a.ok()) {
        auto list = s3_.BucketOf(*a)->List(a->ObjectKey(""), "");
        if (list.ok()) {
          for (const S3Object& o : list->objects) sum += o.size;
        }
      }
      out.push_back(sum);
    }
    return out;
  }

  StatusOr<std::unique_ptr<StoreReplacement>> StartReplace(const std::string& path,
                                                           const std::string& uuid) override {
    ASSIGN_OR_RETURN(auto writer, s3_.StartRewrite(path, uuid));
    // Names no object of the old version has: it stays whole until the new `.backup` is in.
    const std::string prefix = ".stitchfs/flat-" + NewUuid().substr(0, 8) + "/";
    return std::unique_ptr<StoreReplacement>(new CopyReplacement(
        std::move(writer), prefix,
        [this, path](BackupWriter& w, std::string_view m) -> StatusOr<uint64_t> {
          RETURN_IF_ERROR(w.Finish(m));
          return BytesFreed({path})[0];  // The new version: the old objects are gone.
        }));
  }

  ~S3StoreMoves() override {
    // Backups set aside and neither removed nor put back: their markers are any prune's.
    while (!locks_.empty()) {
      auto a = ParseS3Address(locks_.begin()->first);
      if (!a.ok()) break;
      Unlock(*a);
    }
    if (locked_) {
      ReleaseLock(BucketObjects(*s3_.BucketOf(store_)), store_.ObjectKey(kPruneLock), generation_)
          .IgnoreError();
    }
  }

  Status Lock() override {
    auto bucket = s3_.BucketOf(store_);
    const std::string key = store_.ObjectKey(kPruneLock);
    const std::string shown = EscapeForMessage(store_.Location());
    ASSIGN_OR_RETURN(auto lock, CurrentLock(BucketObjects(*bucket), key));
    if (lock && !S3LockWriterDied(lock->text)) {
      return Status::IOError("another stitch prune is running on " + shown +
                                 " (or one on another machine died: then remove " + shown + "/" +
                                 kPruneLock + (lock->generation > 0 ? " and its .N copies" : "") +
                                 ")",
                             EBUSY);
    }
    generation_ = lock ? lock->generation + 1 : 0;
    ASSIGN_OR_RETURN(locked_, CreateLockGeneration(BucketObjects(*bucket), key, generation_,
                                                   S3LockText(WriterIntent{NewUuid(), "", ""}),
                                                   lock ? lock->text : std::string()));
    if (!locked_) return Status::IOError("another stitch prune is running on " + shown, EBUSY);
    return Status::OK();
  }

  StatusOr<std::vector<StoreWriter>> Writers(const std::set<std::string>& backups) override {
    auto bucket = s3_.BucketOf(store_);
    ASSIGN_OR_RETURN(S3Listing list, bucket->List(store_.ObjectKey(""), "/"));
    std::vector<StoreWriter> out;
    for (const std::string& p : list.prefixes) {
      S3Address a = store_;
      a.key = p.substr(0, p.size() - 1);
      const size_t slash = a.key.rfind('/');
      if (backups.count(slash == std::string::npos ? a.key : a.key.substr(slash + 1))) continue;
      ASSIGN_OR_RETURN(auto manifest, bucket->Head(a.ObjectKey(".backup")));
      if (manifest) continue;
      ASSIGN_OR_RETURN(auto lock, CurrentLock(BucketObjects(*bucket), a.ObjectKey(".lock")));
      if (lock && !S3LockWriterDied(lock->text)) {
        out.push_back({a.Location(), ParseLockText(lock->text)});
      }
    }
    return out;
  }

  // With the backup's lock held, the marker put beside its `.backup`, which stays: a prune
  // killed before its proof leaves a backup that opens, and a marker the next one takes away.
  Status SetAside(const std::string& path) override {
    ASSIGN_OR_RETURN(S3Address a, ParseS3Address(path));
    auto bucket = s3_.BucketOf(a);
    // (An archive in object storage is one object, never a prefix with a `.backup`.)
    ASSIGN_OR_RETURN(auto manifest, bucket->Head(a.ObjectKey(".backup")));
    if (!manifest) {
      return Status::BackupNotFound("Backup " + EscapeForMessage(path) +
                                    " has no .backup under its prefix: prune removes only "
                                    "backups written as prefixes in object storage");
    }
    RETURN_IF_ERROR(LockBackup(a));
    Status s = bucket->Put(a.ObjectKey(kS3DeletingMarker), kMarkText);
    if (!s.ok()) Unlock(a);
    return s;
  }

  void PutBack(const std::string& path) override {
    auto a = ParseS3Address(path);
    if (!a.ok() || !locks_.count(a->Location())) return;
    // A marker left (a failed request) is the next prune's: it has a .backup, so it goes.
    s3_.BucketOf(*a)->Delete(a->ObjectKey(kS3DeletingMarker)).IgnoreError();
    Unlock(*a);
  }

  // Deletes `.backup` (from here on the backup no longer opens), the data, then the `.lock`
  // generations, this prune's (the highest) last, then the marker: a prefix left holding only
  // the marker is refused by writers, removed by a prune.
  Status Remove(const std::string& path) override {
    ASSIGN_OR_RETURN(S3Address a, ParseS3Address(path));
    if (!locks_.count(a.Location())) RETURN_IF_ERROR(LockBackup(a));
    auto bucket = s3_.BucketOf(a);
    Status s = bucket->Delete(a.ObjectKey(".backup"));
    if (s.ok()) {
      s = RemoveBackupObjects(*bucket, a.ObjectKey(""), [](const std::string&) { return false; });
    }
    if (s.ok()) {
      locks_.erase(a.Location());
    } else {
      Unlock(a);  // What is left is the marker's: any prune may remove it, of any machine.
    }
    return s;
  }

  Status Sync() override { return Status::OK(); }  // Each answered request is durable.

 private:
  // Takes the `.lock` of the backup at `a` for this prune (S3 cannot tell a writer on another
  // machine from a dead one: its lock is never taken).
  Status LockBackup(const S3Address& a) {
    ASSIGN_OR_RETURN(std::optional<int> generation,
                     TakeS3Lock(*s3_.BucketOf(a), a.ObjectKey(".lock"), lock_text_));
    if (!generation) {
      return Status::BackupAlreadyExists(
          "Backup " + EscapeForMessage(a.Location()) +
          " has a .lock held by a live process (a writer at work there, or one on another "
          "machine, which may have died: then remove its .lock and .lock.N)");
    }
    locks_[a.Location()] = *generation;
    return Status::OK();
  }

  // Releases the `.lock` this prune holds of the backup at `a`, if it holds it.
  void Unlock(const S3Address& a) {
    auto it = locks_.find(a.Location());
    if (it == locks_.end()) return;
    ReleaseLock(BucketObjects(*s3_.BucketOf(a)), a.ObjectKey(".lock"), it->second).IgnoreError();
    locks_.erase(it);
  }

  // With the lock of `a` held, what was seen before taking it looked again at: a `.backup`
  // there (never taken out, or written meanwhile) loses its marker; the marker of this version
  // (kMarkText) without `.backup` was taken out after the proof, so the rest goes; an older
  // version's (holding the manifest it took away before its proof) is left as it is, and
  // `left` says how to put it back by hand.
  Status FinishLeftover(const S3Address& a, const std::string& path,
                        std::vector<std::string>* left) {
    auto bucket = s3_.BucketOf(a);
    ASSIGN_OR_RETURN(auto marker, bucket->GetAll(a.ObjectKey(kS3DeletingMarker), 1ull << 34));
    ASSIGN_OR_RETURN(auto manifest, bucket->Head(a.ObjectKey(".backup")));
    if (marker && *marker == kMarkText && !manifest) return Remove(path);
    if (marker && manifest) RETURN_IF_ERROR(bucket->Delete(a.ObjectKey(kS3DeletingMarker)));
    Unlock(a);
    if (marker && !manifest) {
      left->push_back("left " + path + " as it is: a prune of an older version set it aside " +
                      "and stopped, maybe before proving it unneeded, maybe while deleting it; " +
                      "if a backup needs it and its data is whole, copy its " + kS3DeletingMarker +
                      " (its manifest) to .backup, else remove the prefix");
    }
    return Status::OK();
  }

  static constexpr const char* kMarkText = "being removed by stitch prune\n";
  const S3Address store_;
  const S3Storage& s3_;
  std::map<std::string, int> locks_;  // Location -> generation of `.lock` held.
  const std::string lock_text_ = S3LockText(WriterIntent{NewUuid(), "", ""});
  bool locked_ = false;  // Lock() took the prune lock,
  int generation_ = 0;   // this generation of it.
};

}  // namespace

StatusOr<std::unique_ptr<StoreMoves>> S3Storage::MovesFor(const std::string& location) const {
  ASSIGN_OR_RETURN(S3Address a, ParseS3Address(location));
  return std::unique_ptr<StoreMoves>(std::make_unique<S3StoreMoves>(std::move(a), *this));
}

}  // namespace stitchfs::engine
