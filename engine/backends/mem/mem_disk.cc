#include "engine/backends/mem/mem_disk.h"

#include <cerrno>

namespace stitchfs::engine {

Status MemDisk::Check(uint64_t session) const {
  if (Alive(session)) return Status::OK();
  return Status::IOError("the process died (a simulated crash)", ECANCELED);
}

bool MemDisk::LockHeld(uint64_t lock) const {
  auto it = writer_locks.find(lock);
  return it != writer_locks.end() && Alive(it->second) && tree.Exists(lock);
}

ManifestIdentity MemDisk::IdentityIn(const MemTree& t, uint64_t ino) const {
  const MemNode& n = t.node(ino);
  const FileTime when{static_cast<int64_t>(n.changed), 0};
  return {dev, ino, n.data ? n.data->size() : 0, when, when};
}

void MemDisk::Changed() {
  if (listing_lag == 0) {
    history.clear();
    return;
  }
  history.push_back(tree);
  while (history.size() > listing_lag + 1) history.pop_front();
}

}  // namespace stitchfs::engine
