// S3Bucket: the object operations stitch uses on one bucket (HEAD, ranged GET, PUT, DELETE,
// LIST, multipart upload), with S3's answers turned into Status codes: a refused credential is
// ACCESS_DENIED, a missing bucket BACKUP_NOT_FOUND, an object replaced between two reads of it
// BACKUP_DAMAGED; a server that stays unreachable is an I/O error.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/backends/s3/s3_client.h"

namespace stitchfs::engine {

struct S3Object {
  std::string key;
  uint64_t size = 0;
  std::string etag;
};

struct S3Listing {
  std::vector<S3Object> objects;
  std::vector<std::string> prefixes;  // Common prefixes (with their trailing delimiter).
};

struct S3Upload {
  std::string key, upload_id;
};

// What a ranged GET brought.
struct S3Range {
  size_t bytes = 0;    // Written into the destination.
  uint64_t total = 0;  // The object's whole length.
  std::string etag;
};

// Thread-safe.
class S3Bucket {
 public:
  // `name` is the bucket's name (for copies between buckets).
  S3Bucket(std::shared_ptr<const S3Client> client, std::string name)
      : client_(std::move(client)), name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  // The object `key`, or nullopt if there is none. `cancel`: see S3Request.
  StatusOr<std::optional<S3Object>> Head(const std::string& key,
                                         const std::atomic<bool>* cancel = nullptr) const;
  // Up to dst.size() bytes of `key` from `offset` (fewer only at the object's end). With
  // `if_match`, kBackupDamaged if the object is no longer that version. kBackupNotFound if
  // there is no such object. `report` (optional): see SinkReport; a transfer it stops ends
  // short (kIOError); so does one `cancel` ends (see S3Request). A server that ignores Range is
  // kIOError, never a damaged object.
  StatusOr<S3Range> GetRange(const std::string& key, uint64_t offset, std::span<char> dst,
                             const std::string& if_match = "", const SinkReport* report = nullptr,
                             const std::atomic<bool>* cancel = nullptr) const;
  // The whole object, refused (kBackupDamaged) if longer than `max_size`; nullopt if none.
  StatusOr<std::optional<std::string>> GetAll(const std::string& key, uint64_t max_size,
                                              std::string* etag = nullptr) const;
  Status Put(const std::string& key, std::string_view body) const;
  // A PUT only if there is no object `key` (`etag` empty: If-None-Match), or only if it is
  // still version `etag` (If-Match): false if the condition failed. A server that ignores the
  // condition writes anyway.
  StatusOr<bool> PutIf(const std::string& key, std::string_view body,
                       const std::string& etag) const;
  Status Delete(const std::string& key) const;  // OK if there was nothing.
  // Deletes every object of `keys` (one that is not there is fine) with S3's DeleteObjects, up
  // to kMaxDeleteKeys per request (POST ?delete, with the Content-MD5 S3 requires). Keys the
  // answer reports with a code worth retrying (InternalError, SlowDown, ...) are sent again
  // with backoff; any other code is that key's error (AccessDenied: kAccessDenied). Every
  // key is tried before the first error is returned, which says how many keys failed. Keys a
  // request body cannot carry (control characters) get a DELETE each, as do all keys at a
  // server without DeleteObjects (501 NotImplemented). S3 applies one request's keys in no
  // particular order, and a request that fails or a process killed while it runs may leave any
  // subset of them deleted: an object whose presence guards others (a `.backup`, a `.lock`, a
  // marker) never goes in the same call as they do (RemoveBackupObjects, s3_lock.h).
  Status DeleteMany(const std::vector<std::string>& keys) const;
  static constexpr size_t kMaxDeleteKeys = 1000;
  // Every object under `prefix` (all pages), folded at `delimiter` if not empty.
  StatusOr<S3Listing> List(const std::string& prefix, const std::string& delimiter) const;

  StatusOr<std::string> CreateMultipart(const std::string& key) const;  // The upload id.
  // Uploads part `number` (1-based); returns its ETag.
  StatusOr<std::string> UploadPart(const S3Upload& upload, int number, std::string_view body) const;
  // Uploads part `number` as the whole object `source_key` of `source` (UploadPartCopy: the
  // bytes stay in the store); returns the part's ETag.
  StatusOr<std::string> UploadPartCopy(const S3Upload& upload, int number, const S3Bucket& source,
                                       const std::string& source_key) const;
  // True if a copy from `source` to this bucket can stay in the store: one endpoint, one
  // set of credentials.
  bool CanCopyFrom(const S3Bucket& source) const;
  // `size`: the object's length once made (the parts' total), which tells a completion whose
  // answer was lost (then retried: NoSuchUpload) from one that failed.
  Status CompleteMultipart(const S3Upload& upload, const std::vector<std::string>& etags,
                           uint64_t size) const;
  Status AbortMultipart(const S3Upload& upload) const;  // OK if it is gone already.
  // The multipart uploads in progress under `prefix`.
  StatusOr<std::vector<S3Upload>> ListMultipart(const std::string& prefix) const;

  // The Status an unexpected answer to `what` (e.g. "GET key") means.
  Status ErrorFor(const S3Response& r, const std::string& what) const;
  const S3Client& client() const { return *client_; }

 private:
  struct KeyError {
    std::string key, code, message;
  };
  StatusOr<S3Response> Expect2xx(const S3Request& req, const std::string& what) const;
  // One DeleteObjects request for `keys`: the keys it failed, with S3's code and message.
  StatusOr<std::vector<KeyError>> DeleteBatch(const std::vector<std::string>& keys) const;
  // DeleteBatch until every key is deleted or failed for good (s3_delete.cc).
  Status DeleteWithRetries(std::vector<std::string> keys) const;

  std::shared_ptr<const S3Client> client_;
  std::string name_;
};

}  // namespace stitchfs::engine
