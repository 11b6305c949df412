// Manifest: the parsed `.backup` of one backup (header + file entries), stored flat: names in
// one area, one fixed-size record per entry, sorted index arrays (ManifestTables); mapped from
// the manifest cache when it holds the manifest. Immutable once built.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/checksum.h"
#include "engine/base/civil_time.h"
#include "engine/base/posix_meta.h"
#include "engine/base/status_or.h"

namespace stitchfs::engine {

struct ManifestHeader {
  int version = 1;
  std::optional<bool> deduplicate_files;  // Informational; absent in G1 manifests.
  std::string timestamp;                  // "YYYY-MM-DD hh:mm:ss", writer's local time.
  CivilSeconds time = 0;                  // `timestamp`, parsed (CheckHeader sets it).
  std::string uuid;
  std::string backup_id;
  std::string data_file_name_generator;
  std::string base_backup;                      // Locator text; empty when there is none.
  std::optional<std::string> base_backup_uuid;  // Absent when not written.
  // <base_backup_copy_s3_credentials_from_backup>: an S3 base without credentials takes this
  // backup's (ClickHouse since mid-2026).
  bool copy_s3_credentials = false;
  // A lightweight snapshot (version 2): the object storage its <object_key> files live in.
  std::string original_endpoint, original_namespace;
  ChecksumAlgorithm algorithm = ChecksumAlgorithm::kClickHouse;
  // Source files (and folders) that could not be backed up: the backup is incomplete. Their
  // names and reasons follow the entries (Manifest::missing()).
  uint64_t incomplete = 0;
  // <stitchfs_read_start>: when `stitch backup` began reading the source (Unix time, ns), before
  // any file's metadata it records was taken: the files cache trusts a file's recorded times
  // only if they are clearly older (a change after the read could not keep them). Absent in
  // ClickHouse's backups and in stitchfs's before it.
  std::optional<int64_t> read_start_ns;
};

// A source file or folder an incomplete backup lacks, and why (stitchfs's <stitchfs_missing>).
struct MissingFile {
  std::string name;  // As found in the source, made printable (escapes for bytes XML lacks).
  std::string reason;
  bool operator==(const MissingFile&) const = default;
};

// The largest file size a manifest may declare: what off_t (and so stat and pread) can hold.
constexpr uint64_t kMaxFileSize = INT64_MAX;
// The longest <original_endpoint> and <original_namespace> a lightweight snapshot may give.
constexpr size_t kMaxObjectUrlPart = 1024;

// Checks the values of a header read from a manifest or the cache, and sets `time`: the uuid
// (and base uuid, when not empty) in the canonical 8-4-4-4-12 hex form, the timestamp a
// date-time within kMinBackupTime..kMaxBackupTime, the object storage's endpoint and namespace
// at most kMaxObjectUrlPart bytes each. kBackupDamaged naming the tag and the value (escaped)
// otherwise; the caller adds the backup.
Status CheckHeader(ManifestHeader* h);

// True if `s` is a UUID in the canonical 8-4-4-4-12 hex form (either case).
bool IsCanonicalUuid(std::string_view s);

struct FileEntry;
// The invariants of one entry, whoever built it (the XML reader, the cache loader, a writer):
// size at most kMaxFileSize, base_size at most size, the prefix checksum equal to the checksum
// when the whole file comes from the base, an empty file with no checksum, base or data file,
// a data_file only for an entry that stores bytes, and metadata in range (mode <= 07777,
// nanoseconds < 10^9). kBackupDamaged saying which, without the backup or entry (the caller
// adds them).
Status CheckEntry(const FileEntry& e);
// The same for metadata alone (of files, folders and symlinks).
Status CheckMeta(const PosixMeta& m);

// One logical file, as a view into the Manifest that owns the strings.
struct FileEntry {
  std::string_view name;
  uint64_t size = 0;
  uint64_t base_size = 0;      // Bytes [0, base_size) come from the base backup.
  Checksum checksum;           // Of the whole file; zero for empty files.
  Checksum base_checksum;      // Of the prefix in the base; == checksum when base_size == size.
  std::string_view data_file;  // Holds bytes [base_size, size); == name unless deduplicated.
  bool encrypted_by_disk = false;
  std::optional<PosixMeta> meta;  // stitchfs's <stitchfs_meta>; absent in ClickHouse backups.

