#include "fs/xattrs.h"

#include "engine/base/json_writer.h"

namespace stitchfs::fs {
namespace {

constexpr const char* kPrefix = "user.stitchfs.";

// JSON: [{"backup": path, "level": n, "from": first byte, "to": end byte}, ...] in file order.
std::string Sources(const XattrSource& s, uint32_t entry) {
  engine::JsonWriter j;
  j.BeginArray();
  uint64_t pos = 0;
  for (const auto& x : s.backup.Extents(entry)) {
    j.BeginObject().Key("backup").String(s.backup.level(x.level).path());
    j.Key("level").Number(x.level).Key("from").Number(pos);
    pos += x.length;
    j.Key("to").Number(pos).EndObject();
  }
  return j.EndArray().Take();
}

// JSON: [{"name": path, "reason": text}, ...], what the backup lacks.
std::string Incomplete(const XattrSource& s) {
  engine::JsonWriter j;
  j.BeginArray();
  for (const auto& m : s.backup.top().manifest().missing()) {
    j.BeginObject().Key("name").String(m.name).Key("reason").String(m.reason).EndObject();
  }
  return j.EndArray().Take();
}

// JSON: [{"level": n, "uuid": ..., "timestamp": ..., "backup": path}, ...], the top backup first.
std::string Chain(const XattrSource& s) {
  engine::JsonWriter j;
  j.BeginArray();
  for (size_t i = 0; i < s.backup.depth(); ++i) {
    const auto& b = s.backup.level(i);
    j.BeginObject().Key("level").Number(i).Key("uuid").String(b.uuid);
    j.Key("timestamp").String(b.timestamp).Key("backup").String(b.path()).EndObject();
  }
  return j.EndArray().Take();
}

// JSON: the system.backups-style figures of the whole backup.
std::string Stats(const XattrSource& s) {
  const auto& st = s.stats();
  engine::JsonWriter j;
  j.BeginObject().Key("num_files").Number(st.num_files).Key("total_size").Number(st.total_size);
  j.Key("num_entries").Number(st.num_entries).Key("size_of_entries").Number(st.size_of_entries);
  j.Key("uncompressed_size").Number(st.uncompressed_size);
  return j.EndObject().Take();
}

std::string RootValue(const XattrSource& s, const std::string& key) {
  const auto& h = s.backup.top().header();
  if (key == "uuid") return h.uuid;
  if (key == "timestamp") return h.timestamp;
  if (key == "algorithm") return engine::ChecksumAlgorithmName(h.algorithm);
  if (key == "incomplete") return Incomplete(s);
  if (key == "chain") return Chain(s);
  return Stats(s);
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
bool RootHas(const XattrSource& s, const std::string& key) {
  return key != "incomplete" || !s.backup.top().manifest().missing().empty();
}

}  // namespace

std::vector<std::string> XattrNames(const XattrSource& s, uint64_t ino) {
  const Inode* n = s.table.Get(ino);
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

engine::StatusOr<std::string> XattrValue(const XattrSource& s, uint64_t ino,
                                         const std::string& name) {
  const engine::Status none = engine::Status::EntryNotFound("no attribute " + name);
  const Inode* n = s.table.Get(ino);
  if (!IsStitchfsXattr(name) || n == nullptr) return none;
  const std::string key = name.substr(std::string_view(kPrefix).size());
  if (ino == InodeTable::kRoot) {
    for (const auto& k : RootKeys()) {
      if (k == key && RootHas(s, key)) return RootValue(s, key);
    }
    return none;
  }
  if (n->type != InodeType::kFile) return none;
  const engine::FileEntry e = s.backup.top().manifest().entry(n->ref);
  if (key == "source") return Sources(s, n->ref);
  if (key == "checksum") return e.size ? e.checksum.ToHex() : std::string();
  if (key == "algorithm") {
    return std::string(engine::ChecksumAlgorithmName(s.backup.top().header().algorithm));
  }
  if (key == "base_size") return std::to_string(e.base_size);
  if (key == "stored_size") return std::to_string(e.has_data_file() ? e.stored_size() : 0);
  if (key == "backup") return s.backup.top().path();
  return none;
}

}  // namespace stitchfs::fs
