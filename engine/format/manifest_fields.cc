#include "engine/format/manifest_fields.h"

#include <charconv>

#include "engine/base/path_check.h"
#include "engine/format/data_file_name.h"
#include "engine/format/manifest_writer.h"

namespace stitchfs::engine {
namespace {

constexpr std::string_view kHeaderTags[] = {"version",
                                            "deduplicate_files",
                                            "timestamp",
                                            "uuid",
                                            "backup_id",
                                            "data_file_name_generator",
                                            "base_backup",
                                            "base_backup_uuid",
                                            "stitchfs_checksum",
                                            "stitchfs_incomplete",
                                            "base_backup_copy_s3_credentials_from_backup",
                                            "original_endpoint",
                                            "original_namespace",
                                            "num_packs",
                                            "stitchfs_read_start"};
constexpr std::string_view kFileTags[] = {
    "name",          "size",      "checksum",          "use_base",   "base_size",
    "base_checksum", "data_file", "encrypted_by_disk", "object_key", "stitchfs_meta"};

template <size_t N>
int IndexOf(const std::string_view (&tags)[N], std::string_view tag) {
  for (size_t i = 0; i < N; ++i) {
    if (tag == tags[i]) return static_cast<int>(i);
  }
  return -1;
}

// Strict unsigned decimal: digits only, no sign, no spaces, no overflow.
std::optional<uint64_t> ParseU64(std::string_view s) {
  uint64_t v = 0;
  if (s.empty() || s.front() < '0' || s.front() > '9') return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<bool> ParseBool(std::string_view s) {
  if (s == "true" || s == "1") return true;
  if (s == "false" || s == "0") return false;
  return std::nullopt;
}

}  // namespace

std::string* ManifestFields::Slot(Field* slots, int tag) {
  if (tag < 0) return nullptr;
  if (slots[tag].set) {
    scratch_.clear();
    return &scratch_;
  }
  slots[tag].set = true;
  slots[tag].text.clear();
  return &slots[tag].text;
}

std::string* ManifestFields::HeaderSlot(std::string_view tag) {
  return Slot(header_, IndexOf(kHeaderTags, tag));
}

std::string* ManifestFields::FileSlot(std::string_view tag) {
  return Slot(file_, IndexOf(kFileTags, tag));
}

Status ManifestFields::ApplyHeader() {
  ManifestHeader& h = builder_.header();
  if (!header_[kVersion]) return Damaged("Cannot read <version>");
  auto version = ParseU64(*header_[kVersion]);
  if (!version) return Damaged("Cannot parse <version> value " + *header_[kVersion]);
  if (*version == 3 || (*version < 3 && header_[kNumPacks])) {
    return Status::VersionNotSupported(
        "Version " + *header_[kVersion] +
        " (a packed backup: small files bundled into packs_NNNN objects, an experimental "
        "ClickHouse format not in a release yet) is not supported");
  }
  if (*version < 1 || *version > 2) {
    return Status::VersionNotSupported("Version " + *header_[kVersion] + " is not supported");
  }
  h.version = static_cast<int>(*version);
  if (!header_[kTimestamp]) return Damaged("Cannot read <timestamp>");
  if (!header_[kUuid]) return Damaged("Cannot read <uuid>");
  h.timestamp = *header_[kTimestamp];
  h.uuid = *header_[kUuid];
  h.base_backup_uuid = header_[kBaseUuid].opt();
  h.original_endpoint = header_[kEndpoint].value_or("");
  h.original_namespace = header_[kNamespace].value_or("");
  RETURN_IF_ERROR(CheckHeader(&h));
  if (header_[kDedup]) {
    auto b = ParseBool(*header_[kDedup]);
    if (!b) return Damaged("Cannot parse <deduplicate_files> value " + *header_[kDedup]);
    h.deduplicate_files = *b;
  }
  h.backup_id = header_[kBackupId].value_or("");
  h.data_file_name_generator = header_[kGenerator].value_or("");
  h.base_backup = header_[kBase].value_or("");
  if (header_[kCopyS3]) {
    auto b = ParseBool(*header_[kCopyS3]);
    if (!b) {
      return Damaged("Cannot parse <base_backup_copy_s3_credentials_from_backup> value " +
                     *header_[kCopyS3]);
    }
    h.copy_s3_credentials = *b;
  }
  if (header_[kAlgorithm]) {
    auto a = ParseChecksumAlgorithm(*header_[kAlgorithm]);
    if (!a) {
      return Status::VersionNotSupported("checksum algorithm " + *header_[kAlgorithm] +
                                         " is not supported");
    }
    h.algorithm = *a;
  }
  if (header_[kIncomplete]) {
    auto n = ParseU64(*header_[kIncomplete]);
    if (!n) return Damaged("Cannot parse <stitchfs_incomplete> value " + *header_[kIncomplete]);
    h.incomplete = *n;
  }
  if (header_[kReadStart]) {
    auto n = ParseU64(*header_[kReadStart]);
    if (!n || *n > static_cast<uint64_t>(INT64_MAX)) {
      return Damaged("Cannot parse <stitchfs_read_start> value " + *header_[kReadStart]);
    }
    h.read_start_ns = static_cast<int64_t>(*n);
  }
  return Status::OK();
}

void ManifestFields::BeginFile() {
  for (auto& f : file_) f.set = false;
}

Status ManifestFields::EntryError(const std::string& what) const {
  std::string entry = file_[kName] ? "entry \"" + *file_[kName] + "\": " : "";
  return Damaged(entry + what);
}

StatusOr<uint64_t> ManifestFields::Number(FileTag tag) const {
  auto v = ParseU64(*file_[tag]);
  if (!v)
    return EntryError("Cannot parse <" + std::string(kFileTags[tag]) + "> value " + *file_[tag]);
  return *v;
}

StatusOr<Checksum> ManifestFields::ChecksumOf(FileTag tag) const {
  const std::string& text = *file_[tag];
  if (text.size() != 32) {
    return EntryError("Unexpected size of checksum: " + std::to_string(text.size()) +
                      ", must be 32");
  }
  auto c = Checksum::FromHex(text);
  if (!c) return EntryError("Cannot parse <" + std::string(kFileTags[tag]) + "> value " + text);
  return *c;
}

StatusOr<bool> ManifestFields::Bool(FileTag tag) const {
  if (!file_[tag]) return false;
  auto b = ParseBool(*file_[tag]);
  if (!b)
    return EntryError("Cannot parse <" + std::string(kFileTags[tag]) + "> value " + *file_[tag]);
  return *b;
}

// base_size defaults to size when use_base is true; a non-zero base_size implies use_base.
Status ManifestFields::FillBase(FileEntry& e) const {
  ASSIGN_OR_RETURN(bool use_base, Bool(kUseBase));
  if (file_[kBaseSize]) {
    ASSIGN_OR_RETURN(e.base_size, Number(kBaseSize));
  } else {
    e.base_size = use_base ? e.size : 0;
  }
  if (e.base_size > e.size) {
    return Damaged("Base size must not be greater than the size of entry \"" + std::string(e.name) +
                   "\"");
  }
  if (e.base_size == e.size) {
    e.base_checksum = e.checksum;
  } else if (e.base_size > 0) {
    if (!file_[kBaseChecksum])
      return EntryError("Cannot read <base_checksum> of a file from metadata");
    ASSIGN_OR_RETURN(e.base_checksum, ChecksumOf(kBaseChecksum));
  }
  return Status::OK();
}

// A lightweight snapshot's file: its bytes are object <object_key> of the source's object
// storage (ObjectDataFileName).
Status ManifestFields::ObjectEntry(FileEntry& e) {
  const ManifestHeader& h = builder_.header();
  if (h.original_endpoint.empty()) {
    return EntryError("<object_key> in a backup without <original_endpoint>");
  }
  object_file_ = ObjectDataFileName(ObjectBucketUrl(h.original_endpoint, h.original_namespace),
                                    *file_[kObjectKey]);
  if (Status s = CheckRelativePath(object_file_); !s.ok()) {
    return s.WithPrefix("entry \"" + std::string(e.name) + "\": <object_key>: ");
  }
  e.data_file = object_file_;
  return Status::OK();
}

Status ManifestFields::EndFile() {
  if (!file_[kName]) return Damaged("Cannot read <name> of a file from metadata");
  if (!file_[kSize]) return EntryError("Cannot read <size> of a file from metadata");
  FileEntry e;
  e.name = *file_[kName];
  if (Status s = CheckRelativePath(e.name); !s.ok()) return s.WithPrefix("<name>: ");
  ASSIGN_OR_RETURN(e.size, Number(kSize));
  if (e.size > kMaxFileSize) {
    return EntryError("<size> " + *file_[kSize] + " is larger than a file can be (2^63 - 1)");
  }
  if (e.size > 0) {
    if (!file_[kChecksum]) return EntryError("Cannot read <checksum> of a file from metadata");
    ASSIGN_OR_RETURN(e.checksum, ChecksumOf(kChecksum));
    RETURN_IF_ERROR(FillBase(e));
    ASSIGN_OR_RETURN(e.encrypted_by_disk, Bool(kEncrypted));
    if (file_[kObjectKey] && e.has_data_file()) {
      RETURN_IF_ERROR(ObjectEntry(e));
    } else if (e.has_data_file() && file_[kDataFile] && *file_[kDataFile] != e.name) {
      e.data_file = *file_[kDataFile];
      if (e.data_file.starts_with(kObjectDataPrefix)) {
        return Status::InsecurePath("entry \"" + std::string(e.name) + "\": <data_file> " +
                                    EscapeForMessage(e.data_file) + " is a name stitch reserves");
      }
      if (Status s = CheckRelativePath(e.data_file); !s.ok()) {
        return s.WithPrefix("entry \"" + std::string(e.name) + "\": <data_file>: ");
      }
    }
  }
  if (file_[kMeta]) {
    e.meta = PosixMeta::Parse(*file_[kMeta]);
    if (!e.meta) return EntryError("Cannot parse <stitchfs_meta> value " + *file_[kMeta]);
  }
  if (Status s = builder_.Add(e); !s.ok()) return s;
  return Status::OK();
}

std::optional<ManifestFields::Trailer> ManifestFields::TrailerTag(std::string_view tag) {
  if (tag == "stitchfs_dir") return Trailer::kDir;
  if (tag == "stitchfs_symlink") return Trailer::kSymlink;
  if (tag == "stitchfs_missing") return Trailer::kMissing;
  return std::nullopt;
}

Status ManifestFields::AddTrailer(Trailer kind, std::string_view text) {
  if (kind == Trailer::kMissing) {
    auto f = MissingFromText(text);
    if (!f) return Damaged("Cannot parse <stitchfs_missing> value " + std::string(text));
    builder_.AddMissing(std::move(*f));
    return Status::OK();
  }
  auto node = NodeFromText(kind == Trailer::kDir ? NodeType::kDir : NodeType::kSymlink, text);
  if (!node) return Damaged("Cannot parse node " + std::string(text));
  if (Status s = CheckRelativePath(node->name); !s.ok()) return s.WithPrefix("node: ");
  builder_.AddNode(*node);
  return Status::OK();
}

Status ManifestFields::Finish() {
  if (builder_.num_missing() != builder_.header().incomplete) {
    return Damaged("<stitchfs_incomplete> says " + std::to_string(builder_.header().incomplete) +
                   " files are missing, but " + std::to_string(builder_.num_missing()) +
                   " are listed");
  }
  return Status::OK();
}

}  // namespace stitchfs::engine
