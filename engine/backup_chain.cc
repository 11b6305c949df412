#include "engine/backup_chain.h"

#include <algorithm>
#include <cerrno>

#include "engine/chain_walk.h"
#include "engine/concat_file.h"

namespace stitchfs::engine {

StatusOr<std::shared_ptr<const BackupChain>> BackupChain::Open(const std::string& dir,
                                                               const ChainOptions& options) {
  std::vector<std::shared_ptr<const Backup>> chain;
  ASSIGN_OR_RETURN(auto top, OpenBackup(dir, options));
  chain.push_back(std::move(top));
  ChainWalk walk(options, *chain.front());
  for (;;) {
    ASSIGN_OR_RETURN(auto base, walk.Next(*chain.back(), chain.size() - 1));
    if (!base) break;
    chain.push_back(std::move(base));
  }
  auto fds = options.fd_cache;
  if (!fds) {
    fds = std::make_shared<FdCache>(options.max_open_files ? options.max_open_files
                                                           : DefaultFdCapacity());
  }
  return std::shared_ptr<const BackupChain>(new BackupChain(std::move(chain), std::move(fds)));
}

StatusOr<std::vector<Extent>> BackupChain::Resolve(size_t level, size_t entry) const {
  std::vector<Extent> out;
  size_t idx = entry;
  for (;;) {
    const Manifest& m = backup(level).manifest();
    const FileEntry e = m.entry(idx);
    if (e.size == 0) break;
    // Readers use the first entry of a content key for its data and base coverage.
    const size_t rep_idx = *m.FindByContent(e.size, e.checksum);
    const FileEntry rep = m.entry(rep_idx);
    if (rep.has_data_file()) {
      out.push_back(
          {static_cast<uint32_t>(level), static_cast<uint32_t>(rep_idx), rep.stored_size()});
    }
    if (!rep.uses_base()) break;
    if (level + 1 >= depth()) {
      return Status::NoBaseBackup(backup(level).Prefix() + "entry \"" + std::string(rep.name) +
                                  "\" needs a base backup that was not opened");
    }
    auto base_idx = backup(level + 1).manifest().FindByContent(rep.base_size, rep.base_checksum);
    if (!base_idx) {
      return Status::WrongBaseBackup(
          backup(level).Prefix() + "Entry " + ContentId(rep.base_checksum, rep.base_size) +
          " is marked to be read from a base backup, but doesn't exist there");
    }
    idx = *base_idx;
    ++level;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

StatusOr<std::shared_ptr<const DataFile>> BackupChain::OpenDataFile(const Extent& x) const {
  const Backup& b = backup(x.level);
  const FileEntry e = b.manifest().entry(x.entry);
  auto key = std::make_pair(x.level, std::string(e.data_file));
  std::lock_guard<std::mutex> lock(mu_);
  if (auto cached = files_[key].lock()) return cached;
  auto file = DataFile::Open(fd_cache_, backups_[x.level]->folder(), key.second);
  if (!file.ok()) {
    return file.status().WithPrefix(b.Prefix() + "entry \"" + std::string(e.name) + "\": ");
  }
  files_[key] = *file;
  if (++inserts_ % 1024 == 0) {  // Drop entries of files no reader holds any more.
    std::erase_if(files_, [](const auto& kv) { return kv.second.expired(); });
  }
  return file;
}

StatusOr<std::shared_ptr<const RandomAccessFile>> BackupChain::OpenEntry(size_t entry) const {
  return OpenEntryAt(0, entry);
}

StatusOr<std::shared_ptr<const RandomAccessFile>> BackupChain::OpenStoredTail(size_t entry) const {
  ASSIGN_OR_RETURN(std::vector<Extent> extents, Resolve(0, entry));
  std::vector<Segment> segments;
  if (!extents.empty() && extents.back().level == 0) {
    ASSIGN_OR_RETURN(auto file, OpenDataFile(extents.back()));
    RETURN_IF_ERROR(file->CheckDeclaredSize(extents.back().length)
                        .WithPrefix(top().Prefix() + "entry \"" +
                                    std::string(top().manifest().entry(entry).name) + "\": "));
    segments.push_back({std::move(file), 0, extents.back().length});
  }
  return std::shared_ptr<const RandomAccessFile>(std::make_shared<ConcatFile>(std::move(segments)));
}

StatusOr<std::shared_ptr<const RandomAccessFile>> BackupChain::OpenEntryAt(size_t level,
                                                                           size_t entry) const {
  ASSIGN_OR_RETURN(std::vector<Extent> extents, Resolve(level, entry));
  std::vector<Segment> segments;
  segments.reserve(extents.size());
  for (const Extent& x : extents) {
    ASSIGN_OR_RETURN(auto file, OpenDataFile(x));
    const Backup& b = backup(x.level);
    RETURN_IF_ERROR(file->CheckDeclaredSize(x.length).WithPrefix(
        b.Prefix() + "entry \"" + std::string(b.manifest().entry(x.entry).name) + "\": "));
    segments.push_back({std::move(file), 0, x.length});
  }
  return Concatenate(std::move(segments));
}

}  // namespace stitchfs::engine
