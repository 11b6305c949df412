#include "engine/base/index_codec.h"

#include <xxhash.h>

namespace stitchfs::engine {
namespace {

using Header = IndexLayout::Header;
using Section = IndexLayout::Section;

// The byte-order mark as a machine of the other byte order wrote it.
constexpr uint32_t kSwappedByteOrder = 0x04030201;

Status Damaged(const IndexKind& kind, const std::string& what) {
  return Status::BackupDamaged(std::string(kind.name) + ": " + what);
}

bool Knows(const IndexKind& kind, uint32_t tag) {
  for (uint32_t t : kind.tags) {
    if (t == tag) return true;
  }
  return false;
}

// One table entry, `expected` being where it must start (right after the table or the section
// before it, aligned): flags, alignment, place, bounds, tag.
Status CheckTableEntry(const Section& s, const Header& h, const IndexKind& kind, uint64_t expected,
                       const std::string& before) {
  const std::string what = "section " + IndexTagName(s.tag) + " ";
  if ((s.flags & ~IndexLayout::kRequired) != 0) return Damaged(kind, what + "has unknown flags");
  if (s.offset % IndexLayout::kAlign != 0) {
    return Damaged(kind, what + "at " + std::to_string(s.offset) + " is not 8-byte aligned");
  }
  if (s.offset < expected) return Damaged(kind, what + "overlaps " + before);
  if (s.offset > expected) return Damaged(kind, what + "leaves a gap after " + before);
  if (s.offset > h.length || s.length > h.length - s.offset) {
    return Damaged(kind, what + "(" + std::to_string(s.length) + " bytes at " +
                             std::to_string(s.offset) + ") lies outside the file of " +
                             std::to_string(h.length) + " bytes");
  }
  if ((s.flags & IndexLayout::kRequired) != 0 && !Knows(kind, s.tag)) {
    return Damaged(kind, what + "is required but unknown to this build");
  }
  return Status::OK();
}

}  // namespace

std::string IndexLayout::Prefix(const IndexKind& kind, std::vector<Section>* sections) {
  const uint64_t table_end = kHeaderBytes + sections->size() * kEntryBytes;
  uint64_t at = table_end;
  for (Section& s : *sections) {
    s.offset = at;
    at = Aligned(at + s.length);
  }
  Header h{kind.magic,
           kIndexCodecVersion,
           kind.version,
           kByteOrder,
           static_cast<uint32_t>(sections->size()),
           at,
           0,
           0};
  std::string out(table_end, '\0');
  std::memcpy(out.data(), &h, sizeof h);
  if (!sections->empty()) {
    std::memcpy(out.data() + kHeaderBytes, sections->data(), sections->size() * kEntryBytes);
  }
  return out;
}

StatusOr<IndexLayout::Header> IndexLayout::ParseHeader(std::string_view bytes,
                                                       const IndexKind& kind,
                                                       uint64_t file_length) {
  Header h;
  if (bytes.size() < kHeaderBytes) {
    return Damaged(kind, std::to_string(bytes.size()) + " bytes, shorter than a header");
  }
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.magic != kind.magic) return Damaged(kind, "not a file of this kind (magic)");
  if (h.byte_order == kSwappedByteOrder) {
    return Damaged(kind, "written by a machine of the other byte order");
  }
  if (h.byte_order != kByteOrder) return Damaged(kind, "no byte-order mark");
  if (h.codec_version != kIndexCodecVersion) {
    return Damaged(kind, "codec version " + std::to_string(h.codec_version) +
                             ", this build reads " + std::to_string(kIndexCodecVersion));
  }
  if (h.format_version != kind.version) {
    return Damaged(kind, "format version " + std::to_string(h.format_version) +
                             ", this build reads " + std::to_string(kind.version));
  }
  if (h.length != file_length) {
    return Damaged(kind, "the header says " + std::to_string(h.length) + " bytes, the file has " +
                             std::to_string(file_length));
  }
  if (h.section_count > kMaxSections || h.section_count * kEntryBytes > h.length - kHeaderBytes) {
    return Damaged(kind, std::to_string(h.section_count) + " sections do not fit the file");
  }
  return h;
}

