// S3Storage's writing side: a backup being uploaded, ClickHouse's way: `.lock` first, data
// objects, `.backup` last, `.lock` removed. Files up to one part go up with one PUT; larger
// ones as multipart uploads with parts in flight while the next part is read.
#include "engine/backends/s3/s3_writer.h"

#include <future>
#include <map>
#include <set>

#include "engine/backends/s3/bucket_objects.h"
#include "engine/backends/s3/s3_files.h"
#include "engine/backends/s3/s3_lock.h"
#include "engine/backends/s3/s3_storage.h"
#include "engine/base/interrupt.h"
#include "engine/base/path_check.h"
#include "engine/storage/generation_lock.h"

namespace stitchfs::engine {
namespace {

// Parts of 16 MiB, doubling every 500 parts up to 512 MiB (as ClickHouse sizes its own): S3
// takes at most 10,000 parts, so one file may be up to about 3.9 TiB.
constexpr size_t kPartBytes = 16 << 20;
constexpr int kPartsPerSize = 500, kMaxDoublings = 5;
constexpr size_t kPartsInFlight = 3;
constexpr uint64_t kMinPart = 5 << 20;                // S3's least part but the last.
constexpr uint64_t kMaxCopyPart = uint64_t{5} << 30;  // S3's largest part.

// What a writer has put in the bucket, to take it all back if the backup is not finished.
struct Ledger {
  std::mutex mu;
  std::set<std::string> objects;
  std::map<std::string, S3Upload> uploads;  // By key.
  std::set<std::string> attempted;          // Keys a multipart upload was started for.
};

class S3Writable final : public WritableFile {
 public:
  S3Writable(std::shared_ptr<const S3Bucket> bucket, std::string key, Ledger* ledger)
      : bucket_(std::move(bucket)), key_(std::move(key)), ledger_(ledger) {}
  ~S3Writable() override {
    for (auto& f : parts_) {
      if (f.valid()) f.wait();  // (A part whose failure was returned has been taken.)
    }
  }

  Status Append(std::string_view data) override {
    RETURN_IF_ERROR(CheckStop());
    while (!data.empty()) {
      const size_t take = std::min(data.size(), PartBytes() - buffer_.size());
      buffer_.append(data.substr(0, take));
      data.remove_prefix(take);
      size_ += take;
      if (buffer_.size() == PartBytes()) RETURN_IF_ERROR(SendPart());
    }
    return Status::OK();
  }

  // Copies within the store (UploadPartCopy) when `src` is a whole data file of a bucket this
  // one can copy from, of a part's size (every part but the last needs 5 MiB, so the bytes
  // buffered before it must have that much too). Whole objects only: curl 7.88 signs
  // x-amz-copy-source-range in the wrong order (after x-amz-copy-source), which S3 refuses.
  StatusOr<bool> AppendCopy(const RandomAccessFile& src, uint64_t offset,
                            uint64_t length) override {
    RETURN_IF_ERROR(CheckStop());
    const auto source = S3SourceOf(src);
    if (!source || !bucket_->CanCopyFrom(*source->bucket) || offset != 0 || length != src.size() ||
        length < kMinPart || length > kMaxCopyPart ||
        (!buffer_.empty() && buffer_.size() < kMinPart)) {
      return false;
    }
    // The object as it is now, of the length the manifest gives it: a damaged one is never
    // copied into a rewrite (whose prune would then remove the original). (The copy cannot be
    // pinned to that version: curl 7.88 signs x-amz-copy-source-if-match out of order too.)
    ASSIGN_OR_RETURN(auto now, source->bucket->Head(source->key));
    if (!now || now->size != length) {
      return Status::BackupDamaged(
          "data object " + EscapeForMessage(source->key) +
          (now ? " has " + std::to_string(now->size) + " bytes, not " + std::to_string(length)
               : " is missing"));
    }
    if (!buffer_.empty()) RETURN_IF_ERROR(SendPart());
    size_ += length;
    RETURN_IF_ERROR(
        QueuePart([bucket = bucket_, source = *source](const S3Upload& upload, int number) {
          return bucket->UploadPartCopy(upload, number, *source.bucket, source.key);
        }));
    return true;
  }

