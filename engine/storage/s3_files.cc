#include "engine/storage/s3_files.h"

#include <cstring>
#include <mutex>
#include <optional>

#include "engine/s3/read_ahead.h"

namespace stitchfs::engine {
namespace {

// What every range of one data file shares: where it is and the version first seen.
struct ObjectState {
  std::shared_ptr<const S3Bucket> bucket;
  std::string key, display;
  uint64_t declared = 0;
  std::mutex mu;
  std::string etag;  // Empty until the first answer.

  Status Fetch(uint64_t offset, std::span<char> dst) {
    std::string match;
    {
      std::lock_guard<std::mutex> lock(mu);
      match = etag;
    }
    auto r = bucket->GetRange(key, offset, dst, match);
    if (!r.ok()) {
      if (r.status().code() == ErrorCode::kBackupNotFound) {
        return Status::BackupDamaged("data file " + display + " is missing (" +
                                     r.status().message() + ")");
      }
      return r.status().WithPrefix("data file " + display + ": ");
    }
    if (r->total != declared) {
      return Status::BackupDamaged("data file " + display + " has " + std::to_string(r->total) +
                                   " bytes, the manifest declares " + std::to_string(declared));
    }
    if (r->bytes != dst.size()) {
      return Status::BackupDamaged("data file " + display + " ended early at " +
                                   std::to_string(offset + r->bytes));
    }
    std::lock_guard<std::mutex> lock(mu);
    if (etag.empty()) etag = r->etag;
    return Status::OK();
  }
};

class S3DataFile final : public BackupDataFile {
 public:
  explicit S3DataFile(std::shared_ptr<ObjectState> state)
      : state_(state), ahead_(state->declared, [state](uint64_t off, std::span<char> dst) {
          return state->Fetch(off, dst);
        }) {}

  StatusOr<size_t> ReadAt(uint64_t offset, std::span<char> dst) const override {
    return ahead_.ReadAt(offset, dst);
  }
  uint64_t size() const override { return state_->declared; }
  const std::string& display_name() const override { return state_->display; }

 private:
  std::shared_ptr<ObjectState> state_;
  ReadAhead ahead_;
};

class S3ManifestFile final : public RandomAccessFile {
 public:
  static constexpr uint64_t kHead = 64 << 10;

  S3ManifestFile(std::shared_ptr<const S3Bucket> bucket, std::string key, std::string etag,
                 uint64_t size)
      : bucket_(std::move(bucket)), key_(std::move(key)), etag_(std::move(etag)), size_(size) {}

  StatusOr<size_t> ReadAt(uint64_t offset, std::span<char> dst) const override {
    if (offset >= size_) return size_t{0};
    const uint64_t n = std::min<uint64_t>(dst.size(), size_ - offset);
    const bool head = offset + n <= kHead && size_ > 4 * kHead;
    std::lock_guard<std::mutex> lock(mu_);
    std::optional<std::string>& buf = head ? head_ : whole_;
    if (!buf) {
      std::string bytes(head ? kHead : size_, '\0');
      ASSIGN_OR_RETURN(S3Range r, bucket_->GetRange(key_, 0, {bytes.data(), bytes.size()}, etag_));
      if (r.total != size_ || r.bytes != bytes.size()) {
        return Status::BackupDamaged("GET " + EscapeForMessage(key_) + " at " +
                                     bucket_->client().display() +
                                     ": the manifest changed while it was read");
      }
      buf = std::move(bytes);
    }
    std::memcpy(dst.data(), buf->data() + offset, n);
    return n;
  }
  uint64_t size() const override { return size_; }

 private:
  std::shared_ptr<const S3Bucket> bucket_;
  std::string key_, etag_;
  uint64_t size_;
  mutable std::mutex mu_;
  mutable std::optional<std::string> head_, whole_;
};

}  // namespace

std::shared_ptr<const BackupDataFile> OpenS3DataFile(std::shared_ptr<const S3Bucket> bucket,
                                                     std::string key, std::string display,
                                                     uint64_t declared_size) {
  auto state = std::make_shared<ObjectState>();
  state->bucket = std::move(bucket);
  state->key = std::move(key);
  state->display = std::move(display);
  state->declared = declared_size;
  return std::make_shared<S3DataFile>(std::move(state));
}

std::unique_ptr<RandomAccessFile> OpenS3Manifest(std::shared_ptr<const S3Bucket> bucket,
                                                 std::string key, std::string etag, uint64_t size) {
  return std::make_unique<S3ManifestFile>(std::move(bucket), std::move(key), std::move(etag), size);
}

}  // namespace stitchfs::engine