  bool uses_base() const { return base_size > 0; }
  bool has_data_file() const { return size > base_size; }
  uint64_t stored_size() const { return size - base_size; }
};

// The flat form of a manifest as plain data: one fixed-size record per entry and per folder or
// symlink, every name in one names area the records give offsets into, and the sorted indexes.
// Records are laid out as the manifest cache's files hold them (ManifestFile), so a cached
// manifest is used where it is mapped, not copied. The tables view memory `owner` keeps alive:
// the builder's vectors (ManifestBuilder fills them), or a cache file's mapping. A Manifest is
// made from the tables and only reads them. Copying shares what they view.
struct ManifestTables {
  struct Record {
    uint64_t size;
    uint64_t base_size;
    Checksum checksum;
    Checksum base_checksum;
    uint64_t name;       // Offset into names.
    uint64_t data_file;  // Offset into names; kSameName: the data file is the name.
    uint32_t name_len;
    uint32_t data_file_len;
    uint32_t flags;
    uint32_t meta_index;  // Into meta, or kNoMeta.
  };
  struct NodeRecord {
    uint64_t name;  // Offsets into names.
    uint64_t target;
    uint32_t name_len;
    uint32_t target_len;
    uint32_t type;  // NodeType.
    uint32_t pad;
    PosixMeta meta;
  };
  static constexpr uint32_t kEncrypted = 1;
  static constexpr uint32_t kRep = 2;  // First entry (in manifest order) of its content.
  static constexpr uint32_t kNoMeta = UINT32_MAX;
  static constexpr uint64_t kSameName = UINT64_MAX;

  // The `len` bytes at `off` of the names area. REQUIRES: they are inside it (every reader of
  // the tables checks each record's offsets once, as it loads them).
  std::string_view text(uint64_t off, uint32_t len) const {
    return len == 0 ? std::string_view() : std::string_view(names.data() + off, len);
  }
  // The name of entry `i` (REQUIRES: i < entries.size()).
  std::string_view name(uint32_t i) const { return text(entries[i].name, entries[i].name_len); }

  ManifestHeader header;
  std::span<const Record> entries;
  std::span<const PosixMeta> meta;
  std::span<const NodeRecord> nodes;
  std::span<const uint32_t> by_name;     // Entries by name, duplicates of a name left out.
  std::span<const uint32_t> by_content;  // Entries with size > 0, by (size, checksum, position).
  std::string_view names;
  std::vector<MissingFile> missing;
  std::shared_ptr<const void> owner;  // Keeps what the views above point into alive.
};

// The parsed manifest. Thread-safe (immutable).
class Manifest {
 public:
  // The manifest `tables` hold. REQUIRES: they are consistent: the indexes complete and sorted
  // and the kRep flags set from them, as ManifestBuilder::Finish makes them and ManifestFile
  // checks them.
  explicit Manifest(ManifestTables tables) : t_(std::move(tables)) {}

  const ManifestHeader& header() const { return t_.header; }
  size_t num_entries() const { return t_.entries.size(); }
  // REQUIRES: i < num_entries(). Entries are in manifest order.
  FileEntry entry(size_t i) const;
  // The name of entry `i` (REQUIRES: i < num_entries()); entry(i).name, without the rest.
  std::string_view name(size_t i) const { return t_.name(static_cast<uint32_t>(i)); }
  // entry(i).size, .base_size and .meta without copying the entry (REQUIRES: i <
  // num_entries()). The metadata is viewed in place: nullptr when the entry has none.
  uint64_t size(size_t i) const { return t_.entries[i].size; }
  uint64_t base_size(size_t i) const { return t_.entries[i].base_size; }
  const PosixMeta* meta(size_t i) const {
    const uint32_t k = t_.entries[i].meta_index;
    return k == ManifestTables::kNoMeta ? nullptr : &t_.meta[k];
  }