  Status Close() override {
    RETURN_IF_ERROR(CheckStop());
    if (upload_.upload_id.empty()) {
      Record();  // Before: a PUT whose answer is lost may still have stored the object.
      return bucket_->Put(key_, buffer_);
    }
    if (!buffer_.empty()) RETURN_IF_ERROR(SendPart());
    for (auto& f : parts_) {
      ASSIGN_OR_RETURN(std::string etag, f.get());
      etags_.push_back(std::move(etag));
    }
    parts_.clear();
    RETURN_IF_ERROR(bucket_->CompleteMultipart(upload_, etags_, size_));
    std::lock_guard<std::mutex> lock(ledger_->mu);
    ledger_->uploads.erase(key_);
    ledger_->objects.insert(key_);
    return Status::OK();
  }

 private:
  size_t PartBytes() const {
    const int parts = static_cast<int>(etags_.size() + parts_.size());
    return kPartBytes << std::min(parts / kPartsPerSize, kMaxDoublings);
  }

  void Record() {
    std::lock_guard<std::mutex> lock(ledger_->mu);
    ledger_->objects.insert(key_);
  }

  Status StartUpload() {
    if (!upload_.upload_id.empty()) return Status::OK();
    {
      std::lock_guard<std::mutex> lock(ledger_->mu);
      ledger_->attempted.insert(key_);  // Its answer may be lost, the upload made anyway.
    }
    ASSIGN_OR_RETURN(std::string id, bucket_->CreateMultipart(key_));
    upload_ = {key_, id};
    std::lock_guard<std::mutex> lock(ledger_->mu);
    ledger_->uploads[key_] = upload_;
    // A CompleteMultipartUpload whose answer is lost may still have made the object.
    ledger_->objects.insert(key_);
    return Status::OK();
  }

  // Starts `send(upload, number)` for the next part, at most kPartsInFlight parts in flight.
  template <typename Send>
  Status QueuePart(Send send) {
    RETURN_IF_ERROR(StartUpload());
    if (parts_.size() >= kPartsInFlight) {
      ASSIGN_OR_RETURN(std::string etag, parts_.front().get());
      etags_.push_back(std::move(etag));
      parts_.erase(parts_.begin());
    }
    const int number = static_cast<int>(etags_.size() + parts_.size() + 1);
    parts_.push_back(std::async(std::launch::async, std::move(send), upload_, number));
    return Status::OK();
  }

  Status SendPart() {
    RETURN_IF_ERROR(QueuePart(
        [bucket = bucket_, body = std::move(buffer_)](const S3Upload& upload, int number) {
          return bucket->UploadPart(upload, number, body);
        }));
    buffer_.clear();
    buffer_.reserve(PartBytes());
    return Status::OK();
  }

  std::shared_ptr<const S3Bucket> bucket_;
  std::string key_;
  Ledger* ledger_;
  std::string buffer_;
  uint64_t size_ = 0;  // Bytes appended, copied ones too.
  S3Upload upload_;
  std::vector<std::future<StatusOr<std::string>>> parts_;
  std::vector<std::string> etags_;
};

class S3Writer final : public BackupWriter {
 public:
  // See NewS3Writer.
  S3Writer(std::shared_ptr<const S3Bucket> bucket, S3Address address, std::string lock_text,
           int generation, bool rewrite = false)
      : generation_(generation),
        bucket_(std::move(bucket)),
        address_(std::move(address)),
        lock_text_(std::move(lock_text)),
        rewrite_(rewrite) {}

