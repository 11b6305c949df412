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
  // Every <object_key> file's data file name carries the bucket's URL (twice its length, in
  // hex): a long one would multiply a manifest's size in memory by as much.
  for (const auto& [tag, value] : {std::pair{"original_endpoint", &h->original_endpoint},
                                   std::pair{"original_namespace", &h->original_namespace}}) {
    if (value->size() > kMaxObjectUrlPart) {
      return bad(tag, *value, "is longer than " + std::to_string(kMaxObjectUrlPart) + " bytes");
    }
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
  e.name = t_.text(r.name, r.name_len);
  e.size = r.size;
  e.base_size = r.base_size;
  e.checksum = r.checksum;
  e.base_checksum = r.base_checksum;
  e.data_file =
      r.data_file == ManifestTables::kSameName ? e.name : t_.text(r.data_file, r.data_file_len);
  e.encrypted_by_disk = (r.flags & ManifestTables::kEncrypted) != 0;
  if (r.meta_index != ManifestTables::kNoMeta) e.meta = t_.meta[r.meta_index];
  return e;
}

Node Manifest::node(size_t i) const {
  const ManifestTables::NodeRecord& r = t_.nodes[i];
  return Node{static_cast<NodeType>(r.type), t_.text(r.name, r.name_len),
              t_.text(r.target, r.target_len), r.meta};
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
  return t_.entries.size_bytes() + t_.names.size() + t_.by_name.size_bytes() +
         t_.by_content.size_bytes() + t_.meta.size_bytes() + t_.nodes.size_bytes();
}

uint64_t ManifestBuilder::Intern(std::string_view s) {
  const uint64_t off = names_.size();
  names_.insert(names_.end(), s.begin(), s.end());
  return off;
}

Status ManifestBuilder::Add(const FileEntry& e) {
  constexpr uint64_t kMax = std::numeric_limits<uint32_t>::max();
  if (entries_.size() >= kMax || e.name.size() > kMax || e.data_file.size() > kMax) {
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
  r.data_file = ManifestTables::kSameName;
  if (!e.data_file.empty() && e.data_file != e.name) {
    r.data_file = Intern(e.data_file);
    r.data_file_len = static_cast<uint32_t>(e.data_file.size());
  }
  r.flags = e.encrypted_by_disk ? ManifestTables::kEncrypted : 0;
  r.meta_index = ManifestTables::kNoMeta;
  if (e.meta) {
    r.meta_index = static_cast<uint32_t>(meta_.size());
    meta_.push_back(*e.meta);
  }
  entries_.push_back(r);
  return Status::OK();
}

void ManifestBuilder::AddNode(const Node& n) {
  ManifestTables::NodeRecord r{};
  r.name = Intern(n.name);
  r.name_len = static_cast<uint32_t>(n.name.size());
  r.target = Intern(n.target);
  r.target_len = static_cast<uint32_t>(n.target.size());
  r.type = static_cast<uint32_t>(n.type);
  r.meta = n.meta;
  nodes_.push_back(r);
}

namespace {

// What a built manifest's tables view, kept together.
struct BuiltTables {
  std::vector<ManifestTables::Record> entries;
  std::vector<PosixMeta> meta;
  std::vector<ManifestTables::NodeRecord> nodes;
  std::vector<uint32_t> by_name, by_content;
  std::vector<char> names;
};

// Sorts the entries by name (ClickHouse and stitchfs write them sorted: only sorts what is
// not), the first of each name kept.
std::vector<uint32_t> ByName(const ManifestTables& t) {
  std::vector<uint32_t> by_name(t.entries.size());
  for (uint32_t i = 0; i < by_name.size(); ++i) by_name[i] = i;
  auto less = [&t](uint32_t a, uint32_t b) { return t.name(a) < t.name(b); };
  if (!std::is_sorted(by_name.begin(), by_name.end(), less)) {
    std::stable_sort(by_name.begin(), by_name.end(), less);
  }
  auto same = [&t](uint32_t a, uint32_t b) { return t.name(a) == t.name(b); };
  by_name.erase(std::unique(by_name.begin(), by_name.end(), same), by_name.end());
  by_name.shrink_to_fit();
  return by_name;
}

// The entries with data by (size, checksum, position); sets kRep on the first of each content.
std::vector<uint32_t> ByContent(std::vector<ManifestTables::Record>& entries) {
  std::vector<uint32_t> by_content;
  by_content.reserve(entries.size());
  for (uint32_t i = 0; i < entries.size(); ++i) {
    if (entries[i].size > 0) by_content.push_back(i);
  }
  std::sort(by_content.begin(), by_content.end(), [&entries](uint32_t a, uint32_t b) {
    const auto& x = entries[a];
    const auto& y = entries[b];
    return std::tie(x.size, x.checksum, a) < std::tie(y.size, y.checksum, b);
  });
  for (size_t k = 0; k < by_content.size(); ++k) {
    ManifestTables::Record& r = entries[by_content[k]];
    const ManifestTables::Record* prev = k ? &entries[by_content[k - 1]] : nullptr;
    if (!prev || prev->size != r.size || prev->checksum != r.checksum) {
      r.flags |= ManifestTables::kRep;
    }
  }
  return by_content;
}

}  // namespace

std::unique_ptr<const Manifest> ManifestBuilder::Finish() {
  auto b = std::make_shared<BuiltTables>();
  b->entries = std::exchange(entries_, {});
  b->meta = std::exchange(meta_, {});
  b->nodes = std::exchange(nodes_, {});
  b->names = std::exchange(names_, {});
  ManifestTables t;
  t.header = std::exchange(header_, {});
  t.missing = std::exchange(missing_, {});
  t.entries = b->entries;
  t.names = std::string_view(b->names.data(), b->names.size());
  b->by_name = ByName(t);
  b->by_content = ByContent(b->entries);
  t.meta = b->meta;
  t.nodes = b->nodes;
  t.by_name = b->by_name;
  t.by_content = b->by_content;
  t.owner = std::move(b);
  return std::make_unique<const Manifest>(std::move(t));
}

}  // namespace stitchfs::engine
