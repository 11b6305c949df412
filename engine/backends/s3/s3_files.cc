#include "engine/backends/s3/s3_files.h"

#include <xxhash.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>

#include "engine/backends/s3/block_cache.h"
#include "engine/backends/s3/read_ahead.h"

namespace stitchfs::engine {
namespace {

// What every range of one data file shares: where it is, the version first seen, the cache.
struct ObjectState {
  std::shared_ptr<const S3Bucket> bucket;
  std::string key, display;
  uint64_t declared = 0;
  std::shared_ptr<BlockCache> cache;  // May be null.
  std::mutex mu;
  std::string etag;                   // Empty until the first answer.
  std::set<uint64_t> kept;            // Blocks read from or put in the cache (guarded by mu).
  bool served = false;                // A read was served from the cache (guarded by mu).
  std::atomic<bool> recorded{false};  // The cache's version record names `etag`.

  void Kept(uint64_t first, uint64_t end, bool read) {
    std::lock_guard<std::mutex> lock(mu);
    for (uint64_t b = first; b < end; ++b) kept.insert(b);
    served = served || read;
  }

  std::string Etag() {
    std::lock_guard<std::mutex> lock(mu);
    return etag;
  }
  // The cache's name for this version of the object.
  std::string CacheId(const std::string& version) const {
    return bucket->client().display() + "/" + key + "\n" + version;
  }

  // One ranged GET of exactly dst.size() bytes, checked against the manifest's length (before
  // `report`, if given, hears of any byte: a reader never sees those of a wrong object).
  Status Get(uint64_t offset, std::span<char> dst, const StreamSink* stream = nullptr) {
    const SinkReport* report = stream ? stream->report : nullptr;
    std::optional<uint64_t> wrong_size;
    const SinkReport checked = [&](uint64_t filled, uint64_t size) {
      if (size != declared) wrong_size = size;
      return !wrong_size && (*report)(filled, size);
    };
    auto r = bucket->GetRange(key, offset, dst, Etag(), report ? &checked : nullptr,
                              stream ? stream->cancel : nullptr);
    if (wrong_size) {
      return Status::BackupDamaged("data file " + display + " has " + std::to_string(*wrong_size) +
                                   " bytes, the manifest declares " + std::to_string(declared));
    }
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

  uint64_t BlockLength(uint64_t b) const {
    return std::min(BlockCache::kBlockBytes, declared - b * BlockCache::kBlockBytes);
  }

  // All of `dst` from cached blocks of version `version`, or false.
  bool FromCache(const std::string& version, uint64_t offset, std::span<char> dst) {
    const uint64_t kB = BlockCache::kBlockBytes;
    const std::string id = CacheId(version);
    uint64_t b = offset / kB;
    for (; b * kB < offset + dst.size(); ++b) {
      const uint64_t from = std::max(offset, b * kB),
                     to = std::min(offset + dst.size(), b * kB + BlockLength(b));
      if (!cache->Get(id, b, BlockLength(b), from - b * kB,
                      dst.subspan(from - offset, to - from))) {
        return false;
      }
    }
    Kept(offset / kB, b, /*read=*/true);
    return true;
  }

  // The version of this object whose blocks the cache holds, if any (one record per object).
  static constexpr uint64_t kVersionRecord = UINT64_MAX;
  static constexpr size_t kVersionBytes = 256;
  std::string CachedVersion() {
    std::string v(kVersionBytes, '\0');
    if (!cache->Get(CacheId(""), kVersionRecord, {v.data(), v.size()})) return "";
    return v.substr(0, v.find('\0'));
  }
  void RecordVersion(const std::string& version) {
    if (version.size() >= kVersionBytes) return;
    std::string v = version;
    v.resize(kVersionBytes, '\0');
    cache->Put(CacheId(""), kVersionRecord, v);
  }

  // Before the first GET of a file whose blocks the cache may hold: one HEAD tells whether
  // they are of the version there now (a replaced object must never be served from them).
  Status LearnVersion(const std::atomic<bool>* cancel) {
    if (!Etag().empty() || CachedVersion().empty()) return Status::OK();
    auto head = bucket->Head(key, cancel);
    if (!head.ok()) return head.status().WithPrefix("data file " + display + ": ");
    if (!*head) return Status::BackupDamaged("data file " + display + " is missing");
    if ((*head)->size != declared) {
      return Status::BackupDamaged("data file " + display + " has " +
                                   std::to_string((*head)->size) +
                                   " bytes, the manifest declares " + std::to_string(declared));
    }
    std::lock_guard<std::mutex> lock(mu);
    if (etag.empty()) etag = (*head)->etag;
    return Status::OK();
  }

  // Removes the blocks of this object this file read from or put in the cache; true if a read
  // was served from the cache since the last drop.
  bool DropBlocks() {
    if (!cache) return false;
    std::set<uint64_t> blocks;
    bool was_served = false;
    std::string version;
    {
      std::lock_guard<std::mutex> lock(mu);
      blocks.swap(kept);
      std::swap(was_served, served);
      version = etag;
    }
    const std::string id = CacheId(version);
    for (uint64_t b : blocks) cache->Drop(id, b);
    return was_served;
  }

  // Reads [offset, offset + dst.size()): from the cache if every block is there, else by one
  // GET, which for a random read is widened to whole blocks that then go into the cache. A
  // stream's ranges are not kept: they arrive at network speed, and writing them out would
  // cost more CPU than reading them did (and churn the cache).
  Status Fetch(uint64_t offset, std::span<char> dst, const StreamSink* stream) {
    if (!cache) return Get(offset, dst, stream);
    RETURN_IF_ERROR(LearnVersion(stream ? stream->cancel : nullptr));
    const std::string known = Etag();
    if (!known.empty() && FromCache(known, offset, dst)) return Status::OK();
    if (stream) return Get(offset, dst, stream);
    const uint64_t kB = BlockCache::kBlockBytes;
    const uint64_t first = offset / kB * kB;
    const uint64_t end = std::min(declared, (offset + dst.size() + kB - 1) / kB * kB);
    std::string wide;
    std::span<char> into = dst;
    if (first != offset || end != offset + dst.size()) {
      wide.resize(end - first);
      into = {wide.data(), wide.size()};
    }
    RETURN_IF_ERROR(Get(first, into));
    if (!wide.empty()) std::memcpy(dst.data(), wide.data() + (offset - first), dst.size());
    const std::string version = Etag();
    if (version.empty()) return Status::OK();  // No version to name the blocks by: not kept.
    if (!recorded.exchange(true)) RecordVersion(version);
    const std::string id = CacheId(version);
    for (uint64_t b = first / kB; b * kB < end; ++b) {
      cache->Put(id, b, {into.data() + (b * kB - first), BlockLength(b)});
    }
    Kept(first / kB, (end + kB - 1) / kB, /*read=*/false);
    return Status::OK();
  }
};

class S3DataFile final : public BackupDataFile {
 public:
  explicit S3DataFile(std::shared_ptr<ObjectState> state)
      : state_(state),
        ahead_(state->declared,
               [state](uint64_t off, std::span<char> dst, const StreamSink* stream) {
                 return state->Fetch(off, dst, stream);
               }) {}