StatusOr<std::vector<IndexLayout::Section>> IndexLayout::ParseTable(std::string_view bytes,
                                                                    const Header& h,
                                                                    const IndexKind& kind) {
  const uint64_t table_end = kHeaderBytes + uint64_t{h.section_count} * kEntryBytes;
  if (bytes.size() != table_end - kHeaderBytes) return Damaged(kind, "section table cut short");
  std::vector<Section> sections(h.section_count);
  if (!sections.empty()) std::memcpy(sections.data(), bytes.data(), bytes.size());
  uint64_t end = table_end;  // Where the table or the last section checked ends.
  std::string before = "the section table";
  for (size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    RETURN_IF_ERROR(CheckTableEntry(s, h, kind, Aligned(end), before));
    for (size_t j = 0; j < i; ++j) {
      if (sections[j].tag == s.tag) {
        return Damaged(kind, "section " + IndexTagName(s.tag) + " appears twice");
      }
    }
    end = s.offset + s.length;
    before = "section " + IndexTagName(s.tag);
  }
  // With every section where it must be, the count and the length in the header (outside the
  // checksum) are bound to the table and the sections (inside it): a change to either is seen.
  if (Aligned(end) != h.length) {
    return Damaged(kind, "the sections end at " + std::to_string(end) + ", the file at " +
                             std::to_string(h.length));
  }
  return sections;
}

void IndexEncoder::Add(uint32_t tag, std::string_view bytes, bool required) {
  sections_.push_back({tag, required ? IndexLayout::kRequired : 0, 0, bytes.size()});
  if (!bytes.empty()) body_.append(bytes);
  body_.append(IndexLayout::Aligned(body_.size()) - body_.size(), '\0');
}

std::string IndexEncoder::Finish() {
  std::string out = IndexLayout::Prefix(kind_, &sections_);
  out += body_;
  const XXH128_hash_t hash =
      XXH3_128bits(out.data() + IndexLayout::kHeaderBytes, out.size() - IndexLayout::kHeaderBytes);
  std::memcpy(out.data() + IndexLayout::kHashOffset, &hash.low64, 8);
  std::memcpy(out.data() + IndexLayout::kHashOffset + 8, &hash.high64, 8);
  sections_.clear();
  body_.clear();
  return out;
}

StatusOr<IndexView> IndexView::Open(std::string_view bytes, const IndexKind& kind) {
  ASSIGN_OR_RETURN(const IndexLayout::Header h,
                   IndexLayout::ParseHeader(bytes, kind, bytes.size()));
  const std::string_view table =
      bytes.substr(IndexLayout::kHeaderBytes, h.section_count * IndexLayout::kEntryBytes);
  ASSIGN_OR_RETURN(std::vector<IndexLayout::Section> sections,
                   IndexLayout::ParseTable(table, h, kind));
  const std::string_view body = bytes.substr(IndexLayout::kHeaderBytes);
  const XXH128_hash_t hash = XXH3_128bits(body.data(), body.size());
  if (hash.low64 != h.hash_low || hash.high64 != h.hash_high) {
    return Damaged(kind, "checksum does not match");
  }
  return IndexView(bytes, kind, std::move(sections));
}

StatusOr<IndexCursor> IndexView::Section(uint32_t tag) const {
  for (const IndexLayout::Section& s : sections_) {
    if (s.tag == tag) return IndexCursor(bytes_.substr(s.offset, s.length), kind_->name, tag);
  }
  return Damaged(*kind_, "no section " + IndexTagName(tag));
}

Status IndexView::Bytes(uint32_t tag, std::string_view* out) const {
  ASSIGN_OR_RETURN(IndexCursor c, Section(tag));
  return c.Bytes(c.left(), out);
}

}  // namespace stitchfs::engine
