// StoreMoves of a MemStorage store: the local backend's (local_store_moves.cc) on the MemDisk:
// a backup marked by a file beside it (RemovingMarker), taken out by a rename to
// `.<name>.stitch-removed`, a flattened copy written into
// `.<name>.stitch-flatten` and swapped in with one exchange, the store's folder synced after.
#include <cerrno>
#include <functional>
#include <unordered_set>

#include "engine/backends/mem/mem_storage.h"
#include "engine/storage/backup.h"
#include "engine/storage/store_moves.h"

namespace stitchfs::engine {
namespace {

constexpr const char* kMemFlatten = ".stitch-flatten";
constexpr const char* kMemRemoved = ".stitch-removed";    // Taken out after the proof.
constexpr const char* kMemRemoving = ".stitch-removing";  // RemovingMarker.

// A work folder of prune beside `path`: ".<name><suffix>", never listed as a backup.
std::string MemWorkPath(const std::string& path, const char* suffix) {
  const size_t slash = path.rfind('/');
  return JoinMemPath(slash == 0 ? "/" : path.substr(0, slash),
                     "." + path.substr(slash + 1) + suffix);
}

class MemStoreMoves final : public StoreMoves {
 public:
  MemStoreMoves(const MemStorage& storage, std::string store)
      : storage_(storage), p_(storage.process()), store_(std::move(store)) {}
  ~MemStoreMoves() override {
    std::lock_guard<std::mutex> lock(p_.disk->mu);
    auto it = p_.disk->prune_locks.find(store_);
    if (it != p_.disk->prune_locks.end() && it->second.second == this) {
      p_.disk->prune_locks.erase(it);
    }
  }

  Status Lock() override {
    std::lock_guard<std::mutex> lock(p_.disk->mu);
    RETURN_IF_ERROR(p_.disk->Check(p_.session));
    const uint64_t ino = p_.disk->tree.Find(store_);
    if (ino == 0 || !p_.disk->tree.node(ino).folder) {
      return Status::IOError("open " + store_, ENOENT);
    }
    auto it = p_.disk->prune_locks.find(store_);
    if (it != p_.disk->prune_locks.end() && p_.disk->Alive(it->second.first)) {
      return Status::IOError("another stitch prune is running on " + store_, EBUSY);
    }
    p_.disk->prune_locks[store_] = {p_.session, this};
    return Status::OK();
  }

  StatusOr<std::vector<StoreWriter>> Writers(const std::set<std::string>& backups) override {
    std::lock_guard<std::mutex> lock(p_.disk->mu);
    RETURN_IF_ERROR(p_.disk->Check(p_.session));
    const MemTree& t = p_.disk->Listed();
    const uint64_t ino = t.Find(store_);
    if (ino == 0 || !t.node(ino).folder) return Status::IOError("read " + store_, ENOENT);
    std::vector<StoreWriter> out;
    for (const auto& [name, child] : t.node(ino).children) {
      if (name.front() == '.' || backups.count(name) || !t.node(child).folder) continue;
      const uint64_t lock_ino = t.FindBeneath(child, ".lock");
      if (t.FindBeneath(child, ".backup") != 0 || lock_ino == 0 || t.node(lock_ino).folder ||
          !p_.disk->LockHeld(lock_ino)) {
        continue;
      }
      out.push_back({JoinMemPath(store_, name), ParseLockText(*t.node(lock_ino).data)});
    }
    return out;
  }

  std::vector<std::string> RemoveLeftovers() override {
    std::lock_guard<std::mutex> lock(p_.disk->mu);
    const uint64_t ino = p_.disk->tree.Find(store_);
    if (!p_.disk->Alive(p_.session) || ino == 0 || !p_.disk->tree.node(ino).folder) return {};
    std::vector<std::string> gone;
    for (const auto& [n, child] : p_.disk->tree.node(ino).children) {
      if (n.front() == '.' &&
          (n.ends_with(kMemRemoved) || n.ends_with(kMemFlatten) || n.ends_with(kMemRemoving))) {
        gone.push_back(n);  // (A mark: its backup, if still there, was never taken out.)
      }
    }
    for (const std::string& n : gone) p_.disk->tree.RemoveAll(JoinMemPath(store_, n));
    p_.disk->Changed();
    return {};
  }

  std::vector<uint64_t> BytesFreed(const std::vector<std::string>& paths) override {
    std::lock_guard<std::mutex> lock(p_.disk->mu);
    std::vector<uint64_t> out;
    for (const std::string& p : paths) {
      out.push_back(p_.disk->tree.BytesBeneath(p_.disk->tree.Find(p)));
    }
    return out;
  }

  std::optional<std::string> NestedBackup(const std::string& path, const Manifest& m) override {
    std::unordered_set<std::string_view> data;
    for (size_t i = 0; i < m.num_entries(); ++i) {
      if (m.entry(i).has_data_file()) data.insert(m.entry(i).data_file);
    }
    std::lock_guard<std::mutex> lock(p_.disk->mu);
    const uint64_t ino = p_.disk->tree.Find(path);
    if (ino == 0) return std::nullopt;
    return Nested(ino, path, "", data);
  }