  ~S3Writer() override {
    if (finished_) return;
    // Another writer may have taken the backup over (judging this one dead): its objects bear
    // the same names, and only it may remove them and the lock.
    if (!LockIsOurs()) return;
    if (rewrite_ && manifest_sent_) {
      // The new manifest may be in although its PUT failed: its objects must stay (unnamed
      // ones are removed by the next rewrite). The old version was never touched.
      ReleaseLock(BucketObjects(*bucket_), address_.ObjectKey(".lock"), generation_).IgnoreError();
      return;
    }
    // Take back everything: the manifest if it may have been written (if it cannot be
    // removed, what stays is a complete backup), uploads in progress, objects, the lock. The
    // lock goes last and only if all the rest is gone: a failed DeleteObjects may have deleted
    // any subset of its keys, and what it left stays guarded, taken over by the next writer of
    // this machine once this process is gone. (A rewrite's leftovers are unnamed objects beside
    // a whole backup, which the next rewrite removes.)
    if (manifest_sent_ && !bucket_->Delete(address_.ObjectKey(".backup")).ok()) return;
    bool clean = AbortStrayUploads().ok();
    std::lock_guard<std::mutex> lock(ledger_.mu);
    for (const auto& [key, upload] : ledger_.uploads) {
      clean = bucket_->AbortMultipart(upload).ok() && clean;
    }
    clean = bucket_->DeleteMany({ledger_.objects.begin(), ledger_.objects.end()}).ok() && clean;
    if (!clean && !rewrite_) return;
    ReleaseLock(BucketObjects(*bucket_), address_.ObjectKey(".lock"), generation_).IgnoreError();
  }

  StatusOr<std::unique_ptr<WritableFile>> CreateStaged(const std::string& id,
                                                       const std::string& name) override {
    {
      std::lock_guard<std::mutex> lock(ledger_.mu);
      staged_[id] = name;
    }
    return CreateDataFile(name);
  }

  Status DropStaged(const std::string& id) override {
    std::string name;
    {
      std::lock_guard<std::mutex> lock(ledger_.mu);
      auto it = staged_.find(id);
      if (it == staged_.end()) return Status::OK();
      name = it->second;
      staged_.erase(it);
      const std::string key = address_.ObjectKey(name);
      if (auto up = ledger_.uploads.find(key); up != ledger_.uploads.end()) {
        RETURN_IF_ERROR(bucket_->AbortMultipart(up->second));
        ledger_.uploads.erase(up);
      }
      ledger_.objects.erase(key);
    }
    return bucket_->Delete(address_.ObjectKey(name));
  }

  Status Publish(const std::string& id, const std::string& name) override {
    std::lock_guard<std::mutex> lock(ledger_.mu);
    auto it = staged_.find(id);
    if (it == staged_.end()) return Status::Internal("publish of unknown staged file " + id);
    if (it->second != name) {
      return Status::Internal("staged file " + id + " was uploaded as " + it->second + ", not as " +
                              name);
    }
    staged_.erase(it);
    return Status::OK();
  }

  StatusOr<std::unique_ptr<WritableFile>> CreateDataFile(const std::string& name) override {
    RETURN_IF_ERROR(CheckRelativePath(name).WithPrefix("data file name: "));
    return std::unique_ptr<WritableFile>(
        new S3Writable(bucket_, address_.ObjectKey(name), &ledger_));
  }

  // Its bytes fetched again (never from a cache); a length other than `size` fails the reads.
  StatusOr<std::shared_ptr<const RandomAccessFile>> ReadBack(const std::string& name,
                                                             uint64_t size) override {
    RETURN_IF_ERROR(CheckRelativePath(name).WithPrefix("data file name: "));
    return std::shared_ptr<const RandomAccessFile>(
        OpenS3DataFile(bucket_, address_.ObjectKey(name),
                       address_.Location() + "/" + EscapeForMessage(name), size, nullptr));
  }

