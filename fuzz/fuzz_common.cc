// Helpers shared by the libFuzzer targets: MemFile, Fail/Require, and the manifest walk and
// comparisons (see fuzz_common.h).
#include "fuzz/fuzz_common.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unordered_map>
#include <utility>

#include "engine/base/civil_time.h"
#include "engine/base/path_check.h"
#include "engine/format/hard_links.h"

namespace stitchfs::fuzz {
namespace {

using engine::Checksum;
using engine::FileEntry;
using engine::Manifest;
using engine::ManifestHeader;
using engine::Node;
using engine::PosixMeta;

// Reads every byte of `s`, so that ASan sees a view that points outside its storage.
volatile uint64_t g_sink = 0;
void Touch(std::string_view s) {
  uint64_t h = s.size();
  for (char c : s) h = h * 131 + static_cast<unsigned char>(c);
  g_sink = g_sink + h;
}

bool ValidTime(const engine::FileTime& t) { return t.nsec >= 0 && t.nsec < 1000000000; }

bool ValidMeta(const PosixMeta& m) {
  return m.mode <= 07777 && ValidTime(m.mtime) && ValidTime(m.ctime);
}

std::string Where(size_t i, const FileEntry& e) {
  return "entry " + std::to_string(i) + " \"" + Printable(e.name) + "\"";
}

void CheckHeader(const ManifestHeader& h) {
  Require(h.version == 1 || h.version == 2, "header version is 1 or 2", std::to_string(h.version));
  Require(h.algorithm == engine::ChecksumAlgorithm::kClickHouse ||
              h.algorithm == engine::ChecksumAlgorithm::kXxh3,
          "header checksum algorithm is a known one",
          std::to_string(static_cast<int>(h.algorithm)));
  Require(engine::IsCanonicalUuid(h.uuid), "header uuid is canonical", Printable(h.uuid));
  if (h.base_backup_uuid && !h.base_backup_uuid->empty()) {
    Require(engine::IsCanonicalUuid(*h.base_backup_uuid), "base_backup_uuid is canonical",
            Printable(*h.base_backup_uuid));
  }
  auto t = engine::ParseBackupTime(h.timestamp);
  Require(t.ok(), "header timestamp is a backup time", Printable(h.timestamp));
  Require(*t == h.time, "header time matches its timestamp", Printable(h.timestamp));
}

void CheckEntry(size_t i, const FileEntry& e) {
  Require(engine::CheckRelativePath(e.name).ok(), "entry name passes CheckRelativePath",
          Where(i, e));
  Require(e.base_size <= e.size, "base_size <= size", Where(i, e));
  Require(e.size <= engine::kMaxFileSize, "size <= 2^63 - 1", Where(i, e));
  if (e.has_data_file()) {
    Require(engine::CheckRelativePath(e.data_file).ok(), "data_file passes CheckRelativePath",
            Where(i, e));
  } else {
    Require(e.data_file == e.name, "an entry without data has no data_file", Where(i, e));
  }
  if (e.size == 0) {
    Require(e.checksum == Checksum{} && !e.encrypted_by_disk,
            "an empty entry has no checksum and no encryption", Where(i, e));
  }
  if (e.base_size == e.size) {
    Require(e.base_checksum == e.checksum, "base_checksum == checksum when all from base",
            Where(i, e));
  }
  if (e.meta) Require(ValidMeta(*e.meta), "entry metadata in range", Where(i, e));
}

// What engine::CheckNames promises, checked the slow way: every name once among entries and
// nodes, and no name under a file or a symlink (each of its parents is looked up).
void CheckNamesNaively(const Manifest& m) {
  std::map<std::string_view, bool> folder;  // Name -> is a folder (a <stitchfs_dir>).
  for (size_t i = 0; i < m.num_entries(); ++i) {
    Require(folder.emplace(m.name(i), false).second, "a name twice", Printable(m.name(i)));
  }
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const Node n = m.node(i);
    Require(folder.emplace(n.name, n.type == engine::NodeType::kDir).second, "a name twice",
            Printable(n.name));
  }
  for (const auto& [name, is_folder] : folder) {
    for (size_t slash = name.find('/'); slash != std::string_view::npos;
         slash = name.find('/', slash + 1)) {
      auto parent = folder.find(name.substr(0, slash));
      Require(parent == folder.end() || parent->second, "a name under a file or symlink",
              Printable(name));
    }
  }
}

}  // namespace

