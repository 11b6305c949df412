#include "engine/format/manifest_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <tuple>
#include <type_traits>

#include "engine/base/index_stream.h"
#include "engine/base/path_check.h"
#include "engine/format/hard_links.h"

namespace stitchfs::engine {
namespace {

// Sections (index_codec.h): the identity and record sizes, the header's strings, the records,
// metadata, nodes, both indexes, then the names.
constexpr uint32_t kManifestHead = IndexTag("HEAD"), kStrings = IndexTag("STRS"),
                   kEntries = IndexTag("ENTR"), kMetas = IndexTag("META"),
                   kNodes = IndexTag("NODE"), kByName = IndexTag("BYNM"),
                   kByContent = IndexTag("BYCT"), kNameArea = IndexTag("NAME");
constexpr uint32_t kManifestTags[] = {kManifestHead, kStrings, kEntries,   kMetas,
                                      kNodes,        kByName,  kByContent, kNameArea};
// 3: the last version before the index codec (magic STCHMF03). 4: in its container.
constexpr IndexKind kManifestKind{
    "cached manifest", {'S', 'T', 'F', 'S', 'M', 'A', 'N', 'C'}, 4, kManifestTags};
constexpr uint64_t kNone = UINT64_MAX;  // No data file name (same as the name).

struct DiskRecord {
  uint64_t size, base_size;
  Checksum checksum, base_checksum;
  uint64_t name, data_file;  // Offsets into the names section.
  uint32_t name_len, data_file_len, flags, meta_index;
};
struct DiskNode {
  uint64_t name, target;
  uint32_t name_len, target_len, type, pad;
  PosixMeta meta;
};
struct HeadRecord {
  ManifestIdentity id;
  uint32_t record_size, node_size, meta_size, pad;
};
static_assert(std::is_trivially_copyable_v<PosixMeta> && std::is_trivially_copyable_v<HeadRecord>);

// The header's strings, then the missing files, then five flag bytes.
std::string HeaderStrings(const Manifest& m) {
  const ManifestHeader& h = m.header();
  std::string s;
  auto put = [&s](const std::string& v) {
    const auto n = static_cast<uint32_t>(v.size());
    s.append(reinterpret_cast<const char*>(&n), 4).append(v);
  };
  for (const std::string* v : {&h.timestamp, &h.uuid, &h.backup_id, &h.data_file_name_generator,
                               &h.base_backup, &h.original_endpoint, &h.original_namespace}) {
    put(*v);
  }
  put(h.base_backup_uuid.value_or(""));
  put(std::to_string(m.missing().size()));
  for (const MissingFile& f : m.missing()) {
    put(f.name);
    put(f.reason);
  }
  s.push_back(h.base_backup_uuid ? 1 : 0);
  s.push_back(static_cast<char>(h.deduplicate_files ? 1 + *h.deduplicate_files : 0));
  s.push_back(static_cast<char>(h.algorithm));
  s.push_back(static_cast<char>(h.version));
  s.push_back(h.copy_s3_credentials ? 1 : 0);
  return s;
}

Status Mismatch(const std::string& why) {
  return Status::BackupDamaged("cached manifest does not match: " + why);
}

// What HeaderStrings wrote, read back with every bound checked.
Status ParseHeaderStrings(std::string_view bytes, ManifestHeader* h,
                          std::vector<MissingFile>* missing) {
  IndexCursor c(bytes, kManifestKind.name, kStrings);
  std::string base_uuid, count;
  for (std::string* v :
       {&h->timestamp, &h->uuid, &h->backup_id, &h->data_file_name_generator, &h->base_backup,
        &h->original_endpoint, &h->original_namespace, &base_uuid, &count}) {
    RETURN_IF_ERROR(c.String(v));
  }
  auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), h->incomplete);
  if (ec != std::errc() || end != count.data() + count.size() || h->incomplete > c.left() / 8) {
    return Mismatch("count of missing files");
  }
  missing->resize(h->incomplete);
  for (MissingFile& f : *missing) {
    RETURN_IF_ERROR(c.String(&f.name));
    RETURN_IF_ERROR(c.String(&f.reason));
  }
  uint8_t flag[5];
  for (uint8_t& f : flag) RETURN_IF_ERROR(c.U8(&f));
  RETURN_IF_ERROR(c.End());
  if (flag[0] > 1 || flag[1] > 2 || flag[2] > 1 || flag[3] < 1 || flag[3] > 2 || flag[4] > 1) {
    return Mismatch("header flags");
  }
  if (flag[0]) h->base_backup_uuid = base_uuid;
  if (flag[1]) h->deduplicate_files = flag[1] == 2;
  h->algorithm = static_cast<ChecksumAlgorithm>(flag[2]);
  h->version = flag[3];
  h->copy_s3_credentials = flag[4] == 1;
  return Status::OK();
}

}  // namespace

