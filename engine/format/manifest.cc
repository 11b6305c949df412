#include "engine/format/manifest.h"

#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>

namespace stitchfs::engine {

bool IsCanonicalUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

Status CheckHeader(ManifestHeader* h) {
  auto bad = [](const char* tag, std::string_view value, const std::string& why) {
    return Status::BackupDamaged(std::string("<") + tag + "> value \"" +
                                 EscapeForMessage(value.substr(0, 100)) + "\" " + why);
  };
  if (!IsCanonicalUuid(h->uuid)) return bad("uuid", h->uuid, "is not a UUID");
  if (h->base_backup_uuid && !h->base_backup_uuid->empty() &&
      !IsCanonicalUuid(*h->base_backup_uuid)) {
    return bad("base_backup_uuid", *h->base_backup_uuid, "is not a UUID");
  }
  auto t = ParseBackupTime(h->timestamp);
  if (!t.ok()) {
    return bad("timestamp", h->timestamp,
               ParseCivil(h->timestamp) ? "is outside 1970-01-01 00:00:00 .. 9999-12-31 23:59:59"
                                        : "is not a date-time YYYY-MM-DD hh:mm:ss");
  }
  h->time = *t;
  return Status::OK();
}

Status CheckMeta(const PosixMeta& m) {
  if (m.mode > 07777) return Status::BackupDamaged("mode beyond 07777 in <stitchfs_meta>");
  for (const FileTime* t : {&m.mtime, &m.ctime}) {
    if (t->nsec < 0 || t->nsec > 999999999) {
      return Status::BackupDamaged("nanoseconds out of range in <stitchfs_meta>");
    }
  }
  return Status::OK();
}

Status CheckEntry(const FileEntry& e) {
  if (e.size > kMaxFileSize) return Status::BackupDamaged("size larger than a file can be");
  if (e.base_size > e.size) {
    return Status::BackupDamaged("base size must not be greater than the size");
  }
  if (e.size == 0 && (e.checksum != Checksum{} || e.encrypted_by_disk)) {
    return Status::BackupDamaged("an empty file with a checksum or encryption");
  }
  if (e.base_size == e.size && e.base_checksum != e.checksum) {
    return Status::BackupDamaged("a file taken whole from the base with two checksums");
  }
  if (!e.has_data_file() && !e.data_file.empty() && e.data_file != e.name) {
    return Status::BackupDamaged("a data_file for a file that stores no bytes");
  }
  return e.meta ? CheckMeta(*e.meta) : Status::OK();
}

FileEntry Manifest::entry(size_t i) const {
  const ManifestTables::Record& r = t_.entries[i];
  FileEntry e;
  e.name = {r.name, r.name_len};
  e.size = r.size;
  e.base_size = r.base_size;
  e.checksum = r.checksum;
  e.base_checksum = r.base_checksum;
  e.data_file = r.data_file ? std::string_view(r.data_file, r.data_file_len) : e.name;
  e.encrypted_by_disk = (r.flags & ManifestTables::kEncrypted) != 0;
  if (r.meta_index != ManifestTables::kNoMeta) e.meta = t_.meta[r.meta_index];
  return e;
}

Node Manifest::node(size_t i) const {
  const ManifestTables::NodeRecord& r = t_.nodes[i];
  return Node{r.type, {r.name, r.name_len}, {r.target, r.target_len}, r.meta};
}

std::optional<size_t> Manifest::FindByName(std::string_view name) const {
  auto it = std::lower_bound(t_.by_name.begin(), t_.by_name.end(), name,
                             [this](uint32_t i, std::string_view n) { return t_.name(i) < n; });
  if (it == t_.by_name.end() || t_.name(*it) != name) return std::nullopt;
  return *it;
}

std::optional<size_t> Manifest::FindByContent(uint64_t size, const Checksum& checksum) const {
  auto key = std::tie(size, checksum);
  auto it = std::lower_bound(t_.by_content.begin(), t_.by_content.end(), key,
                             [this](uint32_t i, const auto& k) {
                               return std::tie(t_.entries[i].size, t_.entries[i].checksum) < k;
                             });
  if (it == t_.by_content.end()) return std::nullopt;
  const ManifestTables::Record& r = t_.entries[*it];
  if (r.size != size || r.checksum != checksum) return std::nullopt;
  return *it;
}

size_t Manifest::ContentRep(size_t i) const {
  if (IsContentRep(i)) return i;
  const ManifestTables::Record& r = t_.entries[i];
  return r.size == 0 ? i : *FindByContent(r.size, r.checksum);
}

uint64_t Manifest::ContentSignature() const {
  XXH3_state_t* st = XXH3_createState();
  if (st == nullptr) return 0;
  XXH3_64bits_reset(st);
  auto put = [st](const void* p, size_t n) { XXH3_64bits_update(st, p, n); };
  auto put_text = [&put](std::string_view s) {
    const uint64_t n = s.size();
    put(&n, sizeof n);
    put(s.data(), s.size());
  };
  auto put_meta = [&put](const std::optional<PosixMeta>& m) {
    const PosixMeta none{};
    put(m ? &*m : &none, sizeof(PosixMeta));
  };
  for (uint32_t i : t_.by_name) {
    const FileEntry e = entry(i);
    put_text(e.name);
    put(&e.size, sizeof e.size);
    put(&e.checksum, sizeof e.checksum);
    put_meta(e.meta);
  }
  for (size_t i = 0; i < t_.nodes.size(); ++i) {
    const Node n = node(i);
    const uint32_t type = static_cast<uint32_t>(n.type);
    put(&type, sizeof type);
    put_text(n.name);
    put_text(n.target);
    put_meta(n.meta);
  }
  const uint64_t sig = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return sig == 0 ? 1 : sig;
}

size_t Manifest::MemoryUsage() const {
  return t_.entries.size() * sizeof(ManifestTables::Record) + t_.arena_bytes +
         (t_.by_name.capacity() + t_.by_content.capacity()) * sizeof(uint32_t) +
         t_.meta.capacity() * sizeof(PosixMeta) +
         t_.nodes.capacity() * sizeof(ManifestTables::NodeRecord);
}

namespace {
constexpr size_t kArenaBlock = 1 << 20;
}

const char* ManifestBuilder::Intern(std::string_view s) {
  if (s.empty()) return "";  // (memcpy must not get the null data() of an empty view)
  if (s.size() > block_left_) {
    size_t n = std::max(kArenaBlock, s.size());
    t_.arena_blocks.push_back(std::unique_ptr<char[]>(new char[n]));  // Uninitialized.
    t_.arena_bytes += n;
    block_ = t_.arena_blocks.back().get();
    block_left_ = n;
  }
  char* out = block_;
  std::memcpy(out, s.data(), s.size());
  block_ += s.size();
  block_left_ -= s.size();
  return out;
}

Status ManifestBuilder::Add(const FileEntry& e) {
  constexpr uint64_t kMax = std::numeric_limits<uint32_t>::max();
  if (t_.entries.size() >= kMax || e.name.size() > kMax || e.data_file.size() > kMax) {
    return Status::BackupDamaged("too many entries or too long a name");
  }
  if (Status s = CheckEntry(e); !s.ok()) {
    return s.WithPrefix("entry \"" + std::string(e.name) + "\": ");
  }
  ManifestTables::Record r{};
  r.size = e.size;
  r.base_size = e.base_size;
  r.checksum = e.checksum;
  r.base_checksum = e.base_checksum;
  r.name = Intern(e.name);
  r.name_len = static_cast<uint32_t>(e.name.size());
  if (!e.data_file.empty() && e.data_file != e.name) {
    r.data_file = Intern(e.data_file);
    r.data_file_len = static_cast<uint32_t>(e.data_file.size());
  }
  r.flags = e.encrypted_by_disk ? ManifestTables::kEncrypted : 0;
  r.meta_index = ManifestTables::kNoMeta;
  if (e.meta) {
    r.meta_index = static_cast<uint32_t>(t_.meta.size());
    t_.meta.push_back(*e.meta);
  }
  t_.entries.push_back(r);
  return Status::OK();
}

void ManifestBuilder::AddNode(const Node& n) {
  ManifestTables::NodeRecord r{Intern(n.name),
                               Intern(n.target),
                               static_cast<uint32_t>(n.name.size()),
                               static_cast<uint32_t>(n.target.size()),
                               n.type,
                               n.meta};
  t_.nodes.push_back(r);
}

std::unique_ptr<const Manifest> ManifestBuilder::Finish() {
  ManifestTables& t = t_;
  const auto n = static_cast<uint32_t>(t.entries.size());
  t.by_name.resize(n);
  for (uint32_t i = 0; i < n; ++i) t.by_name[i] = i;
  auto by_name = [&t](uint32_t a, uint32_t b) { return t.name(a) < t.name(b); };
  // ClickHouse and stitchfs write entries sorted by name; only sort what is not.
  if (!std::is_sorted(t.by_name.begin(), t.by_name.end(), by_name)) {
    std::stable_sort(t.by_name.begin(), t.by_name.end(), by_name);
  }
  auto same_name = [&t](uint32_t a, uint32_t b) { return t.name(a) == t.name(b); };
  t.by_name.erase(std::unique(t.by_name.begin(), t.by_name.end(), same_name), t.by_name.end());
  t.by_name.shrink_to_fit();

  t.by_content.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (t.entries[i].size > 0) t.by_content.push_back(i);
  }
  std::sort(t.by_content.begin(), t.by_content.end(), [&t](uint32_t a, uint32_t b) {
    const auto& x = t.entries[a];
    const auto& y = t.entries[b];
    return std::tie(x.size, x.checksum, a) < std::tie(y.size, y.checksum, b);
  });
  for (size_t k = 0; k < t.by_content.size(); ++k) {  // The first of each run is the rep.
    ManifestTables::Record& r = t.entries[t.by_content[k]];
    const ManifestTables::Record* prev = k ? &t.entries[t.by_content[k - 1]] : nullptr;
    if (!prev || prev->size != r.size || prev->checksum != r.checksum) {
      r.flags |= ManifestTables::kRep;
    }
  }
  block_ = nullptr;
  block_left_ = 0;
  return std::make_unique<const Manifest>(std::exchange(t_, ManifestTables()));
}

}  // namespace stitchfs::engine