void Fail(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "fuzz check failed: %.*s%s%.*s\n", static_cast<int>(what.size()),
               what.data(), detail.empty() ? "" : ": ", static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

MemFile::MemFile() : fd_(::memfd_create("stitchfs-fuzz", MFD_CLOEXEC)) {
  if (fd_ < 0) Fail("memfd_create", std::to_string(errno));
}

MemFile::~MemFile() { ::close(fd_); }

int MemFile::Set(std::string_view data) {
  Require(::ftruncate(fd_, 0) == 0, "ftruncate of the memfd");
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = ::pwrite(fd_, data.data() + done, data.size() - done, static_cast<off_t>(done));
    if (w < 0 && errno == EINTR) continue;
    Require(w > 0, "pwrite to the memfd");
    done += static_cast<size_t>(w);
  }
  return Rewind();
}

int MemFile::Rewind() {
  Require(::lseek(fd_, 0, SEEK_SET) == 0, "lseek of the memfd");
  return fd_;
}

std::string MemFile::Contents() const {
  std::string out;
  char buf[8192];
  for (off_t pos = 0;;) {
    ssize_t r = ::pread(fd_, buf, sizeof buf, pos);
    if (r < 0 && errno == EINTR) continue;
    Require(r >= 0, "pread of the memfd");
    if (r == 0) break;
    out.append(buf, static_cast<size_t>(r));
    pos += r;
  }
  return out;
}

void ExerciseManifest(const Manifest& m) {
  const ManifestHeader& h = m.header();
  for (const std::string* s :
       {&h.timestamp, &h.uuid, &h.backup_id, &h.data_file_name_generator, &h.base_backup}) {
    Touch(*s);
  }
  Touch(engine::ChecksumAlgorithmName(h.algorithm));
  // Hash a few bytes with the manifest's algorithm, as verify and incremental backups do (a
  // cached algorithm out of range once made Hasher write through a null buffer).
  Touch(engine::Hasher::Of(h.algorithm, "stitchfs").ToHex());
  CheckHeader(h);

  const size_t n = m.num_entries();
  std::unordered_map<std::string_view, size_t> first_of_name;
  std::map<std::pair<uint64_t, Checksum>, size_t> first_of_content;
  for (size_t i = 0; i < n; ++i) {
    const FileEntry e = m.entry(i);
    Touch(e.name);
    Touch(e.data_file);
    first_of_name.emplace(e.name, i);
    if (e.size > 0) first_of_content.emplace(std::make_pair(e.size, e.checksum), i);
    if (auto j = m.FindByName(e.name)) {
      Require(*j < n, "FindByName returns an entry index", Where(i, e));
      Touch(m.entry(*j).name);
    }
    if (e.size > 0) {
      if (auto j = m.FindByContent(e.size, e.checksum)) {
        Require(*j < n, "FindByContent returns an entry index", Where(i, e));
        Touch(m.entry(*j).name);
      }
      g_sink = g_sink + m.IsContentRep(i);
    }
    CheckEntry(i, e);
  }
  const std::span<const uint32_t> by_name = m.by_name();
  for (uint32_t i : by_name) {
    Require(i < n, "by_name() holds entry indexes", std::to_string(i));
    Touch(m.entry(i).name);
  }
  const std::vector<uint32_t> leaders = engine::LinkLeaders(m);
  Require(leaders.size() == n, "LinkLeaders has one leader per entry");
  for (uint32_t l : leaders) Require(l < n, "LinkLeaders returns entry indexes");
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const Node node = m.node(i);
    Touch(node.name);
    Touch(node.target);
    const std::string what = "node " + std::to_string(i) + " \"" + Printable(node.name) + "\"";
    Require(engine::CheckRelativePath(node.name).ok(), "node name passes CheckRelativePath", what);
    Require(node.type == engine::NodeType::kDir || node.type == engine::NodeType::kSymlink,
            "node type is dir or symlink", what);
    if (node.type == engine::NodeType::kDir) Require(node.target.empty(), "a dir has no target");
    Require(ValidMeta(node.meta), "node metadata in range", what);
    Require(node.meta.nlink == 0, "a node has no link count (the XML form has none)", what);
  }
  for (const engine::MissingFile& f : m.missing()) {
    Touch(f.name);
    Touch(f.reason);
  }
  Require(m.missing().size() == h.incomplete, "an incomplete backup lists what it lacks",
          std::to_string(h.incomplete) + " vs " + std::to_string(m.missing().size()));

  // Lookups find the first entry (in manifest order) of a name or a content; by_name() lists
  // each name once, sorted, by its first entry.
  for (size_t i = 0; i < n; ++i) {
    const FileEntry e = m.entry(i);
    Require(m.FindByName(e.name) == first_of_name.at(e.name),
            "FindByName finds the first entry of a name", Where(i, e));
    if (e.size == 0) continue;
    const size_t rep = first_of_content.at({e.size, e.checksum});
    Require(m.FindByContent(e.size, e.checksum) == rep,
            "FindByContent finds the first entry of a content", Where(i, e));
    Require(m.IsContentRep(i) == (rep == i), "IsContentRep marks the first entry of a content",
            Where(i, e));
  }
  Require(by_name.size() == first_of_name.size(), "by_name() lists every name once");
  for (size_t k = 0; k < by_name.size(); ++k) {
    const FileEntry e = m.entry(by_name[k]);
    Require(first_of_name.at(e.name) == by_name[k], "by_name() holds the first entry of a name",
            Where(by_name[k], e));
    if (k > 0) {
      Require(m.entry(by_name[k - 1]).name < e.name, "by_name() is sorted by name",
              Where(by_name[k], e));
    }
  }
  const engine::Status links = engine::CheckLinks(m);
  Require(links.ok(), "hard links are consistent", links.ToString());
  CheckNamesNaively(m);
}

