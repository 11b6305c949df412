#include "engine/backends/routing_storage.h"

#include "engine/backends/s3/s3_archive_files.h"
#include "engine/location/location.h"
#include "engine/location/s3_address.h"
#include "engine/storage/store_moves.h"

namespace stitchfs::engine {

std::shared_ptr<const RoutingStorage> RoutingStorage::Create(size_t max_open_files, S3Settings s3,
                                                             ProgressSink index_progress) {
  return std::make_shared<const RoutingStorage>(LocalStorage::Create(max_open_files), std::move(s3),
                                                std::move(index_progress));
}

StatusOr<const S3Storage*> RoutingStorage::s3() const {
  std::call_once(s3_once_, [this] {
    auto config = LoadS3Config(settings_);
    if (config.ok()) {
      s3_ = std::make_unique<S3Storage>(std::move(*config));
      s3_archives_ = std::make_unique<ArchiveStorage>(
          ArchiveCache::Default(), std::make_shared<S3ArchiveFiles>(s3_.get()), index_progress_);
    } else {
      s3_status_ = config.status();
    }
  });
  if (!s3_) return s3_status_;
  return s3_.get();
}

StatusOr<const Storage*> RoutingStorage::For(const std::string& location) const {
  const Location where = LocationOf(location);
  if (!where.in_object_storage()) {
    if (where.is_archive()) return static_cast<const Storage*>(archives_.get());
    return static_cast<const Storage*>(local_.get());
  }
  ASSIGN_OR_RETURN(const S3Storage* s3, this->s3());
  if (where.is_archive()) return static_cast<const Storage*>(s3_archives_.get());
  return static_cast<const Storage*>(s3);
}

std::string RoutingStorage::Normal(const std::string& location) const {
  auto s = For(location);
  return s.ok() ? (*s)->Normal(location) : location;
}

StatusOr<std::shared_ptr<const BackupFolder>> RoutingStorage::OpenFolder(
    const std::string& location) const {
  ASSIGN_OR_RETURN(const Storage* s, For(location));
  return s->OpenFolder(location);
}

StatusOr<ManifestSource> RoutingStorage::OpenManifest(const BackupFolder& folder) const {
  ASSIGN_OR_RETURN(const Storage* s, For(folder.path()));
  return s->OpenManifest(folder);
}

StatusOr<std::optional<ManifestIdentity>> RoutingStorage::StatManifest(
    const std::string& location) const {
  ASSIGN_OR_RETURN(const Storage* s, For(location));
  return s->StatManifest(location);
}

// The mark belongs to the store the backup lies in: asked of the folders' or the object
// store's storage, an archive's too (an archive storage knows of no prune).
StatusOr<bool> RoutingStorage::BeingRemoved(const std::string& location) const {
  if (!LocationOf(location).in_object_storage()) return local_->BeingRemoved(location);
  ASSIGN_OR_RETURN(const S3Storage* s3, this->s3());
  return s3->BeingRemoved(location);
}

StatusOr<std::shared_ptr<const BackupDataFile>> RoutingStorage::OpenDataFile(
    const std::shared_ptr<const BackupFolder>& folder, const std::string& relative,
    uint64_t declared_size) const {
  ASSIGN_OR_RETURN(const Storage* s, For(folder->path()));
  return s->OpenDataFile(folder, relative, declared_size);
}

StatusOr<SharedBytes> RoutingStorage::ReadIndex(const BackupFolder& folder) const {
  ASSIGN_OR_RETURN(const Storage* s, For(folder.path()));
  return s->ReadIndex(folder);
}

Status RoutingStorage::WriteIndex(const BackupFolder& folder, std::string_view bytes) const {
  ASSIGN_OR_RETURN(const Storage* s, For(folder.path()));
  return s->WriteIndex(folder, bytes);
}

StatusOr<std::vector<StoreFolder>> RoutingStorage::ScanStore(const std::string& location) const {
  ASSIGN_OR_RETURN(const Storage* s, For(location));
  return s->ScanStore(location);
}

int64_t RoutingStorage::StoreRescanNs(const std::string& location) const {
  auto s = For(location);
  return s.ok() ? (*s)->StoreRescanNs(location) : Storage::StoreRescanNs(location);
}

std::string RoutingStorage::LocatorFor(const std::string& location) const {
  auto s = For(location);
  return s.ok() ? (*s)->LocatorFor(location) : "S3('" + location + "')";
}

bool RoutingStorage::SharesCredentials(const std::string& location, const std::string& base) const {
  if (!IsS3Location(location) || !IsS3Location(base)) return false;
  auto s3 = this->s3();
  return s3.ok() && (*s3)->SharesCredentials(location, base);
}

StatusOr<std::unique_ptr<BackupWriter>> RoutingStorage::StartBackup(const std::string& location,
                                                                    const WriterIntent& intent,
                                                                    std::string* notice) const {
  ASSIGN_OR_RETURN(const Storage* s, For(location));
  return s->StartBackup(location, intent, notice);
}

StatusOr<std::unique_ptr<StoreMoves>> RoutingStorage::MovesFor(const std::string& location) const {
  ASSIGN_OR_RETURN(const Storage* s, For(location));
  return s->MovesFor(location);
}

}  // namespace stitchfs::engine
