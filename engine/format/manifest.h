// Manifest: the parsed `.backup` of one backup (header + file entries), stored flat: names in
// an arena, one fixed-size record per entry, sorted index arrays. Immutable once built.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
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
};

// A source file or folder an incomplete backup lacks, and why (stitchfs's <stitchfs_missing>).
struct MissingFile {
  std::string name;  // As found in the source, made printable (escapes for bytes XML lacks).
  std::string reason;
  bool operator==(const MissingFile&) const = default;
};

// The largest file size a manifest may declare: what off_t (and so stat and pread) can hold.
constexpr uint64_t kMaxFileSize = INT64_MAX;

// Checks the values of a header read from a manifest or the cache, and sets `time`: the uuid
// (and base uuid, when not empty) in the canonical 8-4-4-4-12 hex form, the timestamp a
// date-time within kMinBackupTime..kMaxBackupTime. kBackupDamaged naming the tag and the value
// (escaped) otherwise; the caller adds the backup.
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
// symlink, their names in arena blocks the tables own, and the sorted indexes. ManifestBuilder
// fills it; a codec (the manifest cache's ManifestFile) writes it and reads it back; a Manifest
// is made from it and only reads it. Move-only (moving keeps the names where they are).
struct ManifestTables {
  struct Record {
    uint64_t size;
    uint64_t base_size;
    Checksum checksum;
    Checksum base_checksum;
    const char* name;
    const char* data_file;  // nullptr: same as name.
    uint32_t name_len;
    uint32_t data_file_len;
    uint32_t flags;
    uint32_t meta_index;  // Into meta, or kNoMeta. Fits the record's padding.
  };
  struct NodeRecord {
    const char* name;
    const char* target;
    uint32_t name_len;
    uint32_t target_len;
    NodeType type;
    PosixMeta meta;
  };
  static constexpr uint32_t kEncrypted = 1;
  static constexpr uint32_t kRep = 2;  // First entry (in manifest order) of its content.
  static constexpr uint32_t kNoMeta = UINT32_MAX;

  // The name of entry `i` (REQUIRES: i < entries.size()).
  std::string_view name(uint32_t i) const { return {entries[i].name, entries[i].name_len}; }

  ManifestHeader header;
  std::vector<Record> entries;
  std::vector<std::unique_ptr<char[]>> arena_blocks;  // Hold every name the records point to.
  size_t arena_bytes = 0;
  std::vector<uint32_t> by_name;     // Entries by name, duplicates of a name left out.
  std::vector<uint32_t> by_content;  // Entries with size > 0, by (size, checksum, position).
  std::vector<PosixMeta> meta;
  std::vector<NodeRecord> nodes;
  std::vector<MissingFile> missing;
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
  const std::vector<uint32_t>& by_name() const { return t_.by_name; }

  // Directories and symlinks recorded by stitchfs's writer, in manifest order.
  size_t num_nodes() const { return t_.nodes.size(); }
  Node node(size_t i) const;
  // A 64-bit digest of everything a mount shows of this backup: each name (in name order) with
  // its size, checksum and metadata, and the folders and symlinks. Two manifests with the same
  // signature show the same tree with the same inode numbers and bytes (a backup flattened in
  // place keeps its signature).
  uint64_t ContentSignature() const;
  // What an incomplete backup lacks (header().incomplete of them).
  const std::vector<MissingFile>& missing() const { return t_.missing; }

  // Bytes of heap in use by the entry table, the names and the indexes (for measurements and
  // memory bounds; address space reserved but never touched is not counted).
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
  void set_header(ManifestHeader h) { t_.header = std::move(h); }
  ManifestHeader& header() { return t_.header; }
  // Hint for how many entries will come (reserves address space only).
  void Reserve(size_t n) { t_.entries.reserve(n); }
  // Appends one entry; `data_file` equal to `name` is stored as "same as name".
  // kBackupDamaged if there are more than 2^32 - 1 entries or a name is over 4 GiB.
  Status Add(const FileEntry& e);
  void AddNode(const Node& n);
  void AddMissing(MissingFile f) { t_.missing.push_back(std::move(f)); }
  size_t num_missing() const { return t_.missing.size(); }
  size_t num_entries() const { return t_.entries.size(); }
  // Sorts the indexes and hands the manifest over. The builder is empty afterwards.
  std::unique_ptr<const Manifest> Finish();

 private:
  const char* Intern(std::string_view s);

  ManifestTables t_;
  char* block_ = nullptr;
  size_t block_left_ = 0;
};

}  // namespace stitchfs::engine