  StatusOr<std::unique_ptr<StoreReplacement>> StartReplace(const std::string& path,
                                                           const std::string& uuid) override;

  Status SetAside(const std::string& path) override {
    std::lock_guard<std::mutex> lock(p_.disk->mu);
    RETURN_IF_ERROR(p_.disk->Check(p_.session));
    RETURN_IF_ERROR(p_.disk->tree.CreateFile(RemovingMarker(path), "", false).status());
    p_.disk->Changed();
    return Status::OK();
  }

  void PutBack(const std::string& path) override {
    std::lock_guard<std::mutex> lock(p_.disk->mu);
    if (!p_.disk->Alive(p_.session)) return;
    p_.disk->tree.Remove(RemovingMarker(path)).IgnoreError();
    p_.disk->Changed();
  }

  // As locally: taken out by a rename made durable, then deleted, the mark last.
  Status Remove(const std::string& path) override {
    std::lock_guard<std::mutex> lock(p_.disk->mu);
    RETURN_IF_ERROR(p_.disk->Check(p_.session));
    const std::string gone = MemWorkPath(path, kMemRemoved);
    RETURN_IF_ERROR(p_.disk->tree.Rename(path, gone));
    p_.disk->tree.Sync(p_.disk->tree.Find(store_));
    p_.disk->tree.RemoveAll(gone);
    p_.disk->tree.Remove(RemovingMarker(path)).IgnoreError();
    p_.disk->Changed();
    return Status::OK();
  }

  Status Sync() override {
    std::lock_guard<std::mutex> lock(p_.disk->mu);
    RETURN_IF_ERROR(p_.disk->Check(p_.session));
    p_.disk->tree.Sync(p_.disk->tree.Find(store_));
    return Status::OK();
  }

 private:
  // The folder of the first `.backup` or `.lock` below folder `ino` (at `path`; `rel` beneath
  // the backup) that is not one of the backup's `data` files. REQUIRES: mu held.
  std::optional<std::string> Nested(uint64_t ino, const std::string& path, const std::string& rel,
                                    const std::unordered_set<std::string_view>& data) const {
    const MemTree& t = p_.disk->tree;
    for (const auto& [name, child] : t.node(ino).children) {
      const std::string r = rel.empty() ? name : rel + "/" + name;
      if (t.node(child).folder) {
        if (auto found = Nested(child, JoinMemPath(path, name), r, data)) return found;
      } else if (!rel.empty() && (name == ".backup" || name == ".lock") && !data.count(r)) {
        return path;
      }
    }
    return std::nullopt;
  }

  const MemStorage& storage_;
  const MemProcess p_;
  const std::string store_;
};

// Finishes the copy `w` in `tmp` of `storage`, reads its manifest back, swaps it with the
// backup at `path` and syncs the store's folder (`store`); returns the copy's bytes.
StatusOr<uint64_t> MemSwapIn(const MemStorage& storage, BackupWriter& w, std::string_view manifest,
                             const std::string& tmp, const std::string& path,
                             const std::string& store) {
  RETURN_IF_ERROR(w.Finish(manifest));
  const MemProcess& p = storage.process();
  Status back = CheckManifestReadsBack(storage, tmp, manifest);
  std::lock_guard<std::mutex> lock(p.disk->mu);
  RETURN_IF_ERROR(p.disk->Check(p.session));
  MemTree& t = p.disk->tree;
  if (!back.ok()) {
    t.RemoveAll(tmp);  // Never a kept backup; a later prune removes it otherwise.
    p.disk->Changed();
    return back.WithSuffix("; the backup " + path + " was not replaced");
  }
  const uint64_t written = t.BytesBeneath(t.Find(tmp));
  RETURN_IF_ERROR(t.Exchange(tmp, path));
  t.Sync(t.Find(store));
  t.RemoveAll(tmp);  // Now the old copy.
  p.disk->Changed();
  return written;
}

StatusOr<std::unique_ptr<StoreReplacement>> MemStoreMoves::StartReplace(const std::string& path,
                                                                        const std::string& uuid) {
  const std::string tmp = MemWorkPath(path, kMemFlatten);
  {
    std::lock_guard<std::mutex> lock(p_.disk->mu);
    RETURN_IF_ERROR(p_.disk->Check(p_.session));
    p_.disk->tree.RemoveAll(tmp);  // Left by an interrupted run: never a kept backup.
    p_.disk->Changed();
  }
  std::string notice;
  ASSIGN_OR_RETURN(auto copy, storage_.StartBackup(tmp, WriterIntent{uuid, "", ""}, &notice));
  return std::unique_ptr<StoreReplacement>(new CopyReplacement(
      std::move(copy), "",
      [&storage = storage_, tmp, path, store = store_](BackupWriter& w, std::string_view m) {
        return MemSwapIn(storage, w, m, tmp, path, store);
      }));
}

}  // namespace

StatusOr<std::unique_ptr<StoreMoves>> MemStorage::MovesFor(const std::string& location) const {
  return std::unique_ptr<StoreMoves>(new MemStoreMoves(*this, Normal(location)));
}

}  // namespace stitchfs::engine