uint64_t ManifestFile::NamesBytes(const Manifest& manifest) {
  const ManifestTables& m = manifest.tables();
  uint64_t n = 0;
  for (const ManifestTables::Record& r : m.entries)
    n += r.name_len + (r.data_file ? r.data_file_len : 0);
  for (const ManifestTables::NodeRecord& node : m.nodes) n += node.name_len + node.target_len;
  return n;
}

Status ManifestFile::Write(int fd, const Manifest& manifest, const ManifestIdentity& id) {
  const ManifestTables& m = manifest.tables();
  const std::string strings = HeaderStrings(manifest);
  IndexFileWriter out(fd, kManifestKind,
                      {{kManifestHead, sizeof(HeadRecord)},
                       {kStrings, strings.size()},
                       {kEntries, m.entries.size() * sizeof(DiskRecord)},
                       {kMetas, m.meta.size() * sizeof(PosixMeta)},
                       {kNodes, m.nodes.size() * sizeof(DiskNode)},
                       {kByName, m.by_name.size() * 4},
                       {kByContent, m.by_content.size() * 4},
                       {kNameArea, NamesBytes(manifest)}});
  out.PutRecord(kManifestHead,
                HeadRecord{id, sizeof(DiskRecord), sizeof(DiskNode), sizeof(PosixMeta), 0});
  out.Put(kStrings, strings);
  uint64_t off = 0;  // Names are laid out in the order records and nodes name them.
  for (const ManifestTables::Record& r : m.entries) {
    DiskRecord d{r.size, r.base_size, r.checksum,      r.base_checksum, off,
                 kNone,  r.name_len,  r.data_file_len, r.flags,         r.meta_index};
    off += r.name_len;
    if (r.data_file) {
      d.data_file = off;
      off += r.data_file_len;
    }
    out.PutRecord(kEntries, d);
  }
  out.PutArray(kMetas, std::span<const PosixMeta>(m.meta));
  for (const ManifestTables::NodeRecord& n : m.nodes) {
    DiskNode d{off,   off + n.name_len, n.name_len, n.target_len, static_cast<uint32_t>(n.type), 0,
               n.meta};
    off += n.name_len + n.target_len;
    out.PutRecord(kNodes, d);
  }
  out.PutArray(kByName, std::span<const uint32_t>(m.by_name));
  out.PutArray(kByContent, std::span<const uint32_t>(m.by_content));
  for (const ManifestTables::Record& r : m.entries) {
    out.Put(kNameArea, {r.name, r.name_len});
    if (r.data_file) out.Put(kNameArea, {r.data_file, r.data_file_len});
  }
  for (const ManifestTables::NodeRecord& n : m.nodes) {
    out.Put(kNameArea, {n.name, n.name_len});
    out.Put(kNameArea, {n.target, n.target_len});
  }
  return out.Finish();
}

namespace {

// The counts of a file made for `id` with this build's record layout (the codec checked the
// container): records, metadata and nodes, within what their 32-bit indexes can number.
struct Counts {
  uint64_t entries, metas, nodes, by_name, by_content, names;
};

StatusOr<Counts> ReadCounts(IndexFileReader& in, const ManifestIdentity& id) {
  HeadRecord head;
  ASSIGN_OR_RETURN(const uint64_t heads, in.Count(kManifestHead, sizeof head));
  if (heads != 1) return Mismatch("header record");
  RETURN_IF_ERROR(in.ReadRecord(kManifestHead, &head));
  if (!(head.id == id)) return Mismatch("made for another .backup");
  if (head.record_size != sizeof(DiskRecord) || head.node_size != sizeof(DiskNode) ||
      head.meta_size != sizeof(PosixMeta)) {
    return Mismatch("record layout");
  }
  Counts c;
  ASSIGN_OR_RETURN(c.entries, in.Count(kEntries, sizeof(DiskRecord)));
  ASSIGN_OR_RETURN(c.metas, in.Count(kMetas, sizeof(PosixMeta)));
  ASSIGN_OR_RETURN(c.nodes, in.Count(kNodes, sizeof(DiskNode)));
  ASSIGN_OR_RETURN(c.by_name, in.Count(kByName, 4));
  ASSIGN_OR_RETURN(c.by_content, in.Count(kByContent, 4));
  ASSIGN_OR_RETURN(c.names, in.Length(kNameArea));
  constexpr uint64_t kMaxCount = UINT32_MAX;
  if (c.entries > kMaxCount || c.metas > kMaxCount || c.nodes > kMaxCount ||
      c.by_name > c.entries || c.by_content > c.entries) {
    return Mismatch("counts");
  }
  return c;
}

// A pointer into `names` for [off, off + len), or nullptr if that is out of bounds.
const char* NameAt(const char* names, uint64_t names_size, uint64_t off, uint64_t len) {
  if (off > names_size || len > names_size - off) return nullptr;
  return len == 0 ? "" : names + off;
}

}  // namespace

