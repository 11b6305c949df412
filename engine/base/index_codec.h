// The one container of stitchfs's own index files (the resolved index, the manifest cache's
// files, the archive index): a fixed header, a table of sections, the sections. Every check of
// the container is made here, once (magic, codec and format versions, byte order, length,
// checksum, table bounds, sections outside the file, overlapping, misaligned, repeated or of a
// required kind the reader does not know); a format keeps only its own records and their
// meaning. This file: the layout, its checks, and whole-buffer encoding and decoding;
// index_cursor.h reads a section, index_stream.h writes and reads a file through an fd.
//
// Layout, in the byte order of the machine that wrote it (a file is for that machine):
//    0  magic[8]            the kind's (IndexKind)
//    8  u32 codec version   kIndexCodecVersion
//   12  u32 format version  the kind's
//   16  u32 byte order      0x01020304
//   20  u32 section count
//   24  u64 length          of the whole file
//   32  u64, u64            XXH3-128 (low, high) of every byte after the header
//   48  the section table: per section u32 tag, u32 flags (bit 0: required), u64 offset and
//       u64 length (from the start of the file), tags unique; then the sections in the table's
//       order, each followed by zero bytes up to a multiple of 8: the first starts where the
//       table ends, each next one where the one before it ends, rounded up to a multiple of 8,
//       and the file ends where the last one does, rounded up. So the section count and the
//       length, outside the checksum, are bound to the table and sections inside it, and every
//       header byte is checked; a section anywhere else is misaligned, overlaps the one before
//       or leaves a gap after it, and is refused.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "engine/base/index_cursor.h"
#include "engine/base/status_or.h"

namespace stitchfs::engine {

// The container's own version (of the header and the table), the same for every kind.
constexpr uint32_t kIndexCodecVersion = 1;

// A section's tag from four characters: "LEVL" reads as LEVL in a dump of the file.
constexpr uint32_t IndexTag(const char (&s)[5]) {
  return static_cast<uint32_t>(static_cast<uint8_t>(s[0])) |
         static_cast<uint32_t>(static_cast<uint8_t>(s[1])) << 8 |
         static_cast<uint32_t>(static_cast<uint8_t>(s[2])) << 16 |
         static_cast<uint32_t>(static_cast<uint8_t>(s[3])) << 24;
}

// One kind of index file: what its header must say and which sections it knows.
struct IndexKind {
  std::string_view name;           // In messages: "resolved index".
  std::array<char, 8> magic;       // The first 8 bytes of every file of this kind.
  uint32_t version = 0;            // The kind's format version; another one is refused.
  std::span<const uint32_t> tags;  // A required section of another tag is refused.
};

// The fixed parts of the layout, for the stream writer and reader and for tests that forge a
// file with a valid checksum.
struct IndexLayout {
  static constexpr size_t kHeaderBytes = 48;
  static constexpr size_t kHashOffset = 32;  // Low 64 bits, then high.
  static constexpr size_t kEntryBytes = 24;  // One entry of the section table.
  static constexpr size_t kAlign = 8;
  static constexpr uint32_t kByteOrder = 0x01020304;
  static constexpr uint32_t kRequired = 1;  // Flags of a section.
  static constexpr uint32_t kMaxSections = 64;

  struct Header {
    std::array<char, 8> magic;
    uint32_t codec_version, format_version, byte_order, section_count;
    uint64_t length, hash_low, hash_high;
  };
  struct Section {
    uint32_t tag, flags;
    uint64_t offset, length;
  };

  // `n` rounded up to a multiple of kAlign.
  static uint64_t Aligned(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
  // The header (hash zero: the writer fills it in last) and table of a file of `kind` whose
  // sections have the tags, flags and lengths of `*sections`; fills in their offsets.
  static std::string Prefix(const IndexKind& kind, std::vector<Section>* sections);
  // The header in `bytes` (kHeaderBytes of them), checked for `kind` and a file of
  // `file_length` bytes: kBackupDamaged saying what is wrong.
  static StatusOr<Header> ParseHeader(std::string_view bytes, const IndexKind& kind,
                                      uint64_t file_length);
  // The table in `bytes` (section_count entries), checked against `h`: kBackupDamaged.
  static StatusOr<std::vector<Section>> ParseTable(std::string_view bytes, const Header& h,
                                                   const IndexKind& kind);
};
static_assert(sizeof(IndexLayout::Header) == IndexLayout::kHeaderBytes);
static_assert(sizeof(IndexLayout::Section) == IndexLayout::kEntryBytes);

// Builds an index file in memory, section by section. Not thread-safe.
class IndexEncoder {
 public:
  explicit IndexEncoder(const IndexKind& kind) : kind_(kind) {}

  // Appends section `tag` holding `bytes`. A reader that does not know `tag` refuses the file
  // if `required`, else skips the section.
  void Add(uint32_t tag, std::string_view bytes, bool required = true);
  // Appends section `tag` holding `records` as they are in memory.
  template <typename T>
  void AddArray(uint32_t tag, std::span<const T> records) {
    static_assert(std::is_trivially_copyable_v<T>);
    Add(tag, {reinterpret_cast<const char*>(records.data()), records.size_bytes()});
  }
  template <typename T>
  void AddRecord(uint32_t tag, const T& record) {
    AddArray(tag, std::span<const T>(&record, 1));
  }

  // The file: header, table and sections, checksummed. Leaves the encoder empty.
  std::string Finish();

 private:
  const IndexKind& kind_;
  std::vector<IndexLayout::Section> sections_;
  std::string body_;  // The sections, each padded to kAlign.
};

// A checked index file in memory. Thread-compatible; views the bytes it was opened on, which
// must outlive it and every cursor and view it gives.
class IndexView {
 public:
  // `bytes` as a file of `kind`, every check of the container made (index_codec.h):
  // kBackupDamaged naming the kind and what is wrong.
  static StatusOr<IndexView> Open(std::string_view bytes, const IndexKind& kind);

  // A cursor over section `tag`: kBackupDamaged if the file has none.
  StatusOr<IndexCursor> Section(uint32_t tag) const;
  // Section `tag` whole: as bytes, as records viewed in place (aligned for T; a length that is
  // not a whole number of records is refused), or as exactly one record, copied.
  Status Bytes(uint32_t tag, std::string_view* out) const;
  template <typename T>
  Status ViewArray(uint32_t tag, std::span<const T>* out) const {
    ASSIGN_OR_RETURN(IndexCursor c, Section(tag));
    return c.ViewRest(out);
  }
  template <typename T>
  Status Record(uint32_t tag, T* out) const {
    ASSIGN_OR_RETURN(IndexCursor c, Section(tag));
    RETURN_IF_ERROR(c.Record(out));
    return c.End();
  }

 private:
  IndexView(std::string_view bytes, const IndexKind& kind,
            std::vector<IndexLayout::Section> sections)
      : bytes_(bytes), kind_(&kind), sections_(std::move(sections)) {}

  std::string_view bytes_;
  const IndexKind* kind_;
  std::vector<IndexLayout::Section> sections_;
};

}  // namespace stitchfs::engine
