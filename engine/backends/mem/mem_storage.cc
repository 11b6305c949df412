#include "engine/backends/mem/mem_storage.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "engine/format/data_file_name.h"
#include "engine/location/locator.h"
#include "engine/storage/store_moves.h"

namespace stitchfs::engine {
namespace {

std::atomic<uint64_t> next_dev{0x6d656d0000000000};  // "mem": no real device number.

// A file of a MemDisk read as through an open fd: its bytes now while it is there (cut short
// under a reader: kBackupDamaged), the ones it had when opened once it is gone.
class MemFile final : public BackupDataFile {
 public:
  MemFile(MemProcess p, uint64_t ino, std::shared_ptr<const std::string> data, std::string name)
      : p_(std::move(p)),
        ino_(ino),
        opened_(std::move(data)),
        name_(std::move(name)),
        size_(opened_->size()) {}

  uint64_t size() const override { return size_; }
  const std::string& display_name() const override { return name_; }

 protected:
  Status ReadExact(uint64_t offset, std::span<char> dst) const override {
    std::shared_ptr<const std::string> now;
    {
      std::lock_guard<std::mutex> lock(p_.disk->mu);
      RETURN_IF_ERROR(p_.disk->Check(p_.session));
      const MemTree& t = p_.disk->tree;
      now = t.Exists(ino_) && !t.node(ino_).folder ? t.node(ino_).data : opened_;
    }
    const size_t n = dst.size();
    if (now->size() < offset + n) {
      return Status::BackupDamaged("data file " + name_ + " was cut short from " +
                                   std::to_string(size_) + " to " + std::to_string(now->size()) +
                                   " bytes while in use");
    }
    std::memcpy(dst.data(), now->data() + offset, n);
    return Status::OK();
  }

