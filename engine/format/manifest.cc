#include "engine/format/manifest.h"

#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <tuple>

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
  const Record& r = entries_[i];
  FileEntry e;
  e.name = {r.name, r.name_len};
  e.size = r.size;
  e.base_size = r.base_size;
  e.checksum = r.checksum;
  e.base_checksum = r.base_checksum;
  e.data_file = r.data_file ? std::string_view(r.data_file, r.data_file_len) : e.name;
  e.encrypted_by_disk = (r.flags & kEncrypted) != 0;
  if (r.meta_index != kNoMeta) e.meta = meta_[r.meta_index];
  return e;
}

Node Manifest::node(size_t i) const {
  const NodeRecord& r = nodes_[i];
  return Node{r.type, {r.name, r.name_len}, {r.target, r.target_len}, r.meta};
}

std::optional<size_t> Manifest::FindByName(std::string_view name) const {
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [this](uint32_t i, std::string_view n) { return NameOf(i) < n; });
  if (it == by_name_.end() || NameOf(*it) != name) return std::nullopt;
  return *it;
}

std::optional<size_t> Manifest::FindByContent(uint64_t size, const Checksum& checksum) const {
  auto key = std::tie(size, checksum);
  auto it = std::lower_bound(by_content_.begin(), by_content_.end(), key,
                             [this](uint32_t i, const auto& k) {
                               return std::tie(entries_[i].size, entries_[i].checksum) < k;
                             });
  if (it == by_content_.end()) return std::nullopt;
  const Record& r = entries_[*it];
  if (r.size != size || r.checksum != checksum) return std::nullopt;
  return *it;
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
  for (uint32_t i : by_name_) {
    const FileEntry e = entry(i);
    put_text(e.name);
    put(&e.size, sizeof e.size);
    put(&e.checksum, sizeof e.checksum);
    put_meta(e.meta);
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
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
  return entries_.size() * sizeof(Record) + arena_bytes_ +
         (by_name_.capacity() + by_content_.capacity()) * sizeof(uint32_t) +
         meta_.capacity() * sizeof(PosixMeta) + nodes_.capacity() * sizeof(NodeRecord);
}

namespace {
constexpr size_t kArenaBlock = 1 << 20;
}

ManifestBuilder::ManifestBuilder() : m_(new Manifest) {}

const char* ManifestBuilder::Intern(std::string_view s) {
  if (s.empty()) return "";  // (memcpy must not get the null data() of an empty view)
  if (s.size() > block_left_) {
    size_t n = std::max(kArenaBlock, s.size());
    m_->arena_blocks_.push_back(std::unique_ptr<char[]>(new char[n]));  // Uninitialized.
    m_->arena_bytes_ += n;
    block_ = m_->arena_blocks_.back().get();
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
  if (m_->entries_.size() >= kMax || e.name.size() > kMax || e.data_file.size() > kMax) {
    return Status::BackupDamaged("too many entries or too long a name");
  }
  if (Status s = CheckEntry(e); !s.ok()) {
    return s.WithPrefix("entry \"" + std::string(e.name) + "\": ");
  }
  Manifest::Record r{};
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
  r.flags = e.encrypted_by_disk ? Manifest::kEncrypted : 0;
  r.meta_index = Manifest::kNoMeta;
  if (e.meta) {
    r.meta_index = static_cast<uint32_t>(m_->meta_.size());
    m_->meta_.push_back(*e.meta);
  }
  m_->entries_.push_back(r);
  return Status::OK();
}

void ManifestBuilder::AddNode(const Node& n) {
  Manifest::NodeRecord r{Intern(n.name),
                         Intern(n.target),
                         static_cast<uint32_t>(n.name.size()),
                         static_cast<uint32_t>(n.target.size()),
                         n.type,
                         n.meta};
  m_->nodes_.push_back(r);
}

std::unique_ptr<const Manifest> ManifestBuilder::Finish() {
  Manifest& m = *m_;
  const auto n = static_cast<uint32_t>(m.entries_.size());
  m.by_name_.resize(n);
  for (uint32_t i = 0; i < n; ++i) m.by_name_[i] = i;
  auto by_name = [&m](uint32_t a, uint32_t b) { return m.NameOf(a) < m.NameOf(b); };
  // ClickHouse and stitchfs write entries sorted by name; only sort what is not.
  if (!std::is_sorted(m.by_name_.begin(), m.by_name_.end(), by_name)) {
    std::stable_sort(m.by_name_.begin(), m.by_name_.end(), by_name);
  }
  auto same_name = [&m](uint32_t a, uint32_t b) { return m.NameOf(a) == m.NameOf(b); };
  m.by_name_.erase(std::unique(m.by_name_.begin(), m.by_name_.end(), same_name), m.by_name_.end());
  m.by_name_.shrink_to_fit();

  m.by_content_.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (m.entries_[i].size > 0) m.by_content_.push_back(i);
  }
  std::sort(m.by_content_.begin(), m.by_content_.end(), [&m](uint32_t a, uint32_t b) {
    const auto& x = m.entries_[a];
    const auto& y = m.entries_[b];
    return std::tie(x.size, x.checksum, a) < std::tie(y.size, y.checksum, b);
  });
  for (size_t k = 0; k < m.by_content_.size(); ++k) {  // The first of each run is the rep.
    Manifest::Record& r = m.entries_[m.by_content_[k]];
    const Manifest::Record* prev = k ? &m.entries_[m.by_content_[k - 1]] : nullptr;
    if (!prev || prev->size != r.size || prev->checksum != r.checksum) r.flags |= Manifest::kRep;
  }
  block_ = nullptr;
  block_left_ = 0;
  return std::unique_ptr<const Manifest>(std::exchange(m_, std::make_unique<Manifest>()));
}

}  // namespace stitchfs::engine
