#include "engine/read/verify.h"

#include <map>
#include <memory>

namespace stitchfs::engine {
namespace {

constexpr size_t kBuffer = 1 << 20;

// Reads the whole file and returns its checksum with `alg`.
StatusOr<Checksum> HashFile(const RandomAccessFile& f, ChecksumAlgorithm alg, char* buf,
                            uint64_t* bytes) {
  Hasher h(alg);
  for (uint64_t off = 0; off < f.size();) {
    ASSIGN_OR_RETURN(size_t n, f.ReadAt(off, std::span<char>(buf, kBuffer)));
    if (n == 0) return Status::BackupDamaged("file ended early");
    h.Update(std::string_view(buf, n));
    off += n;
    *bytes += n;
  }
  return h.Digest();
}

Status CheckEntry(const ResolvedBackup& chain, size_t i, char* buf, uint64_t* bytes) {
  const Backup& top = chain.top();
  const FileEntry e = top.manifest().entry(i);
  ASSIGN_OR_RETURN(auto file, chain.OpenEntry(i));
  if (file->size() != e.size) {
    return Status::BackupDamaged(top.Prefix() + "entry \"" + std::string(e.name) + "\" reads " +
                                 std::to_string(file->size()) + " bytes, expected " +
                                 std::to_string(e.size));
  }
  ASSIGN_OR_RETURN(Checksum got, HashFile(*file, top.header().algorithm, buf, bytes));
  if (got != e.checksum) {
    return Status::BackupDamaged(top.Prefix() + "entry \"" + std::string(e.name) +
                                 "\": checksum mismatch: computed " + got.ToHex() +
                                 ", manifest says " + e.checksum.ToHex());
  }
  return Status::OK();
}

}  // namespace

VerifyResult VerifyBackup(const ResolvedBackup& chain, const ProgressFn& progress) {
  VerifyResult r;
  auto buf = std::make_unique<char[]>(kBuffer);
  const Manifest& m = chain.top().manifest();
  std::map<std::pair<uint64_t, Checksum>, Status> by_content;
  for (size_t i = 0; i < m.num_entries(); ++i) {
    const FileEntry e = m.entry(i);
    ++r.files_checked;
    if (e.size > 0) {
      auto key = std::make_pair(e.size, e.checksum);
      auto it = by_content.find(key);
      if (it == by_content.end()) {
        it = by_content.emplace(key, CheckEntry(chain, i, buf.get(), &r.bytes_read)).first;
      }
      if (!it->second.ok()) r.problems.push_back({std::string(e.name), it->second});
    }
    if (progress) progress(r.files_checked, r.bytes_read);
  }
  return r;
}

}  // namespace stitchfs::engine
