#include "fs/xattrs.h"

#include "engine/json_string.h"
#include "fs/backup_view.h"

namespace stitchfs::fs {
namespace {

constexpr const char* kPrefix = "user.stitchfs.";

std::string Quote(std::string_view v) {
  std::string out;
  engine::AppendJsonString(&out, v);
  return out;
}

// JSON: [{"backup": path, "level": n, "from": first byte, "to": end byte}, ...] in file order.
std::string Sources(const BackupView& s, uint32_t entry) {
  std::string out = "[";
  uint64_t pos = 0;
  for (const auto& x : s.backup().Extents(entry)) {
    if (out.size() > 1) out += ",";
    out += "{\"backup\":" + Quote(s.backup().level(x.level).path()) +
           ",\"level\":" + std::to_string(x.level) + ",\"from\":" + std::to_string(pos) +
           ",\"to\":" + std::to_string(pos + x.length) + "}";
    pos += x.length;
  }
  return out + "]";
}

std::string RootValue(const BackupView& s, const std::string& key) {
  const auto& h = s.backup().top().header();
  if (key == "uuid") return h.uuid;
  if (key == "timestamp") return h.timestamp;
  if (key == "algorithm") return engine::ChecksumAlgorithmName(h.algorithm);
  if (key == "incomplete") {  // JSON: what the backup lacks.
    std::string out = "[";
    for (const auto& m : s.backup().top().manifest().missing()) {
      if (out.size() > 1) out += ",";
      out += "{\"name\":" + Quote(m.name) + ",\"reason\":" + Quote(m.reason) + "}";
    }
    return out + "]";
  }
  if (key == "chain") {  // JSON, the top backup first.
    std::string out = "[";
    for (size_t i = 0; i < s.backup().depth(); ++i) {
      const auto& b = s.backup().level(i);
      if (i > 0) out += ",";
      out += "{\"level\":" + std::to_string(i) + ",\"uuid\":" + Quote(b.uuid) +
             ",\"timestamp\":" + Quote(b.timestamp) + ",\"backup\":" + Quote(b.path()) + "}";
    }
    return out + "]";
  }
  const auto& st = s.Stats();
  return "{\"num_files\":" + std::to_string(st.num_files) +
         ",\"total_size\":" + std::to_string(st.total_size) +
         ",\"num_entries\":" + std::to_string(st.num_entries) +
         ",\"size_of_entries\":" + std::to_string(st.size_of_entries) +
         ",\"uncompressed_size\":" + std::to_string(st.uncompressed_size) + "}";
}

const std::vector<std::string>& FileKeys() {
  static const std::vector<std::string> k = {"source",    "checksum",    "algorithm",
                                             "base_size", "stored_size", "backup"};
  return k;
}
const std::vector<std::string>& RootKeys() {
  static const std::vector<std::string> k = {"uuid",  "timestamp", "algorithm",
                                             "chain", "stats",     "incomplete"};
  return k;
}

// The root's keys; "incomplete" only for a backup that lacks files.
bool RootHas(const BackupView& s, const std::string& key) {
  return key != "incomplete" || !s.backup().top().manifest().missing().empty();
}

}  // namespace

std::vector<std::string> XattrNames(const BackupView& s, uint64_t ino) {
  const Inode* n = s.table().Get(ino);
  std::vector<std::string> out;
  const auto* keys = ino == InodeTable::kRoot           ? &RootKeys()
                     : n && n->type == InodeType::kFile ? &FileKeys()
                                                        : nullptr;
  if (keys) {
    for (const auto& k : *keys) {
      if (ino != InodeTable::kRoot || RootHas(s, k)) out.push_back(kPrefix + k);
    }
  }
  return out;
}

bool IsStitchfsXattr(std::string_view name) { return name.rfind(kPrefix, 0) == 0; }

engine::StatusOr<std::string> XattrValue(const BackupView& s, uint64_t ino,
                                         const std::string& name) {
  const engine::Status none = engine::Status::EntryNotFound("no attribute " + name);
  const Inode* n = s.table().Get(ino);
  if (!IsStitchfsXattr(name) || n == nullptr) return none;
  const std::string key = name.substr(std::string_view(kPrefix).size());
  if (ino == InodeTable::kRoot) {
    for (const auto& k : RootKeys()) {
      if (k == key && RootHas(s, key)) return RootValue(s, key);
    }
    return none;
  }
  if (n->type != InodeType::kFile) return none;
  const engine::FileEntry e = s.backup().top().manifest().entry(n->ref);
  if (key == "source") return Sources(s, n->ref);
  if (key == "checksum") return e.size ? e.checksum.ToHex() : std::string();
  if (key == "algorithm") {
    return std::string(engine::ChecksumAlgorithmName(s.backup().top().header().algorithm));
  }
  if (key == "base_size") return std::to_string(e.base_size);
  if (key == "stored_size") return std::to_string(e.has_data_file() ? e.stored_size() : 0);
  if (key == "backup") return s.backup().top().path();
  return none;
}

}  // namespace stitchfs::fs
