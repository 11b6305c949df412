// ManifestFields: the tag semantics of a manifest, apart from the XML mechanics. It collects
// the text of header and per-file leaves and turns them into a ManifestHeader and FileEntry
// values with ClickHouse's defaults and checks, as its own reader applies them: <version> 1 or
// 2, <timestamp> and <uuid> required; per file <name> and <size> required, and for a non-empty
// file a 32-hex-digit <checksum>; <base_size> defaults to the size when <use_base> is true, else
// to 0, and may not exceed the size; <base_checksum> is required when 0 < base_size < size
// (it is the checksum when base_size == size); <data_file> defaults to the name; an empty
// file's checksum, base and data file tags are ignored.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/format/manifest.h"

namespace stitchfs::engine {

// Not thread-safe. Used by the SAX reader only.
class ManifestFields {
 public:
  explicit ManifestFields(std::string backup_name) : backup_name_(std::move(backup_name)) {}

  // The string a header leaf's text goes into, or nullptr for tags that are ignored. A
  // repeated leaf gets a scratch slot, so the first value wins.
  std::string* HeaderSlot(std::string_view tag);
  std::string* FileSlot(std::string_view tag);

  // Validates the header collected so far (called at the opening <contents>).
  Status ApplyHeader();
  void BeginFile();
  // Validates the current <file> and adds it to the builder.
  Status EndFile();
  // The leaves stitchfs writes after <contents>: directories and symlinks (nodes), and the
  // files an incomplete backup lacks.
  enum class Trailer { kDir, kSymlink, kMissing };
  static std::optional<Trailer> TrailerTag(std::string_view tag);
  // Parses one trailing leaf and adds it.
  Status AddTrailer(Trailer kind, std::string_view text);
  // Checks what only the whole document tells (the number of missing files).
  Status Finish();

  ManifestBuilder& builder() { return builder_; }
  std::string BackupPrefix() const { return "Backup " + backup_name_ + ": "; }
  // Errors from here carry no backup prefix: the reader adds it with the line and column.
  static Status Damaged(const std::string& what) { return Status::BackupDamaged(what); }

 private:
  Status ObjectEntry(FileEntry& e);

  std::string object_file_;  // The data file name of the entry being read, if an object's.
  enum HeaderTag {
    kVersion,
    kDedup,
    kTimestamp,
    kUuid,
    kBackupId,
    kGenerator,
    kBase,
    kBaseUuid,
    kAlgorithm,
    kIncomplete,
    kCopyS3,
    kEndpoint,
    kNamespace,
    kNumPacks,
    kReadStart,
    kNumHeaderTags
  };
  enum FileTag {
    kName,
    kSize,
    kChecksum,
    kUseBase,
    kBaseSize,
    kBaseChecksum,
    kDataFile,
    kEncrypted,
    kObjectKey,
    kMeta,
    kNumFileTags
  };

  // The text of one leaf; keeps its buffer between <file> elements (no allocation per entry).
  struct Field {
    bool set = false;
    std::string text;
    explicit operator bool() const { return set; }
    const std::string& operator*() const { return text; }
    std::string value_or(const char* d) const { return set ? text : d; }
    std::optional<std::string> opt() const { return set ? std::optional(text) : std::nullopt; }
  };

  std::string* Slot(Field* slots, int tag);
  Status EntryError(const std::string& what) const;
  StatusOr<uint64_t> Number(FileTag tag) const;
  StatusOr<Checksum> ChecksumOf(FileTag tag) const;
  StatusOr<bool> Bool(FileTag tag) const;
  Status FillBase(FileEntry& e) const;

  std::string backup_name_;
  ManifestBuilder builder_;
  Field header_[kNumHeaderTags];
  Field file_[kNumFileTags];
  std::string scratch_;
};

}  // namespace stitchfs::engine
