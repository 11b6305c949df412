#include "engine/format/manifest_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <tuple>
#include <type_traits>

#include "engine/base/index_codec.h"
#include "engine/base/index_stream.h"
#include "engine/base/path_check.h"
#include "engine/base/shared_bytes.h"
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
// 3: the last version before the index codec (magic STCHMF03). 4: in its container. 5: the
// header's read start.
constexpr IndexKind kManifestKind{
    "cached manifest", {'S', 'T', 'F', 'S', 'M', 'A', 'N', 'C'}, 5, kManifestTags};

using Record = ManifestTables::Record;
using NodeRecord = ManifestTables::NodeRecord;
// The layout of the records in the files (versions 4 and 5): the tables are these files' records.
static_assert(sizeof(Record) == 80 && sizeof(NodeRecord) == 96 && sizeof(PosixMeta) == 64);
static_assert(std::is_trivially_copyable_v<Record> && std::is_trivially_copyable_v<NodeRecord>);
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
  put(h.read_start_ns ? std::to_string(*h.read_start_ns) : "");
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
  std::string base_uuid, read_start, count;
  for (std::string* v :
       {&h->timestamp, &h->uuid, &h->backup_id, &h->data_file_name_generator, &h->base_backup,
        &h->original_endpoint, &h->original_namespace, &base_uuid, &read_start, &count}) {
    RETURN_IF_ERROR(c.String(v));
  }
  if (!read_start.empty()) {
    int64_t ns = 0;
    auto [at, bad] = std::from_chars(read_start.data(), read_start.data() + read_start.size(), ns);
    if (bad != std::errc() || at != read_start.data() + read_start.size() || ns < 0) {
      return Mismatch("read start");
    }
    h->read_start_ns = ns;
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

Status ManifestFile::Write(int fd, const Manifest& manifest, const ManifestIdentity& id) {
  const ManifestTables& m = manifest.tables();
  const std::string strings = HeaderStrings(manifest);
  IndexFileWriter out(fd, kManifestKind,
                      {{kManifestHead, sizeof(HeadRecord)},
                       {kStrings, strings.size()},
                       {kEntries, m.entries.size_bytes()},
                       {kMetas, m.meta.size_bytes()},
                       {kNodes, m.nodes.size_bytes()},
                       {kByName, m.by_name.size_bytes()},
                       {kByContent, m.by_content.size_bytes()},
                       {kNameArea, m.names.size()}});
  out.PutRecord(kManifestHead,
                HeadRecord{id, sizeof(Record), sizeof(NodeRecord), sizeof(PosixMeta), 0});
  out.Put(kStrings, strings);
  out.PutArray(kEntries, m.entries);
  out.PutArray(kMetas, m.meta);
  out.PutArray(kNodes, m.nodes);
  out.PutArray(kByName, m.by_name);
  out.PutArray(kByContent, m.by_content);
  out.Put(kNameArea, m.names);
  return out.Finish();
}

namespace {

// The head of a file made for `id` with this build's record layout (the codec checked the
// container).
Status CheckHead(const IndexView& in, const ManifestIdentity& id) {
  HeadRecord head;
  if (!in.Record(kManifestHead, &head).ok()) return Mismatch("header record");
  if (!(head.id == id)) return Mismatch("made for another .backup");
  if (head.record_size != sizeof(Record) || head.node_size != sizeof(NodeRecord) ||
      head.meta_size != sizeof(PosixMeta)) {
    return Mismatch("record layout");
  }
  return Status::OK();
}

// True if [off, off + len) is inside a names area of `size` bytes.
bool InNames(uint64_t size, uint64_t off, uint64_t len) { return off <= size && len <= size - off; }

// Every offset and index of the records and nodes inside what it points into.
Status CheckBounds(const ManifestTables& m) {
  constexpr uint64_t kMaxCount = UINT32_MAX;
  if (m.entries.size() > kMaxCount || m.meta.size() > kMaxCount || m.nodes.size() > kMaxCount ||
      m.by_name.size() > m.entries.size() || m.by_content.size() > m.entries.size()) {
    return Mismatch("counts");
  }
  const uint64_t size = m.names.size();
  for (const Record& r : m.entries) {
    if (!InNames(size, r.name, r.name_len) || (r.data_file != ManifestTables::kSameName &&
                                               !InNames(size, r.data_file, r.data_file_len))) {
      return Mismatch("name of a record");
    }
    if (r.meta_index != ManifestTables::kNoMeta && r.meta_index >= m.meta.size()) {
      return Mismatch("metadata of a record");
    }
  }
  for (const NodeRecord& n : m.nodes) {
    if (n.type > 1) return Mismatch("type of a node");
    if (!InNames(size, n.name, n.name_len) || !InNames(size, n.target, n.target_len)) {
      return Mismatch("name of a node");
    }
  }
  return Status::OK();
}

// The tables of the checked container `in`, viewed in place.
Status ViewTables(const IndexView& in, ManifestTables* m) {
  std::string_view strings;
  RETURN_IF_ERROR(in.Bytes(kStrings, &strings));
  RETURN_IF_ERROR(ParseHeaderStrings(strings, &m->header, &m->missing));
  if (Status h = CheckHeader(&m->header); !h.ok()) return Mismatch(h.message());
  RETURN_IF_ERROR(in.ViewArray(kEntries, &m->entries));
  RETURN_IF_ERROR(in.ViewArray(kMetas, &m->meta));
  RETURN_IF_ERROR(in.ViewArray(kNodes, &m->nodes));
  RETURN_IF_ERROR(in.ViewArray(kByName, &m->by_name));
  RETURN_IF_ERROR(in.ViewArray(kByContent, &m->by_content));
  RETURN_IF_ERROR(in.Bytes(kNameArea, &m->names));
  return CheckBounds(*m);
}

}  // namespace

StatusOr<std::unique_ptr<const Manifest>> ManifestFile::Read(int fd, const ManifestIdentity& id) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::IOError("cached manifest", errno);
  if (!S_ISREG(st.st_mode)) return Mismatch("not a regular file");
  // Mapped, not copied: the cache's files are replaced, never cut short (SharedBytes::Map).
  ASSIGN_OR_RETURN(SharedBytes bytes, SharedBytes::Map(fd, static_cast<size_t>(st.st_size),
                                                       "cached manifest", /*populate=*/true));
  ASSIGN_OR_RETURN(IndexView in, IndexView::Open(bytes.view(), kManifestKind));
  RETURN_IF_ERROR(CheckHead(in, id));
  ManifestTables m;
  RETURN_IF_ERROR(ViewTables(in, &m));
  m.owner = bytes.owner();
  std::unique_ptr<const Manifest> checked = Consistent(std::move(m));
  if (!checked) return Mismatch("inconsistent");
  return checked;
}

}  // namespace stitchfs::engine
