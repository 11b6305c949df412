// MemStorage's controls for tests: processes killed, power lost, listings lagging, and the
// disk read and changed directly.
#include <cerrno>

#include "engine/backends/mem/mem_storage.h"

namespace stitchfs::engine {

std::shared_ptr<MemStorage> MemStorage::CopyDisk() const {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  auto copy = std::make_shared<MemDisk>(p_.disk->dev);
  copy->tree = p_.disk->tree;
  copy->first_alive = p_.disk->next_session;
  copy->next_session = copy->first_alive + 1;
  return std::make_shared<MemStorage>(MemProcess{std::move(copy), p_.disk->next_session});
}

void MemStorage::Kill() const {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  p_.disk->killed.insert(p_.session);
}

void MemStorage::LosePower() const {
  MemDisk& d = *p_.disk;
  std::lock_guard<std::mutex> lock(d.mu);
  d.first_alive = d.next_session;
  d.tree.LoseUnsynced();
  d.writer_locks.clear();
  d.prune_locks.clear();
  d.history.clear();
  d.Changed();
}

bool MemStorage::alive() const {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  return p_.disk->Alive(p_.session);
}

void MemStorage::CorruptNextManifest(const std::string& location) const {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  p_.disk->corrupt_manifests.insert(Normal(location));
}

void MemStorage::SetListingLag(size_t changes) const {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  p_.disk->listing_lag = changes;
  p_.disk->history.clear();
  p_.disk->Changed();
}

std::optional<std::string> MemStorage::Get(const std::string& path) const {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  const MemTree& t = p_.disk->tree;
  const uint64_t ino = t.Find(Normal(path));
  if (ino == 0 || t.node(ino).folder) return std::nullopt;
  return *t.node(ino).data;
}

std::vector<std::string> MemStorage::List(const std::string& path) const {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  const MemTree& t = p_.disk->tree;
  const uint64_t ino = t.Find(Normal(path));
  std::vector<std::string> out;
  if (ino == 0 || !t.node(ino).folder) return out;
  for (const auto& [name, child] : t.node(ino).children) out.push_back(name);
  return out;
}

Status MemStorage::Put(const std::string& path, std::string data) const {
  const std::string p = Normal(path);
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  MemTree& t = p_.disk->tree;
  const size_t slash = p.rfind('/');
  RETURN_IF_ERROR(t.MakeFolders(p.substr(0, slash)).status());
  RETURN_IF_ERROR(t.CreateFile(p, std::move(data), /*exclusive=*/false).status());
  for (size_t at = 0; at != std::string::npos; at = p.find('/', at + 1)) {
    t.Sync(t.Find(at == 0 ? "/" : p.substr(0, at)));  // Each folder down to the file,
  }
  t.Sync(t.Find(p));  // and the file.
  p_.disk->Changed();
  return Status::OK();
}

bool MemStorage::RemoveAll(const std::string& path) const {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  const bool removed = p_.disk->tree.RemoveAll(Normal(path));
  p_.disk->Changed();
  return removed;
}

Status MemStorage::Truncate(const std::string& path, uint64_t size) const {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  MemTree& t = p_.disk->tree;
  const uint64_t ino = t.Find(Normal(path));
  if (ino == 0 || t.node(ino).folder) return Status::IOError("truncate " + path, ENOENT);
  const std::string& now = *t.node(ino).data;
  t.SetData(ino, std::make_shared<const std::string>(now.substr(0, size)));
  p_.disk->Changed();
  return Status::OK();
}

}  // namespace stitchfs::engine