 private:
  const MemProcess p_;
  const uint64_t ino_;
  const std::shared_ptr<const std::string> opened_;
  const std::string name_;
  const uint64_t size_;
};

// kInsecurePath unless `rel` names something beneath a folder ("a/b", no "..", not absolute).
Status CheckRelative(const std::string& rel, const std::string& display) {
  bool climbs = rel.empty() || rel.front() == '/';
  for (size_t at = 0; !climbs && at <= rel.size();) {
    const size_t slash = std::min(rel.find('/', at), rel.size());
    climbs = rel.compare(at, slash - at, "..") == 0;
    at = slash + 1;
  }
  if (!climbs) return Status::OK();
  return Status::InsecurePath("data file " + display + " names a place outside its backup");
}

}  // namespace

StatusOr<const MemFolder*> MemFolder::Of(const BackupFolder& folder, uint64_t dev) {
  ASSIGN_OR_RETURN(const MemFolder* f, FolderAs<MemFolder>(folder));
  if (f->identity().dev == dev) return f;
  return Status::InvalidArgument("folder " + folder.path() + " is not of this storage");
}

std::shared_ptr<MemStorage> MemStorage::Create() {
  auto disk = std::make_shared<MemDisk>(next_dev.fetch_add(1));
  const uint64_t session = disk->next_session++;
  return std::make_shared<MemStorage>(MemProcess{std::move(disk), session});
}

std::shared_ptr<MemStorage> MemStorage::NewProcess() const {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  return std::make_shared<MemStorage>(MemProcess{p_.disk, p_.disk->next_session++});
}

std::string MemStorage::Normal(const std::string& location) const { return AbsolutePath(location); }

StatusOr<uint64_t> MemStorage::FolderIno(const BackupFolder& folder) const {
  RETURN_IF_ERROR(MemFolder::Of(folder, p_.disk->dev).status());
  const MemTree& t = p_.disk->tree;
  const uint64_t ino = t.Find(folder.path());
  if (ino != 0 && ino == folder.identity().ino && t.node(ino).folder) return ino;
  return Status::BackupDamaged("Backup " + folder.path() +
                               " was replaced or removed since it was opened");
}

StatusOr<std::shared_ptr<const BackupFolder>> MemStorage::OpenFolder(
    const std::string& location) const {
  const std::string path = Normal(location);
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  RETURN_IF_ERROR(p_.disk->Check(p_.session));
  const uint64_t ino = p_.disk->tree.Find(path);
  if (ino == 0 || !p_.disk->tree.node(ino).folder) {
    return Status::BackupNotFound("Backup " + path + " not found (no such folder)");
  }
  return std::shared_ptr<const BackupFolder>(
      std::make_shared<const MemFolder>(path, FolderIdentity{p_.disk->dev, ino}));
}

StatusOr<ManifestSource> MemStorage::OpenManifest(const BackupFolder& folder) const {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  RETURN_IF_ERROR(p_.disk->Check(p_.session));
  ASSIGN_OR_RETURN(const uint64_t dir, FolderIno(folder));
  const MemTree& t = p_.disk->tree;
  const uint64_t m = t.FindBeneath(dir, ".backup");
  if (m == 0) {
    const bool locked = t.FindBeneath(dir, ".lock") != 0;
    return Status::BackupNotFound("Backup " + folder.path() + " not found (no .backup manifest" +
                                  (locked ? "; its .lock shows a backup being written, or one "
                                            "whose writer died)"
                                          : ")"));
  }
  if (t.node(m).folder) {
    return Status::BackupNotFound("Backup " + folder.path() + ": .backup is not a regular file");
  }
  return ManifestSource{
      std::make_unique<MemFile>(p_, m, t.node(m).data, folder.path() + "/.backup"),
      p_.disk->Identity(m)};
}

StatusOr<std::optional<ManifestIdentity>> MemStorage::StatManifest(
    const std::string& location) const {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  RETURN_IF_ERROR(p_.disk->Check(p_.session));
  const uint64_t m = p_.disk->tree.Find(JoinMemPath(Normal(location), ".backup"));
  if (m == 0 || p_.disk->tree.node(m).folder) return std::optional<ManifestIdentity>();
  return std::optional(p_.disk->Identity(m));
}

StatusOr<bool> MemStorage::BeingRemoved(const std::string& location) const {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  RETURN_IF_ERROR(p_.disk->Check(p_.session));
  return p_.disk->tree.Find(RemovingMarker(Normal(location))) != 0;
}

StatusOr<std::shared_ptr<const BackupDataFile>> MemStorage::OpenDataFile(
    const std::shared_ptr<const BackupFolder>& folder, const std::string& relative,
    uint64_t /*declared_size: the file's own size is known*/) const {
  const std::string display = folder->path() + "/" + relative;
  RETURN_IF_ERROR(CheckRelative(relative, display));
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  RETURN_IF_ERROR(p_.disk->Check(p_.session));
  ASSIGN_OR_RETURN(const uint64_t dir, FolderIno(*folder));
  const MemTree& t = p_.disk->tree;
  const uint64_t f = t.FindBeneath(dir, relative);
  if (f == 0) return Status::BackupDamaged("cannot open data file " + display + ": not there");
  if (t.node(f).folder) {
    return Status::BackupDamaged("data file " + display + " is not a regular file");
  }
  return std::shared_ptr<const BackupDataFile>(
      std::make_shared<const MemFile>(p_, f, t.node(f).data, display));
}

StatusOr<SharedBytes> MemStorage::ReadIndex(const BackupFolder& folder) const {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  RETURN_IF_ERROR(p_.disk->Check(p_.session));
  ASSIGN_OR_RETURN(const uint64_t dir, FolderIno(folder));
  const MemTree& t = p_.disk->tree;
  const uint64_t f = t.FindBeneath(dir, kIndexFile);
  if (f == 0 || t.node(f).folder) {
    return Status::BackupNotFound("no index " + folder.path() + "/" + std::string(kIndexFile));
  }
  return SharedBytes::Copy(*t.node(f).data);
}

Status MemStorage::WriteIndex(const BackupFolder& folder, std::string_view bytes) const {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  RETURN_IF_ERROR(p_.disk->Check(p_.session));
  RETURN_IF_ERROR(FolderIno(folder).status());
  MemTree& t = p_.disk->tree;
  ASSIGN_OR_RETURN(const uint64_t dir, t.MakeFolders(JoinMemPath(folder.path(), kStitchDir)));
  ASSIGN_OR_RETURN(const uint64_t f, t.CreateFile(JoinMemPath(folder.path(), kIndexFile),
                                                  std::string(bytes), /*exclusive=*/false));
  t.Sync(f);  // As WriteFileAtomically: the file, then the folder naming it.
  t.Sync(dir);
  p_.disk->Changed();
  return Status::OK();
}

StatusOr<std::vector<StoreFolder>> MemStorage::ScanStore(const std::string& location) const {
  const std::string store = Normal(location);
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  RETURN_IF_ERROR(p_.disk->Check(p_.session));
  const MemTree& t = p_.disk->Listed();
  const uint64_t ino = t.Find(store);
  if (ino == 0 || !t.node(ino).folder) {
    return Status::BackupNotFound("store " + store + " not found");
  }
  std::vector<StoreFolder> out;  // By name: the children are.
  for (const auto& [name, child] : t.node(ino).children) {
    if (name.front() == '.' || !t.node(child).folder) continue;
    const uint64_t m = t.FindBeneath(child, ".backup");
    if (m == 0 || t.node(m).folder) continue;
    out.push_back({name, JoinMemPath(store, name), FolderIdentity{p_.disk->dev, child},
                   p_.disk->IdentityIn(t, m)});
  }
  return out;
}

std::string MemStorage::LocatorFor(const std::string& location) const {
  return FileLocator(Normal(location));
}

}  // namespace stitchfs::engine
