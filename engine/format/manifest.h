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

// The parsed manifest. Thread-safe (immutable after ManifestBuilder::Finish).
class Manifest {
 public:
  const ManifestHeader& header() const { return header_; }
  size_t num_entries() const { return entries_.size(); }
  // REQUIRES: i < num_entries(). Entries are in manifest order.
  FileEntry entry(size_t i) const;
  // The name of entry `i` (REQUIRES: i < num_entries()); entry(i).name, without the rest.
  std::string_view name(size_t i) const { return {entries_[i].name, entries_[i].name_len}; }

  // The first entry (in manifest order) named `name`.
  std::optional<size_t> FindByName(std::string_view name) const;
  // The first entry (in manifest order) with this content key; size must be > 0. This is the
  // entry whose data location and base coverage readers use for every copy of the content.
  std::optional<size_t> FindByContent(uint64_t size, const Checksum& checksum) const;
  // True if entry `i` is the one FindByContent returns for its content (REQUIRES: size > 0).
  bool IsContentRep(size_t i) const { return (entries_[i].flags & kRep) != 0; }
  // Entry indexes sorted by name (byte order), duplicates of a name removed (first kept; a
  // manifest read or loaded from the cache has none: CheckNames, name_check.h).
  const std::vector<uint32_t>& by_name() const { return by_name_; }

  // Directories and symlinks recorded by stitchfs's writer, in manifest order.
  size_t num_nodes() const { return nodes_.size(); }
  Node node(size_t i) const;
  // A 64-bit digest of everything a mount shows of this backup: each name (in name order) with
  // its size, checksum and metadata, and the folders and symlinks. Two manifests with the same
  // signature show the same tree with the same inode numbers and bytes (a backup flattened in
  // place keeps its signature).
  uint64_t ContentSignature() const;
  // What an incomplete backup lacks (header().incomplete of them).
  const std::vector<MissingFile>& missing() const { return missing_; }

  // Bytes of heap in use by the entry table, the names and the indexes (for measurements and
  // memory bounds; address space reserved but never touched is not counted).
  size_t MemoryUsage() const;

 private:
  friend class ManifestBuilder;
  friend struct ManifestFile;
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
    uint32_t meta_index;  // Into meta_, or kNoMeta. Fits the record's padding.
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

  std::string_view NameOf(uint32_t i) const { return {entries_[i].name, entries_[i].name_len}; }

  ManifestHeader header_;
  std::vector<Record> entries_;
  std::vector<std::unique_ptr<char[]>> arena_blocks_;
  size_t arena_bytes_ = 0;
  std::vector<uint32_t> by_name_;
  std::vector<uint32_t> by_content_;  // Entries with size > 0, by (size, checksum, position).
  std::vector<PosixMeta> meta_;
  std::vector<NodeRecord> nodes_;
  std::vector<MissingFile> missing_;
};

// Builds a Manifest. Entries must already be valid (the reader and writer check them).
// Not thread-safe.
class ManifestBuilder {
 public:
  ManifestBuilder();
  void set_header(ManifestHeader h) { m_->header_ = std::move(h); }
  ManifestHeader& header() { return m_->header_; }
  // Hint for how many entries will come (reserves address space only).
  void Reserve(size_t n) { m_->entries_.reserve(n); }
  // Appends one entry; `data_file` equal to `name` is stored as "same as name".
  // kBackupDamaged if there are more than 2^32 - 1 entries or a name is over 4 GiB.
  Status Add(const FileEntry& e);
  void AddNode(const Node& n);
  void AddMissing(MissingFile f) { m_->missing_.push_back(std::move(f)); }
  size_t num_missing() const { return m_->missing_.size(); }
  size_t num_entries() const { return m_->entries_.size(); }
  // Sorts the indexes and hands the manifest over. The builder is empty afterwards.
  std::unique_ptr<const Manifest> Finish();

 private:
  const char* Intern(std::string_view s);

  std::unique_ptr<Manifest> m_;
  char* block_ = nullptr;
  size_t block_left_ = 0;
};

}  // namespace stitchfs::engine
