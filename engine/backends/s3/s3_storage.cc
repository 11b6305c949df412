#include "engine/backends/s3/s3_storage.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <future>

#include "engine/backends/archive/archive_storage.h"
#include "engine/backends/s3/s3_files.h"
#include "engine/backends/s3/s3_lock.h"
#include "engine/base/path_check.h"
#include "engine/location/archive_kind.h"
#include "engine/location/locator.h"
#include "engine/location/s3_keyring.h"

namespace stitchfs::engine {
namespace {

// Marks identities of objects: no device number of this machine is this large.
constexpr uint64_t kS3Device = 0x5333000000000000ull;
constexpr uint64_t kMaxIndexBytes = 1ull << 32;
constexpr size_t kScanWidth = 8;  // HEADs in flight while a store is scanned.

// One identity for every spelling of a prefix (`s3://B/K` and the configured endpoint's URL
// of it): the URL requests go to.
FolderIdentity FolderIdOf(const S3Address& a, const S3Bucket& bucket) {
  const std::string url = bucket.client().display() + "/" + a.key;
  return {kS3Device, XXH3_64bits(url.data(), url.size())};
}

std::string Shown(const S3Address& a) { return EscapeForMessage(a.Location()); }

}  // namespace

ManifestIdentity S3Identity(const std::string& etag, uint64_t size) {
  ManifestIdentity id;
  id.dev = kS3Device;
  id.ino = XXH3_64bits(etag.data(), etag.size());
  id.size = size;
  return id;
}

S3Folder::S3Folder(S3Address address, std::shared_ptr<const S3Bucket> bucket)
    : BackupFolder(address.Location(), FolderIdOf(address, *bucket), kKind),
      address_(std::move(address)),
      bucket_(std::move(bucket)) {}

std::shared_ptr<const S3Bucket> S3Storage::BucketOf(const S3Address& address) const {
  S3Credentials creds = config_.credentials;
  if (auto remembered = S3Keyring::Global().Find(address)) creds = *remembered;
  S3Address bucket = address;
  bucket.key.clear();
  const std::string key = bucket.Location() + "\n" + creds.access_key;
  std::lock_guard<std::mutex> lock(mu_);
  auto& b = buckets_[key];
  if (!b)
    b = std::make_shared<const S3Bucket>(std::make_shared<const S3Client>(config_, address, creds),
                                         address.bucket);
  return b;
}

S3Counters S3Storage::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  S3Counters sum;
  for (const auto& [key, b] : buckets_) {
    const S3Counters c = b->client().counters();
    sum.requests += c.requests;
    sum.retries += c.retries;
    sum.bytes_sent += c.bytes_sent;
    sum.bytes_received += c.bytes_received;
  }
  return sum;
}

S3Storage::~S3Storage() {
  if (std::getenv("STITCH_S3_STATS") == nullptr) return;
  const S3Counters c = counters();
  const uint64_t hits = cache_ ? cache_->hits() : 0, misses = cache_ ? cache_->misses() : 0;
  std::fprintf(stderr,
               "s3 stats: requests %llu retries %llu sent %llu received %llu cache_hits %llu "
               "cache_misses %llu\n",
               static_cast<unsigned long long>(c.requests),
               static_cast<unsigned long long>(c.retries),
               static_cast<unsigned long long>(c.bytes_sent),
               static_cast<unsigned long long>(c.bytes_received),
               static_cast<unsigned long long>(hits), static_cast<unsigned long long>(misses));
}

std::shared_ptr<BlockCache> S3Storage::block_cache() const {
  std::call_once(cache_once_, [this] {
    cache_ = BlockCache::Open(config_.block_cache_dir, config_.block_cache_bytes);
  });
  return cache_;
}

std::string S3Storage::Normal(const std::string& location) const {
  auto a = ParseS3Address(location);
  return a.ok() ? a->Location() : location;
}

std::string S3Storage::LocatorFor(const std::string& location) const {
  auto a = ParseS3Address(location);
  if (!a.ok()) return "S3('" + location + "')";
  const std::string url =
      BucketOf(*a)->client().display() + (a->key.empty() ? "" : "/" + UriEncode(a->key, true));
  return "S3(" + FileLocator(url).substr(5);
}

bool S3Storage::SharesCredentials(const std::string& location, const std::string& base) const {
  auto a = ParseS3Address(location);
  auto b = ParseS3Address(base);
  if (!a.ok() || !b.ok()) return false;
  const S3Client& ca = BucketOf(*a)->client();
  const S3Client& cb = BucketOf(*b)->client();
  return ca.signs() && ca.service() == cb.service();
}

StatusOr<std::shared_ptr<const BackupFolder>> S3Storage::OpenFolder(
    const std::string& location) const {
  auto a = ParseS3Address(location);
  if (!a.ok())
    return Status::BackupNotFound("Backup " + EscapeForMessage(location) + ": " +
                                  a.status().message());
  return std::shared_ptr<const BackupFolder>(std::make_shared<S3Folder>(*a, BucketOf(*a)));
}

StatusOr<ManifestSource> S3Storage::OpenManifest(const BackupFolder& folder) const {
  ASSIGN_OR_RETURN(const S3Folder* f, FolderAs<S3Folder>(folder));
  const std::string key = f->address().ObjectKey(".backup");
  auto head = f->bucket().Head(key);
  if (!head.ok()) return head.status().WithPrefix("Backup " + Shown(f->address()) + ": ");
  if (!*head) {
    auto lock = f->bucket().Head(f->address().ObjectKey(".lock"));
    const bool locked = lock.ok() && *lock;
    return Status::BackupNotFound(
        "Backup " + Shown(f->address()) + " not found (" +
        (locked ? "no .backup manifest; its .lock shows a backup being written, or one whose "
                  "writer died: remove the prefix, or its .lock to let a new backup start"
                : "no .backup manifest") +
        ")");
  }
  const S3Object& obj = **head;
  return ManifestSource{OpenS3Manifest(f->shared_bucket(), key, obj.etag, obj.size),
                        S3Identity(obj.etag, obj.size)};
}