  Status Finish(std::string_view manifest) override {
    {
      std::lock_guard<std::mutex> lock(ledger_.mu);
      if (!ledger_.uploads.empty()) return Status::Internal("a data file was not closed");
    }
    RETURN_IF_ERROR(AbortStrayUploads());
    // Each data object is durable once its PUT or CompleteMultipartUpload answered. A writer
    // whose lock went (taken over, or removed by hand) puts no `.backup` over objects that
    // may no longer be its own.
    RETURN_IF_ERROR(StillLocked());
    manifest_sent_ = true;
    RETURN_IF_ERROR(bucket_->Put(address_.ObjectKey(".backup"), manifest));
    if (rewrite_) {
      finished_ = true;  // The new version is in: its objects stay whatever happens next.
      RETURN_IF_ERROR(DeleteUnnamed());
      return ReleaseLock(BucketObjects(*bucket_), address_.ObjectKey(".lock"), generation_);
    }
    // Complete once the lock is gone, as a local backup is; until then a failure removes it all.
    RETURN_IF_ERROR(ReleaseLock(BucketObjects(*bucket_), address_.ObjectKey(".lock"), generation_));
    finished_ = true;
    return Status::OK();
  }

 private:
  // The highest generation of the lock is this writer's (no other took the backup over).
  bool LockIsOurs() const { return StillLocked().ok(); }

  // OK if the highest generation of the lock is this writer's; kBackupAlreadyExists if it is
  // another's or gone (what this writer put is then left to whoever holds the prefix).
  Status StillLocked() const {
    ASSIGN_OR_RETURN(auto lock, CurrentLock(BucketObjects(*bucket_), address_.ObjectKey(".lock")));
    if (lock && lock->text == lock_text_) return Status::OK();
    return Status::BackupAlreadyExists(
        "Backup " + EscapeForMessage(address_.Location()) + ": its .lock " +
        (lock ? "was taken over by another process" : "was removed") +
        " while it was written; its .backup is not written, its objects are left as they are");
  }

  // Multipart uploads at keys this writer started one for that it does not know of (a
  // CreateMultipartUpload whose answer was lost still made one): aborted. Only this writer's
  // keys, so a backup at a bucket's root never touches other writers' uploads.
  Status AbortStrayUploads() {
    std::set<std::string> attempted;
    std::set<std::string> known;
    {
      std::lock_guard<std::mutex> lock(ledger_.mu);
      attempted = ledger_.attempted;
      for (const auto& [key, upload] : ledger_.uploads) known.insert(upload.upload_id);
    }
    if (attempted.empty()) return Status::OK();
    ASSIGN_OR_RETURN(auto uploads, bucket_->ListMultipart(address_.ObjectKey("")));
    for (const S3Upload& u : uploads) {
      if (attempted.count(u.key) && !known.count(u.upload_id)) {
        RETURN_IF_ERROR(bucket_->AbortMultipart(u));
      }
    }
    return Status::OK();
  }

  // After a rewrite: the objects of the old version (its data, its resolved index), never a
  // guard (a stale marker beside a `.backup` is the next prune's to remove).
  Status DeleteUnnamed() {
    const std::string prefix = address_.ObjectKey("");
    ASSIGN_OR_RETURN(S3Listing all, bucket_->List(prefix, ""));
    const auto nested = NestedBackups(all.objects, prefix);
    std::vector<std::string> doomed;
    for (const S3Object& o : all.objects) {
      if (IsGuardObject(o.key, prefix) || ledger_.objects.count(o.key) ||
          InNestedBackup(o.key, nested))
        continue;
      doomed.push_back(o.key);
    }
    return bucket_->DeleteMany(doomed);
  }

  const int generation_;
  std::shared_ptr<const S3Bucket> bucket_;
  S3Address address_;
  const std::string lock_text_;  // What this writer's generation of the lock holds.
  const bool rewrite_;
  Ledger ledger_;
  std::map<std::string, std::string> staged_;  // Staged id -> data file name.
  bool manifest_sent_ = false;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<BackupWriter> NewS3Writer(std::shared_ptr<const S3Bucket> bucket, S3Address address,
                                          std::string lock_text, int generation, bool rewrite) {
  return std::make_unique<S3Writer>(std::move(bucket), std::move(address), std::move(lock_text),
                                    generation, rewrite);
}

}  // namespace stitchfs::engine
