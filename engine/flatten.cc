#include "engine/flatten.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <memory>

#include "engine/atomic_file.h"
#include "engine/backup_lock.h"
#include "engine/manifest_writer.h"
#include "engine/posix_file.h"
#include "engine/restore.h"
#include "engine/restore_meta.h"
#include "engine/uuid.h"

namespace stitchfs::engine {
namespace {

// Writes the whole content of entry `idx` to `dest`/`name` (a new data file).
Status WriteDataFile(const ResolvedBackup& chain, size_t idx, int dest_fd, const std::string& name,
                     char* buf) {
  auto [dir, leaf] = SplitParent(name);
  ASSIGN_OR_RETURN(UniqueFd parent, MakeDirsBeneath(dest_fd, dir));
  UniqueFd out(::openat(parent.get(), leaf.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!out) return Status::IOError("create data file " + name, errno);
  RETURN_IF_ERROR(CopyEntry(chain, idx, out.get(), buf, name));
  return out.Close(name.c_str());
}

}  // namespace

StatusOr<FlattenResult> FlattenBackup(const ResolvedBackup& chain, const std::string& dest,
                                      bool keep_uuid) {
  const Manifest& m = chain.top().manifest();
  FlattenResult r;
  r.uuid = keep_uuid ? m.header().uuid : NewUuid();
  std::string notice;
  ASSIGN_OR_RETURN(auto lock, BackupLock::Acquire(dest, r.uuid, &notice));
  auto buf = std::make_unique<char[]>(kCopyBuffer);
  std::vector<FileEntry> entries;
  std::map<std::pair<uint64_t, Checksum>, std::string> stored;  // content -> data file
  for (uint32_t i : m.by_name()) {
    FileEntry e = m.entry(i);
    e.base_size = 0;
    e.base_checksum = Checksum{};
    e.data_file = e.name;
    ++r.files;
    if (e.size > 0) {
      auto [it, first] = stored.emplace(std::make_pair(e.size, e.checksum), std::string(e.name));
      if (first) {
        RETURN_IF_ERROR(WriteDataFile(chain, i, lock->dir_fd(), it->second, buf.get()));
        r.bytes_stored += e.size;
      }
      e.data_file = it->second;
    }
    entries.push_back(e);
  }
  ManifestHeader h = m.header();
  h.uuid = r.uuid;
  h.base_backup.clear();
  h.base_backup_uuid.reset();
  h.deduplicate_files = true;
  std::vector<Node> nodes;
  for (size_t i = 0; i < m.num_nodes(); ++i) nodes.push_back(m.node(i));
  std::string xml;
  RETURN_IF_ERROR(RenderManifest(h, entries, &xml, nodes));
  if (::syncfs(lock->dir_fd()) != 0) return Status::IOError("syncfs " + dest, errno);
  RETURN_IF_ERROR(WriteFileAtomically(dest, ".backup", xml));
  RETURN_IF_ERROR(lock->Commit());
  return r;
}

}  // namespace stitchfs::engine