  uint64_t size() const override { return state_->declared; }
  void Prefetch(uint64_t offset, uint64_t length) const override {
    ahead_.Prefetch(offset, length);
  }
  StatusOr<Loan> Lend(uint64_t offset, size_t n) const override { return ahead_.Lend(offset, n); }
  bool DropCached() const override {
    const bool streamed = ahead_.Forget();
    return state_->DropBlocks() || streamed;
  }
  const std::string& display_name() const override { return state_->display; }
  StoredObject Stored() const override { return {&kObjectKind, state_}; }
  static constexpr char kObjectKind = 0;  // Its address tags S3DataFile's stored objects.

 protected:
  Status ReadExact(uint64_t offset, std::span<char> dst) const override {
    return ahead_.ReadAt(offset, dst).status();
  }

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

  uint64_t size() const override { return size_; }

 protected:
  Status ReadExact(uint64_t offset, std::span<char> dst) const override {
    const uint64_t n = dst.size();
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
    return Status::OK();
  }

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
                                                     uint64_t declared_size,
                                                     std::shared_ptr<BlockCache> cache) {
  auto state = std::make_shared<ObjectState>();
  state->cache = std::move(cache);
  state->bucket = std::move(bucket);
  state->key = std::move(key);
  state->display = std::move(display);
  state->declared = declared_size;
  return std::make_shared<S3DataFile>(std::move(state));
}

std::optional<S3Source> S3SourceOf(const RandomAccessFile& file) {
  const RandomAccessFile::StoredObject stored = file.Stored();
  if (stored.kind != &S3DataFile::kObjectKind) return std::nullopt;
  const auto& state = *static_cast<const ObjectState*>(stored.object.get());
  return S3Source{state.bucket, state.key};
}

std::unique_ptr<RandomAccessFile> OpenS3Manifest(std::shared_ptr<const S3Bucket> bucket,
                                                 std::string key, std::string etag, uint64_t size) {
  return std::make_unique<S3ManifestFile>(std::move(bucket), std::move(key), std::move(etag), size);
}

ArchiveStamp S3ArchiveStamp(const S3Address& a, const std::string& quoted_etag, uint64_t size) {
  // A LIST and a HEAD may quote an ETag differently.
  std::string_view etag = quoted_etag;
  while (!etag.empty() && etag.front() == '"') etag.remove_prefix(1);
  while (!etag.empty() && etag.back() == '"') etag.remove_suffix(1);
  const std::string where = a.Location();
  ArchiveStamp s;
  s.dev = XXH3_64bits(where.data(), where.size());
  s.ino = XXH3_64bits(etag.data(), etag.size());
  s.size = size;
  return s;
}

}  // namespace stitchfs::engine