StatusOr<std::optional<ManifestIdentity>> S3Storage::StatManifest(
    const std::string& location) const {
  auto a = ParseS3Address(location);
  if (!a.ok()) return std::optional<ManifestIdentity>();
  ASSIGN_OR_RETURN(auto head, BucketOf(*a)->Head(a->ObjectKey(".backup")));
  if (!head) return std::optional<ManifestIdentity>();
  return std::optional<ManifestIdentity>(S3Identity(head->etag, head->size));
}

StatusOr<bool> S3Storage::BeingRemoved(const std::string& location) const {
  ASSIGN_OR_RETURN(S3Address a, ParseS3Address(location));
  ASSIGN_OR_RETURN(auto marker, BucketOf(a)->Head(a.ObjectKey(kS3DeletingMarker)));
  return marker.has_value();
}

StatusOr<std::shared_ptr<const BackupDataFile>> S3Storage::OpenDataFile(
    const std::shared_ptr<const BackupFolder>& folder, const std::string& relative,
    uint64_t declared_size) const {
  ASSIGN_OR_RETURN(const S3Folder* f, FolderAs<S3Folder>(*folder));
  RETURN_IF_ERROR(
      CheckRelativePath(relative).WithPrefix("Backup " + folder->path() + ": data file: "));
  return OpenS3DataFile(f->shared_bucket(), f->address().ObjectKey(relative),
                        folder->path() + "/" + EscapeForMessage(relative), declared_size,
                        block_cache());
}

StatusOr<SharedBytes> S3Storage::ReadIndex(const BackupFolder& folder) const {
  ASSIGN_OR_RETURN(const S3Folder* f, FolderAs<S3Folder>(folder));
  ASSIGN_OR_RETURN(auto bytes,
                   f->bucket().GetAll(f->address().ObjectKey(".stitchfs/index"), kMaxIndexBytes));
  if (!bytes) return Status::BackupNotFound("no resolved index in " + folder.path());
  return SharedBytes::Copy(*bytes);
}

Status S3Storage::WriteIndex(const BackupFolder& folder, std::string_view bytes) const {
  ASSIGN_OR_RETURN(const S3Folder* f, FolderAs<S3Folder>(folder));
  return f->bucket().Put(f->address().ObjectKey(".stitchfs/index"), bytes);  // PUT is atomic.
}

namespace {

// The archive backups among the objects directly under `prefix` of the store at `store`.
std::vector<StoreFolder> ArchivesIn(const S3Address& store, const std::string& prefix,
                                    const std::vector<S3Object>& objects) {
  std::vector<StoreFolder> out;
  for (const S3Object& obj : objects) {
    const std::string name = obj.key.substr(prefix.size());
    if (name.empty() || name[0] == '.' || name.find('/') != std::string::npos ||
        !ArchiveKindOf(name).is_archive() || !CheckRelativePath(name).ok()) {
      continue;
    }
    const S3Address child = store.Child(name);
    const ArchiveStamp stamp = S3ArchiveStamp(child, obj.etag, obj.size);
    out.push_back(
        {name, child.Location(), {stamp.dev, stamp.ino}, ArchiveStorage::ArchiveIdentity(stamp)});
  }
  return out;
}

}  // namespace

StatusOr<std::vector<StoreFolder>> S3Storage::ScanStore(const std::string& location) const {
  auto a = ParseS3Address(location);
  if (!a.ok())
    return Status::BackupNotFound("store " + EscapeForMessage(location) + ": " +
                                  a.status().message());
  auto bucket = BucketOf(*a);
  const std::string prefix = a->key.empty() ? "" : a->key + "/";
  ASSIGN_OR_RETURN(S3Listing list, bucket->List(prefix, "/"));
  std::vector<S3Address> children;
  for (const std::string& p : list.prefixes) {
    std::string name = p.substr(prefix.size());
    if (!name.empty() && name.back() == '/') name.pop_back();
    if (name.empty() || name[0] == '.' || !CheckRelativePath(name).ok()) continue;
    children.push_back(a->Child(name));
  }
  // One HEAD per folder, kScanWidth at a time (a year of daily backups is 365 of them).
  std::vector<StatusOr<std::optional<S3Object>>> heads(children.size(), std::optional<S3Object>());
  for (size_t start = 0; start < children.size(); start += kScanWidth) {
    std::vector<std::future<void>> batch;
    for (size_t i = start; i < std::min(children.size(), start + kScanWidth); ++i) {
      batch.push_back(std::async(std::launch::async, [&, i] {
        heads[i] = bucket->Head(children[i].ObjectKey(".backup"));
      }));
    }
  }
  std::vector<StoreFolder> out = ArchivesIn(*a, prefix, list.objects);
  for (size_t i = 0; i < children.size(); ++i) {
    if (!heads[i].ok()) return heads[i].status();
    if (!*heads[i]) continue;
    const S3Address& child = children[i];
    out.push_back({child.key.substr(prefix.size()), child.Location(), FolderIdOf(child, *bucket),
                   S3Identity((*heads[i])->etag, (*heads[i])->size)});
  }
  if (out.empty() && list.objects.empty() && list.prefixes.empty()) {
    return Status::BackupNotFound("store " + Shown(*a) + " not found (nothing under it)");
  }
  std::sort(out.begin(), out.end(),
            [](const StoreFolder& x, const StoreFolder& y) { return x.name < y.name; });
  return out;
}

}  // namespace stitchfs::engine
