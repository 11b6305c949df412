// S3Storage: backups in S3-compatible object storage, in ClickHouse's layout: the file NAME of
// the backup at PREFIX is the object PREFIX/NAME, `.backup` and `.lock` beside the data. A
// location is an S3 address (s3_address.h). Nothing is listed or HEADed per file: a backup's
// tree comes from its manifest; data files are read by ranged GETs through ReadAhead, their
// lengths checked against the manifest from each answer's Content-Range; a manifest's
// identity is its ETag and length.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "engine/backends/s3/block_cache.h"
#include "engine/backends/s3/s3_bucket.h"
#include "engine/backends/s3/s3_config.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// A backup prefix in a bucket.
class S3Folder final : public BackupFolder {
 public:
  S3Folder(S3Address address, std::shared_ptr<const S3Bucket> bucket);
  const S3Address& address() const { return address_; }
  const S3Bucket& bucket() const { return *bucket_; }
  const std::shared_ptr<const S3Bucket>& shared_bucket() const { return bucket_; }
  static constexpr BackendKind kKind{"in object storage"};

 private:
  const S3Address address_;
  const std::shared_ptr<const S3Bucket> bucket_;
};

// Thread-safe.
class S3Storage final : public Storage {
 public:
  explicit S3Storage(S3Config config) : config_(std::move(config)) {}
  // With STITCH_S3_STATS set, prints what was sent and received on stderr (tests, benchmarks).
  ~S3Storage() override;

  std::string Normal(const std::string& location) const override;
  StatusOr<std::shared_ptr<const BackupFolder>> OpenFolder(
      const std::string& location) const override;
  StatusOr<ManifestSource> OpenManifest(const BackupFolder& folder) const override;
  StatusOr<std::optional<ManifestIdentity>> StatManifest(
      const std::string& location) const override;
  StatusOr<bool> BeingRemoved(const std::string& location) const override;
  StatusOr<std::shared_ptr<const BackupDataFile>> OpenDataFile(
      const std::shared_ptr<const BackupFolder>& folder, const std::string& relative,
      uint64_t declared_size) const override;
  StatusOr<SharedBytes> ReadIndex(const BackupFolder& folder) const override;
  Status WriteIndex(const BackupFolder& folder, std::string_view bytes) const override;
  // Folders of the store with a `.backup` (one LIST folded at '/', one HEAD per folder).
  StatusOr<std::vector<StoreFolder>> ScanStore(const std::string& location) const override;
  int64_t StoreRescanNs(const std::string&) const override { return 30000000000; }  // 30 s.
  // `.lock` first (refused if one is there: S3 cannot tell whether its writer lives), data
  // files uploaded (multipart above 16 MiB), `.backup` last, then `.lock` removed. Without
  // Finish, multipart uploads are aborted and every object written is deleted.
  std::string LocatorFor(const std::string& location) const override;
  // Both addresses go to one service signed with one set of credentials.
  bool SharesCredentials(const std::string& location, const std::string& base) const override;
  StatusOr<std::unique_ptr<BackupWriter>> StartBackup(const std::string& location,
                                                      const WriterIntent& intent,
                                                      std::string* notice) const override;
  // Marker objects, `.backup` objects taken away once proven unneeded, rewrites in place
  // (s3_store_moves.cc).
  StatusOr<std::unique_ptr<StoreMoves>> MovesFor(const std::string& location) const override;

  // Rewrites the existing backup at `location` (prune's flatten in place): data files are
  // written under names of their own (the caller picks names the old version does not use),
  // Finish replaces `.backup` in one PUT, then deletes every object the new manifest does not
  // name. Until Finish, the old version is whole; without it, only the new objects go.
  StatusOr<std::unique_ptr<BackupWriter>> StartRewrite(const std::string& location,
                                                       const std::string& uuid) const;

  // The bucket `address` is in, signed with the credentials its locator brought
  // (S3Keyring) or the configured ones.
  std::shared_ptr<const S3Bucket> BucketOf(const S3Address& address) const;
  // Requests, retries and bytes of every client so far.
  S3Counters counters() const;
  // The block cache data files read through (opened at the first use; null if off).
  std::shared_ptr<BlockCache> block_cache() const;

 private:
  const S3Config config_;
  mutable std::once_flag cache_once_;
  mutable std::shared_ptr<BlockCache> cache_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::shared_ptr<const S3Bucket>> buckets_;
};

// The identity of an object version: its ETag (hashed) and length.
ManifestIdentity S3Identity(const std::string& etag, uint64_t size);

}  // namespace stitchfs::engine