  // The first entry (in manifest order) named `name`.
  std::optional<size_t> FindByName(std::string_view name) const;
  // The first entry (in manifest order) with this content key; size must be > 0. This is the
  // entry whose data location and base coverage readers use for every copy of the content.
  std::optional<size_t> FindByContent(uint64_t size, const Checksum& checksum) const;
  // True if entry `i` is the one FindByContent returns for its content (REQUIRES: size > 0).
  bool IsContentRep(size_t i) const { return (t_.entries[i].flags & ManifestTables::kRep) != 0; }
  // The entry whose data location and base coverage serve entry `i`'s content: the one
  // FindByContent returns, or `i` itself for an empty file (REQUIRES: i < num_entries()).
  size_t ContentRep(size_t i) const;
  // Entry indexes sorted by name (byte order), duplicates of a name removed (first kept; a
  // manifest read or loaded from the cache has none: CheckNames, name_check.h).
  std::span<const uint32_t> by_name() const { return t_.by_name; }

  // Directories and symlinks recorded by stitchfs's writer, in manifest order.
  size_t num_nodes() const { return t_.nodes.size(); }
  Node node(size_t i) const;
  // node(i).meta, viewed in place (REQUIRES: i < num_nodes()).
  const PosixMeta& node_meta(size_t i) const { return t_.nodes[i].meta; }
  // A 64-bit digest of everything a mount shows of this backup: each name (in name order) with
  // its size, checksum and metadata, and the folders and symlinks. Two manifests with the same
  // signature show the same tree with the same inode numbers and bytes (a backup flattened in
  // place keeps its signature).
  uint64_t ContentSignature() const;
  // What an incomplete backup lacks (header().incomplete of them).
  const std::vector<MissingFile>& missing() const { return t_.missing; }

  // Bytes the entry table, the names and the indexes take, in the heap or mapped from the
  // manifest cache (for measurements and memory bounds).
  size_t MemoryUsage() const;
  // The flat form (for codecs: ManifestFile writes it).
  const ManifestTables& tables() const { return t_; }

 private:
  const ManifestTables t_;
};

// Builds a Manifest. Entries must already be valid (the reader and writer check them).
// Not thread-safe.
class ManifestBuilder {
 public:
  void set_header(ManifestHeader h) { header_ = std::move(h); }
  ManifestHeader& header() { return header_; }
  // Hint for how many entries and bytes of names at most will come (reserves address space
  // only: the names area then never moves while it grows, nor is it copied at Finish).
  void Reserve(size_t n, size_t name_bytes = 0) {
    entries_.reserve(n);
    names_.reserve(name_bytes);
  }
  // Appends one entry; `data_file` equal to `name` is stored as "same as name".
  // kBackupDamaged if there are more than 2^32 - 1 entries or a name is over 4 GiB.
  Status Add(const FileEntry& e);
  void AddNode(const Node& n);
  void AddMissing(MissingFile f) { missing_.push_back(std::move(f)); }
  size_t num_missing() const { return missing_.size(); }
  size_t num_entries() const { return entries_.size(); }
  // Sorts the indexes and hands the manifest over. The builder is empty afterwards.
  std::unique_ptr<const Manifest> Finish();

 private:
  // Appends `s` to the names area; its offset.
  uint64_t Intern(std::string_view s);

  ManifestHeader header_;
  std::vector<ManifestTables::Record> entries_;
  std::vector<PosixMeta> meta_;
  std::vector<ManifestTables::NodeRecord> nodes_;
  std::vector<char> names_;
  std::vector<MissingFile> missing_;
};

}  // namespace stitchfs::engine