std::string DiffEntriesAndNodes(const Manifest& a, const Manifest& b) {
  if (a.num_entries() != b.num_entries()) {
    return "entry count " + std::to_string(a.num_entries()) + " vs " +
           std::to_string(b.num_entries());
  }
  for (size_t i = 0; i < a.num_entries(); ++i) {
    const FileEntry x = a.entry(i), y = b.entry(i);
    const char* field = x.name != y.name                             ? "name"
                        : x.size != y.size                           ? "size"
                        : x.base_size != y.base_size                 ? "base_size"
                        : x.checksum != y.checksum                   ? "checksum"
                        : x.base_checksum != y.base_checksum         ? "base_checksum"
                        : x.data_file != y.data_file                 ? "data_file"
                        : x.encrypted_by_disk != y.encrypted_by_disk ? "encrypted_by_disk"
                        : x.meta != y.meta                           ? "meta"
                                                                     : nullptr;
    if (field) return Where(i, x) + ": " + field + " differs";
  }
  if (a.num_nodes() != b.num_nodes()) {
    return "node count " + std::to_string(a.num_nodes()) + " vs " + std::to_string(b.num_nodes());
  }
  for (size_t i = 0; i < a.num_nodes(); ++i) {
    const Node x = a.node(i), y = b.node(i);
    if (x.type != y.type || x.name != y.name || x.target != y.target || !(x.meta == y.meta)) {
      return "node " + std::to_string(i) + " \"" + Printable(x.name) + "\" differs";
    }
  }
  if (a.missing() != b.missing()) return "missing files differ";
  return "";
}

std::string DiffHeaders(const ManifestHeader& a, const ManifestHeader& b) {
  if (a.version != b.version) return "version";
  if (a.deduplicate_files != b.deduplicate_files) return "deduplicate_files";
  if (a.timestamp != b.timestamp) return "timestamp";
  if (a.time != b.time) return "time";
  if (a.uuid != b.uuid) return "uuid";
  if (a.backup_id != b.backup_id) return "backup_id";
  if (a.data_file_name_generator != b.data_file_name_generator) return "data_file_name_generator";
  if (a.base_backup != b.base_backup) return "base_backup";
  if (a.base_backup_uuid != b.base_backup_uuid) return "base_backup_uuid";
  if (a.algorithm != b.algorithm) return "algorithm";
  if (a.incomplete != b.incomplete) return "incomplete";
  return "";
}

std::string Printable(std::string_view s, size_t max) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

}  // namespace stitchfs::fuzz