Status ManifestFile::ReadRecords(IndexFileReader& in, const char* names, uint64_t names_size,
                                 ManifestTables& m) {
  for (ManifestTables::Record& r : m.entries) {
    DiskRecord d;
    RETURN_IF_ERROR(in.ReadRecord(kEntries, &d));
    r = {d.size,
         d.base_size,
         d.checksum,
         d.base_checksum,
         NameAt(names, names_size, d.name, d.name_len),
         d.data_file == kNone ? nullptr : NameAt(names, names_size, d.data_file, d.data_file_len),
         d.name_len,
         d.data_file_len,
         d.flags,
         d.meta_index};
    if (!r.name || (d.data_file != kNone && !r.data_file)) return Mismatch("name of a record");
    if (r.meta_index != ManifestTables::kNoMeta && r.meta_index >= m.meta.size()) {
      return Mismatch("metadata of a record");
    }
  }
  return Status::OK();
}

Status ManifestFile::ReadNodes(IndexFileReader& in, const char* names, uint64_t names_size,
                               ManifestTables& m) {
  for (ManifestTables::NodeRecord& n : m.nodes) {
    DiskNode d;
    RETURN_IF_ERROR(in.ReadRecord(kNodes, &d));
    if (d.type > 1) return Mismatch("type of a node");
    n = {NameAt(names, names_size, d.name, d.name_len),
         NameAt(names, names_size, d.target, d.target_len),
         d.name_len,
         d.target_len,
         static_cast<NodeType>(d.type),
         d.meta};
    if (!n.name || !n.target) return Mismatch("name of a node");
  }
  return Status::OK();
}

StatusOr<std::unique_ptr<const Manifest>> ManifestFile::Read(int fd, const ManifestIdentity& id) {
  ASSIGN_OR_RETURN(IndexFileReader in, IndexFileReader::Open(fd, kManifestKind));
  ASSIGN_OR_RETURN(const Counts c, ReadCounts(in, id));
  auto m = std::make_unique<ManifestTables>();
  ASSIGN_OR_RETURN(const uint64_t strings_bytes, in.Length(kStrings));
  std::string strings(strings_bytes, '\0');
  RETURN_IF_ERROR(in.Read(kStrings, strings));
  RETURN_IF_ERROR(ParseHeaderStrings(strings, &m->header, &m->missing));
  if (Status h = CheckHeader(&m->header); !h.ok()) return Mismatch(h.message());
  auto names = std::unique_ptr<char[]>(new char[c.names + 1]);
  m->entries.resize(c.entries);
  m->meta.resize(c.metas);  // Read after the records, which refer to it.
  m->nodes.resize(c.nodes);
  RETURN_IF_ERROR(ReadRecords(in, names.get(), c.names, *m));
  RETURN_IF_ERROR(in.ReadArray(kMetas, &m->meta));
  RETURN_IF_ERROR(ReadNodes(in, names.get(), c.names, *m));
  RETURN_IF_ERROR(in.ReadArray(kByName, &m->by_name));
  RETURN_IF_ERROR(in.ReadArray(kByContent, &m->by_content));
  RETURN_IF_ERROR(in.Read(kNameArea, {names.get(), c.names}));
  RETURN_IF_ERROR(in.Finish());
  m->arena_bytes = c.names;
  m->arena_blocks.push_back(std::move(names));
  std::unique_ptr<const Manifest> checked = Consistent(std::move(*m));
  if (!checked) return Mismatch("inconsistent");
  return checked;
}

}  // namespace stitchfs::engine
